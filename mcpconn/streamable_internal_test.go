package mcpconn

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
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
			got, err := io.ReadAll(&eventBody{ReadCloser: io.NopCloser(r), guard: testGuard(),
				clamp: true, maxRetryMS: defaultMaxReconnectDelay.Milliseconds()})
			if err != nil || string(got) != tt.want {
				t.Errorf("%s (one byte %v): got %q, %v; want %q", tt.name, oneByte, got, err, tt.want)
			}
		}
	}
}

// A priming event (an id without data) is not a message: it neither
// counts against the rate nor uses the reply a stream owes.
func TestPrimingEventIsNotAMessage(t *testing.T) {
	t.Parallel()
	g := newPeerGuard(1<<20, 1) // a burst of 10
	body := &eventBody{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(
		strings.Repeat("id: 7\nretry: 10\ndata: \n\n", 100)))), guard: g, countRate: true}
	if _, err := io.ReadAll(body); err != nil || g.breach() != nil {
		t.Fatalf("100 priming events: %v, %v", err, g.breach())
	}
}

// Reconnections of one stream are a token bucket: the burst at once,
// then one per interval, each later one waiting for its turn; a quiet
// stream earns its burst back, never more. The first GET of the
// standalone stream is no reconnection.
func TestReconnectRate(t *testing.T) {
	t.Parallel()
	clock := time.Unix(0, 0)
	e := newEventStreams(3, time.Second)
	e.now = func() time.Time { return clock }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := func(lastEventID string) (*eventStream, bool, time.Duration) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/mcp", nil)
		if lastEventID != "" {
			req.Header.Set(lastEventIDHeader, lastEventID)
		}
		return e.open(req)
	}
	if st, initial, wait := get(""); !st.standalone || !initial || wait != 0 {
		t.Fatalf("the first GET: standalone %v, initial %v, wait %s; want the standalone stream at once", st.standalone, initial, wait)
	}
	var waits []time.Duration
	for range 5 {
		_, initial, wait := get("")
		if initial {
			t.Fatal("a reconnection taken for the first GET")
		}
		waits = append(waits, wait)
	}
	if diff := cmp.Diff([]time.Duration{0, 0, 0, time.Second, 2 * time.Second}, waits); diff != "" {
		t.Errorf("waits of 5 quick reconnections, burst 3 (-want +got):\n%s", diff)
	}
	clock = clock.Add(time.Hour) // quiet: the burst again, no more
	waits = waits[:0]
	for range 4 {
		_, _, wait := get("")
		waits = append(waits, wait)
	}
	if diff := cmp.Diff([]time.Duration{0, 0, 0, time.Second}, waits); diff != "" {
		t.Errorf("waits after an hour's quiet (-want +got):\n%s", diff)
	}
}

// The event id agt puts at the start of each standalone response comes
// back as the next GET's Last-Event-ID and is removed there; an id of the
// server's is sent as it is.
func TestStandalonePrimingIDNeverReachesTheServer(t *testing.T) {
	t.Parallel()
	e := newEventStreams(3, time.Second)
	st := &eventStream{standalone: true}
	got, err := io.ReadAll(&eventBody{ReadCloser: io.NopCloser(strings.NewReader("data: {}\n\n")), guard: testGuard(),
		prefix: e.primeStandalone(st)})
	if err != nil || string(got) != "id: agt-1\n\ndata: {}\n\n" {
		t.Fatalf("primed body = %q, %v", got, err)
	}
	for _, tt := range []struct{ sent, want string }{{"agt-1", ""}, {"s-9", "s-9"}, {"", ""}} {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
		if tt.sent != "" {
			req.Header.Set(lastEventIDHeader, tt.sent)
		}
		st.unprime(req)
		if got := req.Header.Get(lastEventIDHeader); got != tt.want {
			t.Errorf("Last-Event-ID %q: sent as %q; want %q", tt.sent, got, tt.want)
		}
	}
}
