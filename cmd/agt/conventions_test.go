package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What people type from claude mcp and codex mcp works, and names follow
// one rule: each case runs agt, then compares the stored server entry
// and looks for the notes.
func TestAddConventions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		ref    string         // the registration to read; "" reads none
		want   map[string]any // its server entry
		stderr []string       // pieces of stderr
	}{
		{name: "my_server follows the naming rule", args: []string{"mcp", "add", "my_server", "--cwd", dir, "--", "srv"}, ref: "my-server",
			want:   map[string]any{"type": "stdio", "command": "srv", "cwd": dir},
			stderr: []string{"note: my_server is registered as my-server: agt writes server names in lowercase with '-' for other characters, so that its tools are named mcp__my-server__TOOL"}},
		{name: "GitHub with a URL and no --transport is http", args: []string{"mcp", "add", "GitHub", "https://api.example.com/mcp"}, ref: "github",
			want:   map[string]any{"type": "http", "url": "https://api.example.com/mcp"},
			stderr: []string{"GitHub is registered as github"}},
		{name: "-t is --transport", args: []string{"mcp", "add", "old", "-t", "sse", "https://h.example/sse"}, ref: "old",
			want: map[string]any{"type": "sse", "url": "https://h.example/sse"}},
		{name: "--url and --bearer-token-env-var, as codex mcp add", args: []string{"mcp", "add", "docs", "--url", "https://h.example/mcp", "--bearer-token-env-var", "DOCS_TOKEN"}, ref: "docs",
			want:   map[string]any{"type": "http", "url": "https://h.example/mcp", "headers": map[string]any{"Authorization": "Bearer ${env:DOCS_TOKEN}"}},
			stderr: []string{"the token is read from agt's environment, DOCS_TOKEN"}},
		{name: "-s is accepted with a note", args: []string{"mcp", "add", "scoped", "-s", "user", "--cwd", dir, "--", "srv"}, ref: "scoped",
			want:   map[string]any{"type": "stdio", "command": "srv", "cwd": dir},
			stderr: []string{"note: --scope is Claude Code's; agt keeps every registration in one store (--db)"}},
		{name: "-e repeats", args: []string{"mcp", "add", "two", "-e", "A=1", "-e", "B=2", "--cwd", dir, "--", "srv", "-v"}, ref: "two",
			want: map[string]any{"type": "stdio", "command": "srv", "args": []any{"-v"}, "cwd": dir, "env": map[string]any{"A": "1", "B": "2"}}},
		{name: "a literal credential gets a hint", args: []string{"mcp", "add", "lit", "-e", "API_TOKEN=planted", "--cwd", dir, "--", "srv"}, ref: "lit",
			want:   map[string]any{"type": "stdio", "command": "srv", "cwd": dir, "env": map[string]any{"API_TOKEN": "planted"}},
			stderr: []string{"note: env API_TOKEN holds a literal credential, stored as written: a reference is safer"}},
		{name: "create gets the hint too", args: []string{"mcp", "create", "lit2", "--url", "https://h.example/mcp", "-H", "Authorization: Bearer planted-token"}, ref: "lit2",
			want:   map[string]any{"type": "http", "url": "https://h.example/mcp", "headers": map[string]any{"Authorization": "Bearer planted-token"}},
			stderr: []string{"note: header Authorization holds a literal credential"}},
		{name: "--client-id and --client-secret", args: []string{"mcp", "add", "lin", "--client-id", "cid", "--client-secret", "${secret:lin}", "https://h.example/mcp"}, ref: "lin",
			want: map[string]any{"type": "http", "url": "https://h.example/mcp", "oauth": map[string]any{"client_id": "cid", "client_secret": "${secret:lin}"}}},
		{name: "add-json, as claude mcp add-json", args: []string{"mcp", "add-json", "Weather", `{"command": "srv", "env": {"KEY": "${WEATHER_KEY:-none}"},}`, "--cwd", dir}, ref: "weather",
			want:   map[string]any{"command": "srv", "cwd": dir, "env": map[string]any{"KEY": "${env:WEATHER_KEY:-none}"}},
			stderr: []string{"Weather is registered as weather", "WEATHER_KEY read from agt's environment"}},
		{name: "create --data takes one server's entry", args: []string{"mcp", "create", "My.Server", "--data", `{"type": "http", "url": "https://h.example/mcp"}`}, ref: "my-server",
			want:   map[string]any{"type": "http", "url": "https://h.example/mcp"},
			stderr: []string{"My.Server is registered as my-server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			r := mustRun(t, db, 0, tt.args...)
			assertContains(t, "stderr", r.stderr, tt.stderr...)
			_, data := getJSON(t, db, "mcp", tt.ref)
			var got any
			for _, v := range data["mcpServers"].(map[string]any) {
				got = v
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stored entry (-want +got):\n%s", diff)
			}
		})
	}
}

// Mistakes people make with those conventions are usage errors that say
// what to type instead; nothing is stored.
func TestAddConventionMistakes(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	assertUsageErrors(t, db, []usageCase{
		{"-e A=1 B=2 stores no command B=2", []string{"mcp", "add", "x", "-e", "A=1", "B=secretvalue", "--", "srv"}, "B=... looks like an environment variable, not a command: give one -e per variable (-e A=1 -e B=2)"},
		{"-e A=1 B=2 without --", []string{"mcp", "add", "x", "-e", "A=1", "B=secretvalue"}, "give one -e per variable"},
		{"--url and a command", []string{"mcp", "add", "x", "--url", "https://h/mcp", "--", "srv"}, "--url gives the endpoint"},
		{"bearer on stdio", []string{"mcp", "add", "x", "--bearer-token-env-var", "T", "--", "srv"}, "are for remote servers"},
		{"bearer not a name", []string{"mcp", "add", "x", "--bearer-token-env-var", "secret value", "https://h/mcp"}, "takes a variable name"},
		{"add-json of a whole document", []string{"mcp", "add-json", "x", `{"mcpServers":{"x":{"command":"srv"}}}`}, "a whole {\"mcpServers\": ...} document goes to"},
	})
	if r := runAgt(t, db, "", "mcp", "list", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("a refused add stored something:\n%s", r.stdout)
	}
	// ls lists, as in claude mcp list and codex mcp list.
	mustRun(t, db, 0, "mcp", "add", "a", "--", "srv")
	for _, group := range []string{"mcp", "agent"} {
		if r := runAgt(t, db, "", group, "ls"); r.code != 0 {
			t.Errorf("agt %s ls: exit %d\n%s", group, r.code, r.stderr)
		}
	}
	if r := mustRun(t, db, 0, "mcp", "ls"); !strings.Contains(r.stdout, "a ") {
		t.Errorf("mcp ls does not list a:\n%s", r.stdout)
	}
}
