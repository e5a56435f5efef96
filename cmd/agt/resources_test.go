package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mustRun runs agt and fails the test unless it exits with want.
func mustRun(t *testing.T, db string, want int, args ...string) result {
	t.Helper()
	r := runAgt(t, db, "", args...)
	if r.code != want {
		t.Fatalf("agt %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
	}
	return r
}

// getJSON runs "agt KIND get REF --json" and decodes it.
func getJSON(t *testing.T, db, kind, ref string) (rev int64, data map[string]any) {
	t.Helper()
	r := mustRun(t, db, 0, kind, "get", ref, "--json")
	var got struct {
		Kind      string         `json:"kind"`
		Reference string         `json:"reference"`
		Revision  int64          `json:"revision"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("agt %s get --json: %v\n%s", kind, err, r.stdout)
	}
	if got.Kind != kind || got.Reference != ref {
		t.Fatalf("agt %s get %s --json: kind %q reference %q", kind, ref, got.Kind, got.Reference)
	}
	return got.Revision, got.Data
}

func TestMCPCreateGetUpdateDelete(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	cwd := t.TempDir()

	mustRun(t, db, 0, "mcp", "create", "tools/notes", "--command", "notes-server", "--cwd", cwd,
		"--arg", "--db", "--arg", "data/notes.db", "--env", "TOKEN=s3cret", "--description", "notes")
	rev, data := getJSON(t, db, "mcp", "tools/notes")
	want := map[string]any{"mcpServers": map[string]any{"notes": map[string]any{
		"type": "stdio", "command": "notes-server", "args": []any{"--db", "data/notes.db"},
		"env": map[string]any{"TOKEN": "s3cret"}, "cwd": cwd, "description": "notes",
	}}}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("stored document (-want +got):\n%s", diff)
	}
	if rev != 1 {
		t.Errorf("revision after create = %d, want 1", rev)
	}

	// The human view hides env values.
	r := mustRun(t, db, 0, "mcp", "get", "tools/notes")
	if strings.Contains(r.stdout, "s3cret") || !strings.Contains(r.stdout, "TOKEN") {
		t.Errorf("agt mcp get shows env values or hides names:\n%s", r.stdout)
	}

	// A relative --cwd is made absolute, and agt says so, on update too.
	r = mustRun(t, db, 0, "mcp", "update", "tools/notes", "--cwd", "relative-dir")
	if !strings.Contains(r.stderr, "note: --cwd made absolute: ") {
		t.Errorf("mcp update with a relative --cwd does not say it made it absolute:\n%s", r.stderr)
	}
	mustRun(t, db, 0, "mcp", "update", "tools/notes", "--cwd", cwd)

	// Flags given replace their field; the rest is kept.
	mustRun(t, db, 0, "mcp", "update", "tools/notes", "--arg", "--verbose")
	_, data = getJSON(t, db, "mcp", "tools/notes")
	srv := data["mcpServers"].(map[string]any)["notes"].(map[string]any)
	if diff := cmp.Diff([]any{"--verbose"}, srv["args"]); diff != "" {
		t.Errorf("args after update (-want +got):\n%s", diff)
	}
	if srv["cwd"] != cwd || srv["command"] != "notes-server" {
		t.Errorf("update lost fields: %v", srv)
	}

	r = mustRun(t, db, 0, "mcp", "list", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0]["reference"] != "tools/notes" {
		t.Errorf("agt mcp list --json = %s (err %v)", r.stdout, err)
	}
	r = mustRun(t, db, 0, "mcp", "list", "--category", "other", "--json")
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("agt mcp list --category other --json = %s, want []", r.stdout)
	}

	mustRun(t, db, 0, "mcp", "delete", "tools/notes")
	r = mustRun(t, db, 1, "mcp", "get", "tools/notes")
	if !strings.Contains(r.stderr, "not found") {
		t.Errorf("get after delete: %s", r.stderr)
	}
}

// Human output never shows what often carries a credential in a URL (user
// info, query, fragment), nor header values; --json shows the stored document.
func TestURLCredentialsHiddenInHumanOutput(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	url := "https://user:pwsecret@example.com/mcp/v1?token=qsecret#fsecret"
	mustRun(t, db, 0, "mcp", "create", "remote", "--url", url, "--header", "Authorization: Bearer hsecret")
	dir := t.TempDir()
	file := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"other": {"url": "`+url+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"mcp", "get", "remote"},
		{"mcp", "list"},
		{"mcp", "import", file, "--dry-run"},
	} {
		r := mustRun(t, db, 0, args...)
		for _, secret := range []string{"pwsecret", "qsecret", "fsecret", "hsecret", "user:"} {
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("agt %s shows %q:\n%s%s", strings.Join(args, " "), secret, r.stdout, r.stderr)
			}
		}
		if !strings.Contains(r.stdout, "https://[redacted]@example.com/mcp/v1?[redacted]") {
			t.Errorf("agt %s does not show the endpoint:\n%s", strings.Join(args, " "), r.stdout)
		}
	}
	if _, data := getJSON(t, db, "mcp", "remote"); !strings.Contains(mustJSON(t, data), "pwsecret") {
		t.Errorf("mcp get --json does not show the stored URL: %s", mustJSON(t, data))
	}
}

// SPEC R3.7 refuses agt's --allow-mcp, not a server's own flag of that name
// given as the value of --arg.
func TestServerArgumentNamedAllowMCP(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "create", "srv", "--command", "srv", "--cwd", t.TempDir(), "--arg", "--allow-mcp")
	_, data := getJSON(t, db, "mcp", "srv")
	if got := mustJSON(t, data["mcpServers"].(map[string]any)["srv"].(map[string]any)["args"]); got != `["--allow-mcp"]` {
		t.Errorf("args = %s", got)
	}
	mustRun(t, db, 2, "mcp", "update", "srv", "--arg", "x", "--allow-mcp")
}

// The human views of agents: one aligned row each, yes/no as agent check
// and agent mcps write them.
func TestAgentListAndGet(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	r := mustRun(t, db, 0, "agent", "list")
	if r.stdout != "" || !strings.Contains(r.stderr, "agt agent create") {
		t.Errorf("agent list of an empty store: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	mustRun(t, db, 0, "mcp", "create", "a", "--command", "srv", "--cwd", t.TempDir())
	mustRun(t, db, 0, "agent", "create", "boss", "--manager")
	mustRun(t, db, 0, "agent", "create", "team/helper", "--disabled", "--mcp", "a")
	r = mustRun(t, db, 0, "agent", "list")
	want := "AGENT        ENABLED  MANAGES  MCPS    REVISION\n" +
		"boss         yes      yes      (none)  1\n" +
		"team/helper  no       no       a       1\n"
	if diff := cmp.Diff(want, r.stdout); diff != "" {
		t.Errorf("agent list (-want +got):\n%s", diff)
	}
	r = mustRun(t, db, 0, "agent", "get", "team/helper")
	for _, line := range []string{"enabled       no", "manager       no", "mcps          a"} {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("agent get lacks %q:\n%s", line, r.stdout)
		}
	}
}

// SPEC R2.2: a relative command is refused with the absolute path to give.
func TestRelativeCommandRefusedWithTheFix(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	cwd := t.TempDir()
	want := "next: --command " + filepath.Join(cwd, "bin", "srv")
	r := mustRun(t, db, 1, "mcp", "create", "local", "--command", "./bin/srv", "--cwd", cwd)
	if !strings.Contains(r.stderr, "relative path") || !strings.Contains(r.stderr, want) {
		t.Errorf("mcp create with ./bin/srv:\n%s", r.stderr)
	}
	mustRun(t, db, 0, "mcp", "create", "local", "--command", "srv", "--cwd", cwd)
	r = mustRun(t, db, 1, "mcp", "update", "local", "--command", "bin/srv")
	if !strings.Contains(r.stderr, want) {
		t.Errorf("mcp update with bin/srv:\n%s", r.stderr)
	}
}

// A stale --expected-revision is refused and changes nothing (SPEC R2.6).
func TestExpectedRevisionConflicts(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	cwd := t.TempDir()
	mustRun(t, db, 0, "mcp", "create", "a", "--command", "srv", "--cwd", cwd)
	mustRun(t, db, 0, "mcp", "create", "b", "--url", "https://example.com/mcp", "--header", "Authorization: Bearer x")
	mustRun(t, db, 0, "agent", "create", "helper")
	mustRun(t, db, 0, "mcp", "update", "a", "--arg", "one", "--expected-revision", "1")

	tests := []struct {
		name string
		args []string
	}{
		{"mcp update", []string{"mcp", "update", "a", "--arg", "two", "--expected-revision", "1"}},
		{"mcp delete", []string{"mcp", "delete", "a", "--expected-revision", "1"}},
		{"agent update", []string{"agent", "update", "helper", "--add-mcp", "a", "--expected-revision", "7"}},
		{"agent delete", []string{"agent", "delete", "helper", "--expected-revision", "2"}},
	}
	for _, tt := range tests {
		r := mustRun(t, db, 1, tt.args...)
		if !strings.Contains(r.stderr, "stored revision is") {
			t.Errorf("%s with a stale revision: stderr %q, want the stored revision", tt.name, r.stderr)
		}
	}
	if rev, data := getJSON(t, db, "mcp", "a"); rev != 2 || !strings.Contains(mustJSON(t, data), `"args":["one"]`) {
		t.Errorf("after refused writes: revision %d, data %s", rev, mustJSON(t, data))
	}
	if rev, _ := getJSON(t, db, "agent", "helper"); rev != 1 {
		t.Errorf("agent revision after refused writes = %d, want 1", rev)
	}
}

// SPEC R3.3: --mcps replaces, --clear-mcps empties, --add-mcp and
// --remove-mcp edit single items; mounts must be registered.
func TestAgentMounts(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	for _, ref := range []string{"a", "b", "c"} {
		mustRun(t, db, 0, "mcp", "create", ref, "--url", "https://example.com/"+ref)
	}
	mustRun(t, db, 0, "agent", "create", "helper", "--capability", "resource_management", "--mcp", "a")
	steps := []struct {
		args []string
		want []any
	}{
		{[]string{"--add-mcp", "b", "--add-mcp", "c"}, []any{"a", "b", "c"}},
		{[]string{"--remove-mcp", "a"}, []any{"b", "c"}},
		{[]string{"--mcps", "c,a"}, []any{"c", "a"}},
		{[]string{"--enabled=false"}, []any{"c", "a"}},
		{[]string{"--clear-mcps"}, []any{}},
	}
	for _, s := range steps {
		mustRun(t, db, 0, append([]string{"agent", "update", "helper"}, s.args...)...)
		_, data := getJSON(t, db, "agent", "helper")
		if diff := cmp.Diff(s.want, data["mcps"]); diff != "" {
			t.Errorf("after %v, mcps (-want +got):\n%s", s.args, diff)
		}
	}
	_, data := getJSON(t, db, "agent", "helper")
	if data["enabled"] != false || !strings.Contains(mustJSON(t, data["capabilities"]), "resource_management") {
		t.Errorf("agent document = %s", mustJSON(t, data))
	}
	r := mustRun(t, db, 1, "agent", "update", "helper", "--add-mcp", "nope")
	if !strings.Contains(r.stderr, "not a registered MCP resource") || strings.Contains(r.stderr, "agt agent list") {
		t.Errorf("mounting an unregistered server: %s", r.stderr)
	}
	r = mustRun(t, db, 0, "agent", "update", "helper", "--remove-mcp", "a")
	if !strings.Contains(r.stderr, "no change") {
		t.Errorf("removing an absent mount is not reported as a no-op: %s", r.stderr)
	}
}

func TestImport(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	proj := t.TempDir()
	file := filepath.Join(proj, ".mcp.json")
	content := `{"mcpServers": {
		"Notes": {"command": "notes-server", "args": ["--db", "notes.db"], "env": {"K": "v"}},
		"web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
		"local": {"command": "./bin/server"},
		"My Server": {"command": "my-server"}
	}}`
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	// --dry-run writes nothing and shows no env or header value.
	r := mustRun(t, db, 1, "mcp", "import", file, "--dry-run")
	if !strings.Contains(r.stdout, "would register mcp notes: stdio notes-server") || strings.Contains(r.stdout, "Bearer") {
		t.Errorf("import --dry-run:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "1 of 4 servers would not be imported") || strings.Contains(r.stderr, "already registered") {
		t.Errorf("import --dry-run summary:\n%s", r.stderr)
	}
	if r := mustRun(t, db, 0, "mcp", "list", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("import --dry-run wrote: %s", r.stdout)
	}

	r = mustRun(t, db, 1, "mcp", "import", file)
	for _, want := range []string{
		"no cwd in .mcp.json: it runs in " + proj,                          // the file's directory, said so
		"local: not imported: its command ./bin/server is a relative path", // refused with the fix
		filepath.Join(proj, "bin", "server"),
		"1 of 4 servers not imported",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("import stderr does not contain %q:\n%s", want, r.stderr)
		}
	}
	_, data := getJSON(t, db, "mcp", "notes")
	srv := data["mcpServers"].(map[string]any)["Notes"].(map[string]any)
	if srv["cwd"] != proj {
		t.Errorf("imported cwd = %v, want %s", srv["cwd"], proj)
	}
	getJSON(t, db, "mcp", "web")
	// A key that is no valid server name is stored under the reference's name.
	if _, data := getJSON(t, db, "mcp", "my-server"); data["mcpServers"].(map[string]any)["my-server"] == nil {
		t.Errorf("imported My Server: %s", mustJSON(t, data))
	}
	mustRun(t, db, 1, "mcp", "get", "local")

	// Importing again: the registered ones are the same, nothing needs
	// fixing but the invalid one.
	r = mustRun(t, db, 1, "mcp", "import", file)
	assertContains(t, "second import", r.stderr,
		"1 of 4 servers not imported; fix them in "+file,
		"3 of 4 servers were already registered as in "+file+": nothing to do for them")
	if !strings.Contains(r.stdout, "mcp notes already registered as in "+file+" (revision 1)") {
		t.Errorf("second import stdout:\n%s", r.stdout)
	}
}

// A second import of a file says the servers exist, exits 0 when they are
// the same, and suggests --update for those that differ; --update replaces
// them, compare-and-set.
func TestImportAgainAndUpdate(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	proj := t.TempDir()
	file := filepath.Join(proj, ".mcp.json")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"mcpServers": {"a": {"command": "srv-a"}, "b": {"command": "srv-b"}, "c": {"url": "https://c.example/mcp"}, "d": {"command": "srv-d"}, "e": {"command": "srv-e"}}}`)
	mustRun(t, db, 0, "mcp", "import", file)

	r := mustRun(t, db, 0, "mcp", "import", file)
	if strings.Contains(r.stderr, "not imported") ||
		!strings.Contains(r.stderr, "5 of 5 servers were already registered as in "+file+": nothing to do for them") {
		t.Errorf("second import of the same file:\n%s", r.stderr)
	}

	write(`{"mcpServers": {"a": {"command": "srv-a", "args": ["--new"]}, "b": {"command": "srv-b"}, "c": {"url": "https://c.example/mcp"}, "d": {"command": "srv-d"}, "e": {"command": "srv-e"}}}`)
	r = mustRun(t, db, 1, "mcp", "import", file)
	if !strings.Contains(r.stdout, "mcp a already registered with another configuration (revision 1); left unchanged") ||
		!strings.Contains(r.stderr, "1 of 5 servers are registered with another configuration and were left unchanged; 'agt mcp import "+file+" --update' replaces them") ||
		strings.Contains(r.stderr, "fix them") {
		t.Errorf("import of a changed file without --update:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if _, data := getJSON(t, db, "mcp", "a"); data["mcpServers"].(map[string]any)["a"].(map[string]any)["args"] != nil {
		t.Errorf("import without --update changed a: %v", data)
	}

	r = mustRun(t, db, 0, "mcp", "import", file, "--update")
	if !strings.Contains(r.stdout, "updated mcp a (revision 2)") || !strings.Contains(r.stdout, "mcp b already registered as in") {
		t.Errorf("import --update:\n%s", r.stdout)
	}
	rev, data := getJSON(t, db, "mcp", "a")
	if diff := cmp.Diff([]any{"--new"}, data["mcpServers"].(map[string]any)["a"].(map[string]any)["args"]); rev != 2 || diff != "" {
		t.Errorf("a after --update: revision %d, args (-want +got):\n%s", rev, diff)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Codex's config.toml imports like an mcpServers file; what agt cannot
// store is said, never a value.
func TestImportCodexConfig(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	proj := t.TempDir()
	dir := filepath.Join(proj, ".codex")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "config.toml")
	content := `
[mcp_servers.notes]
command = "notes-server"
args = ["--db", "notes.db"]
env = { TOKEN = "envsecret" }

[mcp_servers.web]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "WEB_TOKEN"
http_headers = { "X-Key" = "hsecret" }
`
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, db, 0, "mcp", "import", file)
	assertContains(t, "codex import stdout", r.stdout, "registered mcp notes (revision 1)", "registered mcp web (revision 1)")
	assertContains(t, "codex import stderr", r.stderr, "notes: note: no cwd in config.toml: it runs in "+proj,
		"web: note: WEB_TOKEN read from agt's environment as ${env:NAME}", "web: note: header X-Key holds a literal credential")
	if strings.Contains(r.stdout+r.stderr, "envsecret") || strings.Contains(r.stdout+r.stderr, "hsecret") {
		t.Errorf("codex import shows a value:\n%s\n%s", r.stdout, r.stderr)
	}
	_, data := getJSON(t, db, "mcp", "web")
	want := map[string]any{"mcpServers": map[string]any{"web": map[string]any{
		"type": "http", "url": "https://mcp.example.com/mcp", "headers": map[string]any{"X-Key": "hsecret", "Authorization": "Bearer ${env:WEB_TOKEN}"},
	}}}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("imported web (-want +got):\n%s", diff)
	}
	r = mustRun(t, db, 0, "mcp", "import", file)
	if !strings.Contains(r.stderr, "2 of 2 servers were already registered as in") {
		t.Errorf("second codex import:\n%s", r.stderr)
	}
}
