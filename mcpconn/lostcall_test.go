package mcpconn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
			s, err := c.Connect(context.Background(), "tools/fake", srv)
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
