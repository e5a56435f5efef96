// Command server-contract is an MCP server written the way agt asks of
// every MCP server: its tools are typed go-sdk tools whose input schema and
// argument parsing come from one Go type, bounds and enums are added to
// that inferred schema (never a second hand-written one), and the handlers
// still check business state and permissions themselves for calls that are
// schema-valid.
//
// It serves a tiny stock-reservation service over stdio:
//
//	go run ./examples/server-contract        # speaks MCP on stdin/stdout
//	go test ./examples/server-contract       # its contract tests, over stdio
//
// Register it with agt (from the repository root):
//
//	go build -o "$PWD/bin/stock" ./examples/server-contract
//	agt mcp create stock --command "$PWD/bin/stock" --cwd "$PWD"
package main
