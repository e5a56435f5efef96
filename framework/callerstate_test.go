package framework_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// The host takes a manager's rights away while its Run is open: every
// framework call after that is judged by the stored agent, not by what the
// Run saw at its start, and is refused naming the field that changed. The
// Run still lists the tools (its snapshot is from the start), so the
// service is the layer that must refuse. Issue 23 item 7; SPEC R3.6.
func TestFrameworkCallsFollowTheCallersStoredRights(t *testing.T) {
	t.Parallel()
	calls := []struct{ tool, args string }{
		{framework.ToolResourceWrite, `{"kind":"agent","reference":"boss","add":{"mcps":["spare"]}}`},
		{framework.ToolResourceWrite, `{"kind":"mcp","reference":"extra","create":true,"data":%s}`},
		{framework.ToolResourceRead, `{"kind":"mcp","reference":"notes"}`},
		{framework.ToolResourceTest, `{"kind":"mcp","reference":"notes"}`},
		{framework.ToolMCPProbe, `{"reference":"notes"}`},
		{framework.ToolAgentMCPList, `{}`},
	}
	for _, tc := range []struct {
		name    string
		initial string // the agent as the Run starts
		change  string // the host's direct patch while the Run is open
		inMsg   string // what the refusal names
	}{
		{"disabled", `{"manager":true,"mcps":["notes"]}`, `{"enabled":false}`, "disabled"},
		{"no longer a manager", `{"manager":true,"mcps":["notes"]}`, `{"manager":false}`, "not a manager"},
		{"capability removed", `{"capabilities":["resource_management"],"mcps":["notes"]}`, `{"capabilities":[]}`, "resource_management"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, nil)
			cwd := t.TempDir()
			server := serverData(mcptest.Command(t), cwd)
			h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "notes", Create: true, Data: server})
			h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "spare", Create: true, Data: server})
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(tc.initial)})
			m := &model{t: t, r: h.newRun(t, "boss", policy.AutoAllow())}
			if !hasTool(m.r, framework.ToolResourceWrite) {
				t.Fatalf("the manager's Run lacks %s: %v", framework.ToolResourceWrite, toolNames(m.r))
			}
			// The check below can fail: the same call is accepted before.
			mustOK(t, m.one(framework.ToolResourceRead, `{"kind":"mcp","reference":"notes"}`))

			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Data: json.RawMessage(tc.change)})
			accepted := 0
			for _, c := range calls {
				args := c.args
				if strings.Contains(args, "%s") {
					args = fmt.Sprintf(args, server)
				}
				res := m.one(c.tool, args)
				if !res.Failed() {
					accepted++
					t.Errorf("%s %s by an agent whose rights were taken away: accepted", c.tool, args)
					continue
				}
				if res.Code != run.CodeUnauthorized {
					t.Errorf("%s: code %q, want %q (%s)", c.tool, res.Code, run.CodeUnauthorized, res.ToolError())
				}
				if te := string(res.ToolError()); !strings.Contains(te, tc.inMsg) || strings.Contains(te, cwd) {
					t.Errorf("%s: ToolError %s does not name %q, or repeats a value", c.tool, te, tc.inMsg)
				}
			}
			t.Logf("%s: %d of %d framework calls accepted after the change", tc.name, accepted, len(calls))
			if got := mounts(t, h, "boss"); len(got) != 1 {
				t.Errorf("the agent's mounts after refused writes = %v, want [notes]", got)
			}
			if _, err := h.svc.Read(t.Context(), resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: "extra"}); err == nil {
				t.Error("a refused create stored its resource")
			}
		})
	}
}
