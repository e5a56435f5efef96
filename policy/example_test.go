package policy_test

import (
	"context"
	"fmt"

	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/run"
)

func ExampleRules() {
	rules := policy.Rules{
		Deny:  []string{"*delete*"},
		Allow: []string{"mcp__notes__*"},
	}
	for _, alias := range []string{"mcp__notes__search", "mcp__notes__note_delete", "mcp__mail__send"} {
		d, _ := rules.Check(context.Background(), run.Request{Alias: alias})
		fmt.Println(alias, d.Verdict, d.Reason)
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
	for _, alias := range []string{"mcp__notes__search", "mcp__mail__send"} {
		d, _ := perm.Check(context.Background(), run.Request{Alias: alias})
		fmt.Println(alias, d.Verdict, "by", d.By)
	}
	// Output:
	// mcp__notes__search allow by rules
	// asking a person about mcp__mail__send
	// mcp__mail__send deny by human
}
