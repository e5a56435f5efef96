package mcpconn_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// holdServer serves the fake server, modern-only over stateless
// streamable HTTP on 127.0.0.1, counting the connections clients open.
// Each tools/call of echo is answered, and its stream then held open
// until the test sends on release (or the client cuts it: cut); a
// tools/call of sleep is never answered: its stream is held until the
// client cuts it (started, then cut).
type holdServer struct {
	url               string
	conns             atomic.Int64
	release           chan struct{}
	started, cut      chan struct{}
	answeredStreamCut atomic.Int64
}

func newHoldServer(t *testing.T) *holdServer {
	t.Helper()
	h := &holdServer{release: make(chan struct{}), started: make(chan struct{}, 1), cut: make(chan struct{}, 1)}
	server := mcptest.NewServer(&mcptest.ServerOptions{Era: mcptest.EraModern})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") != "tools/call" {
			inner.ServeHTTP(w, r)
			return
		}
		switch r.Header.Get("Mcp-Name") {
		case mcptest.ToolEcho:
			inner.ServeHTTP(w, r) // the answer, flushed
			select {
			case <-h.release:
			case <-r.Context().Done():
				h.answeredStreamCut.Add(1)
				h.cut <- struct{}{}
			}
		case mcptest.ToolSleep:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			h.started <- struct{}{}
			<-r.Context().Done()
			h.cut <- struct{}{}
		default:
			inner.ServeHTTP(w, r)
		}
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			h.conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	h.url = ts.URL
	return h
}

// Issue 25 item 11: the stream of a call whose answer came is read to its
// end after the call returned, so the connection goes back to the pool
// instead of being dropped (before, the call's end cancelled it: the
// server saw each stream cut, and each call opened a new connection).
func TestAnsweredCallKeepsItsConnection(t *testing.T) {
	t.Parallel()
	h := newHoldServer(t)
	c := quickConnector(nil)
	defer c.Close()
	// Long enough that no slow machine can see the grace end: the streams
	// end when the test releases them, after each call returned.
	mcpconn.SetDrainGrace(c, time.Minute)
	s, err := c.Connect(context.Background(), "tools/fake", resource.MCPServer{Type: resource.TransportHTTP, URL: h.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := h.conns.Load()
	const calls = 20
	for i := range calls {
		if got := resultText(call(t, s, context.Background(), mcptest.ToolEcho, map[string]string{"text": "kept"})); got != "kept" {
			t.Fatalf("call %d: %q", i, got)
		}
		select {
		case h.release <- struct{}{}:
		case <-h.cut:
			t.Fatalf("call %d: the client cut the call's stream after its answer", i)
		}
	}
	// Each call may find the previous stream not yet read to its end (the
	// release comes after the call), so this is logged, not asserted.
	t.Logf("%d calls opened %d connections", calls, h.conns.Load()-before)
}

// Issue 25 item 11: the stream of a call that has no answer is cut as
// before, when the call ends: by the tool timeout, the caller's cancel,
// or the session's close; the server sees its stream end then.
func TestUnansweredCallStreamIsCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  string // "timeout", "cancel", "close"
		want string // in the call's error
	}{
		{"tool timeout", "timeout", "tool timeout"},
		{"caller cancel", "cancel", "cancelled by the caller"},
		{"session close", "close", "the session is closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHoldServer(t)
			c := quickConnector(nil)
			defer c.Close()
			srv := resource.MCPServer{Type: resource.TransportHTTP, URL: h.url}
			if tc.end == "timeout" {
				srv.ToolTimeoutMS = 100
			}
			s, err := c.Connect(context.Background(), "tools/fake", srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				select {
				case <-h.started:
				case <-ctx.Done():
					return
				}
				switch tc.end {
				case "cancel":
					cancel()
				case "close":
					s.Close()
				}
			}()
			_, err = s.CallTool(ctx, mcptest.ToolSleep, []byte(`{"ms":1}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CallTool: %v; want %q", err, tc.want)
			}
			if tc.end == "cancel" && !errors.Is(err, context.Canceled) {
				t.Errorf("CallTool: %v; want context.Canceled", err)
			}
			select {
			case <-h.cut:
			case <-time.After(30 * time.Second):
				t.Fatal("the server never saw the call's stream cut")
			}
		})
	}
}
