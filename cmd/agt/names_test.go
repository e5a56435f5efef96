package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// The naming rule: lowercase, every run of other characters than letters
// and digits one '-', a category kept.
func TestNormalRef(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		changed  bool
	}{
		{"notes", "notes", false},
		{"my-server", "my-server", false},
		{"my_server", "my-server", true},
		{"GitHub", "github", true},
		{"My Server.v2", "my-server-v2", true},
		{"--a__b--", "a-b", true},
		{"Team/My_Notes", "team/my-notes", true},
		{"team/notes", "team/notes", false},
	} {
		got, changed, err := normalRef(tc.in)
		if err != nil || string(got) != tc.want || changed != tc.changed {
			t.Errorf("normalRef(%q) = %q, %v, %v; want %q, %v", tc.in, got, changed, err, tc.want, tc.changed)
		}
	}
	for _, bad := range []string{"___", "a/b/c", ""} {
		if _, _, err := normalRef(bad); err == nil {
			t.Errorf("normalRef(%q) made a reference", bad)
		}
	}
}

// "did you mean" knows the names a person predicts for a server's tool
// and suggests the alias that exists, hashed or not.
func TestToolSuggestion(t *testing.T) {
	t.Parallel()
	tools := []run.ToolInfo{
		{Name: "mcp_ddc1744aa2__echo", Source: run.Source{Kind: run.SourceMCP, Ref: "my_server", Tool: "echo"}},
		{Name: "mcp__notes__search", Source: run.Source{Kind: run.SourceMCP, Ref: "notes", Tool: "search"}},
		{Name: "mcp__team_docs__read", Source: run.Source{Kind: run.SourceMCP, Ref: "team/docs", Tool: "read"}},
		{Name: "resource_read", Source: run.Source{Kind: run.SourceFramework, Tool: "resource_read"}},
	}
	for _, tc := range []struct{ typed, want string }{
		{"mcp__my_server__echo", "mcp_ddc1744aa2__echo"},
		{"mcp__my-server__echo", "mcp_ddc1744aa2__echo"},
		{"mcp__my_server__ecoh", "mcp_ddc1744aa2__echo"},
		{"mcp__notes__serch", "mcp__notes__search"},
		{"mcp__team/docs__read", "mcp__team_docs__read"},
		{"resource_raed", "resource_read"},
		{"something_else_entirely", ""},
	} {
		if got := toolSuggestion(tc.typed, tools); got != tc.want {
			t.Errorf("toolSuggestion(%q) = %q; want %q", tc.typed, got, tc.want)
		}
	}
}

// A registration named before the naming rule (my_server) has hashed
// aliases: agent call with the name a person types suggests the alias,
// in both protocol eras.
func TestUnknownToolSuggestsTheHashedAlias(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			doc, _ := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"my_server": {
				Command: mcptest.Command(t), Args: []string{"-era", string(era)}, Cwd: t.TempDir()}}})
			repo, err := boltrepo.Open(db, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = repo.Create(context.Background(), resource.Key{Kind: resource.KindMCP, Ref: "my_server"}, doc)
			if cerr := repo.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			mustRun(t, db, 0, "agent", "create", "a1", "--mcp", "my_server")
			var alias string
			for _, line := range strings.Split(mustRun(t, db, 0, "agent", "tools", "a1").stdout, "\n") {
				if f := strings.Fields(line); len(f) > 0 && strings.HasSuffix(f[0], "__echo") {
					alias = f[0]
				}
			}
			if alias == "" || alias == "mcp__my_server__echo" {
				t.Fatalf("alias of my_server's echo = %q; want a hashed one", alias)
			}
			for _, typed := range []string{"mcp__my_server__echo", "mcp__my-server__echo"} {
				r := runAgt(t, db, "", "agent", "call", "a1", typed, `{"text":"x"}`, "--yes")
				if r.code != 1 || !strings.Contains(r.stderr, "did you mean "+alias+"?") {
					t.Errorf("agent call %s: exit %d; want unknown_tool with did you mean %s\n%s", typed, r.code, alias, r.stderr)
				}
			}
		})
	}
}
