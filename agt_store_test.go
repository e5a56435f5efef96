package agt_test

import (
	"context"
	"errors"
	gobuild "go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/resource"
)

// A store URL is opened by the package that registered its scheme: this
// test binary imports resource/pgrepo, so postgres:// reaches it (and
// fails to connect to a closed port); a scheme nobody registered fails
// with resource.ErrNoStore and nothing is opened.
func TestOpenByRegisteredScheme(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := agt.Open(ctx, "postgres://agt@127.0.0.1:1/agt?connect_timeout=5", nil)
	if err == nil || errors.Is(err, resource.ErrNoStore) || !strings.Contains(err.Error(), "pgrepo") {
		t.Errorf("Open of a postgres:// URL: err = %v; want pgrepo's connection error", err)
	}
	_, err = agt.Open(ctx, "mysql://agt:secret@127.0.0.1/agt", nil)
	if !errors.Is(err, resource.ErrNoStore) || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open of an unregistered scheme: err = %v; want ErrNoStore without the URL", err)
	}
}

// Optional parts cost nothing: a program that uses only the bbolt store
// links no PostgreSQL driver; the CLI, which imports resource/pgrepo,
// does.
func TestBoltOnlyProgramLinksNoPgx(t *testing.T) {
	t.Parallel()
	goCmd := filepath.Join(gobuild.Default.GOROOT, "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		goCmd = "go"
	}
	deps := func(pkg string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, goCmd, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		return string(out)
	}
	const pgx = "github.com/jackc/pgx"
	for _, pkg := range []string{"github.com/agtsdk/agt", "github.com/agtsdk/agt/examples/quickstart"} {
		if strings.Contains(deps(pkg), pgx) {
			t.Errorf("%s links %s; only a program that imports resource/pgrepo may", pkg, pgx)
		}
	}
	if !strings.Contains(deps("github.com/agtsdk/agt/cmd/agt"), pgx) {
		t.Errorf("cmd/agt does not link %s: it can no longer open postgres:// stores", pgx)
	}
}

// A PostgreSQL keyword=value connection string is not a bbolt file name
// (issue 23 item 12a): Open refuses it with the postgres:// form, creates
// no file, and does not repeat the string (it may hold a password). Names
// that only contain '=' or spaces are still files.
func TestOpenRefusesKeyValueConnString(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // a relative store lands here; not parallel
	ctx := context.Background()
	tests := []struct {
		store   string
		refused bool
	}{
		{"host=127.0.0.1 port=1 password=s3cret", true},
		{"dbname=agt", true},
		{"  user=agt sslmode=disable", true},
		{"host = /run/postgresql dbname = agt", true},
		{"connect_timeout=5 password='s3cret word'", true},
		{"x=1 y=2", true},
		{"a=b.db", false},
		{"my store.db", false},
		{"./host=x.db", false},
		{"report 2=1.db", false},
	}
	for _, tt := range tests {
		h, err := agt.Open(ctx, tt.store, nil)
		if !tt.refused {
			if err != nil {
				t.Errorf("Open(%q) = %v; want the bbolt file", tt.store, err)
				continue
			}
			h.Close()
			if _, err := os.Stat(filepath.Join(dir, tt.store)); err != nil {
				t.Errorf("Open(%q): %v", tt.store, err)
			}
			continue
		}
		if err == nil {
			h.Close()
			t.Errorf("Open(%q) opened a bbolt file; want it refused", tt.store)
			continue
		}
		if !strings.Contains(err.Error(), "postgres://") || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("Open(%q) = %v; want the postgres:// form, without the string's values", tt.store, err)
		}
		if _, err := os.Stat(filepath.Join(dir, tt.store)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open(%q) created a file named after it (%v)", tt.store, err)
		}
	}
}
