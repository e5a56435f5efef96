package framework_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/agtsdk/agt/toolschema"
	"github.com/google/go-cmp/cmp"
)

// managerModel returns a scripted model over the Run of a new manager agent.
func managerModel(t *testing.T, h *host) *model {
	t.Helper()
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
	return &model{t: t, r: h.newRun(t, "boss", policy.AutoAllow())}
}

// TestProbeFailureIsAReport: a server that cannot start is an answer the
// model can act on (SPEC R3.2): the probe report with ok=false and the
// error, not an internal failure that drops the report. The server's stderr
// stays out of it (TestServerStderrReachesTheModelOnlyWhenAllowed).
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
	if !strings.Contains(rep.Error, "exit status 3") {
		t.Fatalf("the report's error = %q, want the exit status", rep.Error)
	}
	if rep.StderrTail != "" || strings.Contains(rep.Error, "exiting at start") {
		t.Fatalf("the report holds the server's stderr: %+v", rep)
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
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			h := inMemoryHostEra(t, e, "a")
			m := managerModel(t, h)
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "w", Create: true, Data: json.RawMessage(`{"mcps":["a"]}`)})
			if err := h.svc.Delete(t.Context(), resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: "a"}, resource.AnyRevision); err != nil {
				t.Fatal(err)
			}
			rep := structured[resource.TestReport](t, m.one(framework.ToolResourceTest, `{"kind":"agent","reference":"w"}`))
			if rep.OK || len(rep.Findings) != 1 || rep.Findings[0].Code != findcode.MountMissing || rep.Findings[0].Field != "/mcps/0" {
				t.Fatalf("report = %+v, want one mount_not_found at /mcps/0", rep)
			}
			mustCode(t, m.one(framework.ToolResourceTest, `{"kind":"mcp","reference":"a"}`), run.CodeNotFound)
		})
	}
}

// TestWriteReportsOnlyActualChanges: resource_write reports its resource in
// Result.Changed only when a new revision was written, so a no-op write of
// the Run's own mounts does not refresh the Run (SPEC R7.1).
func TestWriteReportsOnlyActualChanges(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			h := inMemoryHostEra(t, e, "a")
			m := managerModel(t, h)
			data := `{"mcpServers":{"fake":{"command":"fakemcp","cwd":"/srv/x"}}}`

			steps := []struct {
				name        string
				args        string
				wantChanged []resource.Key
				wantRefresh bool
			}{
				{"create an unmounted server", `{"kind":"mcp","reference":"x","create":true,"data":` + data + `}`, []resource.Key{{Kind: resource.KindMCP, Ref: "x"}}, false},
				{"write the same server again", `{"kind":"mcp","reference":"x","data":` + data + `}`, nil, false},
				{"mount on self", `{"kind":"agent","reference":"boss","add":{"mcps":["a"]}}`, []resource.Key{{Kind: resource.KindAgent, Ref: "boss"}}, true},
				{"mount again (no-op)", `{"kind":"agent","reference":"boss","add":{"mcps":["a"]}}`, nil, false},
				{"remove an absent mount (no-op)", `{"kind":"agent","reference":"boss","remove":{"mcps":["x"]}}`, nil, false},
				{"same mcps list (no-op)", `{"kind":"agent","reference":"boss","data":{"mcps":["a"]}}`, nil, false},
			}
			for _, s := range steps {
				out := m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(s.args)})
				res := out.Results[0]
				mustOK(t, res)
				if diff := cmp.Diff(s.wantChanged, res.Changed); diff != "" {
					t.Errorf("%s: Changed (-want +got):\n%s", s.name, diff)
				}
				if got := out.Refresh != nil; got != s.wantRefresh {
					t.Errorf("%s: refreshed = %v, want %v", s.name, got, s.wantRefresh)
				}
			}
		})
	}
}

// TestFailureCodes: every service refusal reaches the model in the one
// ToolError format with the code that fits it (DESIGN: Code set), the field
// as a violation path where there is one, and no argument value echoed
// (SPEC R6.7, R6.8).
func TestFailureCodes(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			h := inMemoryHostEra(t, e, "a")
			m := managerModel(t, h)
			const secret = "s3cr3t-token-value"
			cases := []struct {
				name      string
				tool      string
				args      string
				want      run.Code
				wantPaths []string
			}{
				{"create a taken reference", framework.ToolResourceWrite, `{"kind":"mcp","reference":"a","create":true,"data":{"mcpServers":{"fake":{"command":"fakemcp","cwd":"/srv"}}}}`, run.CodeConflict, nil},
				{"update a missing resource", framework.ToolResourceWrite, `{"kind":"agent","reference":"ghost","data":{"name":"g"}}`, run.CodeNotFound, nil},
				{"stale expected_revision", framework.ToolResourceWrite, `{"kind":"agent","reference":"boss","data":{"name":"b"},"expected_revision":99}`, run.CodeConflict, nil},
				{"mount an unregistered server", framework.ToolResourceWrite, `{"kind":"agent","reference":"boss","add":{"mcps":["ghost"]}}`, run.CodeNotFound, nil},
				{"add on an mcp resource", framework.ToolResourceWrite, `{"kind":"mcp","reference":"a","add":{"mcps":["a"]}}`, run.CodeInvalidArguments, []string{"/add"}},
				{"nothing to write", framework.ToolResourceWrite, `{"kind":"agent","reference":"boss"}`, run.CodeInvalidArguments, nil},
				{"expected_revision on create", framework.ToolResourceWrite, `{"kind":"agent","reference":"new","create":true,"expected_revision":3}`, run.CodeInvalidArguments, []string{"/expected_revision"}},
				{"two document problems, secret env", framework.ToolResourceWrite, `{"kind":"mcp","reference":"b","create":true,"data":{"mcpServers":{"fake":{"command":"./` + secret + `","cwd":"rel/` + secret + `","env":{"TOKEN":"` + secret + `"}}}}}`, run.CodeInvalidArguments, []string{"/data/mcpServers/fake/command", "/data/mcpServers/fake/cwd"}},
				{"header value with a line break", framework.ToolResourceWrite, `{"kind":"mcp","reference":"c","create":true,"data":{"mcpServers":{"r":{"type":"http","url":"https://example.com/mcp","headers":{"X-Key":"` + secret + `\n"}}}}}`, run.CodeInvalidArguments, []string{"/data/mcpServers/r/headers/X-Key"}},
				{"data not an object", framework.ToolResourceWrite, `{"kind":"agent","reference":"boss","data":"` + secret + `"}`, run.CodeInvalidArguments, []string{"/data"}},
				{"unknown agent field type", framework.ToolResourceWrite, `{"kind":"agent","reference":"boss","data":{"enabled":"` + secret + `"}}`, run.CodeInvalidArguments, []string{"/data/enabled"}},
				// WriteRequest.Server and Agent have no JSON form (issue 29).
				{"a typed server", framework.ToolResourceWrite, `{"kind":"mcp","reference":"b","create":true,"server":{"command":"` + secret + `","cwd":"/"}}`, run.CodeInvalidArguments, []string{"/server"}},
				{"a typed agent", framework.ToolResourceWrite, `{"kind":"agent","reference":"boss","Agent":{"manager":true}}`, run.CodeInvalidArguments, []string{"/Agent"}},
				{"read a missing resource", framework.ToolResourceRead, `{"kind":"mcp","reference":"ghost"}`, run.CodeNotFound, nil},
				{"test a missing resource", framework.ToolResourceTest, `{"kind":"agent","reference":"ghost"}`, run.CodeNotFound, nil},
				{"list a missing agent", framework.ToolAgentMCPList, `{"agent":"ghost"}`, run.CodeNotFound, nil},
				{"unknown kind", framework.ToolResourceRead, `{"kind":"` + secret + `","reference":"a"}`, run.CodeInvalidArguments, []string{"/kind"}},
			}
			for _, c := range cases {
				res := m.one(c.tool, c.args)
				if res.Code != c.want {
					t.Errorf("%s: code %q, want %q (%s)", c.name, res.Code, c.want, res.ToolError())
					continue
				}
				if res.Message == "" {
					t.Errorf("%s: no message", c.name)
				}
				if strings.Contains(string(res.ToolError()), secret) {
					t.Errorf("%s: the ToolError echoes an argument value: %s", c.name, res.ToolError())
				}
				if c.wantPaths != nil {
					var paths []string
					for _, v := range res.Violations {
						paths = append(paths, v.Path)
					}
					if diff := cmp.Diff(c.wantPaths, paths); diff != "" {
						t.Errorf("%s: violation paths (-want +got):\n%s", c.name, diff)
					}
				}
				if res.Changed != nil {
					t.Errorf("%s: a failed call reported a change: %v", c.name, res.Changed)
				}
			}
		})
	}
}

// TestCanceledCall: a handler called with a cancelled context fails with
// the context's error (code canceled), not internal, and writes nothing.
func TestCanceledCall(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			h := inMemoryHostEra(t, e, "a")
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			for _, ht := range framework.Tools(h.svc, h.prober, nil) {
				args := `{"kind":"agent","reference":"boss","add":{"mcps":["a"]}}`
				switch ht.Name {
				case framework.ToolMCPProbe:
					args = `{"reference":"a"}`
				case framework.ToolAgentMCPList:
					args = `{}`
				case framework.ToolResourceRead, framework.ToolResourceTest:
					args = `{"kind":"mcp","reference":"a"}`
				}
				_, err := ht.Handler(ctx, run.Request{Agent: "boss", Arguments: json.RawMessage(args)})
				if got := run.CodeOf(err); got != run.CodeCanceled {
					t.Errorf("%s: code %q (%v), want canceled", ht.Name, got, err)
				}
			}
			if got := mounts(t, h, "boss"); len(got) != 0 {
				t.Fatalf("a cancelled write changed the mounts: %v", got)
			}
		})
	}
}

// TestDocumentErrorViolationsBounded: a document with very many broken
// items is refused with at most toolschema.MaxViolations violations, like a
// schema failure, and the message says how many there were: the answer to
// the model stays small whatever the arguments hold.
func TestDocumentErrorViolationsBounded(t *testing.T) {
	h := newHost(t, nil)
	m := managerModel(t, h)
	args := make([]string, 900)
	for i := range args {
		args[i] = "${nope}"
	}
	b, _ := json.Marshal(map[string]any{"kind": "mcp", "reference": "many", "create": true,
		"data": map[string]any{"mcpServers": map[string]any{"fake": map[string]any{"command": "fakemcp", "cwd": "/srv", "args": args}}}})
	res := m.one(framework.ToolResourceWrite, string(b))
	mustCode(t, res, run.CodeInvalidArguments)
	if n := len(res.Violations); n == 0 || n > toolschema.MaxViolations {
		t.Fatalf("%d violations, want 1 to %d", n, toolschema.MaxViolations)
	}
	if !strings.Contains(res.Message, "900") {
		t.Fatalf("message %q does not say how many problems there were", res.Message)
	}
}

// TestFrameworkCallsPassPermission: a framework tool call the Permission
// denies never runs (SPEC R3.6, R4.2): permission_denied, nothing written,
// no refresh; the allowed call of the same batch runs.
func TestFrameworkCallsPassPermission(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			h := inMemoryHostEra(t, e, "a")
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
			perm := policy.First(policy.Rules{Deny: []string{framework.ToolResourceWrite}}, policy.AutoAllow())
			m := &model{t: t, r: h.newRun(t, "boss", perm)}
			out := m.batch(
				run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(`{"kind":"agent","reference":"boss","add":{"mcps":["a"]}}`)},
				run.Call{Name: framework.ToolResourceRead, Arguments: json.RawMessage(`{"kind":"agent","reference":"boss"}`)},
			)
			mustCode(t, out.Results[0], run.CodePermissionDenied)
			mustOK(t, out.Results[1])
			if out.Refresh != nil {
				t.Fatalf("a denied write refreshed the Run: %+v", out.Refresh)
			}
			if got := mounts(t, h, "boss"); len(got) != 0 {
				t.Fatalf("a denied write changed the mounts: %v", got)
			}
		})
	}
}

// TestToolsWithoutProber: a nil Prober leaves mcp_probe out and keeps the
// other four, every one ManagementOnly with a schema (SPEC R3.6, R5.5).
func TestToolsWithoutProber(t *testing.T) {
	h := newHost(t, nil)
	var names []string
	for _, ht := range framework.Tools(h.svc, nil, nil) {
		names = append(names, ht.Name)
		if !ht.ManagementOnly || len(ht.Schema) == 0 || ht.Handler == nil {
			t.Errorf("%s: ManagementOnly=%v, schema %d bytes, handler set %v", ht.Name, ht.ManagementOnly, len(ht.Schema), ht.Handler != nil)
		}
	}
	want := []string{framework.ToolResourceWrite, framework.ToolResourceRead, framework.ToolResourceTest, framework.ToolAgentMCPList}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
}

// Options.Tools chooses the framework tools: nil is all of them, a list
// keeps those it names in Tools' order, an empty list none, and a name
// that is not a framework tool panics.
func TestToolsOption(t *testing.T) {
	t.Parallel()
	h := newHost(t, nil)
	names := func(opts *framework.Options) []string {
		out := []string{}
		for _, ht := range framework.Tools(h.svc, h.prober, opts) {
			out = append(out, ht.Name)
		}
		return out
	}
	for _, tc := range []struct {
		tools []string
		want  []string
	}{
		{tools: nil, want: framework.ToolNames()},
		{tools: []string{framework.ToolAgentMCPList, framework.ToolResourceRead}, want: []string{framework.ToolResourceRead, framework.ToolAgentMCPList}},
		{tools: []string{framework.ToolMCPProbe}, want: []string{framework.ToolMCPProbe}},
		{tools: []string{}, want: []string{}},
	} {
		if diff := cmp.Diff(tc.want, names(&framework.Options{Tools: tc.tools})); diff != "" {
			t.Errorf("Tools %q (-want +got):\n%s", tc.tools, diff)
		}
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "Options.Tools") {
			t.Errorf("a misspelled tool name: recover() = %v; want a panic naming Options.Tools", p)
		}
	}()
	framework.Tools(h.svc, h.prober, &framework.Options{Tools: []string{"resource_writ"}})
}
