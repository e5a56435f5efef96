package mcpconn_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// sessionEnder forwards to the fake server until end is called; from then
// on it answers every POST and DELETE of a session with 404 Not Found and
// the given body, as a server that ended the session does, and counts
// what it would have forwarded. It answers every GET with getStatus (no
// standalone stream).
type sessionEnder struct {
	target      string
	getStatus   int
	body, ctype string

	mu       sync.Mutex
	sessions map[string]bool // the ids of the ended sessions
	ended    atomic.Bool
	lost     atomic.Int64 // requests that met the 404
	// got is closed at the first GET answered, if not nil.
	got     chan struct{}
	gotOnce sync.Once
}

func (p *sessionEnder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		http.Error(w, "no stream here", p.getStatus)
		if p.got != nil {
			p.gotOnce.Do(func() { close(p.got) })
		}
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && p.ended.Load() {
		p.lost.Add(1)
		p.mu.Lock()
		p.sessions[id] = true
		p.mu.Unlock()
		w.Header().Set("Content-Type", p.ctype)
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(p.body))
		return
	}
	forward(w, r, p.target)
}

// Issue 24 item 2: a streamable HTTP server that ended a session answers
// its requests with 404 (MCP 2025-11-25, session management: the client
// must start a new session). Whatever the body (the Python SDK's JSON-RPC
// error with the id "server-error" or null, the go-sdk's plain text), the
// session is lost, the call whose request got the 404 fails with
// ErrUnavailable saying it never reached the server, and a listing fails
// with ErrUnavailable, not as a protocol error of the server's; the
// session id is never quoted.
func TestSessionEndedByTheServerIsLost(t *testing.T) {
	t.Parallel()
	target := mcptest.StartHTTP(t, "-era", string(mcptest.EraLegacy)) // sessions and the GET stream are legacy-only
	for _, tc := range []struct {
		name, body, ctype string
		list              bool // the first request after the end is a listing
		handlers          bool // the session asks for the standalone stream
	}{
		{name: "python sdk body, call", body: mcptest.DropSessionBody, ctype: "application/json"},
		{name: "python sdk body, listing", body: mcptest.DropSessionBody, ctype: "application/json", list: true},
		{name: "null id body, call", body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}`, ctype: "application/json"},
		{name: "null id body, listing", body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}`, ctype: "application/json", list: true},
		{name: "plain text, call", body: "session not found\n", ctype: "text/plain; charset=utf-8"},
		{name: "python sdk body, call, with handlers", body: mcptest.DropSessionBody, ctype: "application/json", handlers: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &sessionEnder{target: target, getStatus: http.StatusMethodNotAllowed, body: tc.body, ctype: tc.ctype, sessions: map[string]bool{}}
			ts := httptest.NewServer(p)
			defer ts.Close()
			var opts *mcpconn.ConnectOptions
			if tc.handlers {
				opts = handlersWithLog
			}
			s, err := mcpconn.NewConnector(nil).Connect(context.Background(), "ender",
				resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL}, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if res, err := s.CallTool(context.Background(), mcptest.ToolEcho, []byte(`{"text":"before"}`)); err != nil || resultText(res) != "before" {
				t.Fatalf("call before the end: %v, %v", res, err)
			}
			p.ended.Store(true)

			if tc.list {
				_, err = s.Tools(context.Background())
				if !errors.Is(err, mcpconn.ErrUnavailable) || !strings.Contains(err.Error(), "the server ended the session (HTTP 404 Not Found)") {
					t.Errorf("listing after the end = %v; want ErrUnavailable, the server ended the session", err)
				}
			}
			_, err = s.CallTool(context.Background(), mcptest.ToolEcho, []byte(`{"text":"after"}`))
			if !errors.Is(err, mcpconn.ErrUnavailable) || !strings.Contains(err.Error(), "never reached it and did not run") {
				t.Errorf("call after the end = %v; want ErrUnavailable, never reached", err)
			}
			if !s.Lost() {
				t.Error("the session is not lost after the server ended it")
			}
			// Each request met the 404 once: none was sent again.
			if want := map[bool]int64{false: 1, true: 2}[tc.list]; p.lost.Load() != want {
				t.Errorf("%d requests met the 404; want %d", p.lost.Load(), want)
			}
			if loss, ok := s.Loss(); !ok || !loss.Charged || loss.Count != 1 {
				t.Errorf("Loss() = %+v, %v; want charged, count 1", loss, ok)
			}
			p.mu.Lock()
			for id := range p.sessions {
				if strings.Contains(err.Error(), id) {
					t.Errorf("error %q quotes the session id", err)
				}
			}
			p.mu.Unlock()
		})
	}
}

// A server that routes only POST (an Express app answers GET with 404
// "Cannot GET /mcp") refuses the standalone stream with 404: that is no
// stream, as a 405 is, not the end of the session.
func TestStandaloneStreamRefusedWith404KeepsTheSession(t *testing.T) {
	t.Parallel()
	// Sessions and the GET stream are legacy-only.
	p := &sessionEnder{target: mcptest.StartHTTP(t, "-era", string(mcptest.EraLegacy)), getStatus: http.StatusNotFound, sessions: map[string]bool{}, got: make(chan struct{})}
	ts := httptest.NewServer(p)
	defer ts.Close()
	s, err := mcpconn.NewConnector(nil).Connect(context.Background(), "post-only",
		resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL}, handlersWithLog)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	select {
	case <-p.got:
	case <-time.After(30 * time.Second):
		t.Fatal("no standalone GET within 30 s")
	}
	for _, text := range []string{"one", "two"} {
		if res, err := s.CallTool(context.Background(), mcptest.ToolEcho, []byte(`{"text":"`+text+`"}`)); err != nil || resultText(res) != text {
			t.Errorf("call %s = %v, %v", text, res, err)
		}
	}
	if s.Lost() {
		t.Error("a 404 to the standalone GET lost the session")
	}
}
