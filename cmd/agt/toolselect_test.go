package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// enabled_tools and disabled_tools through the CLI: add, create and update
// set them, get and list show them, probe counts what they leave out and
// names a tool that requires tasks.
func TestToolSelectionCLI(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	bin := mcptest.Command(t)

	mustRun(t, db, 0, "mcp", "add", "notes", "--cwd", t.TempDir(), "--enabled-tools", "note_*, search", "--disabled-tools", "*_delete",
		"--", bin, "-fault", string(mcptest.FaultToolMetadata))
	server := func(ref string) map[string]any {
		t.Helper()
		_, data := getJSON(t, db, "mcp", ref)
		return data["mcpServers"].(map[string]any)[ref].(map[string]any)
	}
	for _, tc := range []struct {
		name    string
		args    []string // an update of notes; nil for the add above
		enabled any      // nil: absent
		disable any
		shown   string
	}{
		{name: "add", enabled: []any{"note_*", "search"}, disable: []any{"*_delete"}, shown: "only note_*, search except *_delete"},
		{name: "none", args: []string{"--enabled-tools", ""}, enabled: []any{}, disable: []any{"*_delete"}, shown: "none (enabled_tools is empty)"},
		{name: "all again", args: []string{"--enabled-tools", "*", "--disabled-tools", ""}, enabled: []any{"*"}, disable: []any{}, shown: "only *"},
		{name: "other flags keep them", args: []string{"--description", "notes"}, enabled: []any{"*"}, disable: []any{}, shown: "only *"},
	} {
		if tc.args != nil {
			mustRun(t, db, 0, append([]string{"mcp", "update", "notes"}, tc.args...)...)
		}
		srv := server("notes")
		if diff := cmp.Diff(tc.enabled, srv["enabled_tools"]); diff != "" {
			t.Errorf("%s: enabled_tools (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.disable, srv["disabled_tools"]); diff != "" {
			t.Errorf("%s: disabled_tools (-want +got):\n%s", tc.name, diff)
		}
		if r := mustRun(t, db, 0, "mcp", "get", "notes"); !strings.Contains(r.stdout, "tools") || !strings.Contains(r.stdout, tc.shown) {
			t.Errorf("%s: mcp get does not show %q:\n%s", tc.name, tc.shown, r.stdout)
		}
	}
	mustRun(t, db, 0, "mcp", "update", "notes", "--enabled-tools", "note_*,task_*", "--disabled-tools", "note_delete")

	r := mustRun(t, db, 0, "mcp", "list")
	if !strings.Contains(r.stdout, "TOOLS") || !strings.Contains(r.stdout, "only note_*, task_* except note_delete") {
		t.Errorf("mcp list does not show the selection:\n%s", r.stdout)
	}

	// note_create, note_list, task_optional, task_forbidden load;
	// task_required is left out with the reason; the other 7 are excluded.
	r = mustRun(t, db, 1, "mcp", "probe", "notes", "--json")
	var rep struct {
		Tools []struct {
			Name  string  `json:"name"`
			OK    bool    `json:"ok"`
			Error *string `json:"error"`
		} `json:"tools"`
		Excluded int  `json:"excluded"`
		OK       bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("probe --json: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, tl := range rep.Tools {
		names = append(names, tl.Name)
		if (tl.Name == mcptest.ToolTaskRequired) == tl.OK || (!tl.OK && (tl.Error == nil || !strings.Contains(*tl.Error, `taskSupport "required"`))) {
			t.Errorf("tool %+v", tl)
		}
	}
	if diff := cmp.Diff([]string{"note_create", "note_list", "task_forbidden", "task_optional", "task_required"}, names); diff != "" || rep.Excluded != 7 || rep.OK {
		t.Errorf("probe: excluded %d, ok %v, tools (-want +got):\n%s", rep.Excluded, rep.OK, diff)
	}
	r = mustRun(t, db, 1, "mcp", "probe", "notes")
	assertContains(t, "probe", r.stdout, "1 of 5 tools cannot be used", "5 tools (7 more left out by enabled_tools/disabled_tools)",
		"disabled_tools to leave it out")

	// Listed in disabled_tools, the tool is left out without an error.
	mustRun(t, db, 0, "mcp", "update", "notes", "--disabled-tools", "note_delete,task_required")
	r = mustRun(t, db, 0, "mcp", "probe", "notes")
	assertContains(t, "probe", r.stdout, "probe notes: ok", "4 tools (8 more left out")

	// A bad glob is refused, naming the item, and nothing changes.
	r = mustRun(t, db, 1, "mcp", "update", "notes", "--enabled-tools", "ok,note_[cd]*")
	assertContains(t, "bad glob", r.stderr, "/mcpServers/notes/enabled_tools/1", "only * and ? are wildcards")
	if diff := cmp.Diff([]any{"note_*", "task_*"}, server("notes")["enabled_tools"]); diff != "" {
		t.Errorf("enabled_tools after a refused update (-want +got):\n%s", diff)
	}
}
