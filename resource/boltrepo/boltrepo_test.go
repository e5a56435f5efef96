package boltrepo_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/resource/resourcetest"
)

func TestMain(m *testing.M) {
	// The two-process test re-executes this binary as its writers.
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(runChildWriter(path, os.Getenv(childIDEnv)))
	}
	if path := os.Getenv(tokenChildEnv); path != "" {
		os.Exit(runTokenChild(path))
	}
	// The corruption sweep re-executes it to survive what cannot be
	// recovered in-process.
	if dir := os.Getenv(sweepDirEnv); dir != "" {
		start, _ := strconv.Atoi(os.Getenv(sweepStartEnv))
		os.Exit(runSweepChild(dir, start))
	}
	goleak.VerifyTestMain(m)
}

func openRepo(t *testing.T, path string, opts *boltrepo.Options) *boltrepo.Repo {
	t.Helper()
	repo, err := boltrepo.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := repo.Close(); err != nil {
			t.Error(err)
		}
	})
	return repo
}

// SPEC R2.8: the default repository passes the conformance suite.
func TestConformance(t *testing.T) {
	t.Parallel()
	resourcetest.Run(t, func(t *testing.T) resource.Repository {
		return openRepo(t, filepath.Join(t.TempDir(), "agt.db"), nil)
	})
}

func TestConformanceShared(t *testing.T) {
	t.Parallel()
	resourcetest.Run(t, func(t *testing.T) resource.Repository {
		return openRepo(t, filepath.Join(t.TempDir(), "agt.db"), &boltrepo.Options{Shared: true})
	})
}

// Every committed write is in the file after Close and Open.
func TestReopenSeesCommittedWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agt.db")
	repo, err := boltrepo.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := resource.Key{Kind: resource.KindMCP, Ref: "a"}
	b := resource.Key{Kind: resource.KindAgent, Ref: "team/b"}
	gone := resource.Key{Kind: resource.KindMCP, Ref: "gone"}
	if _, err := repo.Create(ctx, a, json.RawMessage(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Update(ctx, a, json.RawMessage(`{"v":2}`), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Create(ctx, b, json.RawMessage(`{"mcps":["a"]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Create(ctx, gone, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := repo.Delete(ctx, gone, 1); err != nil {
		t.Fatal(err)
	}
	if err := repo.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Get(ctx, a); !errors.Is(err, boltrepo.ErrClosed) {
		t.Fatalf("Get after Close err = %v, want ErrClosed", err)
	}

	repo = openRepo(t, path, nil)
	got, err := repo.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 2 || string(got.Data) != `{"v":2}` {
		t.Fatalf("after reopen %s = revision %d %s, want revision 2 {\"v\":2}", a, got.Revision, got.Data)
	}
	if got, err := repo.Get(ctx, b); err != nil || got.Revision != 1 {
		t.Fatalf("after reopen %s = %+v, %v", b, got, err)
	}
	if _, err := repo.Get(ctx, gone); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("deleted key after reopen err = %v, want ErrNotFound", err)
	}
	// The high-water mark survives too: the recreated key continues at 2.
	res, err := repo.Create(ctx, gone, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 2 {
		t.Fatalf("recreated key after reopen revision = %d, want 2", res.Revision)
	}
}

// A second exclusive opener waits LockTimeout and fails with a clear error
// instead of waiting forever (bbolt's default).
func TestLockTimeout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	openRepo(t, path, nil)
	second, err := boltrepo.Open(path, &boltrepo.Options{LockTimeout: 50 * time.Millisecond})
	if err == nil {
		second.Close()
		t.Fatal("second Open of a locked file succeeded")
	}
	if !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("err = %v, want it to say the file is locked", err)
	}
}

// Shared mode holds no lock between operations: an exclusive Open of the
// same file succeeds while a shared Repo is open.
func TestSharedHoldsNoLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agt.db")
	shared := openRepo(t, path, &boltrepo.Options{Shared: true})
	key := resource.Key{Kind: resource.KindMCP, Ref: "a"}
	if _, err := shared.Create(ctx, key, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	excl, err := boltrepo.Open(path, &boltrepo.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatalf("exclusive Open beside a shared Repo: %v", err)
	}
	if _, err := excl.Update(ctx, key, json.RawMessage(`{"by":"exclusive"}`), 1); err != nil {
		t.Fatal(err)
	}
	if err := excl.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := shared.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 2 {
		t.Fatalf("shared Repo sees revision %d, want 2", got.Revision)
	}
}

func TestCorruptRecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		kb, err := tx.CreateBucketIfNotExists([]byte("resources"))
		if err != nil {
			return err
		}
		mb, err := kb.CreateBucketIfNotExists([]byte("mcp"))
		if err != nil {
			return err
		}
		return mb.Put([]byte("bad"), []byte{9, 9})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	repo := openRepo(t, path, nil)
	_, err = repo.Get(context.Background(), resource.Key{Kind: resource.KindMCP, Ref: "bad"})
	if err == nil || errors.Is(err, resource.ErrNotFound) || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("Get of a corrupt record err = %v, want a corruption error", err)
	}
}

// A file of another format version is refused with what to do, without
// repeating what the file holds.
func TestOtherFormatVersion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		mb, err := tx.CreateBucketIfNotExists([]byte("meta"))
		if err != nil {
			return err
		}
		return mb.Put([]byte("format"), []byte(strings.Repeat("9", 4096)))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	repo, err := boltrepo.Open(path, nil)
	if err == nil {
		repo.Close()
		t.Fatal("Open of a file of another format succeeded")
	}
	if strings.Contains(err.Error(), "9999") || !strings.Contains(err.Error(), "version of agt") {
		t.Fatalf("err = %.200q: want a short error that says which agt can read the file", err)
	}
}

// Issue 27: a shared Repo waiting for a lock another process holds stops
// when the caller's context ends, not at LockTimeout.
func TestSharedLockWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	shared := openRepo(t, path, &boltrepo.Options{Shared: true, LockTimeout: 10 * time.Minute})
	openRepo(t, path, nil) // exclusive: holds the lock from now on
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := shared.Get(ctx, resource.Key{Kind: resource.KindMCP, Ref: "a"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("Get while locked = %v, want the context's end", err)
	}
	if waited := time.Since(start); waited > 5*time.Minute {
		t.Errorf("waited %v: the wait did not stop with the context", waited)
	}
}
