package mcpconn

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/weborigin"
)

// drainAnswer is the answer the drain tests' server sends to their
// request, id 1.
const drainAnswer = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"

// drainRoundTripper is the round tripper of a streamable HTTP session of
// ts, without its session.
func drainRoundTripper(t *testing.T, ts *httptest.Server, closing context.Context, grace time.Duration) *headerRoundTripper {
	transport := ts.Client().Transport.(*http.Transport)
	t.Cleanup(transport.CloseIdleConnections)
	u, _ := url.Parse(ts.URL)
	return &headerRoundTripper{base: transport, origin: weborigin.Of(u), guard: testGuard(),
		capture: newToolsListCapture(defaultMaxTools, defaultMaxListBytes), streamable: true, closing: closing, drainGrace: grace}
}

// Issue 25 item 11: a POST's response stream whose answer came is read to
// its end, so that its connection goes back to the pool, even when the
// request's context ends right after the answer (as a call's does when
// the call returns); but only for drainGrace and maxDrainBytes after the
// answer, whatever the request's context does. A stream whose answer has
// not come is cut as soon as the request's context ends, as before.
func TestResponseStreamAfterItsAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// after is what the server does once the answer is out; before
		// the answer it sends only a notification.
		after string // "end" (when the client says), "hold", "flood", "never answer"
		// cancel: the request's context ends after the client read the
		// answer (or the notification).
		cancel  bool
		grace   time.Duration
		wantErr error // of reading the stream to its end; nil: EOF
		reused  bool  // the next request reuses the connection
	}{
		// Fails before the fix: the cancel dropped the connection.
		{name: "ends after the cancel", after: "end", cancel: true, grace: time.Hour, reused: true},
		{name: "ends", after: "end", grace: time.Hour, reused: true},
		// Fails before the fix: nothing ever ended the stream.
		{name: "held past the grace", after: "hold", grace: 20 * time.Millisecond, wantErr: errDrainCut},
		{name: "held past the grace, cancelled", after: "hold", cancel: true, grace: 20 * time.Millisecond, wantErr: errDrainCut},
		{name: "flooded past the bytes", after: "flood", grace: time.Hour, wantErr: errDrainCut},
		{name: "no answer, cancelled", after: "never answer", cancel: true, grace: time.Hour, wantErr: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			cut := make(chan struct{})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				f := w.(http.Flusher)
				if r.Header.Get("X-Second") != "" {
					_, _ = io.WriteString(w, drainAnswer)
					return
				}
				if tc.after == "never answer" {
					_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
				} else {
					_, _ = io.WriteString(w, drainAnswer)
				}
				f.Flush()
				switch tc.after {
				case "end":
					select {
					case <-release:
					case <-r.Context().Done():
						close(cut)
					}
					return
				case "flood":
					event := "data: " + strings.Repeat("x", 1000) + "\n\n"
					for i := 0; i < 100*maxDrainBytes/len(event); i++ {
						if _, err := io.WriteString(w, event); err != nil {
							break
						}
						f.Flush()
					}
				}
				<-r.Context().Done()
				close(cut)
			}))
			defer ts.Close()
			rt := drainRoundTripper(t, ts, nil, tc.grace)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			first := drainAnswer
			if tc.after == "never answer" {
				first = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
			}
			head := make([]byte, len(first))
			if _, err := io.ReadFull(resp.Body, head); err != nil || string(head) != first {
				t.Fatalf("the stream began %q, %v; want %q", head, err, first)
			}
			if tc.cancel {
				cancel()
			}
			if tc.after == "end" {
				close(release)
			}
			// As the go-sdk does once it has the answer.
			_, err = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("reading the stream to its end: %v; want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				select {
				case <-cut:
				case <-time.After(30 * time.Second):
					t.Fatal("the server never saw its stream cut")
				}
			}
			if tc.after == "end" {
				select {
				case <-cut:
					t.Error("the client cut a stream that ended")
				default:
				}
			}

			reused := false
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
			req, _ = http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, ts.URL,
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("X-Second", "1")
			resp, err = rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Errorf("the second stream: %v", err)
			}
			_ = resp.Body.Close()
			if reused != tc.reused {
				t.Errorf("the next request reused the connection: %v; want %v", reused, tc.reused)
			}
		})
	}
}

// The session's close cuts a response stream still going after its
// answer at once, grace or not.
func TestSessionCloseCutsAnsweredStream(t *testing.T) {
	t.Parallel()
	cut := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, drainAnswer)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(cut)
	}))
	defer ts.Close()
	closing, closeNow := context.WithCancel(context.Background())
	defer closeNow()
	rt := drainRoundTripper(t, ts, closing, time.Hour)
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, len(drainAnswer))
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	closeNow()
	if _, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, errSessionClosing) {
		t.Errorf("reading the stream after the close: %v; want %v", err, errSessionClosing)
	}
	select {
	case <-cut:
	case <-time.After(30 * time.Second):
		t.Fatal("the server never saw its stream cut")
	}
}
