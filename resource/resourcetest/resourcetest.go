package resourcetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/resource"
)

// Concurrency sizes of the suite.
const (
	// Goroutines is how many goroutines race in the concurrency subtests.
	Goroutines = 32
	// IncrementsPerGoroutine is how many compare-and-set increments each
	// racing goroutine lands.
	IncrementsPerGoroutine = 4
)

// Run runs the conformance suite against repositories made by newRepo.
func Run(t *testing.T, newRepo func(t *testing.T) resource.Repository) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, repo resource.Repository)
	}{
		{"CreateGet", testCreateGet},
		{"CreateExists", testCreateExists},
		{"GetMissing", testGetMissing},
		{"InvalidKeys", testInvalidKeys},
		{"InvalidData", testInvalidData},
		{"UpdateCompareAndSet", testUpdateCompareAndSet},
		{"UpdateBlind", testUpdateBlind},
		{"UpdateMissing", testUpdateMissing},
		{"ModifyNoChange", testModifyNoChange},
		{"ModifyError", testModifyError},
		{"ModifyConflict", testModifyConflict},
		{"Delete", testDelete},
		{"DeleteConflict", testDeleteConflict},
		{"RevisionNeverRepeats", testRevisionNeverRepeats},
		{"List", testList},
		{"ListEmpty", testListEmpty},
		{"Timestamps", testTimestamps},
		{"BytesAreCopies", testBytesAreCopies},
		{"WrittenBytesAreCopies", testWrittenBytesAreCopies},
		{"ModifyInvalidData", testModifyInvalidData},
		{"DeleteMissing", testDeleteMissing},
		{"ConcurrentCreate", testConcurrentCreate},
		{"ConcurrentDeleteCreate", testConcurrentDeleteCreate},
		{"CanceledContext", testCanceledContext},
		{"ConcurrentCompareAndSet", testConcurrentCompareAndSet},
		{"ConcurrentModifyAddRemove", testConcurrentModifyAddRemove},
		{"ConcurrentSameExpectedRevision", testConcurrentSameExpected},
		{"Guarded", testGuarded},
		{"GuardedHoldsUntilCommit", testGuardedHoldsUntilCommit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newRepo(t))
		})
	}
}

var (
	keyA = resource.Key{Kind: resource.KindMCP, Ref: "alpha"}
	keyB = resource.Key{Kind: resource.KindMCP, Ref: "tools/beta"}
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// jsonEqual compares JSON values, ignoring whitespace and key order (a store
// may keep JSON in a normalised form, as PostgreSQL's jsonb does).
func jsonEqual(t *testing.T, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("stored data is not JSON: %v", err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("test data is not JSON: %v", err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Fatalf("data mismatch (-want +got):\n%s", diff)
	}
}

func mustCreate(t *testing.T, repo resource.Repository, key resource.Key, data string) resource.Resource {
	t.Helper()
	res, err := repo.Create(ctx(t), key, json.RawMessage(data))
	if err != nil {
		t.Fatalf("Create(%s): %v", key, err)
	}
	return res
}

func wantConflict(t *testing.T, err error, current int64) {
	t.Helper()
	if !errors.Is(err, resource.ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	var ce *resource.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *resource.ConflictError", err)
	}
	if ce.Current != current {
		t.Fatalf("ConflictError.Current = %d, want %d", ce.Current, current)
	}
}

func mustGet(t *testing.T, repo resource.Repository, key resource.Key) resource.Resource {
	t.Helper()
	res, err := repo.Get(ctx(t), key)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	return res
}

// scribble overwrites b, as a caller reusing its buffer would.
func scribble(b []byte) {
	for i := range b {
		b[i] = ' '
	}
}

// race runs fn(0) to fn(n-1) in n goroutines released at once, and waits
// for all of them.
func race(n int, fn func(g int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(g)
		}()
	}
	close(start)
	wg.Wait()
}

func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A read returns the resource with its revision; a new key starts
// at revision 1.
func testCreateGet(t *testing.T, repo resource.Repository) {
	created := mustCreate(t, repo, keyA, `{"x": 1}`)
	if created.Revision != 1 || created.Kind != keyA.Kind || created.Ref != keyA.Ref {
		t.Fatalf("Create = %+v, want revision 1 of %s", created, keyA)
	}
	jsonEqual(t, created.Data, json.RawMessage(`{"x":1}`))
	got, err := repo.Get(ctx(t), keyA)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 1 || got.Key() != keyA {
		t.Fatalf("Get = %+v, want revision 1 of %s", got, keyA)
	}
	jsonEqual(t, got.Data, json.RawMessage(`{"x":1}`))
	// Same reference under another kind is another resource.
	other := resource.Key{Kind: resource.KindAgent, Ref: keyA.Ref}
	if _, err := repo.Get(ctx(t), other); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Get(%s) err = %v, want ErrNotFound", other, err)
	}
}

func testCreateExists(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"v": "first"}`)
	if _, err := repo.Create(ctx(t), keyA, json.RawMessage(`{"v": "second"}`)); !errors.Is(err, resource.ErrExists) {
		t.Fatalf("second Create err = %v, want ErrExists", err)
	}
	got, err := repo.Get(ctx(t), keyA)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 1 {
		t.Fatalf("revision after a refused Create = %d, want 1", got.Revision)
	}
	jsonEqual(t, got.Data, json.RawMessage(`{"v":"first"}`))
}

func testGetMissing(t *testing.T, repo resource.Repository) {
	if _, err := repo.Get(ctx(t), keyA); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Get on an empty repository err = %v, want ErrNotFound", err)
	}
	mustCreate(t, repo, keyA, `{}`)
	if _, err := repo.Get(ctx(t), keyB); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Get(%s) err = %v, want ErrNotFound", keyB, err)
	}
}

// References are name or category/name; the store refuses others.
func testInvalidKeys(t *testing.T, repo resource.Repository) {
	for _, key := range []resource.Key{
		{Kind: "", Ref: "a"},
		{Kind: "MCP", Ref: "a"},
		{Kind: resource.KindMCP, Ref: ""},
		{Kind: resource.KindMCP, Ref: "a/b/c"},
		{Kind: resource.KindMCP, Ref: "Upper"},
		{Kind: resource.KindMCP, Ref: "../x"},
		{Kind: resource.KindMCP, Ref: "a/"},
	} {
		if _, err := repo.Create(ctx(t), key, json.RawMessage(`{}`)); err == nil {
			t.Errorf("Create(%q, %q) succeeded, want an error", key.Kind, key.Ref)
		}
		if _, err := repo.Get(ctx(t), key); err == nil || errors.Is(err, resource.ErrNotFound) {
			t.Errorf("Get(%q, %q) err = %v, want an invalid-key error", key.Kind, key.Ref, err)
		}
	}
	if _, err := repo.List(ctx(t), "", ""); err == nil {
		t.Errorf("List of the empty kind succeeded, want an error")
	}
}

func testInvalidData(t *testing.T, repo resource.Repository) {
	if _, err := repo.Create(ctx(t), keyA, json.RawMessage(`{"x":`)); err == nil {
		t.Fatalf("Create with invalid JSON succeeded")
	}
	mustCreate(t, repo, keyA, `{}`)
	if _, err := repo.Update(ctx(t), keyA, json.RawMessage(`not json`), resource.AnyRevision); err == nil {
		t.Fatalf("Update with invalid JSON succeeded")
	}
	got, err := repo.Get(ctx(t), keyA)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 1 {
		t.Fatalf("revision after a refused Update = %d, want 1", got.Revision)
	}
}

// A write with an expected revision that differs is refused, and
// the error carries the stored revision.
func testUpdateCompareAndSet(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"n": 0}`)
	r2, err := repo.Update(ctx(t), keyA, json.RawMessage(`{"n": 1}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Revision != 2 {
		t.Fatalf("revision after update = %d, want 2", r2.Revision)
	}
	_, err = repo.Update(ctx(t), keyA, json.RawMessage(`{"n": "stale"}`), 1)
	wantConflict(t, err, 2)
	got, err := repo.Get(ctx(t), keyA)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 2 {
		t.Fatalf("revision after a conflict = %d, want 2", got.Revision)
	}
	jsonEqual(t, got.Data, json.RawMessage(`{"n":1}`))
	_, err = repo.Update(ctx(t), keyA, json.RawMessage(`{"n": "future"}`), 7)
	wantConflict(t, err, 2)
}

func testUpdateBlind(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"n": 0}`)
	for want := int64(2); want <= 4; want++ {
		res, err := repo.Update(ctx(t), keyA, json.RawMessage(`{"n": 0}`), resource.AnyRevision)
		if err != nil {
			t.Fatal(err)
		}
		if res.Revision != want {
			t.Fatalf("blind write revision = %d, want %d (every write gets a new revision)", res.Revision, want)
		}
	}
}

func testUpdateMissing(t *testing.T, repo resource.Repository) {
	for _, expected := range []int64{resource.AnyRevision, 1} {
		if _, err := repo.Update(ctx(t), keyA, json.RawMessage(`{}`), expected); !errors.Is(err, resource.ErrNotFound) {
			t.Fatalf("Update(expected=%d) of a missing key err = %v, want ErrNotFound", expected, err)
		}
	}
	called := false
	_, err := repo.Modify(ctx(t), keyA, resource.AnyRevision, func(resource.Resource) (json.RawMessage, error) {
		called = true
		return json.RawMessage(`{}`), nil
	})
	if !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Modify of a missing key err = %v, want ErrNotFound", err)
	}
	if called {
		t.Fatalf("Modify called fn for a missing key")
	}
	if _, err := repo.Get(ctx(t), keyA); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Update of a missing key created it (Get err = %v)", err)
	}
}

func testModifyNoChange(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"n": 0}`)
	res, err := repo.Modify(ctx(t), keyA, 1, func(cur resource.Resource) (json.RawMessage, error) {
		if cur.Revision != 1 {
			return nil, fmt.Errorf("fn saw revision %d, want 1", cur.Revision)
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 1 {
		t.Fatalf("Modify returning nil data wrote revision %d, want 1 kept", res.Revision)
	}
	jsonEqual(t, res.Data, json.RawMessage(`{"n":0}`))
}

func testModifyError(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"n": 0}`)
	boom := errors.New("boom")
	_, err := repo.Modify(ctx(t), keyA, resource.AnyRevision, func(resource.Resource) (json.RawMessage, error) {
		return json.RawMessage(`{"n": 1}`), boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Modify err = %v, want fn's error", err)
	}
	got, err := repo.Get(ctx(t), keyA)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 1 {
		t.Fatalf("revision after fn failed = %d, want 1", got.Revision)
	}
}

func testModifyConflict(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"n": 0}`)
	if _, err := repo.Update(ctx(t), keyA, json.RawMessage(`{"n": 1}`), 1); err != nil {
		t.Fatal(err)
	}
	_, err := repo.Modify(ctx(t), keyA, 1, func(resource.Resource) (json.RawMessage, error) {
		return json.RawMessage(`{"n": "stale"}`), nil
	})
	wantConflict(t, err, 2)
	res, err := repo.Modify(ctx(t), keyA, 2, func(cur resource.Resource) (json.RawMessage, error) {
		return json.RawMessage(`{"n": 2}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 3 {
		t.Fatalf("revision = %d, want 3", res.Revision)
	}
	jsonEqual(t, res.Data, json.RawMessage(`{"n":2}`))
}

func testDelete(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{}`)
	mustCreate(t, repo, keyB, `{}`)
	if err := repo.Delete(ctx(t), keyA, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Get(ctx(t), keyA); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Get after Delete err = %v, want ErrNotFound", err)
	}
	if _, err := repo.Get(ctx(t), keyB); err != nil {
		t.Fatalf("Delete removed another key: %v", err)
	}
	if err := repo.Delete(ctx(t), keyA, resource.AnyRevision); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("second Delete err = %v, want ErrNotFound", err)
	}
	if err := repo.Delete(ctx(t), keyB, resource.AnyRevision); err != nil {
		t.Fatalf("blind Delete: %v", err)
	}
}

func testDeleteConflict(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{}`)
	if _, err := repo.Update(ctx(t), keyA, json.RawMessage(`{"n": 1}`), resource.AnyRevision); err != nil {
		t.Fatal(err)
	}
	wantConflict(t, repo.Delete(ctx(t), keyA, 1), 2)
	if _, err := repo.Get(ctx(t), keyA); err != nil {
		t.Fatalf("a refused Delete removed the resource: %v", err)
	}
}

// Resource: revisions never repeat for a key, even after delete and create,
// so a stale form saved against the old resource cannot hit the new one.
func testRevisionNeverRepeats(t *testing.T, repo resource.Repository) {
	seen := map[int64]bool{}
	last := int64(0)
	record := func(rev int64) {
		t.Helper()
		if seen[rev] || rev <= last {
			t.Fatalf("revision %d after %d: revisions must strictly increase and never repeat", rev, last)
		}
		seen[rev], last = true, rev
	}
	for round := 0; round < 3; round++ {
		record(mustCreate(t, repo, keyA, `{}`).Revision)
		res, err := repo.Update(ctx(t), keyA, json.RawMessage(`{"round": 1}`), resource.AnyRevision)
		if err != nil {
			t.Fatal(err)
		}
		record(res.Revision)
		if err := repo.Delete(ctx(t), keyA, res.Revision); err != nil {
			t.Fatal(err)
		}
	}
	// A stale expected revision from before the delete must not match the new
	// resource.
	res := mustCreate(t, repo, keyA, `{}`)
	record(res.Revision)
	_, err := repo.Update(ctx(t), keyA, json.RawMessage(`{}`), 1)
	wantConflict(t, err, res.Revision)
}

func testList(t *testing.T, repo resource.Repository) {
	refs := []resource.Ref{"zeta", "tools/beta", "alpha", "tools/alpha", "toolsx/a", "other/gamma"}
	for _, r := range refs {
		mustCreate(t, repo, resource.Key{Kind: resource.KindMCP, Ref: r}, `{"ref":"`+string(r)+`"}`)
	}
	mustCreate(t, repo, resource.Key{Kind: resource.KindAgent, Ref: "tools/agent"}, `{}`)
	mustCreate(t, repo, resource.Key{Kind: "custom-kind", Ref: "tools/c"}, `{}`)

	refsOf := func(rs []resource.Resource) []resource.Ref {
		out := make([]resource.Ref, 0, len(rs))
		for _, r := range rs {
			if r.Kind != resource.KindMCP {
				t.Fatalf("List(mcp) returned kind %q", r.Kind)
			}
			jsonEqual(t, r.Data, json.RawMessage(`{"ref":"`+string(r.Ref)+`"}`))
			out = append(out, r.Ref)
		}
		return out
	}
	all, err := repo.List(ctx(t), resource.KindMCP, "")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(refs)
	slices.Sort(want)
	if diff := cmp.Diff(want, refsOf(all)); diff != "" {
		t.Fatalf("List(mcp) refs (-want +got):\n%s", diff)
	}
	tools, err := repo.List(ctx(t), resource.KindMCP, "tools")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]resource.Ref{"tools/alpha", "tools/beta"}, refsOf(tools)); diff != "" {
		t.Fatalf("List(mcp, tools) refs (-want +got):\n%s", diff)
	}
	for _, r := range all {
		if r.Revision != 1 {
			t.Fatalf("List gave %s revision %d, want 1", r.Ref, r.Revision)
		}
	}
}

func testListEmpty(t *testing.T, repo resource.Repository) {
	for _, cat := range []string{"", "nothing"} {
		got, err := repo.List(ctx(t), resource.KindAgent, cat)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Fatalf("List on an empty repository = %v, want none", got)
		}
	}
}

func near(a, b time.Time) bool {
	d := a.Sub(b)
	return d < time.Millisecond && d > -time.Millisecond
}

func testTimestamps(t *testing.T, repo resource.Repository) {
	before := time.Now()
	created := mustCreate(t, repo, keyA, `{}`)
	if created.CreatedAt.IsZero() || !near(created.CreatedAt, created.UpdatedAt) {
		t.Fatalf("new resource CreatedAt=%v UpdatedAt=%v, want both set and equal", created.CreatedAt, created.UpdatedAt)
	}
	// Allow for clock skew between this process and a database server.
	if d := created.CreatedAt.Sub(before); d < -time.Minute || d > time.Minute {
		t.Fatalf("CreatedAt %v is far from now %v", created.CreatedAt, before)
	}
	updated, err := repo.Update(ctx(t), keyA, json.RawMessage(`{"n": 1}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !near(updated.CreatedAt, created.CreatedAt) {
		t.Fatalf("Update changed CreatedAt from %v to %v", created.CreatedAt, updated.CreatedAt)
	}
	if updated.UpdatedAt.Before(updated.CreatedAt.Add(-time.Millisecond)) {
		t.Fatalf("UpdatedAt %v is before CreatedAt %v", updated.UpdatedAt, updated.CreatedAt)
	}
	got, err := repo.Get(ctx(t), keyA)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got.CreatedAt, created.CreatedAt) || !near(got.UpdatedAt, updated.UpdatedAt) {
		t.Fatalf("Get times %v/%v, want %v/%v", got.CreatedAt, got.UpdatedAt, created.CreatedAt, updated.UpdatedAt)
	}
}

// Repository: implementations copy the bytes they take and hand out.
func testBytesAreCopies(t *testing.T, repo resource.Repository) {
	in := []byte(`{"a":"xxxx"}`)
	res, err := repo.Create(ctx(t), keyA, in)
	if err != nil {
		t.Fatal(err)
	}
	copy(in, `{"a":"yyyy"}`)
	scribble(res.Data)
	got := mustGet(t, repo, keyA)
	jsonEqual(t, got.Data, json.RawMessage(`{"a":"xxxx"}`))
	scribble(got.Data)
	list, err := repo.List(ctx(t), keyA.Kind, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("List = %d resources, want 1", len(list))
	}
	jsonEqual(t, list[0].Data, json.RawMessage(`{"a":"xxxx"}`))
	scribble(list[0].Data)
	jsonEqual(t, mustGet(t, repo, keyA).Data, json.RawMessage(`{"a":"xxxx"}`))
}

func testCanceledContext(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{}`)
	c, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context err = %v, want context.Canceled", op, err)
		}
	}
	_, err := repo.Get(c, keyA)
	check("Get", err)
	_, err = repo.Create(c, keyB, json.RawMessage(`{}`))
	check("Create", err)
	_, err = repo.Update(c, keyA, json.RawMessage(`{"n": 1}`), resource.AnyRevision)
	check("Update", err)
	_, err = repo.Modify(c, keyA, resource.AnyRevision, func(resource.Resource) (json.RawMessage, error) {
		return json.RawMessage(`{"n": 1}`), nil
	})
	check("Modify", err)
	check("Delete", repo.Delete(c, keyA, resource.AnyRevision))
	_, err = repo.List(c, keyA.Kind, "")
	check("List", err)
	got, err := repo.Get(ctx(t), keyA)
	if err != nil {
		t.Fatalf("a canceled call changed the store: %v", err)
	}
	if got.Revision != 1 {
		t.Fatalf("a canceled call wrote revision %d", got.Revision)
	}
	if _, err := repo.Get(ctx(t), keyB); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("a canceled Create stored %s (err = %v)", keyB, err)
	}
}

type counter struct {
	N int `json:"n"`
}

// Concurrent compare-and-set writers never lose an update.
func testConcurrentCompareAndSet(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"n": 0}`)
	errs := make([]error, Goroutines)
	race(Goroutines, func(g int) {
		for landed := 0; landed < IncrementsPerGoroutine; {
			cur, err := repo.Get(ctx(t), keyA)
			if err != nil {
				errs[g] = err
				return
			}
			var c counter
			if err := json.Unmarshal(cur.Data, &c); err != nil {
				errs[g] = err
				return
			}
			next, _ := json.Marshal(counter{N: c.N + 1})
			_, err = repo.Update(ctx(t), keyA, next, cur.Revision)
			switch {
			case err == nil:
				landed++
			case errors.Is(err, resource.ErrConflict):
				// Lost the race: read again and retry.
			default:
				errs[g] = err
				return
			}
		}
	})
	noErrors(t, errs)
	got := mustGet(t, repo, keyA)
	var c counter
	if err := json.Unmarshal(got.Data, &c); err != nil {
		t.Fatal(err)
	}
	total := Goroutines * IncrementsPerGoroutine
	if c.N != total || got.Revision != int64(1+total) {
		t.Fatalf("after %d increments: n=%d revision=%d, want n=%d revision=%d", total, c.N, got.Revision, total, 1+total)
	}
}

type itemList struct {
	Items []string `json:"items"`
}

// Add/remove of single items through Modify never lose a
// concurrent update.
func testConcurrentModifyAddRemove(t *testing.T, repo resource.Repository) {
	// Items "pre-*" are present at the start and removed by half of the
	// goroutines; the other half add "new-*".
	var initial itemList
	for g := 0; g < Goroutines; g++ {
		initial.Items = append(initial.Items, "pre-"+strconv.Itoa(g))
	}
	data, _ := json.Marshal(initial)
	mustCreate(t, repo, keyA, string(data))

	errs := make([]error, Goroutines)
	race(Goroutines, func(g int) {
		_, errs[g] = repo.Modify(ctx(t), keyA, resource.AnyRevision, func(cur resource.Resource) (json.RawMessage, error) {
			var l itemList
			if err := json.Unmarshal(cur.Data, &l); err != nil {
				return nil, err
			}
			if g%2 == 0 {
				l.Items = slices.DeleteFunc(l.Items, func(s string) bool { return s == "pre-"+strconv.Itoa(g) })
			} else {
				l.Items = append(l.Items, "new-"+strconv.Itoa(g))
			}
			return json.Marshal(l)
		})
	})
	noErrors(t, errs)
	got := mustGet(t, repo, keyA)
	var l itemList
	if err := json.Unmarshal(got.Data, &l); err != nil {
		t.Fatal(err)
	}
	var want []string
	for g := 0; g < Goroutines; g++ {
		if g%2 == 1 { // even g removed its pre-item; odd g added its new-item
			want = append(want, "pre-"+strconv.Itoa(g), "new-"+strconv.Itoa(g))
		}
	}
	slices.Sort(want)
	slices.Sort(l.Items)
	if diff := cmp.Diff(want, l.Items); diff != "" {
		t.Fatalf("items after concurrent add/remove (-want +got):\n%s", diff)
	}
	if got.Revision != int64(1+Goroutines) {
		t.Fatalf("revision = %d, want %d (one per Modify)", got.Revision, 1+Goroutines)
	}
}

// Of writers racing with the same expected revision exactly one
// wins; the others get a conflict carrying the winner's revision.
func testConcurrentSameExpected(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"winner": -1}`)
	type outcome struct {
		res resource.Resource
		err error
	}
	outcomes := make([]outcome, Goroutines)
	race(Goroutines, func(g int) {
		res, err := repo.Update(ctx(t), keyA, json.RawMessage(`{"winner": `+strconv.Itoa(g)+`}`), 1)
		outcomes[g] = outcome{res, err}
	})
	winners := 0
	winner := -1
	for g, o := range outcomes {
		if o.err == nil {
			winners++
			winner = g
			if o.res.Revision != 2 {
				t.Errorf("winner got revision %d, want 2", o.res.Revision)
			}
			continue
		}
		wantConflict(t, o.err, 2)
	}
	if winners != 1 {
		t.Fatalf("%d writers won, want exactly 1", winners)
	}
	jsonEqual(t, mustGet(t, repo, keyA).Data, json.RawMessage(`{"winner":`+strconv.Itoa(winner)+`}`))
}

// Repository: the bytes given to Update and returned by Modify's fn belong
// to the caller, who may reuse them once the call returned; the Resource
// given to fn is a copy fn may scribble on.
func testWrittenBytesAreCopies(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"a":"xxxx"}`)
	in := []byte(`{"a":"uuuu"}`)
	res, err := repo.Update(ctx(t), keyA, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	copy(in, `{"a":"yyyy"}`)
	scribble(res.Data)
	jsonEqual(t, mustGet(t, repo, keyA).Data, json.RawMessage(`{"a":"uuuu"}`))

	var out []byte
	res, err = repo.Modify(ctx(t), keyA, 2, func(cur resource.Resource) (json.RawMessage, error) {
		scribble(cur.Data)
		out = []byte(`{"a":"mmmm"}`)
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	copy(out, `{"a":"zzzz"}`)
	scribble(res.Data)
	got := mustGet(t, repo, keyA)
	if got.Revision != 3 {
		t.Fatalf("revision = %d, want 3", got.Revision)
	}
	jsonEqual(t, got.Data, json.RawMessage(`{"a":"mmmm"}`))
}

// Modify stores only JSON: data from fn that is not JSON is an error and
// nothing is written.
func testModifyInvalidData(t *testing.T, repo resource.Repository) {
	mustCreate(t, repo, keyA, `{"n": 0}`)
	_, err := repo.Modify(ctx(t), keyA, resource.AnyRevision, func(resource.Resource) (json.RawMessage, error) {
		return json.RawMessage(`{"n": `), nil
	})
	if err == nil {
		t.Fatal("Modify stored data that is not JSON")
	}
	got := mustGet(t, repo, keyA)
	if got.Revision != 1 {
		t.Fatalf("revision after a refused Modify = %d, want 1", got.Revision)
	}
	jsonEqual(t, got.Data, json.RawMessage(`{"n":0}`))
}

// Deleting a missing key is ErrNotFound, with or without an expected
// revision (never a conflict: there is no stored revision to report).
func testDeleteMissing(t *testing.T, repo resource.Repository) {
	for _, expected := range []int64{resource.AnyRevision, 1} {
		if err := repo.Delete(ctx(t), keyA, expected); !errors.Is(err, resource.ErrNotFound) {
			t.Fatalf("Delete(expected=%d) of a missing key err = %v, want ErrNotFound", expected, err)
		}
	}
	mustCreate(t, repo, keyA, `{}`)
	if err := repo.Delete(ctx(t), keyA, 1); err != nil {
		t.Fatal(err)
	}
	if err := repo.Delete(ctx(t), keyA, 1); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Delete of a deleted key err = %v, want ErrNotFound", err)
	}
}

// Of writers creating one key at once exactly one succeeds; the others get
// ErrExists and the stored data is the winner's.
func testConcurrentCreate(t *testing.T, repo resource.Repository) {
	errs := make([]error, Goroutines)
	race(Goroutines, func(g int) {
		_, errs[g] = repo.Create(ctx(t), keyA, json.RawMessage(`{"creator": `+strconv.Itoa(g)+`}`))
	})
	winner, wins := -1, 0
	for g, err := range errs {
		switch {
		case err == nil:
			winner, wins = g, wins+1
		case !errors.Is(err, resource.ErrExists):
			t.Fatalf("Create err = %v, want nil or ErrExists", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d concurrent Creates succeeded, want exactly 1", wins)
	}
	got := mustGet(t, repo, keyA)
	if got.Revision != 1 {
		t.Fatalf("revision = %d, want 1", got.Revision)
	}
	jsonEqual(t, got.Data, json.RawMessage(`{"creator":`+strconv.Itoa(winner)+`}`))
}

// Revisions never repeat for a key even when deletes and creates race:
// every revision a successful Create or Update reports is new.
func testConcurrentDeleteCreate(t *testing.T, repo resource.Repository) {
	const rounds = 8
	var (
		mu   sync.Mutex
		seen = map[int64]int{}
	)
	note := func(rev int64) {
		mu.Lock()
		seen[rev]++
		mu.Unlock()
	}
	errs := make([]error, Goroutines)
	race(Goroutines, func(g int) {
		for i := 0; i < rounds; i++ {
			var err error
			var res resource.Resource
			switch (g + i) % 3 {
			case 0:
				res, err = repo.Create(ctx(t), keyA, json.RawMessage(`{}`))
			case 1:
				res, err = repo.Update(ctx(t), keyA, json.RawMessage(`{"g": `+strconv.Itoa(g)+`}`), resource.AnyRevision)
			default:
				err = repo.Delete(ctx(t), keyA, resource.AnyRevision)
			}
			switch {
			case err == nil && res.Revision != 0:
				note(res.Revision)
			case err == nil, errors.Is(err, resource.ErrExists), errors.Is(err, resource.ErrNotFound):
			default:
				errs[g] = err
				return
			}
		}
	})
	noErrors(t, errs)
	if len(seen) == 0 {
		t.Fatal("no Create or Update succeeded")
	}
	for rev, n := range seen {
		if n > 1 {
			t.Fatalf("revision %d was handed out %d times", rev, n)
		}
	}
}

var (
	guardKey   = resource.Key{Kind: resource.KindAgent, Ref: "boss"}
	errRefused = errors.New("resourcetest: refused by the guard")
)

// guardedView returns repo's Guarded view with a check that passes while
// the guard's data holds "ok": true, and records the revisions it saw; it
// skips the test when repo is not a resource.GuardedRepository.
func guardedView(t *testing.T, repo resource.Repository, key resource.Key) (resource.Repository, func() []int64) {
	t.Helper()
	gr, ok := repo.(resource.GuardedRepository)
	if !ok {
		t.Skip("the Repository is not a resource.GuardedRepository")
	}
	var mu sync.Mutex
	var seen []int64
	v := gr.Guarded(key, func(res resource.Resource, err error) error {
		if err != nil {
			return err
		}
		var doc struct {
			OK bool `json:"ok"`
		}
		if json.Unmarshal(res.Data, &doc) != nil || !doc.OK {
			return errRefused
		}
		mu.Lock()
		seen = append(seen, res.Revision)
		mu.Unlock()
		return nil
	})
	return v, func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// A GuardedRepository's view judges the guard, as stored, in every write:
// a refusal, or a missing guard, writes nothing; reads are not judged.
func testGuarded(t *testing.T, repo resource.Repository) {
	v, seen := guardedView(t, repo, guardKey)
	g := mustCreate(t, repo, guardKey, `{"ok":true}`)
	mustCreate(t, repo, keyA, `{"n":1}`)
	bump := func(cur resource.Resource) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"n":%d}`, cur.Revision+1)), nil
	}
	ops := []struct {
		name string
		do   func(v resource.Repository) error
	}{
		{"Create", func(v resource.Repository) error {
			_, err := v.Create(ctx(t), keyB, json.RawMessage(`{"b":1}`))
			return err
		}},
		{"Update", func(v resource.Repository) error {
			_, err := v.Update(ctx(t), keyA, json.RawMessage(`{"n":0}`), resource.AnyRevision)
			return err
		}},
		{"Modify", func(v resource.Repository) error {
			_, err := v.Modify(ctx(t), keyA, resource.AnyRevision, bump)
			return err
		}},
		{"Delete", func(v resource.Repository) error { return v.Delete(ctx(t), keyB, resource.AnyRevision) }},
		{"Modify the guard itself", func(v resource.Repository) error {
			_, err := v.Modify(ctx(t), guardKey, resource.AnyRevision, func(resource.Resource) (json.RawMessage, error) {
				return json.RawMessage(`{"ok":true}`), nil
			})
			return err
		}},
	}
	for _, op := range ops {
		if err := op.do(v); err != nil {
			t.Fatalf("%s with the guard passing: %v", op.name, err)
		}
	}
	g = mustGet(t, repo, guardKey)
	if got, want := seen(), []int64{g.Revision - 1, g.Revision - 1, g.Revision - 1, g.Revision - 1, g.Revision - 1}; !slices.Equal(got, want) {
		t.Fatalf("the check saw guard revisions %v, want %v (one per write, as stored)", got, want)
	}

	if _, err := repo.Update(ctx(t), guardKey, json.RawMessage(`{"ok":false}`), resource.AnyRevision); err != nil {
		t.Fatal(err)
	}
	before, _ := repo.List(ctx(t), resource.KindMCP, "")
	guardBefore := mustGet(t, repo, guardKey)
	refused := append(ops, struct {
		name string
		do   func(v resource.Repository) error
	}{"Delete the guard itself", func(v resource.Repository) error { return v.Delete(ctx(t), guardKey, resource.AnyRevision) }},
		struct {
			name string
			do   func(v resource.Repository) error
		}{"Delete", func(v resource.Repository) error { return v.Delete(ctx(t), keyA, resource.AnyRevision) }})
	for _, op := range refused {
		if err := op.do(v); !errors.Is(err, errRefused) {
			t.Errorf("%s with the guard refusing: err = %v, want the check's error", op.name, err)
		}
	}
	missing, _ := guardedView(t, repo, resource.Key{Kind: resource.KindAgent, Ref: "ghost"})
	for _, op := range ops[:4] {
		if err := op.do(missing); !errors.Is(err, resource.ErrNotFound) {
			t.Errorf("%s with a missing guard: err = %v, want the check's ErrNotFound", op.name, err)
		}
	}
	after, _ := repo.List(ctx(t), resource.KindMCP, "")
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("refused guarded writes changed the store (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(guardBefore, mustGet(t, repo, guardKey)); diff != "" {
		t.Errorf("refused guarded writes changed the guard (-before +after):\n%s", diff)
	}
	if got, err := v.Get(ctx(t), keyA); err != nil || got.Revision != mustGet(t, repo, keyA).Revision {
		t.Errorf("Get through a refusing view = %+v, %v; want the stored resource", got, err)
	}
	if got, err := v.List(ctx(t), resource.KindMCP, ""); err != nil || len(got) != len(after) {
		t.Errorf("List through a refusing view = %d resources, %v; want %d", len(got), err, len(after))
	}
}

// The guard a guarded write judged stays as judged until the write
// commits: once a write to the guard that makes the check refuse has
// returned, no write judged before it commits any more.
func testGuardedHoldsUntilCommit(t *testing.T, repo resource.Repository) {
	v, _ := guardedView(t, repo, guardKey)
	mustCreate(t, repo, guardKey, `{"ok":true}`)
	start := mustCreate(t, repo, keyA, `{"n":0}`)
	var landed atomic.Int64
	var atFlip int64
	errs := make([]error, Goroutines+1)
	race(Goroutines+1, func(g int) {
		if g == 0 {
			if _, errs[0] = repo.Update(ctx(t), guardKey, json.RawMessage(`{"ok":false}`), resource.AnyRevision); errs[0] == nil {
				res, err := repo.Get(ctx(t), keyA)
				atFlip, errs[0] = res.Revision, err
			}
			return
		}
		_, err := v.Modify(ctx(t), keyA, resource.AnyRevision, func(cur resource.Resource) (json.RawMessage, error) {
			return json.RawMessage(fmt.Sprintf(`{"n":%d}`, cur.Revision)), nil
		})
		switch {
		case err == nil:
			landed.Add(1)
		case !errors.Is(err, errRefused):
			errs[g] = err
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	final := mustGet(t, repo, keyA).Revision
	if final != atFlip || final-start.Revision != landed.Load() {
		t.Fatalf("keyA is at revision %d, was %d right after the guard changed, %d guarded writes landed from %d: a write judged before the change committed after it",
			final, atFlip, landed.Load(), start.Revision)
	}
}
