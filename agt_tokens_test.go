package agt_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/internal/runtest/need"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

func setToken(t *testing.T, s resource.TokenStore, ref resource.Ref, v string) {
	t.Helper()
	if err := s.Update(context.Background(), ref, func([]byte) ([]byte, error) { return []byte(v), nil }); err != nil {
		t.Fatalf("Update(%s): %v", ref, err)
	}
}

func wantToken(t *testing.T, s resource.TokenStore, ref resource.Ref, want string) {
	t.Helper()
	got, err := s.Load(context.Background(), ref)
	if err != nil || string(got) != want {
		t.Fatalf("Load(%s) = %q, %v; want %q", ref, got, err, want)
	}
}

// The default token store of a bbolt store is TokensFile beside it, mode
// 0600, kept across Opens, and closed by Close.
func TestOpenKeepsTokensBesideTheStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, err := agt.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	setToken(t, h.Tokens(), "tools/remote", "credential")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Tokens().Load(context.Background(), "tools/remote"); !errors.Is(err, boltrepo.ErrClosed) {
		t.Fatalf("Load after Close err = %v, want ErrClosed", err)
	}
	st, err := os.Stat(filepath.Join(dir, agt.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s mode = %04o, want 0600", agt.TokensFile, st.Mode().Perm())
	}
	// A store named by its file path finds the same token file.
	h, err = agt.Open(context.Background(), filepath.Join(dir, agt.StoreFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	wantToken(t, h.Tokens(), "tools/remote", "credential")
}

// A token file others may read fails Open, with the fix, and leaves the
// store file unlocked: Open succeeds at once after the fix.
func TestOpenRefusesReadableTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, err := agt.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, agt.TokensFile)
	if err := os.Chmod(tokens, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = agt.Open(context.Background(), dir, nil)
	if err == nil || !strings.Contains(err.Error(), "mode 0644") || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("Open err = %v, want the token file's mode refused with its fix", err)
	}
	if err := os.Chmod(tokens, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err = agt.Open(context.Background(), dir, &agt.Options{Bolt: &boltrepo.Options{LockTimeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatalf("Open after the fix: %v", err)
	}
	h.Close()
}

// Options.Tokens replaces the default: no token file is made, and Close
// leaves the host's store alone.
func TestOptionsTokensReplacesTheDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mine := resource.NewMemoryTokenStore()
	h, err := agt.Open(context.Background(), dir, &agt.Options{Tokens: mine})
	if err != nil {
		t.Fatal(err)
	}
	setToken(t, h.Tokens(), "remote", "v")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	wantToken(t, mine, "remote", "v")
	if _, err := os.Stat(filepath.Join(dir, agt.TokensFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat %s: %v, want it absent", agt.TokensFile, err)
	}
}

func TestNewKeepsTokensInMemory(t *testing.T) {
	t.Parallel()
	repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	h, err := agt.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	setToken(t, h.Tokens(), "remote", "v")
	wantToken(t, h.Tokens(), "remote", "v")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

// A postgres:// store keeps its tokens in its own table. Like the pgrepo
// tests, it needs AGT_TEST_POSTGRES (keyword=value pairs): under CI a
// missing server fails; elsewhere the test is skipped.
func TestOpenPostgresKeepsTokensInItsTable(t *testing.T) {
	t.Parallel()
	conn := need.Postgres(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "agt_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), conn)
		if err == nil {
			_, err = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
		if err != nil {
			t.Errorf("drop test schema: %v", err)
		}
	})
	// The same server as a URL, its tables in the test's schema.
	q := url.Values{"search_path": {schema}}
	dbname := "postgres"
	for _, kv := range strings.Fields(conn) {
		k, v, _ := strings.Cut(kv, "=")
		if k == "dbname" {
			dbname = v
		} else {
			q.Set(k, v)
		}
	}
	h, err := agt.Open(ctx, "postgres:///"+dbname+"?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	setToken(t, h.Tokens(), "tools/remote", "credential")
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+schema+".agt_oauth_tokens WHERE ref = 'tools/remote' AND data = 'credential'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows in the token table: %d, %v; want 1", n, err)
	}
	wantToken(t, h.Tokens(), "tools/remote", "credential")
}
