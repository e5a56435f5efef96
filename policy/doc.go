// Package policy provides the permission policies a run.Run needs: every
// validated call passes one before it can run, and a Run without a policy
// is refused.
//
//	perm := policy.First(
//		policy.Rules{
//			Deny:  []string{"mcp__notes__delete*"},
//			Allow: []string{"mcp__notes__*", "host:*"},
//		},
//		policy.Human(func(ctx context.Context, req run.Request) (bool, string, error) {
//			return askOnTerminal(req.Alias, req.Source, req.Arguments)
//		}),
//	)
//	r, err := run.New(ctx, &run.Options{Agent: "writer", Repository: repo, Permission: perm})
//
// # Where the policy runs
//
//	batch checks -> validate -> PERMISSION -> interceptors(before) -> execute -> interceptors(after)
//
// A policy sees only calls whose arguments passed the tool's schema (an
// invalid call never creates an approval request), and interceptors
// cannot change the arguments after it.
//
// # Verdicts and combinators
//
// A policy answers run.Allow, run.Deny or run.Ask (no opinion). The Run
// allows a call only on Allow. AutoAllow allows everything, explicitly. Rules
// matches patterns by a call's source, whatever the pattern looks like:
// an alias-style pattern such as "mcp__notes__*" names server notes and
// no other; "mcp:my.server:*" names a server by its reference as
// registered; any other pattern ("deploy", "*_search") is a host or
// framework tool's name, and as an Allow it never reaches an MCP tool (only
// "*" does), so no server can name a tool to fit it. Deny wins, and a Deny
// or Ask pattern errs towards matching (it also reaches the reference as
// written, and a name pattern also an MCP tool's alias and name, so a deny
// never fails open). Patterns use agt's one wildcard dialect ("*" and "?",
// as in resource.MCPServer.EnabledTools). Human asks a person
// (one question at a time); Review asks a reviewer such as a model. First
// lets the first policy with an opinion decide; Chain needs every policy's
// consent (a Deny vetoes, Ask abstains). Every Decision names who decided
// (Decision.By) and why, for the audit.
//
// # Validation
//
// run.New calls the policy's Validate method when it has one (Rules, and
// First and Chain for the policies they hold): Rules with a pattern that
// could never match as written ("mcp__my.server__*": aliases never show
// '.' or '/'), an empty pattern, or a source pattern of no known form
// fail run.New, naming the pattern and the form to write. Rules checked
// outside a Run (a host's own Permission around them) fail closed: such a
// Deny or Ask pattern matches every call, such an Allow pattern none.
//
// # Errors
//
// A policy returns an error when it could not decide: the approver or
// reviewer failed, the context ended while a call waited for its turn, or a
// nil policy was given to Chain or First. Such a Decision is never Allow
// (Chain and First turn it into Deny) and the Run fails the call with the
// error's code; the policy's own reason goes to the audit.
//
// # Concurrency
//
// All policies here are safe for concurrent use; the callbacks given to
// Human and Review must be too (Human calls its approver one at a time).
package policy
