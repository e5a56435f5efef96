package framework_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// TestToolContract is the end-to-end tool contract (SPEC R8.3): register ->
// probe -> self-mount -> bad call -> correction -> unload at the batch
// boundary, failure retention, and authorization, with the bundled fake MCP
// server over stdio and a scripted model.
func TestToolContract(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			h := newHost(t, nil)
			const manager, worker = resource.Ref("ops/manager"), resource.Ref("worker")
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: manager, Create: true, Data: json.RawMessage(`{"name":"manager","capabilities":["resource_management"]}`)})
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: worker, Create: true, Data: json.RawMessage(`{"name":"worker"}`)})

			// Denying note_delete lets the test show that a denied call never
			// reaches the server.
			perm := policy.First(policy.Rules{Deny: []string{"mcp__*__note_delete"}}, policy.AutoAllow())
			r := h.newRun(t, manager, perm)
			m := &model{t: t, r: r}
			for _, name := range []string{framework.ToolResourceWrite, framework.ToolResourceRead, framework.ToolResourceTest, framework.ToolMCPProbe, framework.ToolAgentMCPList} {
				if !hasTool(r, name) {
					t.Fatalf("manager's Run lacks %s: %v", name, toolNames(r))
				}
			}

			// Register (SPEC R2.1): the fake server logs every tools/call it gets to
			// calls.log in its cwd, a relative argument resolved against cwd.
			dir := t.TempDir()
			callLog := filepath.Join(dir, "calls.log")
			register, _ := json.Marshal(map[string]any{
				"kind": "mcp", "reference": "notes", "create": true,
				"data": map[string]any{"mcpServers": map[string]any{"fake": map[string]any{
					"command": mcptest.Command(t), "args": []string{"-era", string(e), "-call-log", "calls.log"}, "cwd": dir,
				}}},
			})
			out := m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: register})
			mustOK(t, out.Results[0])
			if out.Refresh != nil {
				t.Fatalf("registering an unmounted server refreshed the Run: %+v", out.Refresh)
			}
			if hasTool(r, run.Alias("notes", mcptest.ToolSearch)) {
				t.Fatal("registration alone mounted the server (SPEC R4.1)")
			}

			// Static test, then probe (SPEC R3.1, R3.2): no tool is called.
			rep := structured[resource.TestReport](t, m.one(framework.ToolResourceTest, `{"kind":"mcp","reference":"notes"}`))
			if !rep.OK {
				t.Fatalf("resource_test: %+v", rep.Findings)
			}
			probe := structured[mcpconn.ProbeReport](t, m.one(framework.ToolMCPProbe, `{"reference":"notes"}`))
			if !probe.OK || probe.Server == nil || probe.Server.Name != mcptest.ServerName {
				t.Fatalf("probe: %+v", probe)
			}
			if calls := readCalls(t, callLog); len(calls) != 0 {
				t.Fatalf("the probe called tools: %v", calls)
			}

			// Self-mount: the tools appear at the batch boundary, not before.
			search := run.Alias("notes", mcptest.ToolSearch)
			out = m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(`{"kind":"agent","reference":"ops/manager","add":{"mcps":["notes"]}}`)})
			mustOK(t, out.Results[0])
			if out.Refresh == nil || !out.Refresh.OK {
				t.Fatalf("self-mount did not refresh: %+v", out.Refresh)
			}
			if !hasTool(r, search) {
				t.Fatalf("after the boundary the Run lacks %s: %v", search, toolNames(r))
			}

			// A bad call: invalid_arguments with paths, the server is not called
			// (SPEC R5.3), and the error does not echo the value.
			bad := m.one(search, `{"query":"secret-query-text","limit":0}`)
			mustCode(t, bad, run.CodeInvalidArguments)
			if len(bad.Violations) == 0 || bad.Violations[0].Path != "/limit" {
				t.Fatalf("violations = %+v, want /limit", bad.Violations)
			}
			if strings.Contains(string(bad.ToolError()), "secret-query-text") {
				t.Fatalf("the ToolError echoes an argument value: %s", bad.ToolError())
			}
			if calls := readCalls(t, callLog); len(calls) != 0 {
				t.Fatalf("an invalid call reached the server: %v", calls)
			}

			// The correction succeeds; a denied call in the same batch never runs.
			out = m.batch(
				run.Call{Name: search, Arguments: json.RawMessage(`{"query":"go","limit":5}`)},
				run.Call{Name: run.Alias("notes", mcptest.ToolNoteDelete), Arguments: json.RawMessage(`{"id":"n1","caller":"alice"}`)},
			)
			mustOK(t, out.Results[0])
			mustCode(t, out.Results[1], run.CodePermissionDenied)
			if calls := readCalls(t, callLog); !equalStrings(calls, []string{mcptest.ToolSearch}) {
				t.Fatalf("server calls = %v, want exactly one search", calls)
			}
			env := structured[mcptest.EnvironmentOut](t, m.one(run.Alias("notes", mcptest.ToolEnvironment), `{}`))
			if env.Cwd != dir {
				t.Fatalf("server cwd = %q, want the document's cwd (SPEC R2.3)", env.Cwd)
			}

			// Unmount: at the boundary the tools are gone and the process exited.
			out = m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(`{"kind":"agent","reference":"ops/manager","remove":{"mcps":["notes"]}}`)})
			mustOK(t, out.Results[0])
			if out.Refresh == nil || !out.Refresh.OK || !equalRefs(out.Refresh.Removed, []resource.Ref{"notes"}) {
				t.Fatalf("unmount refresh: %+v", out.Refresh)
			}
			if hasTool(r, search) {
				t.Fatal("an unmounted tool is still listed")
			}
			_, err := m.try(run.Call{Name: search, Arguments: json.RawMessage(`{"query":"go","limit":5}`)})
			mustBatchCode(t, err, run.CodeUnknownTool)
			waitExited(t, env.PID)

			// Failure retention (SPEC R7.2): mount again, then save a config that
			// cannot start. The save stands, the old tools keep working.
			mustOK(t, m.one(framework.ToolResourceWrite, `{"kind":"agent","reference":"ops/manager","add":{"mcps":["notes"]}}`))
			if !hasTool(r, search) {
				t.Fatal("remount did not bring the tools back")
			}
			broken, _ := json.Marshal(map[string]any{
				"kind": "mcp", "reference": "notes",
				"data": map[string]any{"mcpServers": map[string]any{"fake": map[string]any{
					"command": mcptest.Command(t), "args": []string{"-fault", string(mcptest.FaultExitAtStart)}, "cwd": dir,
				}}},
			})
			out = m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: broken})
			mustOK(t, out.Results[0])
			if out.Refresh == nil || out.Refresh.OK {
				t.Fatalf("a config that cannot start was switched to: %+v", out.Refresh)
			}
			const notice = "configuration saved, but load failed"
			if !strings.Contains(out.Notice(), notice) || !strings.Contains(out.Notice(), "notes") {
				t.Fatalf("outcome notice = %q, want %q naming the mount", out.Notice(), notice)
			}
			if !strings.Contains(h.audit.messages("refresh"), notice) {
				t.Fatalf("the audit was not told %q", notice)
			}
			mustOK(t, m.one(search, `{"query":"still","limit":1}`))
			saved := structured[resource.Resource](t, m.one(framework.ToolResourceRead, `{"kind":"mcp","reference":"notes"}`))
			if !strings.Contains(string(saved.Data), string(mcptest.FaultExitAtStart)) {
				t.Fatal("the failed configuration was not saved")
			}

			// Authorization (SPEC R3.6, R4.3): a worker neither sees nor can call the
			// framework tools; a call naming one rejects its whole batch.
			w := h.newRun(t, worker, policy.AutoAllow())
			for _, ti := range w.Tools() {
				if ti.Source.Kind == run.SourceFramework {
					t.Fatalf("worker sees framework tool %s", ti.Name)
				}
			}
			wm := &model{t: t, r: w}
			_, err = wm.try(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(`{"kind":"agent","reference":"worker","add":{"mcps":["notes"]}}`)})
			mustBatchCode(t, err, run.CodeUnknownTool)
			if got := mounts(t, h, worker); len(got) != 0 {
				t.Fatalf("a refused call changed the worker's mounts: %v", got)
			}
		})
	}
}

// TestFrameworkToolsNeedManagement shows the service's own check behind the
// tools (SPEC R3.6): handed to an agent that may not manage, the tools still
// cannot write, and the refusal is unauthorized.
func TestFrameworkToolsNeedManagement(t *testing.T) {
	h := newHost(t, nil)
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Create: true, Data: json.RawMessage(`{}`)})
	// A host tool without ManagementOnly wraps the framework handler, as a
	// host that wires tools by hand by mistake would.
	var write run.HostTool
	for _, ht := range framework.Tools(h.svc, h.prober, nil) {
		if ht.Name == framework.ToolResourceWrite {
			write = ht
		}
	}
	write.Name, write.ManagementOnly = "leaked_write", false
	r, err := run.New(t.Context(), &run.Options{Agent: "worker", Repository: h.repo, Permission: policy.AutoAllow(), HostTools: []run.HostTool{write}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := &model{t: t, r: r}
	res := m.one("leaked_write", `{"kind":"agent","reference":"worker","data":{"manager":true}}`)
	mustCode(t, res, run.CodeUnauthorized)
	if res.Changed != nil {
		t.Fatalf("a refused write reported a change: %v", res.Changed)
	}
}

// TestAllowMCPRefused covers SPEC R3.7 for every framework tool.
func TestAllowMCPRefused(t *testing.T) {
	h := newHost(t, nil)
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
	m := &model{t: t, r: h.newRun(t, "boss", policy.AutoAllow())}
	for _, tc := range []struct{ tool, args string }{
		{framework.ToolResourceWrite, `{"kind":"agent","reference":"boss","allow_mcp":true}`},
		{framework.ToolResourceWrite, `{"kind":"agent","reference":"boss","data":{"allow_mcp":true}}`},
		{framework.ToolResourceRead, `{"kind":"agent","reference":"boss","allow_mcp":true}`},
		{framework.ToolResourceTest, `{"kind":"mcp","reference":"x","allow_mcp":false}`},
		{framework.ToolMCPProbe, `{"reference":"x","allow_mcp":true}`},
		{framework.ToolAgentMCPList, `{"allow_mcp":true}`},
	} {
		res := m.one(tc.tool, tc.args)
		mustCode(t, res, run.CodeInvalidArguments)
		// The specific message wins over the schema's generic one
		// (additionalProperties is false and allow_mcp is not listed).
		if !strings.Contains(res.Message, "allow_mcp was removed") || !strings.Contains(res.Message, "master switch") {
			t.Errorf("%s %s: message %q does not say the switch was removed", tc.tool, tc.args, res.Message)
		}
	}
}

// The schemas the model reads on every request no longer advertise the
// removed switch, and stay closed (additionalProperties false).
func TestSchemasDoNotListAllowMCP(t *testing.T) {
	t.Parallel()
	h := newHost(t, nil)
	total := 0
	for _, ht := range framework.Tools(h.svc, h.prober, nil) {
		total += len(ht.Schema)
		var schema struct {
			Properties           map[string]json.RawMessage `json:"properties"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(ht.Schema, &schema); err != nil {
			t.Fatalf("%s: %v", ht.Name, err)
		}
		if _, ok := schema.Properties["allow_mcp"]; ok || strings.Contains(string(ht.Schema), "allow_mcp") {
			t.Errorf("%s: the schema still mentions allow_mcp", ht.Name)
		}
		if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: additionalProperties is not false", ht.Name)
		}
		if ht.Precheck == nil {
			t.Errorf("%s: no Precheck refuses allow_mcp", ht.Name)
		}
	}
	t.Logf("framework tool schemas: %d bytes in all", total)
}

// readCalls returns the tool names the fake server logged, in order.
func readCalls(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func equalRefs(a, b []resource.Ref) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
