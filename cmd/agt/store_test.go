package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/need"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/jackc/pgx/v5"
)

// The store comes from --db (before or after the command), else $AGT_STORE,
// else $AGT_DB, else $XDG_DATA_HOME/agt/agt.db.
func TestStoreSelection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	byFlag := filepath.Join(dir, "flag.db")
	byStore := filepath.Join(dir, "store.db")
	byDB := filepath.Join(dir, "db.db")
	xdg := filepath.Join(dir, "xdg")

	tests := []struct {
		name string
		env  []string
		args []string
		want string // the file that must hold the agent
	}{
		{"--db before the command", []string{"AGT_STORE=" + byStore}, []string{"--db", byFlag, "agent", "create", "a1"}, byFlag},
		{"--db after the command", []string{"AGT_STORE=" + byStore}, []string{"agent", "create", "a2", "--db", byFlag}, byFlag},
		{"$AGT_STORE over $AGT_DB", []string{"AGT_STORE=" + byStore, "AGT_DB=" + byDB}, []string{"agent", "create", "a3"}, byStore},
		{"$AGT_DB", []string{"AGT_DB=" + byDB}, []string{"agent", "create", "a4"}, byDB},
		{"$XDG_DATA_HOME", []string{"XDG_DATA_HOME=" + xdg}, []string{"agent", "create", "a5"}, filepath.Join(xdg, "agt", "agt.db")},
	}
	for _, tt := range tests {
		r := runAgtEnv(t, tt.env, "", "", tt.args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.name, r.code, r.stderr)
		}
		agent := tt.args[len(tt.args)-1]
		if strings.HasPrefix(agent, "/") {
			agent = tt.args[2]
		}
		mustRun(t, tt.want, 0, "agent", "get", agent)
	}
	if _, err := os.Stat(filepath.Join(dir, "xdg", "agt", "agt.db")); err != nil {
		t.Errorf("default store under $XDG_DATA_HOME: %v", err)
	}
}

// SPEC R2.8 and issue 8: the same commands on a PostgreSQL store given as a
// postgres:// URL in $AGT_STORE.
func TestPostgresStore(t *testing.T) {
	t.Parallel()
	conn := need.Postgres(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	// A database of its own would need rights; a fresh schema through the
	// search_path keeps this test's rows apart.
	schema := "agt_cli_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
	}()
	store := postgresURL(conn, schema)
	env := []string{"AGT_STORE=" + store}
	run := func(want int, args ...string) result {
		t.Helper()
		r := runAgtEnv(t, env, "", "", args...)
		if r.code != want {
			t.Fatalf("agt %s: exit %d, want %d\n%s%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
		}
		return r
	}
	run(0, "mcp", "create", "web", "--url", "https://example.com/mcp")
	run(0, "agent", "create", "helper", "--mcp", "web")
	r := run(0, "agent", "mcps", "helper")
	if !strings.Contains(r.stdout, "web") {
		t.Errorf("agent mcps on PostgreSQL:\n%s", r.stdout)
	}
	run(1, "agent", "update", "helper", "--clear-mcps", "--expected-revision", "9")
}

// postgresURL builds a postgres:// URL from the test server's connection
// string (keyword=value pairs or a URL) with search_path set to schema.
func postgresURL(conn, schema string) string {
	if strings.HasPrefix(conn, "postgres://") || strings.HasPrefix(conn, "postgresql://") {
		u, err := url.Parse(conn)
		if err != nil {
			return conn
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	q := url.Values{}
	db := ""
	for _, kv := range strings.Fields(conn) {
		k, v, _ := strings.Cut(kv, "=")
		if k == "dbname" {
			db = v
			continue
		}
		q.Set(k, v)
	}
	q.Set("search_path", schema)
	return "postgres:///" + db + "?" + q.Encode()
}

// A file that is not a bbolt store: said so, with what to do.
func TestStoreNotABoltFile(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(db, []byte("shopping list, not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, db, 1, "mcp", "list")
	if !strings.Contains(r.stderr, "next: this file is not a bbolt store") {
		t.Errorf("a store that is not bbolt: %s", r.stderr)
	}
}

// Issue 11: a damaged store (the first 10000 bytes of one, as head -c
// 10000 makes) is an error with what to do, exit status 1, no crash.
func TestStoreDamagedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sound := filepath.Join(dir, "agt.db")
	for i := range 40 {
		mustRun(t, sound, 0, "agent", "create", fmt.Sprintf("agent-%02d", i))
	}
	data, err := os.ReadFile(sound)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) <= 10000 {
		t.Fatalf("the store is %d bytes, want more than 10000", len(data))
	}
	db := filepath.Join(dir, "t.db")
	if err := os.WriteFile(db, data[:10000], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"mcp", "list"}, {"agent", "get", "agent-01"}, {"agent", "create", "late"}} {
		r := mustRun(t, db, 1, args...)
		want := "agt: the store " + db + " is damaged ("
		if !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "next: restore the file from a backup") ||
			!strings.Contains(r.stderr, "'bbolt check FILE'") || strings.Contains(r.stderr, "goroutine") {
			t.Errorf("agt %s on a damaged store: stderr %q, want it to start %q and say what to do", strings.Join(args, " "), r.stderr, want)
		}
	}
}

// A host holding the bbolt file exclusively: the CLI waits a bounded time,
// then says what to do.
func TestStoreLockedByAHost(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	repo, err := boltrepo.Open(db, nil) // exclusive, as a host opens it by default
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	r := mustRun(t, db, 1, "mcp", "list")
	if !strings.Contains(r.stderr, "agt: the store "+db+" is locked by another process") || !strings.Contains(r.stderr, "next: stop that host") ||
		strings.Count(r.stderr, "Shared") != 1 {
		t.Errorf("locked store: %s", r.stderr)
	}
}

// A host that opens the file shared and the CLI work on it together.
func TestStoreSharedWithAHost(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	repo, err := boltrepo.Open(db, &boltrepo.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	mustRun(t, db, 0, "agent", "create", "helper")
	if _, err := repo.Get(context.Background(), resource.Key{Kind: resource.KindAgent, Ref: "helper"}); err != nil {
		t.Errorf("the host does not see the CLI's write: %v", err)
	}
}

// issue 23 item 12a: --db given a PostgreSQL keyword=value connection
// string is refused with the postgres:// form; no bbolt file named after it
// appears, and the error does not repeat the password.
func TestStoreKeyValueConnString(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const conn = "host=127.0.0.1 port=1 password=s3cret"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agtBinary, "--db", conn, "mcp", "list")
	cmd.Dir = dir // where a relative store would be created
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
	if !strings.Contains(stderr.String(), "postgres://") || strings.Contains(stdout.String()+stderr.String(), "s3cret") {
		t.Errorf("stderr:\n%s\nwant the postgres:// form, without the password", stderr.String())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("the command created %q", e.Name())
	}
}
