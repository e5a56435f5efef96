package pgrepo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/pgrepo"
)

var (
	keyA = resource.Key{Kind: resource.KindMCP, Ref: "tools/fs"}
	keyB = resource.Key{Kind: resource.KindAgent, Ref: "triage"}
)

func TestCreateGet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := openRepo(t)

	// Bytes are kept exactly as written, whitespace and key order included.
	data := json.RawMessage(`{"b": 1,  "a":[2]}`)
	created, err := repo.Create(ctx, keyA, data)
	if err != nil {
		t.Fatal(err)
	}
	if created.Revision != 1 { // revisions start at 1
		t.Errorf("Create revision = %d, want 1", created.Revision)
	}
	if created.Kind != keyA.Kind || created.Ref != keyA.Ref || string(created.Data) != string(data) {
		t.Errorf("Create returned %+v", created)
	}
	if created.CreatedAt.IsZero() || !created.CreatedAt.Equal(created.UpdatedAt) {
		t.Errorf("Create times: created %v, updated %v", created.CreatedAt, created.UpdatedAt)
	}
	got, err := repo.Get(ctx, keyA)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("Get differs from Create (-create +get):\n%s", diff)
	}
	if _, err := repo.Create(ctx, keyA, data); !errors.Is(err, resource.ErrExists) {
		t.Errorf("second Create: %v, want ErrExists", err)
	}
	if _, err := repo.Get(ctx, keyB); !errors.Is(err, resource.ErrNotFound) {
		t.Errorf("Get of a missing key: %v, want ErrNotFound", err)
	}
	// The same ref under another kind is another resource.
	other := resource.Key{Kind: resource.KindAgent, Ref: keyA.Ref}
	if _, err := repo.Get(ctx, other); !errors.Is(err, resource.ErrNotFound) {
		t.Errorf("Get of the ref under another kind: %v, want ErrNotFound", err)
	}
}

func TestReturnedBytesAreCopies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := openRepo(t)
	data := []byte(`{"v":1}`)
	res, err := repo.Create(ctx, keyA, data)
	if err != nil {
		t.Fatal(err)
	}
	data[2] = 'X'
	res.Data[2] = 'Y'
	got, err := repo.Get(ctx, keyA)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != `{"v":1}` {
		t.Errorf("stored data changed through a caller's slice: %s", got.Data)
	}
}

// Revisions strictly increase and never repeat for a key, even after delete
// and create (SPEC R2.6, resource.Resource).
func TestRevisionsNeverRepeatAfterDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := openRepo(t)
	var seen []int64
	for round := 0; round < 3; round++ {
		res, err := repo.Create(ctx, keyA, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, res.Revision)
		res, err = repo.Update(ctx, keyA, json.RawMessage(`{"n":1}`), res.Revision)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, res.Revision)
		if err := repo.Delete(ctx, keyA, res.Revision); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Get(ctx, keyA); !errors.Is(err, resource.ErrNotFound) {
			t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
		}
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 5, 6}, seen); diff != "" {
		t.Errorf("revisions (-want +got):\n%s", diff)
	}
	list, err := repo.List(ctx, keyA.Kind, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("List after Delete shows %d resources (a tombstone leaked)", len(list))
	}
}

// SPEC R2.6: a write with an expected revision is refused when the stored
// one differs, and the error carries the stored revision.
func TestUpdateCompareAndSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name      string
		key       resource.Key
		expected  int64
		wantRev   int64
		wantErr   error
		wantStore int64 // stored revision afterwards; 0 for none
	}{
		{name: "matching revision", key: keyA, expected: 2, wantRev: 3, wantStore: 3},
		{name: "stale revision", key: keyA, expected: 1, wantErr: resource.ErrConflict, wantStore: 2},
		{name: "future revision", key: keyA, expected: 9, wantErr: resource.ErrConflict, wantStore: 2},
		{name: "any revision", key: keyA, expected: resource.AnyRevision, wantRev: 3, wantStore: 3},
		{name: "missing key", key: keyB, expected: resource.AnyRevision, wantErr: resource.ErrNotFound},
		{name: "missing key with revision", key: keyB, expected: 1, wantErr: resource.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := openRepo(t)
			if _, err := repo.Create(ctx, keyA, json.RawMessage(`{"v":1}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := repo.Update(ctx, keyA, json.RawMessage(`{"v":2}`), 1); err != nil {
				t.Fatal(err)
			}
			res, err := repo.Update(ctx, tt.key, json.RawMessage(`{"v":3}`), tt.expected)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Update: %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && (res.Revision != tt.wantRev || string(res.Data) != `{"v":3}`) {
				t.Errorf("Update returned revision %d data %s, want %d", res.Revision, res.Data, tt.wantRev)
			}
			var ce *resource.ConflictError
			if errors.As(err, &ce) {
				want := resource.ConflictError{Key: tt.key, Expected: tt.expected, Current: 2}
				if diff := cmp.Diff(want, *ce); diff != "" {
					t.Errorf("ConflictError (-want +got):\n%s", diff)
				}
			}
			if tt.wantStore != 0 {
				cur, err := repo.Get(ctx, keyA)
				if err != nil {
					t.Fatal(err)
				}
				if cur.Revision != tt.wantStore {
					t.Errorf("stored revision %d, want %d", cur.Revision, tt.wantStore)
				}
			}
		})
	}
}

func TestDeleteCompareAndSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		key      resource.Key
		expected int64
		wantErr  error
	}{
		{name: "matching revision", key: keyA, expected: 1},
		{name: "any revision", key: keyA, expected: resource.AnyRevision},
		{name: "stale revision", key: keyA, expected: 7, wantErr: resource.ErrConflict},
		{name: "missing key", key: keyB, expected: resource.AnyRevision, wantErr: resource.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := openRepo(t)
			if _, err := repo.Create(ctx, keyA, json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			err := repo.Delete(ctx, tt.key, tt.expected)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Delete: %v, want %v", err, tt.wantErr)
			}
			_, getErr := repo.Get(ctx, keyA)
			if deleted := errors.Is(getErr, resource.ErrNotFound); deleted != (tt.wantErr == nil) {
				t.Errorf("after Delete, Get of the key: %v", getErr)
			}
			// A second delete of a deleted key finds nothing.
			if tt.wantErr == nil {
				if err := repo.Delete(ctx, keyA, resource.AnyRevision); !errors.Is(err, resource.ErrNotFound) {
					t.Errorf("second Delete: %v, want ErrNotFound", err)
				}
			}
		})
	}
}

func TestModify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	errBusiness := errors.New("refused by fn")
	tests := []struct {
		name     string
		key      resource.Key
		expected int64
		fn       func(cur resource.Resource) (json.RawMessage, error)
		wantErr  error
		wantData string // stored afterwards
		wantRev  int64  // stored afterwards
	}{
		{
			name: "writes fn's result", key: keyA, expected: resource.AnyRevision,
			fn: func(cur resource.Resource) (json.RawMessage, error) {
				return append(cur.Data[:len(cur.Data)-1:len(cur.Data)-1], `,"x":2}`...), nil
			},
			wantData: `{"v":1,"x":2}`, wantRev: 2,
		},
		{
			name: "expected revision matches", key: keyA, expected: 1,
			fn:       func(resource.Resource) (json.RawMessage, error) { return json.RawMessage(`{}`), nil },
			wantData: `{}`, wantRev: 2,
		},
		{
			name: "nil data writes nothing", key: keyA, expected: resource.AnyRevision,
			fn:       func(resource.Resource) (json.RawMessage, error) { return nil, nil },
			wantData: `{"v":1}`, wantRev: 1,
		},
		{
			name: "fn error writes nothing", key: keyA, expected: resource.AnyRevision,
			fn:      func(resource.Resource) (json.RawMessage, error) { return json.RawMessage(`{}`), errBusiness },
			wantErr: errBusiness, wantData: `{"v":1}`, wantRev: 1,
		},
		{
			name: "stale revision", key: keyA, expected: 5,
			fn:      func(resource.Resource) (json.RawMessage, error) { return json.RawMessage(`{}`), nil },
			wantErr: resource.ErrConflict, wantData: `{"v":1}`, wantRev: 1,
		},
		{
			name: "missing key", key: keyB, expected: resource.AnyRevision,
			fn:      func(resource.Resource) (json.RawMessage, error) { return json.RawMessage(`{}`), nil },
			wantErr: resource.ErrNotFound, wantData: `{"v":1}`, wantRev: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := openRepo(t)
			if _, err := repo.Create(ctx, keyA, json.RawMessage(`{"v":1}`)); err != nil {
				t.Fatal(err)
			}
			res, err := repo.Modify(ctx, tt.key, tt.expected, tt.fn)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Modify: %v, want %v", err, tt.wantErr)
			}
			stored, err2 := repo.Get(ctx, keyA)
			if err2 != nil {
				t.Fatal(err2)
			}
			if string(stored.Data) != tt.wantData || stored.Revision != tt.wantRev {
				t.Errorf("stored %s at revision %d, want %s at %d", stored.Data, stored.Revision, tt.wantData, tt.wantRev)
			}
			if err == nil {
				if diff := cmp.Diff(stored, res); diff != "" {
					t.Errorf("Modify result differs from the stored resource (-stored +result):\n%s", diff)
				}
			}
		})
	}
}

// Modify holds the row lock while fn runs: a write from elsewhere waits for
// it instead of landing in between (resource.Repository.Modify).
func TestModifyBlocksOtherWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := openRepo(t)
	if _, err := repo.Create(ctx, keyA, json.RawMessage(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	var innerErr error
	res, err := repo.Modify(ctx, keyA, 1, func(cur resource.Resource) (json.RawMessage, error) {
		// However slow the machine, this Update cannot succeed while the
		// lock is held: it can only run out of time.
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, innerErr = repo.Update(short, keyA, json.RawMessage(`{"v":"intruder"}`), resource.AnyRevision)
		return json.RawMessage(`{"v":2}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if innerErr == nil {
		t.Errorf("an Update landed while Modify held the row")
	}
	if res.Revision != 2 || string(res.Data) != `{"v":2}` {
		t.Errorf("Modify stored %s at %d, want {\"v\":2} at 2", res.Data, res.Revision)
	}
}

// SPEC R2.6: concurrent writers never lose an update.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const workers, perWorker = 8, 15
	counterFn := func(cur resource.Resource) (json.RawMessage, error) {
		var doc struct{ N int }
		if err := json.Unmarshal(cur.Data, &doc); err != nil {
			return nil, err
		}
		return json.RawMessage(`{"N":` + strconv.Itoa(doc.N+1) + `}`), nil
	}
	tests := []struct {
		name  string
		write func(repo *pgrepo.Repo) (int64, error)
	}{
		{name: "Modify", write: func(repo *pgrepo.Repo) (int64, error) {
			res, err := repo.Modify(ctx, keyA, resource.AnyRevision, counterFn)
			return res.Revision, err
		}},
		{name: "Get then Update with expected revision", write: func(repo *pgrepo.Repo) (int64, error) {
			for {
				cur, err := repo.Get(ctx, keyA)
				if err != nil {
					return 0, err
				}
				next, err := counterFn(cur)
				if err != nil {
					return 0, err
				}
				res, err := repo.Update(ctx, keyA, next, cur.Revision)
				if errors.Is(err, resource.ErrConflict) {
					continue // someone saved first: read again
				}
				return res.Revision, err
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn, schema := testConnString(t), newSchema(t)
			setup := openRepoAt(t, conn, schema)
			if _, err := setup.Create(ctx, keyA, json.RawMessage(`{"N":0}`)); err != nil {
				t.Fatal(err)
			}
			var (
				mu   sync.Mutex
				revs = map[int64]bool{}
				wg   sync.WaitGroup
			)
			for w := 0; w < workers; w++ {
				// Half the workers use their own pool, as another process would.
				repo := setup
				if w%2 == 1 {
					repo = openRepoAt(t, conn, schema)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < perWorker; i++ {
						rev, err := tt.write(repo)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						if revs[rev] {
							t.Errorf("revision %d handed out twice", rev)
						}
						revs[rev] = true
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			final, err := setup.Get(ctx, keyA)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`{"N":%d}`, workers*perWorker)
			if string(final.Data) != want || final.Revision != workers*perWorker+1 {
				t.Errorf("final %s at revision %d, want %s at %d", final.Data, final.Revision, want, workers*perWorker+1)
			}
		})
	}
}

// Concurrent Creates of one key: exactly one wins.
func TestConcurrentCreateOneWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := openRepo(t)
	const n = 10
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			_, err := repo.Create(ctx, keyA, json.RawMessage(`{}`))
			errs <- err
		}()
	}
	wins := 0
	for i := 0; i < n; i++ {
		err := <-errs
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, resource.ErrExists):
			t.Errorf("Create: %v", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d Creates won, want 1", wins)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := openRepo(t)
	// Byte order, not a locale's: '-' < '.' < '/' < digits < '_' < letters.
	refs := []string{"ab", "a_b/x", "axb/x", "a", "a-b", "a.b", "a/z", "a/y", "a0", "b/a"}
	for _, ref := range refs {
		if _, err := repo.Create(ctx, resource.Key{Kind: resource.KindMCP, Ref: resource.Ref(ref)}, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := repo.Create(ctx, resource.Key{Kind: resource.KindAgent, Ref: "a/agent"}, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := repo.Delete(ctx, resource.Key{Kind: resource.KindMCP, Ref: "b/a"}, resource.AnyRevision); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		kind     resource.Kind
		category string
		want     []string
	}{
		{kind: resource.KindMCP, want: []string{"a", "a-b", "a.b", "a/y", "a/z", "a0", "a_b/x", "ab", "axb/x"}},
		{kind: resource.KindMCP, category: "a", want: []string{"a/y", "a/z"}},
		// '_' is not a wildcard: a_b does not match axb.
		{kind: resource.KindMCP, category: "a_b", want: []string{"a_b/x"}},
		{kind: resource.KindMCP, category: "b", want: nil},
		{kind: resource.KindAgent, want: []string{"a/agent"}},
		{kind: "other", want: nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind)+"/"+tt.category, func(t *testing.T) {
			list, err := repo.List(ctx, tt.kind, tt.category)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, res := range list {
				if res.Kind != tt.kind || res.Revision != 1 || string(res.Data) != `{}` {
					t.Errorf("listed %+v", res)
				}
				got = append(got, string(res.Ref))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalidInputRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := openRepo(t)
	bad := []resource.Key{
		{Kind: "", Ref: "a"},
		{Kind: "MCP", Ref: "a"},
		{Kind: resource.KindMCP, Ref: ""},
		{Kind: resource.KindMCP, Ref: "a/b/c"},
		{Kind: resource.KindMCP, Ref: "../etc"},
	}
	for _, key := range bad {
		if _, err := repo.Create(ctx, key, json.RawMessage(`{}`)); err == nil {
			t.Errorf("Create(%q) succeeded", key)
		}
		if _, err := repo.Get(ctx, key); err == nil || errors.Is(err, resource.ErrNotFound) {
			t.Errorf("Get(%q): %v, want an invalid key error", key, err)
		}
	}
	if _, err := repo.List(ctx, resource.KindMCP, "a/b"); err == nil {
		t.Errorf("List with a two-segment category succeeded")
	}
}

func TestSchemasAreSeparate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	one, two := openRepo(t), openRepo(t)
	if _, err := one.Create(ctx, keyA, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := two.Get(ctx, keyA); !errors.Is(err, resource.ErrNotFound) {
		t.Errorf("a resource of one schema is seen in another: %v", err)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := testConnString(t)

	t.Run("SkipCreate without a table", func(t *testing.T) {
		t.Parallel()
		schema := newSchema(t)
		_, err := pgrepo.Open(ctx, conn, &pgrepo.Options{Schema: schema, SkipCreate: true})
		if err == nil || !strings.Contains(err.Error(), "DDL") {
			t.Errorf("Open with SkipCreate on an empty schema: %v, want an error pointing at the DDL", err)
		}
	})
	t.Run("SkipCreate with the table", func(t *testing.T) {
		t.Parallel()
		schema := newSchema(t)
		openRepoAt(t, conn, schema).Close()
		repo, err := pgrepo.Open(ctx, conn, &pgrepo.Options{Schema: schema, SkipCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		defer repo.Close()
		if _, err := repo.Create(ctx, keyA, json.RawMessage(`{}`)); err != nil {
			t.Error(err)
		}
	})
	t.Run("concurrent Opens of a fresh schema", func(t *testing.T) {
		t.Parallel()
		schema := newSchema(t)
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				repo, err := pgrepo.Open(ctx, conn, &pgrepo.Options{Schema: schema})
				if err != nil {
					t.Error(err)
					return
				}
				repo.Close()
			}()
		}
		wg.Wait()
	})
	t.Run("reopen keeps the data", func(t *testing.T) {
		t.Parallel()
		schema := newSchema(t)
		first := openRepoAt(t, conn, schema)
		if _, err := first.Create(ctx, keyA, json.RawMessage(`{"kept":true}`)); err != nil {
			t.Fatal(err)
		}
		first.Close()
		got, err := openRepoAt(t, conn, schema).Get(ctx, keyA)
		if err != nil || string(got.Data) != `{"kept":true}` {
			t.Errorf("after reopen: %s, %v", got.Data, err)
		}
	})
	t.Run("bad connection string does not echo it", func(t *testing.T) {
		t.Parallel()
		_, err := pgrepo.Open(ctx, "postgres://u:s3cret@host:notaport/db", nil)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open: %v", err)
		}
	})
	t.Run("unreachable server", func(t *testing.T) {
		t.Parallel()
		short, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err := pgrepo.Open(short, "host="+t.TempDir()+" user=u password=s3cret dbname=d connect_timeout=5", nil)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open of a missing server: %v", err)
		}
	})
	t.Run("long schema name", func(t *testing.T) {
		t.Parallel()
		_, err := pgrepo.Open(ctx, conn, &pgrepo.Options{Schema: strings.Repeat("s", 64)})
		if err == nil {
			t.Errorf("Open with a 64-byte schema name succeeded")
		}
	})
	t.Run("schema name needing quotes", func(t *testing.T) {
		t.Parallel()
		schema := newSchema(t) + `"; DROP TABLE x; --`
		t.Cleanup(func() { adminExec(t, `DROP SCHEMA IF EXISTS "`+strings.ReplaceAll(schema, `"`, `""`)+`" CASCADE`) })
		repo := openRepoAt(t, conn, schema)
		if _, err := repo.Create(ctx, keyA, json.RawMessage(`{}`)); err != nil {
			t.Error(err)
		}
	})
}

// Every call honours its context.
func TestContextHonoured(t *testing.T) {
	t.Parallel()
	repo := openRepo(t)
	if _, err := repo.Create(context.Background(), keyA, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	noop := func(resource.Resource) (json.RawMessage, error) { return json.RawMessage(`{"changed":1}`), nil }
	calls := map[string]func() error{
		"Get":    func() error { _, err := repo.Get(ctx, keyA); return err },
		"Create": func() error { _, err := repo.Create(ctx, keyB, json.RawMessage(`{}`)); return err },
		"Update": func() error { _, err := repo.Update(ctx, keyA, json.RawMessage(`{}`), 0); return err },
		"Modify": func() error { _, err := repo.Modify(ctx, keyA, 0, noop); return err },
		"Delete": func() error { return repo.Delete(ctx, keyA, 0) },
		"List":   func() error { _, err := repo.List(ctx, keyA.Kind, ""); return err },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", name, err)
		}
		if errors.Is(err, pgrepo.ErrUnknownOutcome) {
			t.Errorf("%s with a context cancelled before the call reports an unknown outcome: %v", name, err)
		}
	}
	got, err := repo.Get(context.Background(), keyA)
	if err != nil || got.Revision != 1 {
		t.Errorf("after cancelled calls: revision %d, %v; want the resource untouched", got.Revision, err)
	}
}

// A context that ends while fn runs stops Modify before COMMIT: nothing is
// written, the error says so, and the row lock is released.
func TestModifyContextEndsInFn(t *testing.T) {
	t.Parallel()
	repo := openRepo(t)
	if _, err := repo.Create(context.Background(), keyA, json.RawMessage(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err := repo.Modify(ctx, keyA, 1, func(resource.Resource) (json.RawMessage, error) {
		cancel()
		return json.RawMessage(`{"v":2}`), nil
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, pgrepo.ErrUnknownOutcome) {
		t.Errorf("Modify: %v, want context.Canceled and a known outcome", err)
	}
	// The lock is gone: a write with a fresh context goes through at once.
	res, err := repo.Update(context.Background(), keyA, json.RawMessage(`{"v":3}`), 1)
	if err != nil || res.Revision != 2 {
		t.Errorf("Update after the cancelled Modify: revision %d, %v; want 2", res.Revision, err)
	}
}

// A role that may use the table but not create anything still opens the
// repository without SkipCreate once the table exists.
func TestOpenWithoutCreatePrivilege(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, schema := testConnString(t), newSchema(t)
	openRepoAt(t, conn, schema).Close()
	role := schema + "_user"
	adminExec(t, "CREATE ROLE "+role+" LOGIN PASSWORD 'agt-test'")
	t.Cleanup(func() { adminExec(t, "DROP OWNED BY "+role+"; DROP ROLE "+role) })
	adminExec(t, "GRANT USAGE ON SCHEMA "+schema+" TO "+role)
	adminExec(t, "GRANT SELECT, INSERT, UPDATE ON "+schema+"."+pgrepo.TableName+" TO "+role)

	repo, err := pgrepo.Open(ctx, conn+" user="+role+" password=agt-test", &pgrepo.Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open as a role without CREATE: %v", err)
	}
	defer repo.Close()
	if _, err := repo.Create(ctx, keyA, json.RawMessage(`{}`)); err != nil {
		t.Error(err)
	}
}
