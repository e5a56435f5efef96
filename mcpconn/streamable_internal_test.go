package mcpconn

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
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

// The count of reconnections starts again after a message of the server's
// on the stream, or after a minute's quiet (a proxy that ends idle
// streams is no loop); past MaxReconnects in a row it trips the guard.
func TestReconnectCount(t *testing.T) {
	t.Parallel()
	clock := time.Unix(0, 0)
	g := newPeerGuard(1<<20, 1000)
	e := newEventStreams(g, 3)
	e.now = func() time.Time { return clock }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/mcp", nil)
	req.Header.Set(lastEventIDHeader, "e1")
	reconnect := func() error { _, _, err := e.open(req); return err }
	for i := range 3 {
		if err := reconnect(); err != nil {
			t.Fatalf("reconnection %d: %v", i+1, err)
		}
	}
	clock = clock.Add(reconnectQuiet) // quiet: the count starts again
	for i := range 3 {
		if err := reconnect(); err != nil {
			t.Fatalf("reconnection %d after a quiet minute: %v", i+1, err)
		}
	}
	st, _, _ := e.open(req) // the 4th in a row
	if st != nil || g.breach() == nil || g.breach().Option != "ConnectorOptions.MaxReconnects" {
		t.Fatalf("the 4th quick reconnection: stream %v, breach %v; want the guard tripped", st, g.breach())
	}

	g = newPeerGuard(1<<20, 1000)
	e = newEventStreams(g, 3)
	e.now = func() time.Time { return clock }
	for i := range 10 {
		st, _, err := e.open(req)
		if err != nil {
			t.Fatalf("reconnection %d after a message: %v", i+1, err)
		}
		st.message.Store(true) // the server sent something on it
	}
}
