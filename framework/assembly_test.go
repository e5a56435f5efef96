package framework_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// eras are the protocol eras a test of a main flow runs in, each a
// subtest (issue 25): a legacy server, which agt speaks 2025-11-25 to, and
// a dual-era one, which it speaks 2026-07-28 to.
var eras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraDual}

// inMemoryHostEra serves every mounted MCP resource with an in-process
// fake server of era e, so assembly tests exercise the Run and the
// service, not processes.
func inMemoryHostEra(t *testing.T, e mcptest.Era, refs ...resource.Ref) *host {
	t.Helper()
	h := newHost(t, &mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{Era: e})})
	for _, ref := range refs {
		data := fmt.Sprintf(`{"mcpServers":{"fake":{"command":"fakemcp","cwd":%q}}}`, t.TempDir())
		h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: ref, Create: true, Data: json.RawMessage(data)})
	}
	return h
}

// TestAssemblyReplacement checks the mcps write semantics through the
// resource_write tool of a manager's own Run (SPEC R3.3, R8.2): a given list
// replaces, an absent one keeps, [] clears, add and remove change single
// items, and each change shows in the Run's tools after the boundary.
func TestAssemblyReplacement(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			h := inMemoryHostEra(t, e, "a", "b", "tools/c")
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true,"owner":"team-x"}`)})
			r := h.newRun(t, "boss", policy.AutoAllow())
			m := &model{t: t, r: r}

			steps := []struct {
				name  string
				args  string
				want  []resource.Ref
				noops int
			}{
				{"replace", `{"data":{"mcps":["a","b"]}}`, []resource.Ref{"a", "b"}, 0},
				{"absent keeps", `{"data":{"name":"boss"}}`, []resource.Ref{"a", "b"}, 0},
				{"add", `{"add":{"mcps":["tools/c"]}}`, []resource.Ref{"a", "b", "tools/c"}, 0},
				{"add present is a no-op", `{"add":{"mcps":["a"]}}`, []resource.Ref{"a", "b", "tools/c"}, 1},
				{"remove", `{"remove":{"mcps":["b"]}}`, []resource.Ref{"a", "tools/c"}, 0},
				{"remove absent is a no-op", `{"remove":{"mcps":["b"]}}`, []resource.Ref{"a", "tools/c"}, 1},
				{"replace reorders", `{"data":{"mcps":["tools/c","a"]}}`, []resource.Ref{"tools/c", "a"}, 0},
				{"clear", `{"data":{"mcps":[]}}`, []resource.Ref{}, 0},
			}
			for _, s := range steps {
				var args map[string]any
				if err := json.Unmarshal([]byte(s.args), &args); err != nil {
					t.Fatal(err)
				}
				args["kind"], args["reference"] = "agent", "boss"
				b, _ := json.Marshal(args)
				res := m.one(framework.ToolResourceWrite, string(b))
				wr := structured[resource.WriteResult](t, res)
				if len(wr.Noops) != s.noops {
					t.Errorf("%s: noops = %v, want %d", s.name, wr.Noops, s.noops)
				}
				if diff := cmp.Diff(s.want, mounts(t, h, "boss"), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: stored mcps (-want +got):\n%s", s.name, diff)
				}
				listed := structured[struct {
					Mounts []resource.Mount `json:"mounts"`
				}](t, m.one(framework.ToolAgentMCPList, `{}`))
				var listedRefs []resource.Ref
				for _, mt := range listed.Mounts {
					listedRefs = append(listedRefs, mt.Ref)
				}
				if diff := cmp.Diff(s.want, listedRefs, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: agent_mcp_list (-want +got):\n%s", s.name, diff)
				}
				for _, ref := range []resource.Ref{"a", "b", "tools/c"} {
					if got, want := hasTool(r, run.Alias(ref, mcptest.ToolEcho)), slices.Contains(s.want, ref); got != want {
						t.Errorf("%s: Run has %s's tools = %v, want %v", s.name, ref, got, want)
					}
				}
			}
			// Unknown agent fields survive every write.
			res, err := h.svc.Read(context.Background(), resource.Direct(), resource.Key{Kind: resource.KindAgent, Ref: "boss"})
			if err != nil {
				t.Fatal(err)
			}
			if doc, _ := resource.DecodeAgent(res.Data); string(doc.Extra["owner"]) != `"team-x"` {
				t.Errorf("unknown field owner lost: %s", res.Data)
			}
		})
	}
}

// TestAssemblyEntryPermissions: only a manager or an agent with
// resource_management may change an assembly (SPEC R3.6, R4.3), and mounting
// needs the mounted reference to exist; using a mounted tool needs nothing.
func TestAssemblyEntryPermissions(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			h := inMemoryHostEra(t, e, "a")
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Create: true, Data: json.RawMessage(`{"mcps":["a"]}`)})
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "cap", Create: true, Data: json.RawMessage(`{"capabilities":["resource_management"]}`)})
			ctx := context.Background()

			// The worker uses its mounted tool without any capability.
			w := &model{t: t, r: h.newRun(t, "worker", policy.AutoAllow())}
			mustOK(t, w.one(run.Alias("a", mcptest.ToolEcho), `{"text":"hi"}`))
			// But cannot change any assembly through the service.
			_, err := h.svc.Write(ctx, resource.AgentCaller("worker"), resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Remove: map[string][]string{"mcps": {"a"}}})
			if !errors.Is(err, resource.ErrPermission) {
				t.Fatalf("worker write: %v, want ErrPermission", err)
			}

			// An agent with the capability can, for another agent too.
			c := &model{t: t, r: h.newRun(t, "cap", policy.AutoAllow())}
			mustOK(t, c.one(framework.ToolResourceWrite, `{"kind":"agent","reference":"worker","remove":{"mcps":["a"]}}`))
			// Mounting a reference that is not registered is refused with not_found.
			mustCode(t, c.one(framework.ToolResourceWrite, `{"kind":"agent","reference":"worker","add":{"mcps":["ghost"]}}`), run.CodeNotFound)
			// A malformed reference never reaches the service: the schema refuses it.
			res := c.one(framework.ToolResourceRead, `{"kind":"agent","reference":"../etc"}`)
			mustCode(t, res, run.CodeInvalidArguments)
			if len(res.Violations) == 0 || res.Violations[0].Path != "/reference" {
				t.Fatalf("violations = %+v, want /reference", res.Violations)
			}
			if got := mounts(t, h, "worker"); len(got) != 0 {
				t.Fatalf("worker mounts = %v, want none", got)
			}
			// A stale form loses (SPEC R2.6).
			mustCode(t, c.one(framework.ToolResourceWrite, `{"kind":"agent","reference":"worker","data":{"mcps":["a"]},"expected_revision":1}`), run.CodeConflict)
		})
	}
}

// TestDeletedMCPUnusableInNextRun: deleting an MCP resource leaves the
// running Run alone (SPEC R7.5) but the next Run of the agent has none of its
// tools, reports the mount, and rejects calls to them (SPEC R4.1, R8.2).
func TestDeletedMCPUnusableInNextRun(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			h := inMemoryHostEra(t, e, "a", "b")
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Create: true, Data: json.RawMessage(`{"mcps":["a","b"]}`)})
			old := &model{t: t, r: h.newRun(t, "worker", policy.AutoAllow())}
			echoA := run.Alias("a", mcptest.ToolEcho)
			mustOK(t, old.one(echoA, `{"text":"x"}`))

			if err := h.svc.Delete(context.Background(), resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: "a"}, resource.AnyRevision); err != nil {
				t.Fatal(err)
			}
			mustOK(t, old.one(echoA, `{"text":"x"}`)) // a running Run is not refreshed by others' writes

			next := h.newRun(t, "worker", policy.AutoAllow())
			if hasTool(next, echoA) {
				t.Fatal("the next Run still lists a deleted resource's tool")
			}
			if !hasTool(next, run.Alias("b", mcptest.ToolEcho)) {
				t.Fatal("the other mount did not load")
			}
			var failed []resource.Ref
			for _, me := range next.MountErrors() {
				failed = append(failed, me.Ref)
			}
			if diff := cmp.Diff([]resource.Ref{"a"}, failed); diff != "" {
				t.Fatalf("mount errors (-want +got):\n%s", diff)
			}
			_, err := (&model{t: t, r: next}).try(run.Call{Name: echoA, Arguments: json.RawMessage(`{"text":"x"}`)})
			mustBatchCode(t, err, run.CodeUnknownTool)
		})
	}
}

// TestAssemblyConcurrentUpdates: many writers updating one agent with
// expected_revision (read, change, write, retry on conflict) and many adds
// through one batch of framework calls lose nothing (SPEC R2.6, R8.2).
func TestAssemblyConcurrentUpdates(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			const n = 16
			var refs []resource.Ref
			for i := range 2 * n {
				refs = append(refs, resource.Ref(fmt.Sprintf("m%02d", i)))
			}
			h := inMemoryHostEra(t, e)
			for _, ref := range refs {
				data := fmt.Sprintf(`{"mcpServers":{"fake":{"command":"fakemcp","cwd":%q}}}`, t.TempDir())
				h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: ref, Create: true, Data: json.RawMessage(data)})
			}
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "target", Create: true, Data: json.RawMessage(`{}`)})
			h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
			ctx := context.Background()
			key := resource.Key{Kind: resource.KindAgent, Ref: "target"}

			// Half through compare-and-set loops from many goroutines.
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					for {
						cur, err := h.svc.Read(ctx, resource.AgentCaller("boss"), key)
						if err != nil {
							errs <- err
							return
						}
						doc, err := resource.DecodeAgent(cur.Data)
						if err != nil {
							errs <- err
							return
						}
						data, _ := json.Marshal(map[string]any{"mcps": append(doc.MCPs, refs[i])})
						_, err = h.svc.Write(ctx, resource.AgentCaller("boss"), resource.WriteRequest{Kind: resource.KindAgent, Ref: "target", Data: data, ExpectedRevision: cur.Revision})
						if errors.Is(err, resource.ErrConflict) {
							continue
						}
						if err != nil {
							errs <- err
						}
						return
					}
				})
			}
			// The other half as one batch of concurrent resource_write add calls.
			m := &model{t: t, r: h.newRun(t, "boss", policy.AutoAllow())}
			var calls []run.Call
			for i := n; i < 2*n; i++ {
				calls = append(calls, run.Call{ID: fmt.Sprintf("c%d", i), Name: framework.ToolResourceWrite,
					Arguments: json.RawMessage(fmt.Sprintf(`{"kind":"agent","reference":"target","add":{"mcps":[%q]}}`, refs[i]))})
			}
			out := m.batch(calls...)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			for _, res := range out.Results {
				mustOK(t, res)
			}
			got := mounts(t, h, "target")
			slices.Sort(got)
			if diff := cmp.Diff(refs, got); diff != "" {
				t.Fatalf("lost updates (-want +got):\n%s", diff)
			}
		})
	}
}
