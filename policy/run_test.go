package policy_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// openRepo opens a repository in a temporary directory, closed at the
// test's end, and a Service on it.
func openRepo(t *testing.T) (*boltrepo.Repo, *resource.Service) {
	t.Helper()
	repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), &boltrepo.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Close() })
	return repo, resource.NewService(repo, nil)
}

// hostPolicy is a host's own Permission around another: run.New sees only
// its Check, so the rules inside are never validated before use.
type hostPolicy struct{ run.Permission }

// Issue 23 item 8: a deny written with the reference as the host knows it
// ("mcp__my.server__*") must hold in a real Run, whatever form the
// reference's aliases take (hashed for "my_server" and "my.server", "_"
// for "/" in "team/notes"). Given to run.New directly, a rule that could
// never match an alias is refused with the form to write; hidden from
// run.New inside a host's own Permission, the deny still holds.
func TestDenyByReferenceHoldsInARun(t *testing.T) {
	t.Parallel()
	repo, svc := openRepo(t)
	conn := mcpconn.NewConnector(nil)
	server, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": mcptest.Command(t), "cwd": t.TempDir()}}})
	write := func(kind resource.Kind, ref resource.Ref, data json.RawMessage) {
		t.Helper()
		if _, err := svc.Write(context.Background(), resource.Direct(), resource.WriteRequest{Kind: kind, Ref: ref, Create: true, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	allowed := 0
	for i, tc := range []struct {
		ref resource.Ref
		fix string // the form the refusal at run.New says to write; "" if the rule is accepted
	}{
		{"my_server", ""},
		{"my.server", `"mcp:my.server:*"`},
		{"team/notes", `"mcp__team_notes__*"`},
	} {
		agent := resource.Ref("agent-" + string(rune('a'+i)))
		write(resource.KindMCP, tc.ref, server)
		write(resource.KindAgent, agent, json.RawMessage(`{"mcps":["`+string(tc.ref)+`"]}`))
		rules := policy.Rules{Deny: []string{"mcp__" + string(tc.ref) + "__*"}, Allow: []string{"*"}}
		for _, perm := range []struct {
			name string
			p    run.Permission
		}{{"rules", rules}, {"in a host policy", hostPolicy{rules}}, {"in First", policy.First(rules)}} {
			r, err := run.New(context.Background(), &run.Options{Agent: agent, Repository: repo, Connector: conn, Permission: perm.p, FailOnMountError: true})
			if err != nil {
				if tc.fix == "" || perm.name == "in a host policy" {
					t.Errorf("%s %s: run.New: %v", tc.ref, perm.name, err)
				} else if msg := err.Error(); !strings.Contains(msg, rules.Deny[0]) || !strings.Contains(msg, tc.fix) {
					t.Errorf("%s %s: run.New refused with %q; want it to name the rule and the form %s", tc.ref, perm.name, msg, tc.fix)
				}
				continue
			}
			if tc.fix != "" && perm.name != "in a host policy" {
				t.Errorf("%s %s: run.New accepted Deny %v, which no alias can match", tc.ref, perm.name, rules.Deny)
			}
			alias := run.Alias(tc.ref, mcptest.ToolEcho)
			out, err := r.Execute(context.Background(), run.Batch{ID: "b", Agent: agent, Calls: []run.Call{{ID: "c", Name: alias, Arguments: json.RawMessage(`{"text":"x"}`)}}})
			_ = r.Close()
			if err != nil {
				t.Fatalf("%s %s: batch rejected: %v", tc.ref, perm.name, err)
			}
			if res := out.Results[0]; res.Code != run.CodePermissionDenied {
				allowed++
				t.Errorf("%s %s: %s under Deny %v, Allow [*]: code %q, want %q", tc.ref, perm.name, alias, rules.Deny, res.Code, run.CodePermissionDenied)
			}
		}
	}
	t.Logf("%d of 9 denied calls ran", allowed)
}

// Issue 27: an Allow written for host tools ("*_echo") used to match
// alias text, so a server could name a tool to fit it: server "evil"'s
// tool echo reads mcp__evil__echo and ran. In a real Run the host tool
// runs and the server's tool is refused.
func TestServerCannotNameAToolToFitAnAllow(t *testing.T) {
	t.Parallel()
	repo, svc := openRepo(t)
	server, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"evil": map[string]any{"command": mcptest.Command(t), "cwd": t.TempDir()}}})
	for _, w := range []resource.WriteRequest{
		{Kind: resource.KindMCP, Ref: "evil", Create: true, Data: server},
		{Kind: resource.KindAgent, Ref: "writer", Create: true, Data: json.RawMessage(`{"mcps":["evil"]}`)},
	} {
		if _, err := svc.Write(context.Background(), resource.Direct(), w); err != nil {
			t.Fatal(err)
		}
	}
	host := run.HostTool{Name: "web_echo", Schema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, run.Request) (run.Result, error) { return run.Result{}, nil }}
	r, err := run.New(context.Background(), &run.Options{Agent: "writer", Repository: repo, Connector: mcpconn.NewConnector(nil),
		Permission: policy.Rules{Allow: []string{"*_echo"}, Default: run.Deny}, HostTools: []run.HostTool{host}, FailOnMountError: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	alias := run.Alias("evil", mcptest.ToolEcho)
	if !policy.Match("*_echo", alias) {
		t.Fatalf("the server's alias %q does not fit the pattern: the test needs one that does", alias)
	}
	out, err := r.Execute(context.Background(), run.Batch{ID: "b", Agent: "writer", Calls: []run.Call{
		{ID: "host", Name: "web_echo", Arguments: json.RawMessage(`{}`)},
		{ID: "server", Name: alias, Arguments: json.RawMessage(`{"text":"x"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Results[0].Code; got != "" {
		t.Errorf("the host tool web_echo under Allow [*_echo]: code %q, want it to run", got)
	}
	if got := out.Results[1].Code; got != run.CodePermissionDenied {
		t.Errorf("the server's tool %s under Allow [*_echo]: code %q, want %q", alias, got, run.CodePermissionDenied)
	}
}
