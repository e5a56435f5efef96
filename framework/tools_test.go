package framework_test

import (
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

// managerModel returns a scripted model over the Run of a new manager agent.
func managerModel(t *testing.T, h *host) *model {
	t.Helper()
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
	return &model{t: t, r: h.newRun(t, "boss", policy.AutoAllow())}
}

// TestProbeFailureIsAReport: a server that cannot start is an answer the
// model can act on (SPEC R3.2): the probe report with ok=false, the error
// and the stderr tail, not an internal failure that drops the report and
// puts the server's stderr into the error message.
func TestProbeFailureIsAReport(t *testing.T) {
	h := newHost(t, nil)
	m := managerModel(t, h)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": map[string]any{
		"command": mcptest.Command(t), "args": []string{"-fault", string(mcptest.FaultExitAtStart)}, "cwd": t.TempDir(),
	}}})
	h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "broken", Create: true, Data: data})

	res := m.one(framework.ToolMCPProbe, `{"reference":"broken"}`)
	rep := structured[mcpconn.ProbeReport](t, res)
	if rep.OK || rep.Error == "" || rep.Reference != "broken" {
		t.Fatalf("report = %+v, want not OK with an error", rep)
	}
	if !strings.Contains(rep.StderrTail, "exiting at start") {
		t.Fatalf("stderr tail = %q, want the server's stderr", rep.StderrTail)
	}
	if strings.Contains(rep.Error, "exiting at start") {
		t.Fatalf("the report's error repeats the stderr tail: %q", rep.Error)
	}
	if res.Changed != nil {
		t.Fatalf("a probe reported a change: %v", res.Changed)
	}
}

// TestProbeLegacyRecord: a record saved before cwd was required probes to a
// not-OK report saying what is missing (SPEC R2.4), and nothing starts.
func TestProbeLegacyRecord(t *testing.T) {
	h := newHost(t, nil)
	m := managerModel(t, h)
	// Written straight to the repository, as a record from before R2.2.
	if _, err := h.repo.Create(t.Context(), resource.Key{Kind: resource.KindMCP, Ref: "old"}, json.RawMessage(`{"mcpServers":{"fake":{"command":"fakemcp"}}}`)); err != nil {
		t.Fatal(err)
	}
	rep := structured[mcpconn.ProbeReport](t, m.one(framework.ToolMCPProbe, `{"reference":"old"}`))
	if rep.OK || !strings.Contains(rep.Error, "cwd") {
		t.Fatalf("report = %+v, want not OK naming cwd", rep)
	}
}

// TestProbeCodes: a missing reference is not_found before anything starts.
func TestProbeCodes(t *testing.T) {
	h := newHost(t, nil)
	m := managerModel(t, h)
	mustCode(t, m.one(framework.ToolMCPProbe, `{"reference":"ghost"}`), run.CodeNotFound)
	// An agent reference is not an MCP resource.
	mustCode(t, m.one(framework.ToolMCPProbe, `{"reference":"boss"}`), run.CodeNotFound)
}

// TestWriteExpectedRevisionZero: the schema accepts what the service does;
// expected_revision 0 means no check (SPEC R2.6), a negative one is refused
// with its path.
func TestWriteExpectedRevisionZero(t *testing.T) {
	h := newHost(t, nil)
	m := managerModel(t, h)
	mustOK(t, m.one(framework.ToolResourceWrite, `{"kind":"agent","reference":"w","create":true,"data":{},"expected_revision":0}`))
	mustOK(t, m.one(framework.ToolResourceWrite, `{"kind":"agent","reference":"w","data":{"name":"w"},"expected_revision":0}`))
	res := m.one(framework.ToolResourceWrite, `{"kind":"agent","reference":"w","data":{"name":"x"},"expected_revision":-1}`)
	mustCode(t, res, run.CodeInvalidArguments)
	if len(res.Violations) == 0 || res.Violations[0].Path != "/expected_revision" {
		t.Fatalf("violations = %+v, want /expected_revision", res.Violations)
	}
}

// TestResourceTestAgent: resource_test checks an agent as the service does
// (its document and that every mount resolves), statically (SPEC R3.1,
// R3.5); a missing resource is not_found.
func TestResourceTestAgent(t *testing.T) {
	h := inMemoryHost(t, "a")
	m := managerModel(t, h)
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "w", Create: true, Data: json.RawMessage(`{"mcps":["a"]}`)})
	if err := h.svc.Delete(t.Context(), resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: "a"}, resource.AnyRevision); err != nil {
		t.Fatal(err)
	}
	rep := structured[resource.TestReport](t, m.one(framework.ToolResourceTest, `{"kind":"agent","reference":"w"}`))
	if rep.OK || len(rep.Findings) != 1 || rep.Findings[0].Code != resource.CodeMountMissing || rep.Findings[0].Field != "/mcps/0" {
		t.Fatalf("report = %+v, want one mount_not_found at /mcps/0", rep)
	}
	mustCode(t, m.one(framework.ToolResourceTest, `{"kind":"mcp","reference":"a"}`), run.CodeNotFound)
}
