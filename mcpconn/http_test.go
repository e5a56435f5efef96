package mcpconn_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// SPEC R2.5: the fake server served over streamable HTTP (and SSE) on
// 127.0.0.1 with a required header; the document's headers reach it, and
// without them the connection is refused with a clear error.
func TestRemoteWithRequiredHeader(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		typ  string
		args []string
	}{
		{name: "streamable HTTP", typ: resource.TransportHTTP},
		{name: "SSE", typ: resource.TransportSSE, args: []string{"-sse"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := mcptest.StartHTTP(t, append([]string{"-require-header", "X-Agt-Token: s3cret"}, tt.args...)...)
			c := mcpconn.NewConnector(nil)

			srv := resource.MCPServer{Type: tt.typ, URL: url, Headers: map[string]string{"X-Agt-Token": "s3cret"}}
			s, err := c.Connect(context.Background(), "remote", srv, nil)
			if err != nil {
				t.Fatalf("Connect with the header: %v", err)
			}
			if got := s.ServerInfo(); got == nil || got.Name != mcptest.ServerName {
				t.Errorf("server info = %+v", got)
			}
			tools, err := s.Tools(context.Background())
			if err != nil || len(tools) != 8 {
				t.Errorf("Tools = %d tools, %v; want 8", len(tools), err)
			}
			res, err := s.CallTool(context.Background(), mcptest.ToolEcho, []byte(`{"text":"over http"}`))
			if err != nil || resultText(res) != "over http" {
				t.Errorf("echo = %v, %v", res, err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}

			srv.Headers = nil
			s, err = c.Connect(context.Background(), "remote", srv, nil)
			if err == nil {
				s.Close()
				t.Fatal("Connect without the header succeeded")
			}
			if !errors.Is(err, mcpconn.ErrStart) && !errors.Is(err, mcpconn.ErrHandshake) {
				t.Errorf("Connect without the header = %v; want ErrStart or ErrHandshake", err)
			}
			if !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
				t.Errorf("error %q does not say the server refused (401)", err)
			}
		})
	}
}

// An unreachable URL fails within the startup timeout with ErrStart, and
// the error keeps a token in the URL's user info, path or query to itself.
func TestRemoteUnreachable(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{resource.TransportHTTP, resource.TransportSSE} {
		srv := resource.MCPServer{Type: typ, URL: "http://u:pw-s3cret@127.0.0.1:1/mcp/path-s3cret?key=query-s3cret", StartupTimeoutMS: 5000}
		_, err := mcpconn.NewConnector(nil).Connect(context.Background(), "gone", srv, nil)
		if !errors.Is(err, mcpconn.ErrStart) && !errors.Is(err, mcpconn.ErrHandshake) {
			t.Errorf("%s: Connect = %v; want ErrStart", typ, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error %q shows the URL's secrets", typ, err)
		}
	}
}

// A remote server that goes away during a call: the call did not get an
// answer from the server, and that is ErrUnavailable, not a protocol error
// of the server's (issue 4 §1 error contract).
func TestRemoteGoneIsUnavailable(t *testing.T) {
	t.Parallel()
	counters := &mcptest.Counters{}
	server := mcptest.NewServer(&mcptest.ServerOptions{Counters: counters})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer ts.Close()
	defer func() {
		// The client's goodbye could not reach the server: end its side here.
		for ss := range server.Sessions() {
			ss.Close()
		}
	}()
	s, err := mcpconn.NewConnector(nil).Connect(context.Background(), "gone", resource.MCPServer{Type: "http", URL: ts.URL + "/mcp?key=s3cret"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	errc := make(chan error, 1)
	go func() {
		// 2 s: the server's own session waits for the tool to end before it closes.
		_, err := s.CallTool(context.Background(), mcptest.ToolSleep, []byte(`{"ms":2000}`))
		errc <- err
	}()
	poll.Until(t, "the server to receive the call", func() bool { return counters.CallsOf(mcptest.ToolSleep) > 0 })
	ts.Listener.Close()
	ts.CloseClientConnections()
	if err = <-errc; !errors.Is(err, mcpconn.ErrUnavailable) {
		t.Errorf("call cut by the server's going away = %v; want ErrUnavailable", err)
	}
	if err != nil && strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q shows the URL's query", err)
	}
}

// A remote server that accepts the connection and never answers the
// handshake: ErrHandshake with the startup timeout, for both transports;
// goroutines are checked for the whole package in TestMain.
// In a synctest bubble over in-memory HTTP: the startup timeout is
// virtual time.
func TestRemoteNeverAnswers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testRemoteNeverAnswers)
}

func testRemoteNeverAnswers(t *testing.T) {
	url, rt := memHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: only then does the server notice the
		// client closing the connection, which is what ends this wait.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	for _, typ := range []string{resource.TransportHTTP, resource.TransportSSE} {
		start := time.Now()
		_, err := mcpconn.NewConnector(&mcpconn.ConnectorOptions{HTTPTransport: rt}).Connect(context.Background(), "mute", resource.MCPServer{Type: typ, URL: url, StartupTimeoutMS: 300}, nil)
		if !errors.Is(err, mcpconn.ErrHandshake) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "startup timeout of 300ms") {
			t.Errorf("%s: Connect = %v; want ErrHandshake after the startup timeout", typ, err)
		}
		// Over streamable HTTP the go-sdk then sends notifications/cancelled
		// to the mute server with 5 s of its own; it ends with the given-up
		// handshake instead. Virtual time: exact.
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: Connect took %s; want the startup timeout (300ms), not the go-sdk's 5 s for the cancel notification", typ, d)
		}
	}
}

// A streamable HTTP server that never answers the DELETE which ends its
// session: Close waits Limits.TerminateGrace for it, not the go-sdk's 5 s.
// A modern session has no session to end: no DELETE at all. In a synctest
// bubble over in-memory HTTP: the grace is virtual time, so exact.
func TestCloseDoesNotWaitForAMuteDelete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		era        mcptest.Era
		version    string
		wantDelete bool
	}{
		{mcptest.EraLegacy, mcpconn.LegacyProtocolVersion, true},
		{mcptest.EraModern, mcpconn.ModernProtocolVersion, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.era), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				server := mcptest.NewServer(&mcptest.ServerOptions{Era: tt.era})
				sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
					&mcp.StreamableHTTPOptions{Stateless: tt.era == mcptest.EraModern})
				var deletes atomic.Int64
				url, rt := memHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodDelete {
						deletes.Add(1)
						<-r.Context().Done() // the client gave up: now end the session, so nothing is left running
					}
					sdk.ServeHTTP(w, r)
				}))
				const grace = 200 * time.Millisecond
				c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{HTTPTransport: rt, Limits: &mcpconn.Limits{TerminateGrace: grace}})
				s, err := c.Connect(context.Background(), "mute", resource.MCPServer{Type: resource.TransportHTTP, URL: url, ProtocolVersion: tt.version}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := s.ProtocolVersion(); got != tt.version {
					t.Fatalf("protocol version %q; want %q", got, tt.version)
				}
				start := time.Now()
				_ = s.Close()
				d := time.Since(start)
				if got := deletes.Load() > 0; got != tt.wantDelete {
					t.Errorf("DELETE sent: %v; want %v", got, tt.wantDelete)
				}
				if d > grace {
					t.Errorf("Close took %s; want at most Limits.TerminateGrace (%s)", d, grace)
				}
			})
		})
	}
}
