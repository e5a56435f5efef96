package agt_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// The framework tools of a Host's Run follow the Run's
// ServerStderrToModel: mcp_probe shows a server's stderr to the model only
// when the host opted in.
func TestNewRunFrameworkToolsFollowServerStderrToModel(t *testing.T) {
	t.Parallel()
	const secret = "PASSWORD=hunter2-host"
	h, err := agt.Open(context.Background(), filepath.Join(t.TempDir(), "agt.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	leaky, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"leaky": map[string]any{
		"command": "/bin/sh", "args": []string{"-c", "echo '" + secret + "' >&2; exit 3"}, "cwd": t.TempDir(),
	}}})
	write(t, h, resource.KindMCP, "leaky", string(leaky))
	write(t, h, resource.KindAgent, "boss", `{"manager":true}`)
	for _, allowed := range []bool{false, true} {
		r, err := h.NewRun(context.Background(), "boss", &run.Options{Permission: policy.AutoAllow(), ServerStderrToModel: allowed})
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Execute(context.Background(), run.Batch{ID: "b", Agent: "boss", Calls: []run.Call{
			{ID: "p", Name: framework.ToolMCPProbe, Arguments: json.RawMessage(`{"reference":"leaky"}`)},
		}})
		_ = r.Close()
		if err != nil || out.Results[0].Failed() {
			t.Fatalf("mcp_probe: %v %s", err, out.Results[0].ToolError())
		}
		var rep mcpconn.ProbeReport
		if err := json.Unmarshal(out.Results[0].Structured, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.OK || strings.Contains(string(out.Results[0].ForModel()), secret) != allowed {
			t.Errorf("ServerStderrToModel %v: the probe answer holds the stderr: %v:\n%s", allowed, !allowed, out.Results[0].ForModel())
		}
	}
}
