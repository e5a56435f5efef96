// Command durable-tasks is a host whose MCP task outlives it: a tool that
// a server runs as a task (MCP tasks) keeps running when the host stops or
// crashes, and the host started again with the same store and Run ID
// collects its result, exactly once, without calling the tool again.
//
// Each start executes one batch of one call (fixed batch and call IDs) in
// a Run with the given Run ID. The Run stores the task's handle in the
// bbolt store of -dir before it first polls the task; a later Run of the
// same Run ID finds the handle, and its call of the same call ID follows
// that task instead of calling the tool, then drops the handle. Each status
// of the task is printed as it comes ("task working: step 3 of 20"), then
// the call's result. The host also keeps the Run's checkpoint in -dir
// until the batch has its result, and a start that finds it resumes the
// Run with it (agt's Host.Resume), which refuses when the agent's tools
// changed meanwhile.
//
// Without -url it shows this in one process, with the bundled fake MCP
// server served over HTTP on 127.0.0.1 and a temporary store:
//
//	go run ./examples/durable-tasks
//
// The first host stops (Run.Close, what it does on Ctrl-C) at the task's
// first status; the second collects the result. To see a host killed for
// real, serve the fake server yourself (in another terminal: it stops when
// its stdin closes) and kill the host with SIGKILL:
//
//	go run ./mcpconn/mcptest/cmd/fakemcp -http 127.0.0.1:8808 -fault tasks
//	go build -o /tmp/durable-tasks ./examples/durable-tasks
//	/tmp/durable-tasks -dir /tmp/agt-durable -url http://127.0.0.1:8808/mcp   # kill -9 it mid-task
//	/tmp/durable-tasks -dir /tmp/agt-durable -url http://127.0.0.1:8808/mcp   # collects the task's result
//
// TestHostKill in main_test.go does exactly that, in both protocol eras,
// and checks with the server that the tool ran once and nothing was
// cancelled.
package main
