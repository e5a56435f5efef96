package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/toolalias"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// FuzzAlias: any pair gives a 1-64 character [A-Za-z0-9_-] alias, the same
// one every time, and a plain alias (no hash) only for pairs that read back
// unambiguously.
func FuzzAlias(f *testing.F) {
	f.Add("notes", "search")
	f.Add("team/notes", "get.item")
	f.Add("a__b", "_c")
	f.Fuzz(func(t *testing.T, ref, tool string) {
		a := run.Alias(resource.Ref(ref), tool)
		if !aliasShape.MatchString(a) || a != run.Alias(resource.Ref(ref), tool) {
			t.Fatalf("Alias(%q, %q) = %q", ref, tool, a)
		}
		if a == "mcp__"+ref+"__"+tool {
			rest := strings.TrimPrefix(a, "mcp__")
			if strings.Count(rest, "__") != 1 {
				t.Fatalf("plain alias %q is ambiguous", a)
			}
		}
	})
}

// FuzzExecute: hostile batches never panic; an accepted batch has one
// result per call, in order, each with its call ID; a rejected one is a
// *BatchError.
func FuzzExecute(f *testing.F) {
	repo := newRepo(f)
	putAgent(f, repo, testAgent, resource.AgentDocument{})
	noop := run.HostTool{Name: "noop", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"additionalProperties":false}`),
		Handler: func(context.Context, run.Request) (run.Result, error) { return run.Result{}, nil }}
	r := newRun(f, &run.Options{Repository: repo, HostTools: []run.HostTool{noop}})
	f.Add("a", "noop", `{"n":1}`, "b", "noop", `{"n":-1}`)
	f.Add("a", "noop", `[]`, "a", "noop", `{}`)
	f.Add("", "x", ``, "b", "noop", `{"n":1e400}`)
	f.Fuzz(func(t *testing.T, id1, name1, args1, id2, name2, args2 string) {
		b := batch(
			run.Call{ID: id1, Name: name1, Arguments: json.RawMessage(args1)},
			run.Call{ID: id2, Name: name2, Arguments: json.RawMessage(args2)},
		)
		out, err := r.Execute(context.Background(), b)
		if err != nil && !errors.As(err, new(*run.BatchError)) {
			t.Fatalf("Execute: %v", err)
		}
		if len(out.Results) != 2 || out.Results[0].CallID != id1 || out.Results[1].CallID != id2 {
			t.Fatalf("results %+v", out.Results)
		}
		for _, res := range out.Results {
			if res.Failed() && !res.Code.Valid() {
				t.Fatalf("code %q is not in the closed set", res.Code)
			}
			if res.Failed() && !json.Valid(res.ToolError()) {
				t.Fatalf("ToolError is not JSON: %s", res.ToolError())
			}
		}
	})
}

// FuzzAliasInjective: two different pairs never share an alias.
func FuzzAliasInjective(f *testing.F) {
	f.Add("a/b", "x", "a_b", "x")
	f.Add("a__b", "c", "a", "b__c")
	f.Add("a_", "b", "a", "_b")
	f.Add("notes", "x", "notes__x", "y")
	f.Add("team/notes", "x", "team_notes", "x")
	f.Fuzz(func(t *testing.T, r1, t1, r2, t2 string) {
		if r1 == r2 && t1 == t2 {
			return
		}
		a1, a2 := run.Alias(resource.Ref(r1), t1), run.Alias(resource.Ref(r2), t2)
		if a1 == a2 {
			t.Fatalf("Alias(%q, %q) = Alias(%q, %q) = %q", r1, t1, r2, t2, a1)
		}
		// Prefix-safe: another reference's alias never starts with this
		// reference's readable head.
		if p := toolalias.RefPart(r1); p != "" && r1 != r2 && strings.HasPrefix(a2, "mcp__"+p+"__") {
			t.Fatalf("Alias(%q, %q) = %q starts with the head of %q", r2, t2, a2, r1)
		}
	})
}
