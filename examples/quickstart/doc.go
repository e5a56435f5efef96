// Command quickstart runs agt's whole pipeline once, end to end, with the
// bundled fake MCP server and a scripted model (no real model, nothing to
// install):
//
//	go run ./examples/quickstart
//
// It opens a temporary store, registers the fake server, tests and probes
// it, mounts it on an agent, starts a Run and plays a scripted model: a bad
// call (refused with invalid_arguments and the failing paths, the server
// never sees it), the corrected call, and a change of the agent's own mounts
// that the Run picks up at the batch boundary.
//
// The fake server is this same program: started with the argument
// serve-fake-mcp it serves MCP on stdio (mcptest.Main), so there is nothing
// to build by hand and no process outlives the example.
package main
