// Package runtest builds a real Run for the tests of agt's nested modules
// (the model adapters, otel), so that their setup has one implementation:
// a bbolt repository in t.TempDir() holding an agent (Agent) that mounts
// one MCP resource (Notes), a Dial hook that serves agt's fake MCP server
// (mcptest) in process instead of starting the server a document names,
// and a Run over both, started directly or from a Host.
//
//	r := runtest.New(t, runtest.Repository(t), runtest.Dial(nil), run.Options{
//		Permission: policy.AutoAllow(),
//	})
//	out, err := r.Execute(ctx, run.Batch{ID: "b", Agent: runtest.Agent, Calls: []run.Call{
//		{ID: "c", Name: run.Alias(runtest.Notes, mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"hi"}`)},
//	}})
//
// It is for tests only: every function takes the test's testing.TB, fails
// the test on an error and closes what it opened in t.Cleanup. It is an
// internal package of the root module; the nested modules reach it
// through their replace directive of github.com/agtsdk/agt.
package runtest
