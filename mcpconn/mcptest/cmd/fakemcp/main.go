// Command fakemcp is the bundled fake MCP server of agt, for tests: typed
// go-sdk tools (notes, search, tree, sleep, echo, environment) and fault
// modes. See package github.com/agtsdk/agt/mcpconn/mcptest for its flags.
package main

import (
	"os"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

func main() {
	os.Exit(mcptest.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
