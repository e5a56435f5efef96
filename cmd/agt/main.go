package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// The CLI opens postgres:// stores too: the package registers the
	// scheme with agt.Open. A host that does not import it links no pgx.
	_ "github.com/agtsdk/agt/resource/pgrepo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runCLI(ctx, os.Args[1:], newStdio(os.Stdin, os.Stdout, os.Stderr))
	stop()
	os.Exit(code)
}
