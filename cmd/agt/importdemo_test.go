package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// Issue 29's Done-when: the four files a Claude, Codex or VS Code user
// already has (a Claude Desktop config, a project .mcp.json, a Codex
// config.toml and a VS Code .vscode/mcp.json), each with env references,
// defaults, headers and inputs, are imported as they are and every server
// they name probes ok: the only other steps are the ones those hosts ask
// for too (the environment, and the VS Code input's value, which VS Code
// prompts for and agt keeps in its secret store). Both eras: the stdio
// servers and the HTTP server that requires the bearer token speak the
// era of the subtest.
func TestImportFourHostFilesAndProbe(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			const token = "demo-token-value"
			web := mcptest.StartHTTP(t, "-era", string(era), "-require-header", "Authorization: Bearer "+token)
			fake := mcptest.Command(t)
			dir := t.TempDir()
			db := filepath.Join(dir, "agt.db")
			proj := filepath.Join(dir, "proj")
			if err := os.MkdirAll(filepath.Join(proj, ".vscode"), 0o755); err != nil {
				t.Fatal(err)
			}
			stdio := `"command": "` + fake + `", "args": ["-era", "` + string(era) + `"`
			files := map[string]string{
				filepath.Join(dir, "claude_desktop_config.json"): `{"mcpServers": {"Notes_Server": {` + stdio + `],
					"env": {"LEVEL": "${DEMO_LEVEL:-info}", "TOKEN": "${DEMO_TOKEN}"}}}}`,
				filepath.Join(proj, ".mcp.json"): `{"mcpServers": {
					"files": {` + stdio + `, "-tag", "${LOG_DIR:-/tmp}"]},
					"web": {"type": "http", "url": "` + web + `", "headers": {"Authorization": "Bearer ${DEMO_TOKEN:-missing}"}}}}`,
				filepath.Join(dir, "config.toml"): "[mcp_servers.codex_notes]\n" +
					"command = \"" + fake + "\"\nargs = [\"-era\", \"" + string(era) + "\"]\nenv_vars = [\"DEMO_TOKEN\"]\n\n" +
					"[mcp_servers.codex_web]\nurl = \"" + web + "\"\nbearer_token_env_var = \"DEMO_TOKEN\"\n",
				filepath.Join(proj, ".vscode", "mcp.json"): `{
	// VS Code prompts for the token once
	"inputs": [{"type": "promptString", "id": "demo-token", "password": true,},],
	"servers": {
		"VSCode Web": {"type": "http", "url": "` + web + `", "headers": {"Authorization": "Bearer ${input:demo-token}",},},
		"vs-files": {` + stdio + `], "envFile": "${workspaceFolder}/.env",},
	},
}`,
			}
			for path, body := range files {
				if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for path := range files {
				mustRun(t, db, 0, "mcp", "import", path)
			}
			env := []string{"DEMO_TOKEN=" + token, "DEMO_LEVEL=debug", "AGT_SECRET_ENV=DEMO_TOKEN,DEMO_LEVEL", "AGT_SECRET_STORE=file"}
			if r := runAgtEnv(t, env, db, token+"\n", "secret", "set", "demo-token"); r.code != 0 {
				t.Fatalf("agt secret set: exit %d\n%s", r.code, r.stderr)
			}
			refs := []string{"notes-server", "files", "web", "codex-notes", "codex-web", "vscode-web", "vs-files"}
			list := mustRun(t, db, 0, "mcp", "list")
			for _, ref := range refs {
				if !strings.Contains(list.stdout, ref) {
					t.Errorf("agt mcp list lacks %s:\n%s", ref, list.stdout)
				}
				r := runAgtEnv(t, env, db, "", "mcp", "probe", ref)
				if r.code != 0 {
					t.Errorf("agt mcp probe %s: exit %d\nstdout:\n%s\nstderr:\n%s", ref, r.code, r.stdout, r.stderr)
				}
				if strings.Contains(r.stdout+r.stderr, token) {
					t.Errorf("agt mcp probe %s printed the token", ref)
				}
			}
			// The probes prove the references resolve: without the
			// environment, web's default ("missing") is refused by the server.
			if r := runAgtEnv(t, []string{"AGT_SECRET_STORE=file"}, db, "", "mcp", "probe", "web"); r.code == 0 {
				t.Errorf("agt mcp probe web without DEMO_TOKEN: exit 0, want the server's 401")
			}
		})
	}
}
