// Command anthropic-host is a small agent host on the Anthropic Messages
// API: an agt Run whose tools, tool calls and results go through the
// Anthropic adapter (github.com/agtsdk/agt/adapter/agtanthropic) and the
// official SDK client, with a scripted model on 127.0.0.1 (no real model,
// no key, no network):
//
//	cd examples/anthropic-host && go run .
//
// It is its own Go module, so agt's core module does not depend on the
// SDK.
//
// The agent mounts two servers (two registrations of the bundled fake MCP
// server) and the model loop (converse, between the glue:begin and
// glue:end markers of main.go) sends the Run's tools with each request,
// turns the tool_use blocks of each response into one batch, executes it
// and sends the results back as tool_result blocks, until the model ends
// its turn. The script shows:
//
//   - a parallel batch with calls to both servers: a text result, an
//     image result (an image block), and a call the host's policy denies
//     (a tool_result with is_error and the ToolError JSON);
//   - the agent mounting a third server on itself with the framework tool
//     resource_write: the next request offers its tools;
//   - the agent mounting a server that exits at start: the write is
//     saved, the load fails, the "configuration saved, but load failed"
//     notice ends the write's tool_result, and the tools stay as they
//     were;
//   - a call of a tool the Run does not have: the whole batch is
//     rejected, and the Outcome still answers every tool_use (the API
//     wants a tool_result for each) with the rejection's ToolError.
//
// The scripted model checks every request it receives (the tools offered,
// the history, one tool_result per tool_use, the image block, the error
// codes, the notice) and answers HTTP 400 to one it does not expect, so
// the example fails loudly: its main_test is a test of the adapter too.
//
// The fake server is this same program: started with the argument
// serve-fake-mcp it serves MCP on stdio (mcptest.Main), so there is
// nothing to build by hand and no process outlives the example.
package main
