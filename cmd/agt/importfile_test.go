package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreWarn leaves out what the launch rules say of this machine
// (TestImportLaunchWarning checks it): the tables name commands and
// directories that need not exist.
var ignoreWarn = cmpopts.IgnoreFields(importEntry{}, "Warn")

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
					"Git Hub is registered as git-hub: agt writes server names in lowercase with '-' for other characters, so that its tools are named mcp__git-hub__TOOL",
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
				Notes: []string{"left out fields agt does not use: autoApprove, disabled",
					"header Authorization holds a literal credential, stored as written: a reference is safer, ${secret:NAME} (its value kept by 'agt secret set NAME') or ${env:NAME}"}}},
		},
		{
			name: "shell variables become env references with a note",
			path: projFile,
			file: `{"mcpServers":{"gh":{"command":"gh-mcp","cwd":"/opt/a","args":["--token","${GH_TOKEN}","$${KEEP}","${cwd}"],"env":{"K":"${API_KEY:-dev}","S":"${secret:s}"}}}}`,
			want: []importEntry{{Key: "gh", Name: "gh", Ref: "gh",
				Server: resource.MCPServer{Command: "gh-mcp", Cwd: "/opt/a", Args: []string{"--token", "${env:GH_TOKEN}", "$${KEEP}", "${cwd}"},
					Env: map[string]string{"K": "${env:API_KEY:-dev}", "S": "${secret:s}"}},
				Notes: []string{"API_KEY, GH_TOKEN read from agt's environment as ${env:NAME} when the server starts, for names listed in $AGT_SECRET_ENV; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed"}}},
		},
		{
			name: "a header variable becomes an env reference",
			path: projFile,
			file: `{"mcpServers":{"web":{"url":"https://h/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`,
			want: []importEntry{{Key: "web", Name: "web", Ref: "web",
				Server: resource.MCPServer{URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"}},
				Notes:  []string{"TOKEN read from agt's environment as ${env:NAME} when the server starts, for names listed in $AGT_SECRET_ENV; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed"}}},
		},
		{
			name: "two keys, one reference",
			path: projFile,
			file: `{"mcpServers":{"A":{"url":"https://a"},"a":{"url":"https://b"}}}`,
			want: []importEntry{
				{Key: "A", Name: "A", Ref: "a", Server: resource.MCPServer{URL: "https://a"}, Notes: []string{"A is registered as a: agt writes server names in lowercase with '-' for other characters, so that its tools are named mcp__a__TOOL"}},
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
			if diff := cmp.Diff(tt.want, got, ignoreWarn); diff != "" {
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

func TestParseCodexConfig(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	codexFile := filepath.Join(root, ".codex", "config.toml")
	tests := []struct {
		name string
		file string
		want []importEntry
	}{
		{
			name: "stdio with args, env, cwd and timeouts in seconds",
			file: `
model = "o4"   # other settings are not read

[mcp_servers.notes]
command = "notes-server"
args = ["--db", "data/notes.db"]
env = { TOKEN = "s3cret" }
cwd = "/srv/notes"
startup_timeout_sec = 20
tool_timeout_sec = 1.5
`,
			want: []importEntry{{Key: "notes", Name: "notes", Ref: "notes",
				Server: resource.MCPServer{Command: "notes-server", Args: []string{"--db", "data/notes.db"}, Env: map[string]string{"TOKEN": "s3cret"},
					Cwd: "/srv/notes", StartupTimeoutMS: 20000, ToolTimeoutMS: 1500},
				Notes: []string{"env TOKEN holds a literal credential, stored as written: a reference is safer, ${secret:NAME} (its value kept by 'agt secret set NAME') or ${env:NAME}"}}},
		},
		{
			name: "no cwd runs in the project the .codex directory belongs to",
			file: "[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
			want: []importEntry{{Key: "docs", Name: "docs", Ref: "docs",
				Server: resource.MCPServer{Command: "docs-mcp", Cwd: root},
				Notes:  []string{"no cwd in config.toml: it runs in " + root + ", the project that file belongs to"}}},
		},
		{
			name: "remote: url and http_headers map, the variables become env references",
			file: `
[mcp_servers.web]
url = "https://mcp.example.com/mcp"
http_headers = { "X-Team" = "blue" }
bearer_token_env_var = "WEB_TOKEN"
env_http_headers = { "X-Key" = "WEB_KEY", "X-Bad" = "not a name" }
enabled = false
enabled_tools = ["search"]
`,
			want: []importEntry{{Key: "web", Name: "web", Ref: "web",
				Server: resource.MCPServer{Type: "http", URL: "https://mcp.example.com/mcp", EnabledTools: []string{"search"},
					Headers: map[string]string{"X-Team": "blue", "Authorization": "Bearer ${env:WEB_TOKEN}", "X-Key": "${env:WEB_KEY}"}},
				Notes: []string{
					"env_http_headers X-Bad left out: its value is not a variable name",
					"it is disabled in the file (enabled = false); it is registered all the same: an agent uses it only once it is mounted",
					"WEB_KEY, WEB_TOKEN read from agt's environment as ${env:NAME} when the server starts, for names listed in $AGT_SECRET_ENV; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed",
				}}},
		},
		{
			name: "enabled_tools and disabled_tools carry over; [] and a bad glob are kept apart",
			file: `
[mcp_servers.notes]
command = "notes-server"
cwd = "/srv/notes"
enabled_tools = ["note_*", "search"]
disabled_tools = ["*_delete"]

[mcp_servers.none]
command = "none-server"
cwd = "/srv/none"
enabled_tools = []

[mcp_servers.bad]
command = "bad-server"
cwd = "/srv/bad"
disabled_tools = ["note_[cd]"]
`,
			want: []importEntry{
				{Key: "bad", Name: "bad", Ref: "bad", Err: `invalid /mcpServers/bad/disabled_tools/0: the tool pattern holds [, ] or \: only * and ? are wildcards (no character classes, no escapes) (fix: write a tool name, or a glob where * matches any run of characters and ? one character)`},
				{Key: "none", Name: "none", Ref: "none", Server: resource.MCPServer{Command: "none-server", Cwd: "/srv/none", EnabledTools: []string{}}},
				{Key: "notes", Name: "notes", Ref: "notes", Server: resource.MCPServer{Command: "notes-server", Cwd: "/srv/notes",
					EnabledTools: []string{"note_*", "search"}, DisabledTools: []string{"*_delete"}}},
			},
		},
		{
			name: "env_vars become env references unless inherited or set, a wrong type is refused",
			file: "[mcp_servers.a]\ncommand = \"a\"\ncwd = \"/a\"\nenv = { SET = \"kept\" }\nenv_vars = [\"HOME\", \"LANG\", \"API_KEY\", \"SET\"]\n\n[mcp_servers.b]\ncommand = \"b\"\ncwd = \"/b\"\nargs = \"not a list\"\n",
			want: []importEntry{
				{Key: "a", Name: "a", Ref: "a", Server: resource.MCPServer{Command: "a", Cwd: "/a", Env: map[string]string{"API_KEY": "${env:API_KEY}", "SET": "kept"}},
					Notes: []string{"env_vars HOME, LANG: every server inherits them already", "API_KEY read from agt's environment as ${env:NAME} when the server starts, for names listed in $AGT_SECRET_ENV; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed"}},
				{Key: "b", Ref: "b", Err: "its entry has a field of the wrong type (got a JSON string)"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseImportFile(codexFile, []byte(tt.file), "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreWarn); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

// VS Code's servers form: type, command, args, env, url, headers.
func TestParseVSCodeServers(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	got, err := parseImportFile(filepath.Join(root, ".vscode", "mcp.json"), []byte(`{
		"inputs": [{"id": "token", "type": "promptString"}],
		"servers": {
			"files": {"type": "stdio", "command": "files-mcp", "args": ["--root", "${workspaceFolder}"], "env": {"LEVEL": "debug"}},
			"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Team": "blue"}}
		}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []importEntry{
		{Key: "files", Name: "files", Ref: "files",
			Server: resource.MCPServer{Type: "stdio", Command: "files-mcp", Args: []string{"--root", "${workspace}"}, Env: map[string]string{"LEVEL": "debug"}, Cwd: root},
			Notes:  []string{"no cwd in mcp.json: it runs in " + root + ", the project that file belongs to; ${workspaceFolder} in args written as ${workspace}"}},
		{Key: "remote", Name: "remote", Ref: "remote",
			Server: resource.MCPServer{Type: "http", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"X-Team": "blue"}}},
	}
	if diff := cmp.Diff(want, got, ignoreWarn); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestParseCodexConfigRefusesBadFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, want string
	}{
		{"not toml", "[mcp_servers.a\ncommand = \"secretvalue\"", "syntax error on line 2"},
		{"no servers", "model = \"o4\"\n", "no [mcp_servers.NAME] tables"},
		{"servers not a table", "mcp_servers = 3\n", "mcp_servers must be a table"},
		{"too deep", "a = " + strings.Repeat("[", maxTOMLDepth+1) + strings.Repeat("]", maxTOMLDepth+1), "nest more than 4 deep on line 1"},
		{"too deep inline", "\n\na = " + strings.Repeat("{b=", 1000) + "1" + strings.Repeat("}", 1000), "nest more than 4 deep on line 3"},
		{"too big", strings.Repeat("#", maxTOMLFile+1), "a TOML import file may have at most 262144"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseImportFile("/p/config.toml", []byte(tt.file), "")
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secretvalue") {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// Brackets inside strings and comments are not nesting.
func TestCheckTOMLDepth(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 20)
	tests := []struct {
		name, file string
		ok         bool
	}{
		{"basic string", `a = "` + deep + `\"` + deep + `"`, true},
		{"literal string", `a = '` + deep + `'`, true},
		{"multi-line basic", "a = \"\"\"\n" + deep + "\n\"\"\"\"\"", true},
		{"multi-line literal", "a = '''" + deep + "''''", true},
		{"comment", "# " + deep + "\na = 1", true},
		{"header and inline tables", "[mcp_servers.x]\nenv = { A = \"[\" }\nargs = [[1], [2]]", true},
		{"nesting after a string", `a = "]]]]]]]]]]" ` + "\nb = " + deep, false},
		{"nesting after a comment", "# ]]]]]]]]]]]]\nb = " + deep, false},
	}
	for _, tt := range tests {
		if err := checkTOMLDepth([]byte(tt.file), maxTOMLDepth); (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
