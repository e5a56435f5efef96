package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// fileSecrets keeps the tests' secrets in the file beside the store,
// never in the keychain of the machine that runs them.
var fileSecrets = []string{secretStoreVar + "=" + storeFile}

// issue 29 item 4: agt secret set/list/rm keep the values behind
// ${secret:NAME}: a probe that needs one fails until it is set and again
// once it is removed; list shows names only; the value is taken from
// stdin, never from argv, and never printed.
func TestSecretSetListRemove(t *testing.T) {
	t.Parallel()
	const value = "s3cret-value-planted"
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "agt.db")
			registerFake(t, db, "fake", "-era", string(e))
			mustRun(t, db, 0, "mcp", "update", "fake", "--env", "TOKEN=${secret:api/token}")
			var all strings.Builder
			steps := []struct {
				args  []string
				stdin string
				code  int
				want  string
			}{
				{[]string{"mcp", "probe", "fake"}, "", 1, "${secret:api/token} (not in agt's secret store)"},
				{[]string{"mcp", "test", "fake"}, "", 0, "warning: registration fake cannot start: 1 reference is not resolved: ${secret:api/token} (not in agt's secret store)\n  next: agt secret set api/token"},
				{[]string{"secret", "set", "api/token", value}, "", 2, "the value is never taken from the command line"},
				{[]string{"secret", "set", "api/token"}, "", 2, "stdin held no value"},
				{[]string{"secret", "set", "bad name"}, value, 2, "cannot be written ${secret:NAME}"},
				{[]string{"secret", "set", "api/token"}, value + "\n", 0, "stored secret api/token in " + filepath.Join(dir, secretsFile)},
				{[]string{"secret", "list"}, "", 0, "api/token  file     every registration"},
				{[]string{"secret", "set", "api/token"}, value, 0, "replaced secret api/token"},
				{[]string{"mcp", "probe", "fake"}, "", 0, "probe fake: ok"},
				{[]string{"mcp", "test", "fake"}, "", 0, "the configuration looks startable"},
				{[]string{"secret", "rm", "api/token"}, "", 0, "removed secret api/token"},
				{[]string{"secret", "rm", "api/token"}, "", 1, "no secret api/token in the store"},
				{[]string{"mcp", "probe", "fake"}, "", 1, "next: agt secret set api/token"},
				{[]string{"secret", "ls"}, "", 0, "no secrets"},
			}
			for _, s := range steps {
				r := runAgtEnv(t, fileSecrets, db, s.stdin, s.args...)
				all.WriteString(r.stdout + r.stderr)
				if r.code != s.code || !strings.Contains(r.stdout+r.stderr, s.want) {
					t.Errorf("agt %s: exit %d (want %d), want %q:\n%s%s", strings.Join(s.args, " "), r.code, s.code, s.want, r.stdout, r.stderr)
				}
			}
			if strings.Contains(all.String(), value) {
				t.Errorf("a value was printed:\n%s", all.String())
			}
		})
	}
}

// issue 29 item 4: a start that fails on its references names every
// unresolved one at once, secret and env, each with the agt command or
// variable that fixes it, and never a Go API; probe, agent tools, agent
// call and agent check say the same.
func TestAllMissingReferencesAtOnce(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "create", "needs", "--command", mcptest.Command(t), "--cwd", t.TempDir(),
		"--arg", "--", "--arg", "${secret:one}", "--env", "A=${env:AGT_T_UNSET}", "--env", "B=${secret:two}", "--env", "C=${env:AGT_T_UNLISTED}", "--env", "D=${secret:two}",
		"--env", "E=${env:AGT_T_DEFAULTED:-info}")
	mustRun(t, db, 0, "agent", "create", "a1", "--mcp", "needs")
	env := append([]string{"AGT_SECRET_ENV=AGT_T_UNSET", "AGT_T_UNLISTED=x"}, fileSecrets...)
	wants := []string{
		"registration needs cannot start: 4 references are not resolved",
		"${secret:one} (not in agt's secret store)", "${secret:two} (not in agt's secret store)",
		"${env:AGT_T_UNSET} (not set in agt's environment)", "${env:AGT_T_UNLISTED} (not listed in $AGT_SECRET_ENV)",
		"agt secret set one", "agt secret set two", "set AGT_T_UNSET in agt's environment", "AGT_SECRET_ENV=needs=AGT_T_UNLISTED",
	}
	for _, args := range [][]string{
		{"mcp", "probe", "needs"},
		{"agent", "tools", "a1"},
		{"agent", "call", "a1", "mcp__needs__echo", "{}", "--yes"},
		{"agent", "check", "a1", "--probe"},
	} {
		r := runAgtEnv(t, env, db, "", args...)
		got := r.stdout + r.stderr
		if r.code != 1 {
			t.Errorf("agt %s: exit %d, want 1", strings.Join(args, " "), r.code)
		}
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("agt %s does not say %q:\n%s", strings.Join(args, " "), w, got)
			}
		}
		if strings.Contains(got, "AGT_T_DEFAULTED") {
			t.Errorf("agt %s names a reference whose default applies:\n%s", strings.Join(args, " "), got)
		}
		for _, goName := range []string{"mcpconn.", "ConnectorOptions", "LaunchEnv", "SecretResolver"} {
			if strings.Contains(got, goName) {
				t.Errorf("agt %s names the Go API %s to a CLI user:\n%s", strings.Join(args, " "), goName, got)
			}
		}
	}
}

// issue 29 item 4: a secret kept for some registrations (--ref) is not
// given to another, and the store's file is refused when its group or
// others may read it.
func TestSecretFileGuards(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			secretFileGuards(t, e)
		})
	}
}

func secretFileGuards(t *testing.T, e mcptest.Era) {
	dir := t.TempDir()
	db := filepath.Join(dir, "agt.db")
	registerFake(t, db, "one", "-era", string(e))
	registerFake(t, db, "two", "-era", string(e))
	mustRun(t, db, 0, "mcp", "update", "one", "--env", "T=${secret:tok}")
	mustRun(t, db, 0, "mcp", "update", "two", "--env", "T=${secret:tok}")
	if r := runAgtEnv(t, fileSecrets, db, "v", "secret", "set", "tok", "--ref", "one"); r.code != 0 {
		t.Fatalf("secret set: %s%s", r.stdout, r.stderr)
	}
	file := filepath.Join(dir, secretsFile)
	tests := []struct {
		name string
		mode os.FileMode
		args []string
		code int
		want string
	}{
		{"kept for it", 0o600, []string{"mcp", "probe", "one"}, 0, "probe one: ok"},
		{"kept for another", 0o600, []string{"mcp", "probe", "two"}, 1, "${secret:tok} (agt's secret store keeps it for other registrations)"},
		{"group may read: list", 0o640, []string{"secret", "list"}, 1, "may be read or written by its group or others (mode 0640): agt will not use it; run 'chmod 600 " + file + "'"},
		{"others may read: probe", 0o604, []string{"mcp", "probe", "one"}, 1, "may be read or written by its group or others (mode 0604)"},
		{"group may write: set", 0o620, []string{"secret", "set", "more"}, 1, "(mode 0620)"},
	}
	for _, tt := range tests {
		// One after the other: each sets the file's mode.
		if err := os.Chmod(file, tt.mode); err != nil {
			t.Fatal(err)
		}
		r := runAgtEnv(t, fileSecrets, db, "v", tt.args...)
		if r.code != tt.code || !strings.Contains(r.stdout+r.stderr, tt.want) {
			t.Errorf("%s: agt %s: exit %d (want %d), want %q:\n%s%s", tt.name, strings.Join(tt.args, " "), r.code, tt.code, tt.want, r.stdout, r.stderr)
		}
	}
	r := runAgtEnv(t, []string{secretStoreVar + "=vault"}, db, "", "secret", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "$AGT_SECRET_STORE is vault: set file, keyring, or leave it unset") {
		t.Errorf("AGT_SECRET_STORE=vault: exit %d:\n%s", r.code, r.stderr)
	}
}

// issue 29 item 4: where an OS keychain answers, the value goes there and
// the file keeps the name only; Resolve reads it back, rm removes both.
// (An in-memory keychain of this test's own stands in for the OS's.)
func TestSecretsInTheKeychain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kr := &memKeyring{}
	s := &secretStore{path: filepath.Join(t.TempDir(), secretsFile), mode: storeAuto, kc: newKeychain(kr, keyringTimeout)}
	where, _, err := s.set(ctx, "tok", "kv-value", nil)
	if err != nil || !strings.HasPrefix(where, "the OS keychain") {
		t.Fatalf("set = %q, %v", where, err)
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "kv-value") {
		t.Errorf("the file holds the value: %s", b)
	}
	doc := readSecretsDoc(t, s.path)
	item := doc.Secrets["tok"].Item
	if diff := cmp.Diff(map[string]*secretEntry{"tok": {Keyring: true, Item: item}}, doc.Secrets); diff != "" || !strings.HasPrefix(item, "tok#") {
		t.Errorf("file (-want +got), item %q:\n%s", item, diff)
	}
	if v, err := s.Resolve(ctx, resource.Ref("any"), "tok"); v != "kv-value" || err != nil {
		t.Errorf("Resolve = %q, %v", v, err)
	}
	if found, err := s.remove(ctx, "tok"); !found || err != nil {
		t.Errorf("remove = %v, %v", found, err)
	}
	if vs := kr.values(); len(vs) != 0 {
		t.Errorf("the keychain still holds %d values", len(vs))
	}
	file := &secretStore{path: s.path, mode: storeFile, kc: s.kc}
	if where, replaced, err := file.set(ctx, "tok", "file-value", nil); err != nil || replaced || !strings.HasPrefix(where, s.path) {
		t.Errorf("set with %s=file = %q, %v", secretStoreVar, where, err)
	}
}
