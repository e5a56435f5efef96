// Command policy-hooks shows the two ways a host shapes what happens to a
// tool call once it has passed the tool's schema:
//
//   - the permission stage: a policy.Rules that allows, denies, or leaves a
//     call to the next policy, followed by a human approver callback
//     (policy.First). A host would ask a person on its own UI; here a
//     scripted "person" answers. run.New validates the rules: a pattern
//     that can never match (such as "mcp__my.server__*") fails it with
//     the form to write.
//
//   - interceptors around execution: one that times every call, and a
//     run.Before / run.After pair that log each call with slog; plus the
//     Run's slog Auditor, which records every call, allowed or not, without
//     argument values.
//
//     go run ./examples/policy-hooks
//
// The MCP server is the bundled fake server, started by re-executing this
// program with the argument serve-fake-mcp.
package main
