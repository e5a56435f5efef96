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
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			bin := mcptest.Command(t)

			mustRun(t, db, 0, "mcp", "add", "notes", "--cwd", t.TempDir(), "--enabled-tools", "note_*, search", "--disabled-tools", "*_delete",
				"--", bin, "-era", string(e), "-fault", string(mcptest.FaultToolMetadata))
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

			// note_create, note_list and the task tools task_forbidden,
			// task_optional and task_required load (tasks run: issue 26);
			// the other 7 are excluded.
			r = mustRun(t, db, 0, "mcp", "probe", "notes", "--json")
			var rep struct {
				Tools []struct {
					Name  string  `json:"name"`
					OK    bool    `json:"ok"`
					Error *string `json:"error"`
				} `json:"tools"`
				Excluded int  `json:"excluded"`
				Usable   int  `json:"usable"`
				OK       bool `json:"ok"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("probe --json: %v\n%s", err, r.stdout)
			}
			var names []string
			for _, tl := range rep.Tools {
				names = append(names, tl.Name)
				if !tl.OK {
					t.Errorf("tool %+v", tl)
				}
			}
			if diff := cmp.Diff([]string{"note_create", "note_list", "task_forbidden", "task_optional", "task_required"}, names); diff != "" || rep.Excluded != 7 || !rep.OK || rep.Usable != 5 {
				t.Errorf("probe: excluded %d, usable %d, ok %v, tools (-want +got):\n%s", rep.Excluded, rep.Usable, rep.OK, diff)
			}
			r = mustRun(t, db, 0, "mcp", "probe", "notes")
			assertContains(t, "probe", r.stdout, "probe notes: ok", "5 tools (7 more left out by enabled_tools/disabled_tools)")

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
		})
	}
}

// Issue 24 item 6: a server some of whose tools a Run leaves out is a
// warning that names each such tool with a short reason (exit status 0),
// unless --strict; a server none of whose offered tools is usable fails;
// tools the registration excludes never do.
func TestProbeExitStatusOfAPartlyUsableServer(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	bin := mcptest.Command(t)
	add := func(ref string, args ...string) {
		mustRun(t, db, 0, append([]string{"mcp", "add", ref, "--cwd", t.TempDir()}, append(args, "--", bin, "-fault",
			string(mcptest.FaultToolMetadata)+","+string(mcptest.FaultExternalRef))...)...)
	}
	add("partly")
	add("clean", "--disabled-tools", "task_required,bad_*")
	add("none", "--enabled-tools", "bad_external_ref")
	add("excluded", "--enabled-tools", "")
	mustRun(t, db, 0, "agent", "create", "partly-agent", "--mcp", "partly", "--mcp", "clean", "--mcp", "excluded")
	mustRun(t, db, 0, "agent", "create", "none-agent", "--mcp", "clean", "--mcp", "none")

	const leftOut = "left out: bad_external_ref (input schema does not compile)"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // in stdout
	}{
		{"partly usable", []string{"mcp", "probe", "partly"}, 0,
			[]string{"probe partly: 12 of 13 tools usable; " + leftOut + "\n", "warning: a Run leaves out 1 tool and offers the others; --strict makes that fail"}},
		{"partly usable, strict", []string{"mcp", "probe", "partly", "--strict"}, 1,
			[]string{"probe partly: 12 of 13 tools usable; " + leftOut + "\n", "failed: --strict fails the probe for a tool left out"}},
		{"partly usable, JSON", []string{"mcp", "probe", "partly", "--json"}, 0, []string{`"usable": 12,`, `"ok": false,`}},
		{"partly usable, JSON, strict", []string{"mcp", "probe", "partly", "--json", "--strict"}, 1, []string{`"usable": 12,`}},
		{"all usable, strict", []string{"mcp", "probe", "clean", "--strict"}, 0, []string{"probe clean: ok\n", "11 tools (2 more left out by"}},
		{"none usable", []string{"mcp", "probe", "none"}, 1,
			[]string{"probe none: no tool usable (0 of 1); left out: bad_external_ref (input schema does not compile)\n"}},
		{"none usable, JSON", []string{"mcp", "probe", "none", "--json"}, 1, []string{`"usable": 0,`}},
		{"all excluded", []string{"mcp", "probe", "excluded", "--strict"}, 0,
			[]string{"probe excluded: ok, but the registration's enabled_tools/disabled_tools leave out all 13 tools the server lists\n"}},
		{"check, partly usable", []string{"agent", "check", "partly-agent", "--probe"}, 0, []string{
			"  mount partly: registered, static checks ok\n    probe: 12 of 13 tools usable, ",
			" ms; " + leftOut + "\n",
			"  mount clean: registered, static checks ok\n    probe: ok, 11 tools, ",
			"    probe: ok, but the registration's enabled_tools/disabled_tools leave out all 13 tools the server lists, ",
			"\nready, but a Run leaves out 1 tool (named above; 'agt mcp probe' gives the whole reason; --strict makes that fail)\n"}},
		{"check, partly usable, strict", []string{"agent", "check", "partly-agent", "--probe", "--strict"}, 1,
			[]string{" ms; " + leftOut + "\n", "\nnot ready\n"}},
		{"check, none usable", []string{"agent", "check", "none-agent", "--probe"}, 1,
			[]string{"    probe: no tool usable (0 of 1), ", "\nnot ready\n"}},
	} {
		r := runAgt(t, db, "", tc.args...)
		if r.code != tc.code {
			t.Errorf("%s: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.name, r.code, tc.code, r.stdout, r.stderr)
		}
		assertContains(t, tc.name, r.stdout, tc.want...)
		if strings.Contains(r.stdout, "some schemas do not compile") {
			t.Errorf("%s: the old, wrong reason:\n%s", tc.name, r.stdout)
		}
	}

	// --strict judges probes: without --probe it is a usage error.
	r := runAgt(t, db, "", "agent", "check", "partly-agent", "--strict")
	if r.code != 2 || !strings.Contains(r.stderr, "--strict judges the probes: give --probe too") {
		t.Errorf("agent check --strict without --probe: exit %d\n%s", r.code, r.stderr)
	}
}

// Issue 24 item 6, SPEC R5.4: calling a tool the registration excludes,
// or one the Run leaves out, says so and offers no other tool in its
// place; the batch is still rejected as unknown_tool, and the arguments
// are not echoed.
func TestCallOfAToolNotOffered(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			mustRun(t, db, 0, "mcp", "add", "notes", "--cwd", t.TempDir(), "--disabled-tools", "note_delete",
				"--", mcptest.Command(t), "-era", string(e), "-fault", string(mcptest.FaultToolMetadata))
			mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "notes")
			for _, tc := range []struct {
				name, tool string
				message    string
				nearest    string // the did-you-mean, "" for none
			}{
				{"excluded", "mcp__notes__note_delete",
					`the tool \"mcp__notes__note_delete\" is excluded by its server's registration (enabled_tools/disabled_tools); the batch was not run`, ""},
				{"misspelled", "mcp__notes__note_lst",
					`no tool named \"mcp__notes__note_lst\" in this run; the batch was not run`, "did you mean mcp__notes__note_list?"},
			} {
				r := mustRun(t, db, 1, "agent", "call", "helper", tc.tool, `{"id":"s3cr3t","text":"s3cr3t"}`, "--yes")
				assertContains(t, tc.name, r.stdout, `"code": "unknown_tool"`, tc.message)
				if strings.Contains(r.stdout+r.stderr, "s3cr3t") {
					t.Errorf("%s: the arguments are echoed:\n%s\n%s", tc.name, r.stdout, r.stderr)
				}
				if got := strings.Contains(r.stderr, "did you mean"); got != (tc.nearest != "") || !strings.Contains(r.stderr, tc.nearest) {
					t.Errorf("%s: stderr\n%s\nwant the did-you-mean %q", tc.name, r.stderr, tc.nearest)
				}
			}
		})
	}
}
