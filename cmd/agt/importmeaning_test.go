package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// Imports keep what the file meant: VS Code's JSONC, inputs and envFile,
// defaults of variables, names by the naming rule, and a hint on literal
// credentials.
func TestImportKeepsWhatTheFileMeant(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".env"), []byte("# comment\nAPI_KEY=planted-value\nexport DEBUG=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vscode := filepath.Join(proj, ".vscode", "mcp.json")
	mcpJSON := filepath.Join(proj, ".mcp.json")
	secretHint := "a reference is safer, ${secret:NAME} (its value kept by 'agt secret set NAME') or ${env:NAME}"
	tests := []struct {
		name string
		path string
		file string
		want []importEntry
	}{
		{
			name: "vscode JSONC with comments, trailing commas, inputs and envFile",
			path: vscode,
			file: `{
	// VS Code asks for the token once
	"inputs": [{"type": "promptString", "id": "gh-token", "password": true,},],
	"servers": {
		/* the GitHub server */
		"GitHub": {
			"type": "http",
			"url": "https://api.example.com/mcp", // a comment after a value
			"headers": {"Authorization": "Bearer ${input:gh-token}",},
		},
		"files": {"command": "files-mcp", "envFile": "${workspaceFolder}/.env", "args": ["--mode=a//b", "/* kept */"],},
	},
}`,
			want: []importEntry{
				{Key: "GitHub", Name: "GitHub", Ref: "github",
					Server: resource.MCPServer{Type: "http", URL: "https://api.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${secret:gh-token}"}},
					Notes: []string{
						"GitHub is registered as github: agt writes server names in lowercase with '-' for other characters, so that its tools are named mcp__github__TOOL",
						"VS Code inputs gh-token written as ${secret:ID}: VS Code asks for them, agt reads them from its secret store: store each once with 'agt secret set ID'",
					}},
				{Key: "files", Name: "files", Ref: "files",
					Server: resource.MCPServer{Command: "files-mcp", Args: []string{"--mode=a//b", "/* kept */"}, Cwd: proj},
					Notes: []string{
						"envFile ${workspaceFolder}/.env (API_KEY, DEBUG) left out: agt reads no file when it starts a server; give each variable with -e NAME='${secret:NAME}' and 'agt secret set NAME', or -e NAME='${env:NAME}' (agt mcp update REF)",
						"no cwd in mcp.json: it runs in " + proj + ", the project that file belongs to",
					}},
			},
		},
		{
			name: "defaults are kept, a } after a reference stays literal text",
			path: mcpJSON,
			file: `{"mcpServers":{"my_server":{"command":"srv","cwd":"/opt/s","args":["--level=${LEVEL:-info}","${PORT:-3000}","${A:-x}}"],"env":{"VS":"${env:VS_NAME}"}}}}`,
			want: []importEntry{{Key: "my_server", Name: "my_server", Ref: "my-server",
				Server: resource.MCPServer{Command: "srv", Cwd: "/opt/s", Args: []string{"--level=${env:LEVEL:-info}", "${env:PORT:-3000}", "${env:A:-x}}"}, Env: map[string]string{"VS": "${env:VS_NAME}"}},
				Notes: []string{
					"my_server is registered as my-server: agt writes server names in lowercase with '-' for other characters, so that its tools are named mcp__my-server__TOOL",
					"A, LEVEL, PORT, VS_NAME read from agt's environment as ${env:NAME} when the server starts, for names listed in $AGT_SECRET_ENV; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed",
				}}},
		},
		{
			// agt's default is literal text: the nested reference is read
			// whole (never cut at its first }) and the entry refused with
			// what to write, the other entries imported.
			name: "a default holding a reference refuses its entry",
			path: mcpJSON,
			file: `{"mcpServers":{"nested":{"command":"srv","cwd":"/opt/s","args":["${A:-${B}}"]},
				"dollar":{"command":"srv","cwd":"/opt/s","env":{"K":"x${C:-$D}y"}},
				"deep":{"url":"https://h.example/mcp","headers":{"H":"${E:-${F:-${G}}} ${A}"}},
				"ok":{"command":"srv","cwd":"/opt/s","args":["${A:-plain}"]}}}`,
			want: []importEntry{
				{Key: "deep", Ref: "deep", Err: "${E:-...} in its header H has a default that is not literal text: agt's ${env:E:-DEFAULT} takes literal text only, with no $ and no nested reference; write ${E:-TEXT} with the text itself, or ${E} and set E, then import again"},
				{Key: "dollar", Ref: "dollar", Err: "${C:-...} in its env K has a default that is not literal text: agt's ${env:C:-DEFAULT} takes literal text only, with no $ and no nested reference; write ${C:-TEXT} with the text itself, or ${C} and set C, then import again"},
				{Key: "nested", Ref: "nested", Err: "${A:-...} in its args has a default that is not literal text: agt's ${env:A:-DEFAULT} takes literal text only, with no $ and no nested reference; write ${A:-TEXT} with the text itself, or ${A} and set A, then import again"},
				{Key: "ok", Name: "ok", Ref: "ok", Server: resource.MCPServer{Command: "srv", Cwd: "/opt/s", Args: []string{"${env:A:-plain}"}},
					Notes: []string{"A read from agt's environment as ${env:NAME} when the server starts, for names listed in $AGT_SECRET_ENV; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed"}},
			},
		},
		{
			name: "literal credentials get a hint, references and plain values none",
			path: mcpJSON,
			file: `{"mcpServers":{"gh":{"command":"gh-mcp","cwd":"/opt/gh","args":["--token","ghp_0123456789abcdef"],"env":{"GITHUB_TOKEN":"planted","LEVEL":"debug","REF_TOKEN":"${env:GH}"}},
				"web":{"url":"https://u:pw@h.example/mcp","headers":{"X-Api-Key":"planted","Authorization":"Bearer ${env:T}","X-Team":"blue"}}}}`,
			want: []importEntry{
				{Key: "gh", Name: "gh", Ref: "gh",
					Server: resource.MCPServer{Command: "gh-mcp", Cwd: "/opt/gh", Args: []string{"--token", "ghp_0123456789abcdef"}, Env: map[string]string{"GITHUB_TOKEN": "planted", "LEVEL": "debug", "REF_TOKEN": "${env:GH}"}},
					Notes: []string{
						"GH read from agt's environment as ${env:NAME} when the server starts, for names listed in $AGT_SECRET_ENV; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed",
						"env GITHUB_TOKEN, args hold literal credentials, stored as written: " + secretHint,
					}},
				{Key: "web", Name: "web", Ref: "web",
					Server: resource.MCPServer{URL: "https://u:pw@h.example/mcp", Headers: map[string]string{"X-Api-Key": "planted", "Authorization": "Bearer ${env:T}", "X-Team": "blue"}},
					Notes: []string{
						"T read from agt's environment as ${env:NAME} when the server starts, for names listed in $AGT_SECRET_ENV; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed",
						"header X-Api-Key, url hold literal credentials, stored as written: " + secretHint,
					}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseImportFile(tt.path, []byte(tt.file), "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreWarn); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if b, _ := json.Marshal(got); strings.Contains(string(b), "planted-value") {
				t.Errorf("the envFile's value reached the entries: %s", b)
			}
		})
	}
}

// stripJSONC blanks comments and trailing commas, keeps strings, and
// keeps the offsets of what is left.
func TestStripJSONC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"a":1,}`, `{"a":1 }`},
		{"[1,2,\n]", "[1,2 \n]"},
		{`{"a":"//x",/*c*/"b":2}`, `{"a":"//x",     "b":2}`},
		{"{\"a\":1 // c\n}", "{\"a\":1     \n}"},
		{`{"a":"x\",}"}`, `{"a":"x\",}"}`},
		{`{"a":1,/*c*/}`, `{"a":1      }`},
		{`{"a":1 /* open`, `{"a":1 /* open`},
	} {
		if got := string(stripJSONC([]byte(tc.in))); got != tc.want {
			t.Errorf("stripJSONC(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// An imported stdio server gets the launch check of 'agt mcp test': a
// command not in PATH or a missing cwd is a warning, and it is
// registered all the same.
func TestImportLaunchWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := mcptest.Command(t)
	file := filepath.Join(dir, ".mcp.json")
	tests := []struct {
		key, entry, warn string
	}{
		{"found", `{"command":"` + bin + `"}`, ""},
		{"missing", `{"command":"agt-no-such-command-29"}`, "command is not found in the PATH the server gets"},
		{"gone", `{"command":"` + bin + `","cwd":"` + filepath.Join(dir, "gone") + `"}`, "cwd does not exist"},
		{"remote", `{"url":"https://h.example/mcp"}`, ""},
	}
	for _, tc := range tests {
		got, err := parseImportFile(file, []byte(`{"mcpServers":{"`+tc.key+`":`+tc.entry+`}}`), "")
		if err != nil || len(got) != 1 || got[0].Err != "" {
			t.Fatalf("%s: %v %+v", tc.key, err, got)
		}
		if w := got[0].Warn; (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
			t.Errorf("%s: warning %q; want one with %q", tc.key, w, tc.warn)
		}
	}

	db := filepath.Join(t.TempDir(), "agt.db")
	if err := os.WriteFile(file, []byte(`{"mcpServers":{"missing":{"command":"agt-no-such-command-29"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, db, 0, "mcp", "import", file)
	assertContains(t, "import stderr", r.stderr, "missing: warning: cannot launch the server: command is not found", "'agt mcp test missing' checks it again")
	assertContains(t, "import stdout", r.stdout, "registered mcp missing")
}

// An imported ${VAR:-DEFAULT} reaches the server as the default when agt
// may not read VAR, and as VAR's value when it may: the one reference rule
// of a start, through import and agent call, in both protocol eras.
func TestImportedDefaultReachesTheServer(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "agt.db")
			file := filepath.Join(dir, ".mcp.json")
			doc := `{
	// JSONC is read from any file
	"mcpServers": {"Env_Server": {"command": "` + mcptest.Command(t) + `", "args": ["-era", "` + string(era) + `"], "env": {"LEVEL": "${AGT_T_LEVEL:-info-default}",},},},
}`
			if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			r := mustRun(t, db, 0, "mcp", "import", file)
			assertContains(t, "import stderr", r.stderr, "Env_Server is registered as env-server")
			mustRun(t, db, 0, "agent", "create", "a1", "--mcp", "env-server")
			call := []string{"agent", "call", "a1", "mcp__env-server__environment", `{"names":["LEVEL"]}`, "--yes"}
			for _, tc := range []struct {
				env  []string
				want string
			}{
				{nil, "info-default"},
				{[]string{"AGT_T_LEVEL=warn-from-host"}, "info-default"}, // set, but not listed in AGT_SECRET_ENV
				{[]string{"AGT_T_LEVEL=warn-from-host", "AGT_SECRET_ENV=AGT_T_LEVEL"}, "warn-from-host"},
				{[]string{"AGT_T_LEVEL=", "AGT_SECRET_ENV=AGT_T_LEVEL"}, "info-default"},
			} {
				r := runAgtEnv(t, tc.env, db, "", call...)
				if r.code != 0 || !strings.Contains(r.stdout, mcptest.Digest(tc.want)) {
					t.Errorf("env %q: exit %d; want the server to get LEVEL=%s\nstdout:\n%s\nstderr:\n%s", tc.env, r.code, tc.want, r.stdout, r.stderr)
				}
			}
		})
	}
}
