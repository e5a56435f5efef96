package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// agent call reads its arguments from stdin with -, from a file with
// @FILE; a misspelled tool gets the nearest name.
func TestAgentCallArgumentsFromStdinAndFile(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "fake")
	mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "fake")

	r := runAgt(t, db, `{"text":"from stdin"}`, "agent", "call", "helper", "mcp__fake__echo", "-", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "from stdin") {
		t.Errorf("agent call - with JSON on stdin: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(`{"text":"from a file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, db, 0, "agent", "call", "helper", "mcp__fake__echo", "@"+file, "--yes")
	if !strings.Contains(r.stdout, "from a file") {
		t.Errorf("agent call @FILE:\n%s", r.stdout)
	}

	// With -, stdin cannot also answer the question: denied, with why.
	r = runAgt(t, db, `{"text":"x"}`, "agent", "call", "helper", "mcp__fake__echo", "-")
	if r.code != 1 || !strings.Contains(r.stdout, "permission_denied") || !strings.Contains(r.stdout, "stdin held the arguments") {
		t.Errorf("agent call - without --yes: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// Bounds and missing files are command-line errors.
	r = runAgt(t, db, strings.Repeat(" ", maxJSONArg+1), "agent", "call", "helper", "mcp__fake__echo", "-", "--yes")
	if r.code != 2 || !strings.Contains(r.stderr, "more than 1048576 bytes") {
		t.Errorf("agent call - with too much on stdin: exit %d\n%s", r.code, r.stderr)
	}
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, make([]byte, maxJSONArg+1), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runAgt(t, db, "", "agent", "call", "helper", "mcp__fake__echo", "@"+big, "--yes")
	if r.code != 2 || !strings.Contains(r.stderr, "the limit is 1048576") {
		t.Errorf("agent call @FILE too big: exit %d\n%s", r.code, r.stderr)
	}
	r = runAgt(t, db, "", "agent", "call", "helper", "mcp__fake__echo", "@"+filepath.Join(t.TempDir(), "none.json"), "--yes")
	if r.code != 2 || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("agent call @missing: exit %d\n%s", r.code, r.stderr)
	}

	// A misspelled tool: nothing is called, the nearest name is offered.
	r = runAgt(t, db, "", "agent", "call", "helper", "mcp__fake__ecko", `{"text":"x"}`, "--yes")
	if r.code != 1 || !strings.Contains(r.stdout, "unknown_tool") || !strings.Contains(r.stderr, "did you mean mcp__fake__echo?") {
		t.Errorf("agent call of a misspelled tool: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// mcp delete names the agents that mount the server and deletes nothing,
// unless --force; then it warns.
func TestMCPDeleteNamesMountingAgents(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "notes", "--", "srv")
	mustRun(t, db, 0, "mcp", "add", "free", "--", "srv")
	mustRun(t, db, 0, "agent", "create", "writer", "--mcp", "notes")
	mustRun(t, db, 0, "agent", "create", "team/reader", "--mcp", "notes", "--mcp", "free")

	r := mustRun(t, db, 1, "mcp", "delete", "notes")
	assertContains(t, "mcp delete of a mounted server", r.stderr,
		"mcp notes is mounted by 2 agents: team/reader, writer; nothing was deleted",
		"'agt agent update team/reader --remove-mcp notes'",
		"--force")
	mustRun(t, db, 0, "mcp", "get", "notes") // still there

	r = mustRun(t, db, 1, "mcp", "rm", "free")
	if !strings.Contains(r.stderr, "mounted by agent team/reader;") {
		t.Errorf("mcp rm of a server mounted once:\n%s", r.stderr)
	}

	r = mustRun(t, db, 0, "mcp", "delete", "notes", "--force")
	if !strings.Contains(r.stdout, "deleted mcp notes") || !strings.Contains(r.stderr, "warning: still mounted by 2 agents: team/reader, writer") {
		t.Errorf("mcp delete --force:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	mustRun(t, db, 1, "mcp", "get", "notes")

	mustRun(t, db, 0, "agent", "update", "team/reader", "--remove-mcp", "free")
	r = mustRun(t, db, 0, "mcp", "delete", "free")
	if r.stderr != "" {
		t.Errorf("mcp delete of a server nobody mounts warns:\n%s", r.stderr)
	}
	r = mustRun(t, db, 1, "mcp", "delete", "fre")
	if !strings.Contains(r.stderr, "not found") {
		t.Errorf("mcp delete of a missing server:\n%s", r.stderr)
	}
}

// --timeout bounds the whole command, the shutdown of a server that
// ignores stdin's end and SIGTERM included. With mcpconn's default grace (2
// s a step) a 3 s probe of such a server took over 7 s; a 1 s one, over
// 5 s, past the bound below (the test uses 1 s: the wait is its subject,
// so the smallest timeout that tells the two apart is the cheapest).
func TestTimeoutCoversShutdown(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "stuck", "-fault", "no-handshake,ignore-sigterm")
	mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "stuck")
	const timeout = time.Second
	for _, args := range [][]string{
		{"mcp", "probe", "stuck", "--timeout", timeout.String()},
		{"agent", "check", "helper", "--probe", "--timeout", timeout.String()},
		{"agent", "tools", "helper", "--timeout", timeout.String()},
	} {
		start := time.Now()
		r := mustRun(t, db, 1, args...)
		took := time.Since(start)
		// The bound is the timeout plus process start-up and the store;
		// the old behaviour needed at least two more grace periods (4 s).
		if took > timeout+2500*time.Millisecond {
			t.Errorf("agt %s took %v, want at most %v + 2.5 s", strings.Join(args, " "), took, timeout)
		}
		if !strings.Contains(r.stdout+r.stderr, "--timeout "+timeout.String()) {
			t.Errorf("agt %s does not name the timeout:\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.stdout, r.stderr)
		}
		t.Logf("agt %s: %v", strings.Join(args, " "), took.Round(time.Millisecond))
	}
}

func TestTimeoutBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		timeout, work, grace time.Duration
	}{
		{60 * time.Second, 60*time.Second - 3300*time.Millisecond, time.Second},
		{5 * time.Second, 5*time.Second - 1050*time.Millisecond, 250 * time.Millisecond},
		{time.Second, 500 * time.Millisecond, 100 * time.Millisecond},
		{100 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		work, grace := timeoutBudget(tt.timeout)
		if work != tt.work || grace != tt.grace {
			t.Errorf("timeoutBudget(%v) = %v, %v; want %v, %v", tt.timeout, work, grace, tt.work, tt.grace)
		}
	}
}

// agent check --probe shows a failed server's stderr tail, as mcp probe
// does, and counts in the singular when there is one.
func TestAgentCheckProbeShowsStderr(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "broken", "-fault", "exit-at-start")
	registerFake(t, db, "fake")
	mustRun(t, db, 0, "agent", "create", "one", "--mcp", "broken")
	mustRun(t, db, 0, "agent", "create", "two", "--mcp", "fake", "--mcp", "broken")

	r := mustRun(t, db, 1, "agent", "check", "one", "--probe")
	assertContains(t, "agent check --probe of a failing server", r.stdout,
		"1 mount\n",
		"    probe: failed after ",
		"    server stderr (last lines):\n      | fakemcp: exiting at start (fault exit-at-start)\n")
	r = mustRun(t, db, 1, "agent", "check", "two", "--probe")
	if !strings.Contains(r.stdout, "2 mounts\n") || strings.Contains(r.stdout, " 1 tools") {
		t.Errorf("agent check --probe of two mounts:\n%s", r.stdout)
	}
}

// A registration saved before cwd was required fails to start with agt's
// command to fix it, named once.
func TestHintForMissingCwd(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	repo, err := boltrepo.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = repo.Create(context.Background(), resource.Key{Kind: resource.KindMCP, Ref: "old"},
		json.RawMessage(`{"mcpServers":{"old":{"command":"srv"}}}`))
	if cerr := repo.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, db, 1, "mcp", "probe", "old")
	const hint = "agt mcp update old --cwd /abs/dir"
	if n := strings.Count(r.stdout, hint); n != 1 {
		t.Errorf("mcp probe of a record without cwd names %q %d times, want once:\n%s", hint, n, r.stdout)
	}
	r = mustRun(t, db, 1, "mcp", "test", "old")
	if !strings.Contains(r.stdout, "fix: "+hint) {
		t.Errorf("mcp test of a record without cwd lacks the fix %q:\n%s", hint, r.stdout)
	}
}

// A server that exits at start and one that answers too slowly get
// different next steps.
func TestProbeHintsByCause(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "slow", "-fault", "no-handshake")
	mustRun(t, db, 0, "mcp", "update", "slow", "--startup-timeout", "300ms")
	registerFake(t, db, "broken", "-fault", "exit-at-start")

	r := mustRun(t, db, 1, "mcp", "probe", "slow")
	assertContains(t, "probe of a slow server", r.stdout, "next: a slow server needs a longer start: 'agt mcp update slow --startup-timeout 90s'")
	r = mustRun(t, db, 1, "mcp", "probe", "broken")
	assertContains(t, "probe of a server that exits", r.stdout, "next: the message says why the server did not answer (a stdio server's stderr is shown with it); 'agt mcp test broken' checks the configuration")
	if strings.Contains(r.stdout, "slow server") {
		t.Errorf("probe of a server that exits calls it slow:\n%s", r.stdout)
	}
}
