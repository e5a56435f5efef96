package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// calls reads the fake server's call log: one tool name per tools/call it
// received.
func calls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// One call through the whole pipeline from the terminal (SPEC R4, R5.2,
// R5.3): validation before permission, permission before the server.
func TestAgentToolsAndCall(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	log := filepath.Join(t.TempDir(), "calls.log")
	registerFake(t, db, "fake", "-call-log", log)
	mustRun(t, db, 0, "agent", "create", "helper")

	// Registration grants nothing: no mount, no tools (SPEC R4.1).
	r := mustRun(t, db, 0, "agent", "tools", "helper", "--json")
	var rep struct {
		Tools []struct {
			Name   string `json:"name"`
			Source struct {
				Ref  string `json:"reference"`
				Tool string `json:"tool"`
			} `json:"source"`
		} `json:"tools"`
		MountErrors []any `json:"mount_errors"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Tools) != 0 {
		t.Fatalf("tools of an agent without mounts: %s (err %v)", r.stdout, err)
	}

	mustRun(t, db, 0, "agent", "update", "helper", "--add-mcp", "fake")
	r = mustRun(t, db, 0, "agent", "tools", "helper", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tool := range rep.Tools {
		if tool.Name == "mcp__fake__search" && tool.Source.Ref == "fake" && tool.Source.Tool == "search" {
			found = true
		}
	}
	if !found {
		t.Fatalf("agent tools --json has no mcp__fake__search from fake: %s", r.stdout)
	}
	r = mustRun(t, db, 0, "agent", "tools", "helper")
	if !strings.Contains(r.stdout, "mcp__fake__search") {
		t.Errorf("agent tools:\n%s", r.stdout)
	}

	// Invalid arguments: the ToolError with paths, exit 1, the server is
	// not called, and no permission is asked (stdin is not a terminal, so
	// asking would have denied it).
	r = mustRun(t, db, 1, "agent", "call", "helper", "mcp__fake__search", `{"query":"secret-word","limit":0}`)
	var te struct {
		Error struct {
			Code       string `json:"code"`
			Violations []struct {
				Path       string `json:"path"`
				SchemaPath string `json:"schema_path"`
			} `json:"violations"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &te); err != nil {
		t.Fatalf("invalid call output is not the ToolError: %v\n%s", err, r.stdout)
	}
	if te.Error.Code != "invalid_arguments" || len(te.Error.Violations) != 1 || te.Error.Violations[0].Path != "/limit" {
		t.Errorf("invalid call: %s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "secret-word") {
		t.Errorf("the ToolError echoes an argument value:\n%s", r.stdout)
	}

	// Valid, but nobody at a terminal to approve: denied, never run.
	r = mustRun(t, db, 1, "agent", "call", "helper", "mcp__fake__search", `{"query":"a","limit":2}`)
	if !strings.Contains(r.stdout, `"permission_denied"`) || !strings.Contains(r.stdout, "--yes") {
		t.Errorf("call without --yes and without a terminal:\n%s", r.stdout)
	}
	if got := calls(t, log); len(got) != 0 {
		t.Fatalf("the server received %v; invalid and denied calls must never reach it", got)
	}

	// --yes allows explicitly.
	r = mustRun(t, db, 0, "agent", "call", "helper", "mcp__fake__search", `{"query":"a","limit":2}`, "--yes")
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, r.stdout)
	}
	if diff := cmp.Diff([]string{"search"}, calls(t, log)); diff != "" {
		t.Errorf("calls received by the server (-want +got):\n%s", diff)
	}

	// A business error of the server is a tool_error, exit 1.
	r = mustRun(t, db, 1, "agent", "call", "helper", "mcp__fake__note_delete", `{"id":"n999","caller":"ada"}`, "--yes")
	if !strings.Contains(r.stdout, `"tool_error"`) {
		t.Errorf("business error:\n%s", r.stdout)
	}

	// A tool that is not in the snapshot rejects the batch.
	r = mustRun(t, db, 1, "agent", "call", "helper", "mcp__other__x", `{}`, "--yes")
	if !strings.Contains(r.stdout, `"unknown_tool"`) || !strings.Contains(r.stderr, "agt agent tools helper") {
		t.Errorf("unknown tool:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}

	// A disabled agent does not run.
	mustRun(t, db, 0, "agent", "update", "helper", "--enabled=false")
	r = mustRun(t, db, 1, "agent", "call", "helper", "mcp__fake__search", `{"query":"a","limit":2}`, "--yes")
	if !strings.Contains(r.stderr, "--enabled=true") {
		t.Errorf("disabled agent: %s", r.stderr)
	}
	r = mustRun(t, db, 1, "agent", "check", "helper")
	if !strings.Contains(r.stdout, "fix: agt agent update helper --enabled=true") {
		t.Errorf("agent check of a disabled agent gives no CLI fix:\n%s", r.stdout)
	}
}

// A mount that cannot start is reported, the rest loads, exit 1.
func TestAgentToolsReportsMountFailures(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "fake")
	registerFake(t, db, "broken", "-fault", "exit-at-start")
	mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "fake", "--mcp", "broken")
	r := mustRun(t, db, 1, "agent", "tools", "helper")
	if !strings.Contains(r.stdout, "mcp__fake__search") || !strings.Contains(r.stdout, "mount broken failed to load") {
		t.Errorf("agent tools with a broken mount:\n%s", r.stdout)
	}

	// A mounted server deleted since: the fix is to register or unmount it,
	// not to mount something.
	mustRun(t, db, 0, "agent", "update", "helper", "--remove-mcp", "fake")
	mustRun(t, db, 0, "mcp", "delete", "broken", "--force")
	r = mustRun(t, db, 1, "agent", "tools", "helper")
	for _, want := range []string{
		"agent helper: no tools: no mounted server loaded",
		"mount broken failed to load: no MCP server is registered as broken",
		"'agt agent update helper --remove-mcp broken'",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("agent tools with a deleted mount lacks %q:\n%s", want, r.stdout)
		}
	}
}

// A command that runs out of its --timeout says so once, and what to do
// next: a server that never answers the handshake stalls each of them.
func TestTimeoutSaysWhatToDo(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "mute", "-fault", "no-handshake")
	mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "mute")
	const hint = "next: agt gave up after --timeout 300ms"
	for _, args := range [][]string{
		{"mcp", "probe", "mute", "--timeout", "300ms"},
		{"agent", "check", "helper", "--probe", "--timeout", "300ms"},
		{"agent", "tools", "helper", "--timeout", "300ms"},
		{"agent", "call", "helper", "mcp__mute__echo", `{"text":"x"}`, "--yes", "--timeout", "300ms"},
	} {
		r := mustRun(t, db, 1, args...)
		if strings.Count(r.stderr, hint) != 1 {
			t.Errorf("agt %s: stderr does not say once that it timed out:\n%s", strings.Join(args, " "), r.stderr)
		}
	}
}
