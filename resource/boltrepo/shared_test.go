package boltrepo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

const (
	childEnv     = "AGT_BOLTREPO_TEST_CHILD_DB"
	childIDEnv   = "AGT_BOLTREPO_TEST_CHILD_ID"
	childWrites  = 100
	sharedKeyRef = "shared/counter"
)

var sharedKey = resource.Key{Kind: resource.KindAgent, Ref: sharedKeyRef}

type sharedDoc struct {
	Items []string `json:"items"`
	N     int      `json:"n"`
}

// runChildWriter is the body of one writer process: childWrites writes to
// the shared file, alternating an atomic Modify (append an item) and a
// read-then-compare-and-set (append an item, retried on conflict). It
// prints each revision it wrote, one per line.
func runChildWriter(path, id string) int {
	repo, err := boltrepo.Open(path, &boltrepo.Options{Shared: true, LockTimeout: 30 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer repo.Close()
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	add := func(data []byte, item string) (json.RawMessage, error) {
		var d sharedDoc
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, err
		}
		d.Items = append(d.Items, item)
		d.N++
		return json.Marshal(d)
	}
	for i := 0; i < childWrites; i++ {
		item := id + "-" + strconv.Itoa(i)
		var res resource.Resource
		if i%2 == 0 {
			res, err = repo.Modify(ctx, sharedKey, resource.AnyRevision, func(cur resource.Resource) (json.RawMessage, error) {
				return add(cur.Data, item)
			})
		} else {
			for {
				var cur resource.Resource
				if cur, err = repo.Get(ctx, sharedKey); err != nil {
					break
				}
				var next json.RawMessage
				if next, err = add(cur.Data, item); err != nil {
					break
				}
				res, err = repo.Update(ctx, sharedKey, next, cur.Revision)
				if !errors.Is(err, resource.ErrConflict) {
					break
				}
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, res.Revision)
	}
	return 0
}

// Issue 8: two OS processes write one shared file 100 times each: 200
// distinct revisions, no error, no lost update.
func TestSharedTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	repo := openRepo(t, path, &boltrepo.Options{Shared: true})
	if _, err := repo.Create(context.Background(), sharedKey, json.RawMessage(`{"items":[],"n":0}`)); err != nil {
		t.Fatal(err)
	}

	type child struct {
		cmd    *exec.Cmd
		stdout bytes.Buffer
		stderr bytes.Buffer
	}
	children := make([]*child, 2)
	for i := range children {
		c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		c.cmd.Env = append(os.Environ(), childEnv+"="+path, childIDEnv+"=p"+strconv.Itoa(i))
		c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if c.cmd.ProcessState == nil { // the test failed before Wait
				_ = c.cmd.Process.Kill()
				_ = c.cmd.Wait()
			}
		})
		children[i] = c
	}
	var revisions []int64
	for i, c := range children {
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, c.stderr.String())
		}
		sc := bufio.NewScanner(&c.stdout)
		n := 0
		for sc.Scan() {
			rev, err := strconv.ParseInt(sc.Text(), 10, 64)
			if err != nil {
				t.Fatalf("writer %d printed %q", i, sc.Text())
			}
			revisions = append(revisions, rev)
			n++
		}
		if n != childWrites {
			t.Fatalf("writer %d reported %d writes, want %d\n%s", i, n, childWrites, c.stderr.String())
		}
	}

	slices.Sort(revisions)
	if got := len(slices.Compact(slices.Clone(revisions))); got != 2*childWrites {
		t.Fatalf("%d distinct revisions, want %d", got, 2*childWrites)
	}
	if revisions[0] != 2 || revisions[len(revisions)-1] != 1+2*childWrites {
		t.Fatalf("revisions run from %d to %d, want 2 to %d", revisions[0], revisions[len(revisions)-1], 1+2*childWrites)
	}
	got, err := repo.Get(context.Background(), sharedKey)
	if err != nil {
		t.Fatal(err)
	}
	var doc sharedDoc
	if err := json.Unmarshal(got.Data, &doc); err != nil {
		t.Fatal(err)
	}
	slices.Sort(doc.Items)
	if len(slices.Compact(doc.Items)) != 2*childWrites || doc.N != 2*childWrites || got.Revision != 1+2*childWrites {
		t.Fatalf("final document has %d distinct items, n=%d, revision %d; want %d, %d, %d",
			len(doc.Items), doc.N, got.Revision, 2*childWrites, 2*childWrites, 1+2*childWrites)
	}
}

// A panic inside Modify's fn must not leave the file open and locked: in
// shared mode every later operation (of this process and of others) would
// wait for a lock nobody releases.
func TestSharedPanicReleasesLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agt.db")
	repo := openRepo(t, path, &boltrepo.Options{Shared: true, LockTimeout: 200 * time.Millisecond})
	key := resource.Key{Kind: resource.KindMCP, Ref: "a"}
	if _, err := repo.Create(ctx, key, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("fn's panic did not reach the caller")
			}
		}()
		_, _ = repo.Modify(ctx, key, resource.AnyRevision, func(resource.Resource) (json.RawMessage, error) {
			panic("host bug")
		})
	}()
	res, err := repo.Update(ctx, key, json.RawMessage(`{"after":"panic"}`), 1)
	if err != nil {
		t.Fatalf("write after a panicking Modify: %v", err)
	}
	if res.Revision != 2 {
		t.Fatalf("revision = %d, want 2 (the panicking Modify wrote nothing)", res.Revision)
	}
}

// In shared mode the file may be removed between operations (an operator
// resetting the store): the next write starts a fresh, valid store instead
// of panicking on missing buckets, and reads say what is wrong.
func TestSharedFileRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agt.db")
	repo := openRepo(t, path, &boltrepo.Options{Shared: true})
	key := resource.Key{Kind: resource.KindMCP, Ref: "a"}
	if _, err := repo.Create(ctx, key, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Get(ctx, key); err == nil {
		t.Fatal("Get from a removed file succeeded")
	}
	res, err := repo.Create(ctx, key, json.RawMessage(`{"v":2}`))
	if err != nil {
		t.Fatalf("Create after the file was removed: %v", err)
	}
	if got, err := repo.Get(ctx, key); err != nil || got.Revision != res.Revision {
		t.Fatalf("Get = %+v, %v; want revision %d", got, err, res.Revision)
	}
	// The fresh file is a complete store: an exclusive Open accepts it.
	if err := repo.Close(); err != nil {
		t.Fatal(err)
	}
	excl := openRepo(t, path, nil)
	if _, err := excl.List(ctx, resource.KindMCP, ""); err != nil {
		t.Fatal(err)
	}
}

// A bbolt file without this package's buckets (another program's file) is
// refused with an error, never a panic.
func TestForeignBoltFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "other.db")
	repo := openRepo(t, path, &boltrepo.Options{Shared: true})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	key := resource.Key{Kind: resource.KindMCP, Ref: "a"}
	if _, err := repo.Get(context.Background(), key); err == nil || errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Get from a foreign file err = %v, want an error naming the problem", err)
	}
	if _, err := repo.List(context.Background(), resource.KindMCP, ""); err == nil {
		t.Fatal("List from a foreign file succeeded")
	}
}
