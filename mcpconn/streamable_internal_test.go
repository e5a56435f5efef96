package mcpconn

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The retry field of an event stream is held to MaxReconnectDelay, read
// whole or a byte at a time; every other line passes unchanged, and a
// retry line too long to be a number is dropped without ending its event.
func TestRetryClamp(t *testing.T) {
	t.Parallel()
	long := "retry: " + strings.Repeat("0", 100) + "36000000\n"
	for _, tt := range []struct {
		name, in, want string
	}{
		{"10 hours", "id: 1\nretry: 36000000\ndata: \n\n", "id: 1\nretry:30000\ndata: \n\n"},
		{"within the bound", "id: 1\nretry: 500\r\ndata: \n\n", "id: 1\nretry: 500\r\ndata: \n\n"},
		{"not a number", "retry: soon\n\n", "retry: soon\n\n"},
		{"leading zeros past the hold", "id: 1\n" + long + "data: x\n\n", "id: 1\ndata: x\n\n"},
		{"retry inside data", "data: retry: 99999999\n\n", "data: retry: 99999999\n\n"},
		{"a field that starts alike", "retryx: 99999999\nretr\n\n", "retryx: 99999999\nretr\n\n"},
		{"cut by the end", "data: x\n\nretry: 99999999", "data: x\n\nretry:30000"},
		{"blank lines", "\n\r\n\n", "\n\r\n\n"},
	} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tt.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := io.ReadAll(newRetryClamp(io.NopCloser(r), DefaultMaxReconnectDelay))
			if err != nil || string(got) != tt.want {
				t.Errorf("%s (one byte %v): got %q, %v; want %q", tt.name, oneByte, got, err, tt.want)
			}
		}
	}
}

// A priming event (an id without data) is not a message: it neither
// counts against the rate nor uses the reply a stream owes, and it does
// not reset the count of reconnections; an event with data does.
func TestPrimingEventIsNotAMessage(t *testing.T) {
	t.Parallel()
	g := newPeerGuard(1<<20, 1) // a burst of 10
	st := &eventStream{}
	body := &boundedBody{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(
		strings.Repeat("id: 7\nretry: 10\ndata: \n\n", 100)))), guard: g, sse: true, countRate: true, stream: st}
	if _, err := io.ReadAll(body); err != nil || g.breach() != nil {
		t.Fatalf("100 priming events: %v, %v", err, g.breach())
	}
	if st.message.Load() {
		t.Error("a priming event counted as a message of the stream")
	}
	body = &boundedBody{ReadCloser: io.NopCloser(strings.NewReader("id: 8\ndata:  {}\n\n")), guard: g, sse: true, countRate: true, stream: st}
	if _, err := io.ReadAll(body); err != nil || !st.message.Load() {
		t.Errorf("an event with data: %v, message %v", err, st.message.Load())
	}
}
