package policy_test

import (
	"context"
	"fmt"

	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// mcpCall is the Request of a call to tool on the MCP server ref, as a Run
// makes it.
func mcpCall(ref, tool string) run.Request {
	return run.Request{Alias: run.Alias(resource.Ref(ref), tool), Source: run.Source{Kind: run.SourceMCP, Ref: resource.Ref(ref), Tool: tool}}
}

func ExampleRules() {
	rules := policy.Rules{
		Deny:  []string{"*delete*"},
		Allow: []string{"mcp__notes__*"}, // the tools of server notes, and of no other
	}
	for _, req := range []run.Request{mcpCall("notes", "search"), mcpCall("notes", "note_delete"), mcpCall("mail", "send")} {
		d, _ := rules.Check(context.Background(), req)
		fmt.Println(req.Alias, d.Verdict, d.Reason)
	}
	// Output:
	// mcp__notes__search allow allow rule mcp__notes__*
	// mcp__notes__note_delete deny deny rule *delete*
	// mcp__mail__send ask no rule matched
}

// First lets the rules settle what they know and asks a person about the
// rest.
func ExampleFirst() {
	perm := policy.First(
		policy.Rules{Allow: []string{"mcp__notes__search"}},
		policy.Human(func(ctx context.Context, req run.Request) (bool, string, error) {
			fmt.Println("asking a person about", req.Alias)
			return false, "not today", nil
		}),
	)
	for _, req := range []run.Request{mcpCall("notes", "search"), mcpCall("mail", "send")} {
		d, _ := perm.Check(context.Background(), req)
		fmt.Println(req.Alias, d.Verdict, "by", d.By)
	}
	// Output:
	// mcp__notes__search allow by rules
	// asking a person about mcp__mail__send
	// mcp__mail__send deny by human
}
