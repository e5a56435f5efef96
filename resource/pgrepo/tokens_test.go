package pgrepo_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/pgrepo"
	"github.com/agtsdk/agt/resource/tokenstoretest"
)

func tokenStore(t *testing.T, repo *pgrepo.Repo) resource.TokenStore {
	t.Helper()
	return repo.TokenStore()
}

func TestTokenStoreConformance(t *testing.T) {
	testConnString(t)
	tokenstoretest.Run(t, func(t *testing.T) resource.TokenStore {
		return tokenStore(t, openRepo(t))
	})
}

// Two Repos (two pools, as two hosts have) on one schema increment one
// counter, starting from no row at all: no update is lost, the first
// inserts included.
func TestTokenStoreTwoRepos(t *testing.T) {
	t.Parallel()
	conn, schema := testConnString(t), newSchema(t)
	stores := []resource.TokenStore{tokenStore(t, openRepoAt(t, conn, schema)), tokenStore(t, openRepoAt(t, conn, schema))}
	const perStore, goroutines = 10, 4
	var wg sync.WaitGroup
	errs := make(chan error, len(stores)*goroutines)
	for _, s := range stores {
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perStore {
					err := s.Update(context.Background(), "shared/counter", func(old []byte) ([]byte, error) {
						n := 0
						if old != nil {
							var err error
							if n, err = strconv.Atoi(string(old)); err != nil {
								return nil, err
							}
						}
						return []byte(strconv.Itoa(n + 1)), nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v, err := stores[1].Load(context.Background(), "shared/counter")
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(len(stores) * goroutines * perStore); string(v) != want {
		t.Fatalf("counter = %s, want %s", v, want)
	}
}

// The table itself refuses a value over resource.MaxTokenBytes, written
// past the store.
func TestTokenTableBoundsValues(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	ctx := context.Background()
	if _, err := tokenStore(t, openRepoAt(t, testConnString(t), schema)).Load(ctx, "a"); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Load err = %v, want ErrNotFound", err) // the table now exists
	}
	c, err := pgx.Connect(ctx, testConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, pgrepo.TokenTableName}.Sanitize()+" (ref, data) VALUES ('big', $1)", bytes.Repeat([]byte("x"), resource.MaxTokenBytes+1))
	if err == nil || !strings.Contains(err.Error(), "check constraint") {
		t.Fatalf("insert of MaxTokenBytes+1 err = %v, want the check constraint", err)
	}
}

func TestTokenStoreSkipCreate(t *testing.T) {
	t.Parallel()
	conn, schema := testConnString(t), newSchema(t)
	openRepoAt(t, conn, schema) // creates the schema and the resources table only
	repo, err := pgrepo.Open(context.Background(), conn, &pgrepo.Options{Schema: schema, SkipCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(repo.Close)
	ctx := context.Background()
	skipping := repo.TokenStore()
	if _, err := skipping.Load(ctx, "a"); err == nil || !strings.Contains(err.Error(), "SkipCreate") {
		t.Fatalf("Load without the token table err = %v, want one naming SkipCreate", err)
	}
	if err := skipping.Update(ctx, "a", func([]byte) ([]byte, error) { return []byte("v"), nil }); err == nil || !strings.Contains(err.Error(), "SkipCreate") {
		t.Fatalf("Update without the token table err = %v, want one naming SkipCreate", err)
	}
	// Once the table exists, the same store works: a failure is not kept.
	if _, err := openRepoAt(t, conn, schema).TokenStore().Load(ctx, "a"); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Load err = %v, want ErrNotFound", err)
	}
	if err := skipping.Update(ctx, "a", func([]byte) ([]byte, error) { return []byte("v"), nil }); err != nil {
		t.Fatal(err)
	}
}

// A Repo whose host never uses OAuth never creates the token table.
func TestTokenTableCreatedOnFirstUse(t *testing.T) {
	t.Parallel()
	conn, schema := testConnString(t), newSchema(t)
	repo := openRepoAt(t, conn, schema)
	s := repo.TokenStore()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	exists := func() bool {
		var ok bool
		if err := c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", pgx.Identifier{schema, pgrepo.TokenTableName}.Sanitize()).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if exists() {
		t.Fatal("the token table exists before any token call")
	}
	if _, err := s.Load(ctx, "a"); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Load err = %v, want ErrNotFound", err)
	}
	if !exists() {
		t.Fatal("the token table is missing after the first token call")
	}
}
