package mcpconn_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// idProxy stands on 127.0.0.1 before a streamable HTTP server and gives
// every event of its event streams an id, as a server with an event
// store does; when the server breaks a stream, the proxy ends it too. It
// counts the GETs that would resume a stream.
type idProxy struct {
	target    string
	ids, gets atomic.Int64
}

func (p *idProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		p.gets.Add(1)
	}
	resp := relay(w, r, p.target)
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if strings.TrimRight(line, "\r\n") == "" {
			fmt.Fprintf(w, "id: e%d\n", p.ids.Add(1))
		}
		_, _ = io.WriteString(w, line)
		w.(http.Flusher).Flush()
	}
}

// Issue 25 items 6 and 8: a modern server that gives its events ids all
// the same (MCP 2026-07-28 has no resumption) and breaks a call's stream
// has the call take the rule of a lost request: a read-only tool is sent
// again once and answers, one with side effects fails unavailable with
// the outcome unknown, and the session lives on. The wire layer drops
// the ids, so the go-sdk never tries to resume the stream with a GET
// (which a modern server refuses; the go-sdk then failed the connection,
// and the session was lost). A legacy stream keeps its ids: the go-sdk
// resumes it as before (this fake keeps no events, so the resumption
// fails and the connection is lost, as TestBrokenStreamLosesCall's
// legacy cases are).
func TestModernEventIDsDoNotResume(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		era  mcptest.Era
		tool string
		sent int  // requests the server saw
		ok   bool // the call succeeded
	}{
		{"modern/read-only", mcptest.EraModern, mcptest.ToolBreakRead, 2, true},
		{"modern/side effects", mcptest.EraModern, mcptest.ToolBreakWrite, 1, false},
		{"legacy/read-only", mcptest.EraLegacy, mcptest.ToolBreakRead, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			callLog := filepath.Join(t.TempDir(), "calls.log")
			srv := eraServer(t, resource.TransportHTTP, tc.era, "-fault", string(mcptest.FaultBreakStream), "-call-log", callLog)
			p := &idProxy{target: srv.URL}
			ts := httptest.NewServer(p)
			defer ts.Close()
			srv.URL = ts.URL
			c := quickConnector(nil)
			defer c.Close()
			s, err := c.Connect(context.Background(), "tools/fake", srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Tools(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, err := s.CallTool(context.Background(), tc.tool, nil)
			if p.ids.Load() == 0 {
				t.Fatal("the proxy gave no event an id")
			}
			if got := callsIn(t, callLog, tc.tool); got != tc.sent {
				t.Errorf("the server saw %d requests of %s, want %d", got, tc.tool, tc.sent)
			}
			if tc.era == mcptest.EraLegacy {
				if !errors.Is(err, mcpconn.ErrUnavailable) || p.gets.Load() == 0 {
					t.Errorf("CallTool: %v, %d GETs; want unavailable after a resumption (GET with Last-Event-ID)", err, p.gets.Load())
				}
				return
			}
			if n := p.gets.Load(); n != 0 {
				t.Errorf("%d GETs; a modern stream is never resumed", n)
			}
			if tc.ok {
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if got, want := resultText(res), tc.tool+" answered (call 2)"; got != want {
					t.Errorf("result %q, want %q", got, want)
				}
			} else if !errors.Is(err, mcpconn.ErrUnavailable) || !strings.Contains(err.Error(), "the outcome is unknown") {
				t.Errorf("CallTool: %v, %q; want unavailable, the outcome unknown", err, resultText(res))
			}
			if s.Lost() {
				t.Fatal("a broken stream of the modern era lost the session")
			}
			if got := resultText(call(t, s, context.Background(), mcptest.ToolEcho, map[string]string{"text": "after"})); got != "after" {
				t.Errorf("echo after the broken stream: %q", got)
			}
		})
	}
}
