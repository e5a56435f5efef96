package run_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
)

// Issue 24 item 2: a streamable HTTP server that ends a session answers
// its next request with 404 and a JSON-RPC error body, as the Python SDK
// does ("Session not found"), and offers no GET stream, so nothing else
// tells the client. Before, every later call of the Run failed as
// tool_error "Session not found", for ever. MCP 2025-11-25 (session
// management): on 404 the client must start a new session. The call that
// got the 404 fails as unavailable, saying it never reached the server;
// the mount is restarted once, at that batch's boundary; the next batch
// works; the failed call is not sent again.
func TestDroppedSessionRestartsMount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"event stream answers", nil},
		{"application/json answers", []string{"-json-response"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			callLog := filepath.Join(t.TempDir(), "calls.log")
			// Sessions are legacy-only: a modern server has none to drop.
			url := mcptest.StartHTTP(t, append([]string{"-era", string(mcptest.EraLegacy), "-fault", string(mcptest.FaultDropSession), "-call-log", callLog}, tc.args...)...)
			repo := newRepo(t)
			const ref = resource.Ref("dropper")
			putMCP(t, repo, ref, resource.MCPServer{Type: resource.TransportHTTP, URL: url})
			putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{ref}})
			audit := &auditLog{}
			r := newRun(t, &run.Options{Repository: repo, Auditor: audit})
			echo, drop := run.Alias(ref, mcptest.ToolEcho), run.Alias(ref, mcptest.ToolDropSession)

			var restarted []resource.Ref
			exec := func(id string, c run.Call) run.Result {
				t.Helper()
				out, err := r.Execute(context.Background(), run.Batch{ID: id, Agent: testAgent, Calls: []run.Call{c}})
				if err != nil {
					t.Fatalf("batch %s: %v", id, err)
				}
				if out.Refresh != nil {
					restarted = append(restarted, out.Refresh.Restarted...)
				}
				return out.Results[0]
			}
			if res := exec("b1", call("before", echo, `{"text":"before"}`)); res.Failed() {
				t.Fatalf("before the drop: %s %s", res.Code, res.Message)
			}
			if res := exec("b2", call("drop", drop, `{}`)); res.Failed() {
				t.Fatalf("drop_session: %s %s", res.Code, res.Message)
			}
			res := exec("b3", call("dropped", echo, `{"text":"dropped"}`))
			if res.Code != run.CodeUnavailable || !strings.Contains(res.Message, "never reached it") ||
				!strings.Contains(res.Message, "restarted at the end of this batch") {
				t.Errorf("the call that met the 404: %s %q; want unavailable, never reached, restarted at the end of this batch", res.Code, res.Message)
			}
			for _, id := range []string{"after", "again"} {
				if res := exec("b-"+id, call(id, echo, `{"text":"`+id+`"}`)); res.Failed() {
					t.Errorf("%s the restart: %s %s", id, res.Code, res.Message)
				}
			}
			if diff := cmp.Diff([]resource.Ref{ref}, restarted); diff != "" {
				t.Errorf("restarts (-want +got):\n%s", diff)
			}
			if lost := audit.records("server_lost"); len(lost) != 1 || lost[0].Source.Ref != ref {
				t.Errorf("server_lost records = %+v, want one for %s", lost, ref)
			}
			// The server received every call but the one that met the
			// 404: it was not sent again.
			want := []string{mcptest.ToolEcho, mcptest.ToolDropSession, mcptest.ToolEcho, mcptest.ToolEcho}
			if diff := cmp.Diff(want, readLines(t, callLog)); diff != "" {
				t.Errorf("calls the server received (-want +got):\n%s", diff)
			}
			// Each call has one audit record; the dropped call's says
			// unavailable.
			var dropped []run.Code
			for _, rec := range audit.records("call") {
				if rec.CallID == "dropped" {
					dropped = append(dropped, rec.Code)
				}
			}
			if diff := cmp.Diff([]run.Code{run.CodeUnavailable}, dropped); diff != "" {
				t.Errorf("audit records of the dropped call (-want +got):\n%s", diff)
			}
		})
	}
}
