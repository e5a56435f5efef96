package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
)

func TestParseImportFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	projFile := filepath.Join(root, "proj", ".mcp.json")
	vscodeFile := filepath.Join(root, "proj", ".vscode", "mcp.json")
	tests := []struct {
		name string
		path string
		file string
		want []importEntry
	}{
		{
			name: "no cwd gets the file's directory", // SPEC R2.2
			path: projFile,
			file: `{"mcpServers":{"notes":{"command":"notes-server","args":["--db","data/notes.db"]}}}`,
			want: []importEntry{{Key: "notes", Name: "notes", Ref: "notes",
				Server: resource.MCPServer{Command: "notes-server", Args: []string{"--db", "data/notes.db"}, Cwd: filepath.Join(root, "proj")},
				Notes:  []string{"no cwd in .mcp.json: it runs in " + filepath.Join(root, "proj") + ", the directory of that file"}}},
		},
		{
			name: "vscode servers run in the project, workspaceFolder becomes workspace",
			path: vscodeFile,
			file: `{"servers":{"Git Hub":{"type":"stdio","command":"/usr/bin/gh-mcp","args":["${workspaceFolder}/x"]}}}`,
			want: []importEntry{{Key: "Git Hub", Name: "git-hub", Ref: "git-hub",
				Server: resource.MCPServer{Type: "stdio", Command: "/usr/bin/gh-mcp", Args: []string{"${workspace}/x"}, Cwd: filepath.Join(root, "proj")},
				Notes: []string{
					"its reference is git-hub (references are lowercase letters, digits, '.', '_' and '-')",
					"no cwd in mcp.json: it runs in " + filepath.Join(root, "proj") + ", the project that file belongs to; ${workspaceFolder} in args written as ${workspace}",
					"its name inside mcpServers is git-hub (server names are letters, digits, '.', '_' and '-')",
				}}},
		},
		{
			name: "relative cwd resolves against the file",
			path: projFile,
			file: `{"mcpServers":{"a":{"command":"srv","cwd":"tools"}}}`,
			want: []importEntry{{Key: "a", Name: "a", Ref: "a",
				Server: resource.MCPServer{Command: "srv", Cwd: filepath.Join(root, "proj", "tools")},
				Notes:  []string{"relative cwd resolved against " + filepath.Join(root, "proj") + ": " + filepath.Join(root, "proj", "tools")}}},
		},
		{
			name: "relative command refused with the absolute path", // SPEC R2.2
			path: projFile,
			file: `{"mcpServers":{"a":{"command":"./bin/srv","cwd":"/opt/a"}}}`,
			want: []importEntry{{Key: "a", Ref: "a",
				Err: `its command ./bin/srv is a relative path; agt runs a bare command name from PATH or an absolute path: write "/opt/a/bin/srv" (resolved against its cwd), and check that it is the file you mean`}},
		},
		{
			name: "remote with category and unknown fields",
			path: projFile,
			file: `{"mcpServers":{"web":{"type":"streamable-http","url":"https://h/mcp","headers":{"Authorization":"Bearer s"},"autoApprove":["x"],"disabled":false}}}`,
			want: []importEntry{{Key: "web", Name: "web", Ref: "team/web",
				Server: resource.MCPServer{Type: "http", URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer s"}},
				Notes:  []string{"left out fields agt does not use: autoApprove, disabled"}}},
		},
		{
			name: "two keys, one reference",
			path: projFile,
			file: `{"mcpServers":{"A":{"url":"https://a"},"a":{"url":"https://b"}}}`,
			want: []importEntry{
				{Key: "A", Name: "A", Ref: "a", Server: resource.MCPServer{URL: "https://a"}, Notes: []string{"its reference is a (references are lowercase letters, digits, '.', '_' and '-')"}},
				{Key: "a", Name: "a", Ref: "a", Server: resource.MCPServer{URL: "https://b"}, Err: `its reference a is also the one of "A" in the same file: rename one of them`},
			},
		},
		{
			name: "the write rules are checked, so --dry-run promises only what the import does",
			path: projFile,
			file: `{"mcpServers":{"a":{"url":"ftp://h/mcp"}}}`,
			want: []importEntry{{Key: "a", Name: "a", Ref: "a",
				Err: `invalid /mcpServers/a/url: url must use http or https (fix: write the endpoint as an absolute http or https URL, like "https://mcp.example.com/mcp")`}},
		},
		{
			name: "unknown type",
			path: projFile,
			file: `{"mcpServers":{"a":{"type":"websocket","url":"wss://a"}}}`,
			want: []importEntry{{Key: "a", Ref: "a", Err: `its type "websocket" is not one agt knows: write stdio, http or sse`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			category := ""
			if strings.Contains(tt.name, "category") {
				category = "team"
			}
			got, err := parseImportFile(tt.path, []byte(tt.file), category)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseImportFileRefusesBadFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, want string
	}{
		{"not json", `{"mcpServers":`, "not a JSON object"},
		{"no servers", `{"other":{}}`, `no "mcpServers"`},
		{"servers not an object", `{"mcpServers":[1]}`, "must be an object of servers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseImportFile("/p/.mcp.json", []byte(tt.file), "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
