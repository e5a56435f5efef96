package run_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// Issue 25 item 5: in both eras, on stdio and streamable HTTP, a tools
// change on the server reaches the Run's boundary refresh: in the modern
// era through the subscriptions/listen stream the Run's sessions open,
// in the legacy era as before. On stdio the change comes before the
// call's result (one stream), so the batch that made it re-lists; over
// HTTP the listen stream is not the call's, so the change may be read
// after the batch ended, and the next batch re-lists.
func TestToolsChangeRefreshesInBothEras(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		era       mcptest.Era
	}{
		{resource.TransportStdio, mcptest.EraModern},
		{resource.TransportStdio, mcptest.EraLegacy},
		{resource.TransportHTTP, mcptest.EraModern},
		{resource.TransportHTTP, mcptest.EraLegacy},
	} {
		t.Run(tc.transport+"/"+string(tc.era), func(t *testing.T) {
			t.Parallel()
			args := []string{"-fault", string(mcptest.FaultClientFeatures), "-era", string(tc.era)}
			srv := stdioServer(t, args...)
			if tc.transport == resource.TransportHTTP {
				srv = resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, args...)}
			}
			repo := newRepo(t)
			putMCP(t, repo, featRef, srv)
			putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{featRef}})
			var changes atomic.Int32
			r := newRun(t, &run.Options{
				Repository: repo,
				Connector:  mcpconn.NewConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{TerminateGrace: 300 * time.Millisecond}}),
				Limits:     &run.Limits{MinRelistInterval: time.Nanosecond},
				ClientFeatures: &run.ClientFeatures{Observe: func(_ context.Context, n run.Notification) {
					if n.ToolsChanged {
						changes.Add(1)
					}
				}},
			})
			modern := tc.era == mcptest.EraModern
			poll.Until(t, "the listen to be acknowledged", func() bool {
				var got mcptest.ListensOut
				if err := json.Unmarshal([]byte(text(t, execute(t, r, featCall("listens", mcptest.ToolListens, `{}`)).Results[0])), &got); err != nil {
					t.Fatal(err)
				}
				if want := map[bool]int{true: 1, false: 0}[modern]; got.Received != want {
					t.Fatalf("the server received %d listens, want %d", got.Received, want)
				}
				return !modern || got.Open == 1 // then the change below reaches the Run
			})
			out := execute(t, r, featCall("add", mcptest.ToolAddTool, `{"name":"late"}`))
			if out.Refresh == nil && tc.transport == resource.TransportHTTP {
				poll.Until(t, "the tools change", func() bool { return changes.Load() == 1 })
				out = execute(t, r, featCall("echo", mcptest.ToolEcho, `{"text":"x"}`))
			}
			if out.Refresh == nil || !slices.Equal(out.Refresh.Relisted, []resource.Ref{featRef}) || !out.Refresh.OK {
				t.Fatalf("refresh %+v; want the mount re-listed", out.Refresh)
			}
			late := run.Alias(featRef, "late")
			if got := text(t, execute(t, r, call("late", late, `{"text":"hi"}`)).Results[0]); got != "hi" {
				t.Errorf("the new tool answered %q", got)
			}
		})
	}
}

// Issue 25 item 6: in the modern era a call whose response stream breaks
// is sent again once by its session when the server's listing marks the
// tool read-only or idempotent, and the model gets the answer; otherwise
// the model gets unavailable saying the outcome is unknown, the call is
// not sent again (the server saw it once), and the mount is not
// restarted: its session lives on, and the next call works.
func TestBrokenStreamInRun(t *testing.T) {
	t.Parallel()
	callLog := filepath.Join(t.TempDir(), "calls.log")
	url := mcptest.StartHTTP(t, "-fault", string(mcptest.FaultBreakStream), "-era", string(mcptest.EraModern), "-call-log", callLog)
	repo := newRepo(t)
	const ref = resource.Ref("breaker")
	putMCP(t, repo, ref, resource.MCPServer{Type: resource.TransportHTTP, URL: url})
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{ref}})
	r := newRun(t, &run.Options{Repository: repo})
	seen := func(tool string) int {
		b, _ := os.ReadFile(callLog)
		return strings.Count(string(b), tool+"\n")
	}

	out := execute(t, r, call("read", run.Alias(ref, mcptest.ToolBreakRead), `{}`))
	if res := out.Results[0]; res.Failed() || text(t, res) != mcptest.ToolBreakRead+" answered (call 2)" || seen(mcptest.ToolBreakRead) != 2 {
		t.Errorf("read-only: %s %q, the server saw %d requests; want the answer to the second", res.Code, res.Message, seen(mcptest.ToolBreakRead))
	}
	out = execute(t, r, call("write", run.Alias(ref, mcptest.ToolBreakWrite), `{}`))
	if res := out.Results[0]; res.Code != run.CodeUnavailable || !strings.Contains(res.Message, "the outcome is unknown") || seen(mcptest.ToolBreakWrite) != 1 {
		t.Errorf("side effects: %s %q, the server saw %d requests; want unavailable, outcome unknown, one request", res.Code, res.Message, seen(mcptest.ToolBreakWrite))
	}
	if out.Refresh != nil && len(out.Refresh.Restarted) > 0 {
		t.Errorf("the mount was restarted: %+v", out.Refresh)
	}
	if res := execute(t, r, call("echo", run.Alias(ref, mcptest.ToolEcho), `{"text":"after"}`)).Results[0]; res.Failed() || text(t, res) != "after" {
		t.Errorf("after the broken stream: %s %q", res.Code, res.Message)
	}
}
