package resource_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

func newServiceWith(t *testing.T, opts *resource.ServiceOptions) (*resource.Service, resource.Repository) {
	t.Helper()
	repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), &boltrepo.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return resource.NewService(repo, opts), repo
}

// The zero Caller has no rights, and its refusal says what to pass.
func TestZeroCallerHasNoRights(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	registerMCP(t, svc, "tools/files")
	_, err := svc.Read(bg, resource.Caller{}, mcpKey("tools/files"))
	if !errors.Is(err, resource.ErrPermission) {
		t.Fatalf("Read with the zero Caller: %v, want ErrPermission", err)
	}
	for _, want := range []string{"resource.Direct()", "resource.AgentCaller(ref)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	if (resource.Caller{}).IsDirect() {
		t.Error("the zero Caller reports itself direct")
	}
	if !resource.Direct().IsDirect() || resource.AgentCaller("boss").IsDirect() {
		t.Error("Direct or AgentCaller report the wrong kind of caller")
	}
}

// An agent caller cannot change manager, capabilities or enabled of any
// agent, whichever form the write takes; a direct caller can, and so can a
// manager when the host allows it. mcps edits stay open to managers.
func TestAgentCannotChangePrivileges(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, opts *resource.ServiceOptions) (*resource.Service, resource.Repository) {
		svc, repo := newServiceWith(t, opts)
		registerMCP(t, svc, "tools/files")
		for _, a := range []struct{ ref, data string }{
			{"boss", `{"manager": true}`},
			{"ops", `{"capabilities": ["resource_management"]}`},
			{"worker", `{"capabilities": ["search"]}`},
			{"off", `{"enabled": false}`},
		} {
			mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: resource.Ref(a.ref), Create: true, Data: json.RawMessage(a.data)})
		}
		return svc, repo
	}
	write := func(ref string, create bool, data string, add, remove map[string][]string) func(*resource.Service, resource.Caller) error {
		return func(svc *resource.Service, c resource.Caller) error {
			req := resource.WriteRequest{Kind: resource.KindAgent, Ref: resource.Ref(ref), Create: create, Add: add, Remove: remove}
			if data != "" {
				req.Data = json.RawMessage(data)
			}
			_, err := svc.Write(bg, c, req)
			return err
		}
	}
	caps := func(items ...string) map[string][]string { return map[string][]string{"capabilities": items} }
	attempts := []struct {
		name   string
		caller string // the agent caller
		call   func(*resource.Service, resource.Caller) error
		field  string // named in the refusal
	}{
		{"make itself manager", "ops", write("ops", false, `{"manager": true}`, nil, nil), "manager"},
		{"make another a manager", "boss", write("worker", false, `{"manager": true}`, nil, nil), "manager"},
		{"grant a capability by add", "boss", write("worker", false, "", caps("resource_management"), nil), "capabilities"},
		{"grant a capability by data", "ops", write("worker", false, `{"capabilities": ["search", "resource_management"]}`, nil, nil), "capabilities"},
		{"drop its own capability", "ops", write("ops", false, "", nil, caps("resource_management")), "capabilities"},
		{"demote a manager", "ops", write("boss", false, `{"manager": false}`, nil, nil), "manager"},
		{"re-enable with true", "boss", write("off", false, `{"enabled": true}`, nil, nil), "enabled"},
		{"re-enable with null", "boss", write("off", false, `{"enabled": null}`, nil, nil), "enabled"},
		{"disable another", "boss", write("worker", false, `{"enabled": false}`, nil, nil), "enabled"},
		{"create a manager", "boss", write("new", true, `{"manager": true}`, nil, nil), "manager"},
		{"create with a capability", "boss", write("new", true, "", caps("resource_management"), nil), "capabilities"},
		{"create disabled", "boss", write("new", true, `{"enabled": false}`, nil, nil), "enabled"},
		{"delete a disabled agent", "boss", func(svc *resource.Service, c resource.Caller) error {
			return svc.Delete(bg, c, agentKey("off"), resource.AnyRevision)
		}, "enabled"},
	}
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			svc, repo := setup(t, nil)
			before := snapshotAll(t, repo)
			err := a.call(svc, resource.AgentCaller(resource.Ref(a.caller)))
			if !errors.Is(err, resource.ErrPermission) {
				t.Fatalf("err = %v, want ErrPermission", err)
			}
			for _, want := range []string{a.field, "AgentsMayChangePrivileges", "(fix: "} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not name %s", err, want)
				}
			}
			if diff := cmp.Diff(before, snapshotAll(t, repo)); diff != "" {
				t.Fatalf("a refused call changed the store (-before +after):\n%s", diff)
			}
			// The same change is open to a direct caller, and to the agent
			// when the host allows it.
			if err := a.call(svc, resource.Direct()); err != nil {
				t.Fatalf("direct caller: %v", err)
			}
			svc, _ = setup(t, &resource.ServiceOptions{AgentsMayChangePrivileges: true})
			if err := a.call(svc, resource.AgentCaller(resource.Ref(a.caller))); err != nil {
				t.Fatalf("with AgentsMayChangePrivileges: %v", err)
			}
		})
	}
}

// What is not a privilege change stays open to managers: mcps, name,
// unknown fields, creating a plain agent, deleting an enabled one, and a
// patch that restates the stored privileges.
func TestManagersKeepAssemblyEdits(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	registerMCP(t, svc, "tools/files")
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager": true}`)})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Create: true, Data: json.RawMessage(`{"capabilities": ["b", "a"]}`)})
	boss := resource.AgentCaller("boss")
	for _, req := range []resource.WriteRequest{
		{Kind: resource.KindAgent, Ref: "boss", Add: map[string][]string{"mcps": {"tools/files"}}},
		{Kind: resource.KindAgent, Ref: "worker", Data: json.RawMessage(`{"mcps": ["tools/files"], "name": "w", "note": 1}`)},
		{Kind: resource.KindAgent, Ref: "worker", Data: json.RawMessage(`{"capabilities": ["a", "b"], "enabled": true, "manager": false}`)},
		{Kind: resource.KindAgent, Ref: "fresh", Create: true, Data: json.RawMessage(`{"enabled": true, "mcps": ["tools/files"]}`)},
	} {
		if _, err := svc.Write(bg, boss, req); err != nil {
			t.Fatalf("Write(%s %s): %v", req.Kind, req.Ref, err)
		}
	}
	if err := svc.Delete(bg, boss, agentKey("fresh"), resource.AnyRevision); err != nil {
		t.Fatalf("delete of an enabled agent: %v", err)
	}
}

// snapshotAll is every stored resource, so a refused call that changed
// anything (of either kind) shows up in a diff.
func snapshotAll(t *testing.T, repo resource.Repository) []resource.Resource {
	t.Helper()
	var all []resource.Resource
	for _, kind := range []resource.Kind{resource.KindAgent, resource.KindMCP} {
		list, err := repo.List(bg, kind, "")
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, list...)
	}
	return all
}

// Sharing makes the calls of different users meet in one server process:
// an agent caller cannot turn it on (by a create or an edit); it may keep
// it as stored, edit other fields, or turn it off. A direct caller, or an
// agent when the host allows privilege changes, may turn it on.
func TestAgentCannotTurnSharingOn(t *testing.T) {
	t.Parallel()
	server := func(dir string, shared bool) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"files": map[string]any{"command": "node", "args": []string{"x.js"}, "cwd": dir, "shared": shared}}})
		return b
	}
	setup := func(t *testing.T, opts *resource.ServiceOptions) (*resource.Service, resource.Repository, string) {
		svc, repo := newServiceWith(t, opts)
		dir := t.TempDir()
		mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "plain", Create: true, Data: server(dir, false)})
		mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "pooled", Create: true, Data: server(dir, true)})
		mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager": true}`)})
		return svc, repo, dir
	}
	boss := resource.AgentCaller("boss")
	for _, tc := range []struct {
		name    string
		ref     string
		create  bool
		shared  bool
		refused bool
	}{
		{"create shared", "new", true, true, true},
		{"turn a server's sharing on", "plain", false, true, true},
		{"create unshared", "new", true, false, false},
		{"edit a shared server, keeping it shared", "pooled", false, true, false},
		{"turn sharing off", "pooled", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, repo, dir := setup(t, nil)
			req := resource.WriteRequest{Kind: resource.KindMCP, Ref: resource.Ref(tc.ref), Create: tc.create, Data: server(dir, tc.shared)}
			if !tc.create {
				// An edit of another field too, so the write is a change.
				var doc map[string]map[string]map[string]any
				_ = json.Unmarshal(req.Data, &doc)
				doc["mcpServers"]["files"]["args"] = []string{"y.js"}
				req.Data, _ = json.Marshal(doc)
			}
			before := snapshotAll(t, repo)
			_, err := svc.Write(bg, boss, req)
			if !tc.refused {
				if err != nil {
					t.Fatalf("agent caller: %v", err)
				}
				return
			}
			if !errors.Is(err, resource.ErrPermission) {
				t.Fatalf("err = %v, want ErrPermission", err)
			}
			for _, want := range []string{"/data/mcpServers/files/shared", "AgentsMayChangePrivileges", "(fix: "} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not name %s", err, want)
				}
			}
			if diff := cmp.Diff(before, snapshotAll(t, repo)); diff != "" {
				t.Fatalf("a refused write changed the store (-before +after):\n%s", diff)
			}
			if _, err := svc.Write(bg, resource.Direct(), req); err != nil {
				t.Fatalf("direct caller: %v", err)
			}
			svc, _, _ = setup(t, &resource.ServiceOptions{AgentsMayChangePrivileges: true})
			if _, err := svc.Write(bg, boss, req); err != nil {
				t.Fatalf("with AgentsMayChangePrivileges: %v", err)
			}
		})
	}
}

// Issue 23 item 7: the caller's rights are judged inside the transaction
// of its write (boltrepo is a resource.GuardedRepository), not only by a
// read before it: once the host's write disabling the caller has
// returned, none of the caller's writes that were under way lands.
func TestDisablingACallerStopsWritesUnderWay(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager": true}`)})
	start := mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Create: true, Data: json.RawMessage(`{}`)}).Resource
	const writers = 16
	var wg sync.WaitGroup
	release := make(chan struct{})
	landed := make([]bool, writers)
	errs := make([]error, writers+1)
	var atDisable int64
	for g := 0; g <= writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			if g == writers {
				_, errs[g] = svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Data: json.RawMessage(`{"enabled": false}`)})
				if errs[g] == nil {
					var res resource.Resource
					res, errs[g] = repo.Get(bg, agentKey("worker"))
					atDisable = res.Revision
				}
				return
			}
			_, err := svc.Write(bg, resource.AgentCaller("boss"), resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Data: json.RawMessage(fmt.Sprintf(`{"name": "w%d"}`, g))})
			switch {
			case err == nil:
				landed[g] = true
			case !errors.Is(err, resource.ErrPermission) || !strings.Contains(err.Error(), "disabled"):
				errs[g] = err
			}
		}()
	}
	close(release)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for _, ok := range landed {
		if ok {
			n++
		}
	}
	got, err := repo.Get(bg, agentKey("worker"))
	if err != nil {
		t.Fatal(err)
	}
	final := got.Revision
	if final != atDisable || final-start.Revision != n {
		t.Fatalf("worker is at revision %d, was %d when the disable returned; %d writes landed from revision %d: a write judged before the disable landed after it", final, atDisable, n, start.Revision)
	}
}
