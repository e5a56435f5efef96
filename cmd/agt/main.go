// Command agt registers, tests, probes and mounts MCP servers, and tries an
// agent's tools from a terminal, over the same resource service, Prober and
// Run pipeline that a host embeds. Run "agt --help" for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runCLI(ctx, os.Args[1:], newStdio(os.Stdin, os.Stdout, os.Stderr))
	stop()
	os.Exit(code)
}
