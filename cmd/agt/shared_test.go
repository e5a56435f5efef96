package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// --shared through the CLI: add and create set "shared", update turns it
// off and on, other flags keep it, and get and list show it. Without the flag the
// field is absent (never on by default).
func TestSharedFlagCLI(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	bin := mcptest.Command(t)
	shared := func(ref string) any {
		t.Helper()
		_, data := getJSON(t, db, "mcp", ref)
		return data["mcpServers"].(map[string]any)[ref].(map[string]any)["shared"]
	}

	mustRun(t, db, 0, "mcp", "add", "plain", "--cwd", t.TempDir(), "--", bin)
	if got := shared("plain"); got != nil {
		t.Errorf("mcp add without --shared stored shared = %v; want it absent", got)
	}
	mustRun(t, db, 0, "mcp", "add", "files", "--shared", "--cwd", t.TempDir(), "--", bin)
	mustRun(t, db, 0, "mcp", "create", "made", "--shared", "--command", bin, "--cwd", t.TempDir())
	for _, ref := range []string{"files", "made"} {
		if got := shared(ref); got != true {
			t.Errorf("%s: shared = %v; want true", ref, got)
		}
	}
	if r := mustRun(t, db, 0, "mcp", "get", "files"); !strings.Contains(r.stdout, "shared") {
		t.Errorf("mcp get does not say the server is shared:\n%s", r.stdout)
	}
	for _, tc := range []struct {
		args []string
		want any
	}{
		{[]string{"--description", "files"}, true},
		{[]string{"--shared=false"}, nil},
		{[]string{"--description", "again"}, nil},
		{[]string{"--shared"}, true},
	} {
		mustRun(t, db, 0, append([]string{"mcp", "update", "files"}, tc.args...)...)
		if got := shared("files"); got != tc.want {
			t.Errorf("after update %v: shared = %v; want %v", tc.args, got, tc.want)
		}
	}
	if r := mustRun(t, db, 0, "mcp", "get", "plain"); strings.Contains(r.stdout, "shared") {
		t.Errorf("mcp get shows an unshared server as shared:\n%s", r.stdout)
	}
	// mcp list marks the shared servers, and only them.
	list := mustRun(t, db, 0, "mcp", "list").stdout
	for _, line := range strings.Split(strings.TrimSpace(list), "\n")[1:] {
		ref := strings.Fields(line)[0]
		if want := ref != "plain"; strings.Contains(line, "(shared)") != want {
			t.Errorf("mcp list line of %s: %q; want (shared) %v", ref, line, want)
		}
	}
}
