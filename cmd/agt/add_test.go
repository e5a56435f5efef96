package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mcp add is the claude/codex form: everything after -- is the server's
// command line, flags included; -e is --env; without --cwd the server runs
// in the current directory, and agt says so.
func TestMCPAddShortForm(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	cwd := t.TempDir()

	r := mustRun(t, db, 0, "mcp", "add", "tools/notes", "--cwd", cwd, "-e", "TOKEN=s3cret", "--env", "MODE=ro",
		"--", "notes-server", "--db", "data/notes.db", "-v", "--allow-mcp")
	if !strings.Contains(r.stdout, "registered mcp tools/notes (revision 1)") {
		t.Errorf("mcp add stdout:\n%s", r.stdout)
	}
	_, data := getJSON(t, db, "mcp", "tools/notes")
	want := map[string]any{"mcpServers": map[string]any{"notes": map[string]any{
		"type": "stdio", "command": "notes-server", "args": []any{"--db", "data/notes.db", "-v", "--allow-mcp"},
		"env": map[string]any{"TOKEN": "s3cret", "MODE": "ro"}, "cwd": cwd,
	}}}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("stored document (-want +got):\n%s", diff)
	}

	// No --cwd: the current directory (the test's), made absolute.
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, db, 0, "mcp", "add", "here", "--", "srv")
	if !strings.Contains(r.stderr, "note: no --cwd: it runs in the current directory, "+here) {
		t.Errorf("mcp add without --cwd does not say where it runs:\n%s", r.stderr)
	}
	_, data = getJSON(t, db, "mcp", "here")
	if got := data["mcpServers"].(map[string]any)["here"].(map[string]any)["cwd"]; got != here {
		t.Errorf("cwd without --cwd = %v, want %s", got, here)
	}

	// A remote server: --transport http URL, -H for a header.
	mustRun(t, db, 0, "mcp", "add", "web", "--transport", "http", "https://mcp.example.com/mcp", "-H", "Authorization: Bearer hsecret")
	_, data = getJSON(t, db, "mcp", "web")
	want = map[string]any{"mcpServers": map[string]any{"web": map[string]any{
		"type": "http", "url": "https://mcp.example.com/mcp", "headers": map[string]any{"Authorization": "Bearer hsecret"},
	}}}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("stored remote document (-want +got):\n%s", diff)
	}
	mustRun(t, db, 0, "mcp", "add", "old", "--transport", "sse", "https://mcp.example.com/sse")
	_, data = getJSON(t, db, "mcp", "old")
	if got := data["mcpServers"].(map[string]any)["old"].(map[string]any)["type"]; got != "sse" {
		t.Errorf("--transport sse stored type %v", got)
	}

	// -e and -H are shorthands on create and update too.
	mustRun(t, db, 0, "mcp", "update", "web", "-H", "X-Team: blue")
	_, data = getJSON(t, db, "mcp", "web")
	if diff := cmp.Diff(map[string]any{"X-Team": "blue"}, data["mcpServers"].(map[string]any)["web"].(map[string]any)["headers"]); diff != "" {
		t.Errorf("headers after update -H (-want +got):\n%s", diff)
	}
}

func TestMCPAddUsageErrors(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	assertUsageErrors(t, db, []usageCase{
		{"no command", []string{"mcp", "add", "x"}, "say how to start or reach the server: -- CMD"},
		{"server flag before --", []string{"mcp", "add", "x", "srv", "--verbose"}, "unknown flag --verbose; put the server's command line after --"},
		{"header on stdio", []string{"mcp", "add", "x", "-H", "A: secretvalue", "--", "srv"}, "-H/--header and --bearer-token-env-var are for remote servers"},
		{"env on remote", []string{"mcp", "add", "x", "--transport", "http", "-e", "K=secretvalue", "https://h/mcp"}, "are for stdio servers"},
		{"remote takes one URL", []string{"mcp", "add", "x", "--transport", "http", "https://h/mcp", "more"}, "takes the URL as the one argument after REF; got 2"},
		{"unknown transport", []string{"mcp", "add", "x", "--transport", "carrier-pigeon", "https://h/mcp"}, "--transport must be stdio, http or sse"},
		{"bad reference", []string{"mcp", "add", "Not/A/Ref", "--", "srv"}, "reference"},
	})
}

// A flag is reported as it was typed (-e, not --e); an unknown one gets
// the nearest known flag.
func TestFlagsReportedAsTyped(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	assertUsageErrors(t, db, []usageCase{
		{"shorthand without value", []string{"mcp", "create", "x", "--command", "a", "--cwd", "/", "-e"}, "agt: -e needs a value\n"},
		{"long without value", []string{"mcp", "create", "x", "--command", "a", "--cwd", "/", "--env"}, "agt: --env needs a value\n"},
		{"one dash long", []string{"mcp", "create", "x", "--command", "a", "--cwd", "/", "-env"}, "agt: -env needs a value\n"},
		{"shorthand bad value", []string{"mcp", "add", "x", "-e", "secretvalue", "--", "srv"}, "agt: invalid value for -e: want K=V\n"},
		{"one dash bad duration", []string{"mcp", "probe", "a", "-timeout", "secretvalue"}, "invalid value for -timeout: want a duration"},
		{"unknown, one dash", []string{"mcp", "list", "-bogus"}, "agt: unknown flag -bogus\n"},
		{"unknown near a known one", []string{"mcp", "list", "--categroy", "c"}, "unknown flag --categroy (did you mean --category?)"},
		{"unknown shorthand", []string{"mcp", "create", "x", "-E", "K=V"}, "unknown flag -E (did you mean -e?)"},
	})
}

// remove and rm run delete, for MCP servers and agents; help names them.
func TestDeleteAliases(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	for _, ref := range []string{"a", "b", "c"} {
		mustRun(t, db, 0, "mcp", "add", ref, "--", "srv")
	}
	mustRun(t, db, 0, "mcp", "remove", "a")
	mustRun(t, db, 0, "mcp", "rm", "b")
	mustRun(t, db, 0, "agent", "create", "helper")
	mustRun(t, db, 0, "agent", "rm", "helper")
	r := mustRun(t, db, 0, "mcp", "list", "--json")
	if strings.Contains(r.stdout, `"a"`) || strings.Contains(r.stdout, `"b"`) || !strings.Contains(r.stdout, `"c"`) {
		t.Errorf("after mcp remove a and mcp rm b:\n%s", r.stdout)
	}
	mustRun(t, db, 1, "agent", "get", "helper")
	r = mustRun(t, db, 0, "mcp", "rm", "--help")
	if !strings.HasPrefix(r.stdout, "Usage: agt mcp delete") || !strings.Contains(r.stdout, "(also: remove, rm)") {
		t.Errorf("agt mcp rm --help:\n%s", r.stdout)
	}
}

// A misspelled command, sub-command or reference gets the nearest one.
func TestDidYouMeanOnTheCommandLine(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "notes", "--", "srv")
	mustRun(t, db, 0, "agent", "create", "helper")
	tests := []struct {
		name string
		code int
		args []string
		want string
	}{
		{"command", 2, []string{"mpc", "list"}, `unknown command "mpc" (did you mean mcp?)`},
		{"sub-command", 2, []string{"mcp", "lsit"}, `unknown command "lsit" for agt mcp (did you mean list?)`},
		{"alias", 2, []string{"mcp", "rn", "x"}, `(did you mean rm?)`},
		{"nothing near", 2, []string{"mcp", "frobnicate"}, `unknown command "frobnicate" for agt mcp; it has`},
		{"mcp reference", 1, []string{"mcp", "get", "note"}, "(did you mean notes?)"},
		{"mcp reference on update", 1, []string{"mcp", "update", "nots", "--cwd", "/"}, "(did you mean notes?)"},
		{"mcp reference on probe", 1, []string{"mcp", "probe", "notse"}, "(did you mean notes?)"},
		{"agent reference", 1, []string{"agent", "mcps", "helpr"}, "(did you mean helper?)"},
		{"agent reference of a Run", 1, []string{"agent", "tools", "hlper"}, "(did you mean helper?)"},
		{"agent reference of check", 1, []string{"agent", "check", "helpe"}, "(did you mean helper?)"},
		{"mounted reference", 1, []string{"agent", "update", "helper", "--add-mcp", "note"}, "did you mean notes for note?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runAgt(t, db, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout+r.stderr, tt.want) {
				t.Errorf("agt %q: exit %d, want %d and %q:\nstdout:\n%s\nstderr:\n%s", tt.args, r.code, tt.code, tt.want, r.stdout, r.stderr)
			}
		})
	}
	r := runAgt(t, db, "", "mcp", "frobnicate")
	if strings.Contains(r.stderr, "did you mean") {
		t.Errorf("a word far from every command gets a suggestion:\n%s", r.stderr)
	}
}

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	names := []string{"notes", "tools/notes", "archive", "helper", "mcp__notes__search", "mcp__notes__echo"}
	tests := []struct {
		word, want string
	}{
		{"note", "notes"},
		{"ntoes", "notes"}, // a transposition is one edit
		{"NOTES", "notes"},
		{"tools/note", "tools/notes"},
		{"archiv", "archive"},
		{"mcp__notes__serch", "mcp__notes__search"},
		{"mcp__notes__ecko", "mcp__notes__echo"},
		{"notes", ""},    // an exact match is no suggestion
		{"x", ""},        // too far from everything
		{"helpdesk", ""}, // 3 edits from helper: too many for 8 letters
		{"", ""},
		{strings.Repeat("n", 200), ""}, // longer than maxSuggestRunes
	}
	for _, tt := range tests {
		if got := didYouMean(tt.word, names); got != tt.want {
			t.Errorf("didYouMean(%.20q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

// Help lists a shorthand with its long flag.
func TestHelpListsShorthands(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"add", "create", "update"} {
		r := mustRun(t, "", 0, "mcp", cmd, "--help")
		if !strings.Contains(r.stdout, "  -e, --env K=V\n") || !strings.Contains(r.stdout, `  -H, --header "Name: value"`+"\n") || strings.Contains(r.stdout, "short for --") {
			t.Errorf("agt mcp %s --help does not list -e and -H with their long flags:\n%s", cmd, r.stdout)
		}
	}
}

// Issue 25 item 3: a header the MCP client sets itself is refused on
// every path that writes a registration, with the field, the rule and
// the fix, never the value, and nothing is stored.
func TestMCPTransportHeaderRefused(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "web", "--transport", "http", "-H", "X-Team: blue", "https://h.example/mcp")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"add", []string{"mcp", "add", "web2", "--transport", "http", "-H", "mcp-method: secretvalue", "https://h.example/mcp"},
			"invalid /data/mcpServers/web2/headers/mcp-method: the header Mcp-Method is an MCP request header"},
		{"update", []string{"mcp", "update", "web", "-H", "Content-Type: secretvalue"},
			"invalid /data/mcpServers/web/headers/Content-Type: the header Content-Type describes the HTTP body"},
		{"create", []string{"mcp", "create", "web3", "--data", `{"mcpServers":{"web3":{"url":"https://h.example/mcp","headers":{"Mcp-Session-Id":"secretvalue"}}}}`},
			"invalid /data/mcpServers/web3/headers/Mcp-Session-Id: the header Mcp-Session-Id is an MCP session or stream header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runAgt(t, db, "", tc.args...)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "(fix: remove it") || strings.Contains(r.stdout+r.stderr, "secretvalue") {
				t.Errorf("agt %s: exit %d, stderr:\n%s\nwant exit 1 and %q with its fix, without the value", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
			}
		})
	}
	_, data := getJSON(t, db, "mcp", "web")
	if diff := cmp.Diff(map[string]any{"X-Team": "blue"}, data["mcpServers"].(map[string]any)["web"].(map[string]any)["headers"]); diff != "" {
		t.Errorf("headers after the refused update (-want +got):\n%s", diff)
	}
	for _, ref := range []string{"web2", "web3"} {
		if r := runAgt(t, db, "", "mcp", "get", ref); r.code == 0 {
			t.Errorf("a refused registration %s was stored", ref)
		}
	}
}
