package framework_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// stderrSecret is what the hostile server of these tests prints on stderr
// before it exits, as a server that dumps its environment does.
const stderrSecret = "PASSWORD=hunter2-stderr-secret"

func leakyServerData(t *testing.T) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"leaky": map[string]any{
		"command": "/bin/sh", "args": []string{"-c", "echo '" + stderrSecret + "' >&2; exit 3"}, "cwd": t.TempDir(),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A server's stderr does not reach the model through the framework tools
// (the mcp_probe answer, the notice of the refresh its registration
// caused) unless the host opts in; the Prober's report and error (what the
// CLI prints) and the audit keep it.
func TestServerStderrReachesTheModelOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	for _, allowed := range []bool{false, true} {
		name := "default"
		if allowed {
			name = "ServerStderrToModel"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, nil)
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
			good, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": map[string]any{"command": mcptest.Command(t), "cwd": t.TempDir()}}})
			h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "notes", Create: true, Data: good})
			h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "leaky", Create: true, Data: leakyServerData(t)})
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Data: json.RawMessage(`{"mcps":["notes"]}`)})
			r, err := run.New(context.Background(), &run.Options{
				Agent: "boss", Repository: h.repo, Connector: h.connector, Permission: policy.AutoAllow(), Auditor: h.audit,
				HostTools:           framework.Tools(h.svc, h.prober, &framework.Options{ServerStderrToModel: allowed}),
				ServerStderrToModel: allowed,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close() })
			m := &model{t: t, r: r}

			// mcp_probe: everything the model reads of the answer.
			res := m.one(framework.ToolMCPProbe, `{"reference":"leaky"}`)
			rep := structured[mcpconn.ProbeReport](t, res)
			if rep.OK || !strings.Contains(rep.Error, "exit status 3") {
				t.Fatalf("report = %+v, want not OK with the exit status", rep)
			}
			if strings.Contains(rep.Error, stderrSecret) {
				t.Errorf("the report's error holds the stderr tail: %q", rep.Error)
			}
			if got := strings.Contains(rep.StderrTail, stderrSecret); got != allowed {
				t.Errorf("stderr_tail = %q, want the server's stderr: %v", rep.StderrTail, allowed)
			}
			if got := strings.Contains(string(res.ForModel())+string(res.Content), stderrSecret); got != allowed {
				t.Errorf("the mcp_probe answer holds the server's stderr: %v, want %v:\n%s", got, allowed, res.ForModel())
			}

			// A resource_write that mounts the leaky server: the refresh
			// fails, and its notice is the model's.
			out := m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(`{"kind":"agent","reference":"boss","add":{"mcps":["leaky"]}}`)})
			mustOK(t, out.Results[0])
			if out.Refresh == nil || out.Refresh.OK {
				t.Fatalf("refresh = %+v, want a failure", out.Refresh)
			}
			want := 0
			if allowed {
				want = 1
			}
			if n := strings.Count(out.Notice(), stderrSecret); n != want {
				t.Errorf("the notice holds the stderr %d times, want %d:\n%s", n, want, out.Notice())
			}
			if n := strings.Count(h.audit.messages(run.EventRefresh), stderrSecret); n != 1 {
				t.Errorf("the refresh audit holds the stderr %d times, want 1", n)
			}

			// The Prober itself (the CLI's agt mcp probe) keeps it, in the
			// error and in the report's own field, not in the report's error.
			prep, err := h.prober.Probe(context.Background(), "leaky")
			if err == nil || !strings.Contains(err.Error(), stderrSecret) {
				t.Errorf("Probe error = %v, want the stderr tail", err)
			}
			if prep == nil || !strings.Contains(prep.StderrTail, stderrSecret) || strings.Contains(prep.Error, stderrSecret) {
				t.Errorf("Probe report = %+v, want the stderr in StderrTail only", prep)
			}
		})
	}
}
