package run_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

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
			r := newRun(t, &run.Options{Repository: repo, MinRelistInterval: time.Nanosecond,
				Connector: mcpconn.NewConnector(&mcpconn.ConnectorOptions{TerminateGrace: 300 * time.Millisecond}),
				Observe: func(_ context.Context, n run.Notification) {
					if n.Kind == run.NotifyToolsChanged {
						changes.Add(1)
					}
				}})
			modern := tc.era == mcptest.EraModern
			waitUntil(t, "the listen to be acknowledged", func() bool {
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
				waitUntil(t, "the tools change", func() bool { return changes.Load() == 1 })
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
