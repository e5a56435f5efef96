package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// callsIn counts the tools/call requests of tool in a -call-log file.
func callsIn(t *testing.T, callLog, tool string) int {
	t.Helper()
	b, err := os.ReadFile(callLog)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line == tool {
			n++
		}
	}
	return n
}

// Issue 25 item 6: a response stream that breaks in the middle of a call
// loses the request for good in the modern era (no resumption). A tool
// the server's listing marks read-only or idempotent is sent again, once,
// and succeeds: the server saw two requests. One marked neither is not
// (the server saw one): the call fails unavailable, saying the outcome is
// unknown, and the session lives on. Without a listing of the session
// nothing is known of the tool, so nothing is sent again. In the legacy
// era the go-sdk's resumption stays as it was: the fake sends no event
// ids, so nothing can be resumed, the call fails unavailable and is not
// sent again.
func TestBrokenStreamLosesCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		era    mcptest.Era
		tool   string
		listed bool
		sent   int  // requests the server saw
		ok     bool // the call succeeded
	}{
		{"modern/read-only", mcptest.EraModern, mcptest.ToolBreakRead, true, 2, true},
		{"modern/idempotent", mcptest.EraModern, mcptest.ToolBreakIdempotent, true, 2, true},
		{"modern/side effects", mcptest.EraModern, mcptest.ToolBreakWrite, true, 1, false},
		{"modern/read-only, not listed", mcptest.EraModern, mcptest.ToolBreakRead, false, 1, false},
		{"legacy/read-only", mcptest.EraLegacy, mcptest.ToolBreakRead, true, 1, false},
		{"legacy/side effects", mcptest.EraLegacy, mcptest.ToolBreakWrite, true, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			callLog := filepath.Join(t.TempDir(), "calls.log")
			srv := eraServer(t, resource.TransportHTTP, tc.era, "-fault", string(mcptest.FaultBreakStream), "-call-log", callLog)
			c := quickConnector(nil)
			defer c.Close()
			s, err := c.Connect(context.Background(), "tools/fake", srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if tc.listed {
				if _, err := s.Tools(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			res, err := s.CallTool(context.Background(), tc.tool, nil)
			if got := callsIn(t, callLog, tc.tool); got != tc.sent {
				t.Errorf("the server saw %d requests of %s, want %d", got, tc.tool, tc.sent)
			}
			if tc.ok {
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if got, want := resultText(res), tc.tool+" answered (call 2)"; got != want {
					t.Errorf("result %q, want %q", got, want)
				}
				if s.Lost() {
					t.Error("the session is lost")
				}
				return
			}
			if !errors.Is(err, mcpconn.ErrUnavailable) {
				t.Fatalf("CallTool: %v; want ErrUnavailable", err)
			}
			if tc.era == mcptest.EraLegacy {
				return // as before item 6: the connection is lost
			}
			if !strings.Contains(err.Error(), "the outcome is unknown") || !strings.Contains(err.Error(), "neither read-only nor idempotent") {
				t.Errorf("CallTool: %v; want the outcome unknown, not sent again", err)
			}
			if s.Lost() {
				t.Error("a broken stream of the modern era lost the session")
			}
			if got := resultText(call(t, s, context.Background(), mcptest.ToolEcho, map[string]string{"text": "after"})); got != "after" {
				t.Errorf("echo after the broken stream: %q", got)
			}
		})
	}
}

// refuseCalls fails the first n tools/call POSTs before writing a byte of
// them, as a refused or reset connection does.
type refuseCalls struct {
	base http.RoundTripper
	left atomic.Int32
}

func (r *refuseCalls) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Header.Get("Mcp-Method") == "tools/call" && r.left.Add(-1) >= 0 {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, errors.New("dial tcp: connect: connection refused")
	}
	return r.base.RoundTrip(req)
}

// Issue 25 item 6: a modern request that never left (the POST failed
// before it was written) cannot have run, whatever its tool: it is sent
// again once and succeeds (the server saw it once). Refused twice, the
// server is out of reach: the call fails unavailable saying it did not
// run, and the session is lost (the Run restarts it).
func TestUnsentCallSentAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		refused int32
		ok      bool
	}{
		{"refused once", 1, true},
		{"refused twice", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			callLog := filepath.Join(t.TempDir(), "calls.log")
			srv := eraServer(t, resource.TransportHTTP, mcptest.EraModern, "-call-log", callLog)
			rt := &refuseCalls{base: http.DefaultTransport.(*http.Transport).Clone()}
			rt.left.Store(tc.refused)
			c := quickConnector(&mcpconn.ConnectorOptions{HTTPTransport: rt})
			defer c.Close()
			s, err := c.Connect(context.Background(), "tools/fake", srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.CallTool(context.Background(), mcptest.ToolNoteCreate, json.RawMessage(`{"owner":"ann","title":"once"}`))
			if got, want := callsIn(t, callLog, mcptest.ToolNoteCreate), map[bool]int{true: 1, false: 0}[tc.ok]; got != want {
				t.Errorf("the server saw %d requests, want %d", got, want)
			}
			if tc.ok {
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if res.IsError {
					t.Fatalf("CallTool: %s", resultText(res))
				}
				if s.Lost() {
					t.Error("the session is lost")
				}
				return
			}
			if !errors.Is(err, mcpconn.ErrUnavailable) || !strings.Contains(err.Error(), "did not run") || !s.Lost() {
				t.Errorf("CallTool: %v, Lost %v; want unavailable, did not run, the session lost", err, s.Lost())
			}
		})
	}
}
