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
// server). The host's glue, between the glue:begin and glue:end markers
// of main.go, is the Run's options (its policy, and
// agtanthropic.Sampler answering the servers' sampling requests with the
// same model, at most maxSampleTokens each) and the model loop
// (converse), which sends the Run's tools with each request and, through
// agtanthropic.Execute, runs the tool_use blocks of each response as one
// batch and sends the tool_result blocks that answer them, until a
// response has no tool_use. The script shows:
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
//     rejected, and the reply still answers every tool_use (the API
//     wants a tool_result for each) with the rejection's ToolError;
//   - a call of the notes server's sample tool, which asks the host's
//     model during the call (sampling/createMessage): the Run hands the
//     request to the Sampler, whose Messages API request reaches the
//     scripted model with the server's messages, no tools, and
//     max_tokens capped at the host's 64 (the server asked for 100); the
//     model's answer goes back to the server, and the tool returns it.
//
// The scripted model checks every request it receives (the tools offered,
// the history, one tool_result per tool_use, the image block, the error
// codes, the notice) and answers HTTP 400 to one it does not expect, so
// the example fails loudly: its main_test is a test of the adapter too.
//
// The fake server is this same program: started with the argument
// serve-fake-mcp it serves MCP on stdio (mcptest.Main), with the tools
// that use what a client offers (sample among them), so there is nothing
// to build by hand and no process outlives the example.
package main
