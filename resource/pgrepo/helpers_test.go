package pgrepo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/internal/runtest/need"
	"github.com/agtsdk/agt/resource/pgrepo"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testConnString returns the test server's connection string
// ($AGT_TEST_POSTGRES). Under CI (CI=true) a missing server is a failure,
// so the tests cannot silently stop running; elsewhere the test is skipped
// with a note on how to run it (need.Postgres).
func testConnString(tb testing.TB) string {
	tb.Helper()
	return need.Postgres(tb)
}

// newSchema returns a fresh schema name and drops the schema when the test
// ends, so tests run in parallel without seeing each other's rows.
func newSchema(tb testing.TB) string {
	tb.Helper()
	conn := testConnString(tb)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	schema := "agt_test_" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, conn)
		if err != nil {
			tb.Errorf("drop test schema: %v", err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("drop test schema: %v", err)
		}
	})
	return schema
}

// openRepo opens a Repo on a fresh schema, closed when the test ends.
func openRepo(tb testing.TB) *pgrepo.Repo {
	tb.Helper()
	return openRepoAt(tb, testConnString(tb), newSchema(tb))
}

func openRepoAt(tb testing.TB, conn, schema string) *pgrepo.Repo {
	tb.Helper()
	repo, err := pgrepo.Open(context.Background(), conn, &pgrepo.Options{Schema: schema})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(repo.Close)
	return repo
}

// adminExec runs one statement on its own connection.
func adminExec(tb testing.TB, sql string, args ...any) {
	tb.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, testConnString(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}
