package pgrepo_test

import (
	"bytes"
	"context"
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
	s, err := repo.TokenStore(context.Background())
	if err != nil {
		t.Fatalf("TokenStore: %v", err)
	}
	return s
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
	tokenStore(t, openRepoAt(t, testConnString(t), schema))
	ctx := context.Background()
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
	if _, err := repo.TokenStore(context.Background()); err == nil || !strings.Contains(err.Error(), "SkipCreate") {
		t.Fatalf("TokenStore without its table err = %v, want one naming SkipCreate", err)
	}
	tokenStore(t, openRepoAt(t, conn, schema)) // creates it
	tokenStore(t, repo)
}
