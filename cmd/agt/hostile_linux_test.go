package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/run"
)

// The permission question shows the server's own tool name (in the
// source) on one line, made safe: a hostile name cannot forge a line of
// the question the operator answers.
func TestPermissionQuestionShowsServerTextSafely(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerHostile(t, db, "hostile", "serve")
	mustRun(t, db, 0, "agent", "create", "a", "--mcp", "hostile")

	controller, terminal := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agtBinary, "--db", db, "agent", "call", "a", run.Alias("hostile", hostileToolName), `{}`)
	cmd.Stdin = terminal
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	if _, err := controller.Write([]byte("n\n")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err == nil {
		t.Fatalf("a refused call exited 0: %s", out.String())
	}
	question := errb.String()
	if !strings.Contains(question, "  source     mcp:hostile:evil??FORGED-TOOL?x\n") || !strings.Contains(question, "Allow it? [y/N]") {
		t.Errorf("the question does not show the source on one line, made safe:\n%q", question)
	}
	// "Tool call by agent", tool, source, arguments and "Allow it?".
	assertSafeLines(t, "the permission question", question, 5, 400)
}
