package boltrepo_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/resource/internal/taskrules"
	"github.com/agtsdk/agt/resource/taskstoretest"
)

// Issue 26 item 3: the Repo keeps task handles in its own file.
func TestTaskStoreConformance(t *testing.T) {
	t.Parallel()
	taskstoretest.Run(t, func(t *testing.T) resource.TaskStore {
		return openRepo(t, filepath.Join(t.TempDir(), "agt.db"), &boltrepo.Options{NoSync: true})
	})
}

// The shared mode opens the file for each call: the same suite passes.
func TestTaskStoreConformanceShared(t *testing.T) {
	t.Parallel()
	taskstoretest.Run(t, func(t *testing.T) resource.TaskStore {
		return openRepo(t, filepath.Join(t.TempDir(), "agt.db"), &boltrepo.Options{NoSync: true, Shared: true})
	})
}

func taskHandle(run, call string) resource.TaskHandle {
	now := time.Now()
	return resource.TaskHandle{Run: run, Call: call, Server: "tools/research", Revision: 2, Tool: "research",
		TaskID: "task-" + call, Protocol: "2026-07-28", Created: now, Expires: now.Add(time.Hour)}
}

func expiredHandle(run, call string) resource.TaskHandle {
	h := taskHandle(run, call)
	h.Created, h.Expires = h.Created.Add(-2*time.Hour), h.Created.Add(-time.Hour)
	return h
}

func truncated(h resource.TaskHandle) resource.TaskHandle {
	h.Created = time.UnixMilli(h.Created.UnixMilli()).UTC()
	h.Expires = time.UnixMilli(h.Expires.UnixMilli()).UTC()
	return h
}

// rawBuckets lists, with bbolt directly, the runs the tasks bucket holds
// and the number of expiry index entries, after the Repo closed the file.
func rawBuckets(t *testing.T, path string) (runs []string, index int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("tasks")).ForEach(func(k, _ []byte) error {
			runs = append(runs, string(k))
			return nil
		}); err != nil {
			return err
		}
		index = tx.Bucket([]byte("taskexpiry")).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return runs, index
}

// Issue 26 item 3: a host that stops and opens its file again finds the
// handles it saved, exactly.
func TestTasksSurviveReopen(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "agt.db")
			opts := &boltrepo.Options{Shared: shared}
			repo, err := boltrepo.Open(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			a, b := taskHandle("run-1", "call-a"), taskHandle("run-1", "call-b")
			for _, h := range []resource.TaskHandle{a, b, taskHandle("run-2", "call-a")} {
				if err := repo.SaveTask(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			if err := repo.DeleteTask(ctx, "run-2", "call-a"); err != nil {
				t.Fatal(err)
			}
			if err := repo.Close(); err != nil {
				t.Fatal(err)
			}
			again := openRepo(t, path, opts)
			got, err := again.Tasks(ctx, "run-1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]resource.TaskHandle{truncated(a), truncated(b)}, got); diff != "" {
				t.Fatalf("Tasks after reopen mismatch (-want +got):\n%s", diff)
			}
			if got, err := again.Tasks(ctx, "run-2"); err != nil || len(got) != 0 {
				t.Fatalf("Tasks(run-2) after reopen = %v, %v; want none", got, err)
			}
		})
	}
}

// A store written before the task buckets existed (format 1, resources
// and highwater only) gets them at Open and keeps its resources.
func TestTasksInOlderFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	writeRaw(t, path, createFormat1)
	repo := openRepo(t, path, nil)
	ctx := context.Background()
	h := taskHandle("run", "call")
	if err := repo.SaveTask(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got, err := repo.Tasks(ctx, "run"); err != nil || len(got) != 1 {
		t.Fatalf("Tasks = %v, %v; want the saved handle", got, err)
	}
}

// Issue 26 item 3 (dropped after the TTL): a SaveTask deletes the
// expired handles of runs no one saves to again, with their index entries
// and empty run buckets; the live ones stay.
func TestTasksSweepOtherRuns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	repo, err := boltrepo.Open(path, &boltrepo.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, h := range []resource.TaskHandle{taskHandle("live", "a"), expiredHandle("gone-1", "call"), expiredHandle("gone-2", "call"), expiredHandle("live", "b")} {
		if err := repo.SaveTask(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := repo.Close(); err != nil {
		t.Fatal(err)
	}
	// Each save swept what the one before left expired: gone-1 by the
	// save of gone-2, gone-2 by the save of live/b; live/b is left.
	if runs, index := rawBuckets(t, path); !slices.Equal(runs, []string{"live"}) || index != 2 {
		t.Fatalf("after the saves: runs %q, %d index entries; want live and 2", runs, index)
	}
	repo = openRepo(t, path, &boltrepo.Options{NoSync: true})
	if err := repo.SaveTask(ctx, taskHandle("other", "call")); err != nil {
		t.Fatal(err)
	}
	if err := repo.Close(); err != nil {
		t.Fatal(err)
	}
	if runs, index := rawBuckets(t, path); !slices.Equal(runs, []string{"live", "other"}) || index != 2 {
		t.Fatalf("after a save of another run: runs %q, %d index entries; want live, other and 2", runs, index)
	}
}

// storeRaw writes n handles with bbolt, as SaveTask would, without
// sweeping: handle i belongs to (run(i), "call-i") and expires at exp.
func storeRaw(t *testing.T, path string, n int, run func(i int) string, exp time.Time) {
	t.Helper()
	writeRaw(t, path, func(tx *bolt.Tx) error {
		ms := exp.UnixMilli()
		for i := range n {
			run, call := run(i), fmt.Sprintf("call-%04d", i)
			rb, err := tx.Bucket([]byte("tasks")).CreateBucketIfNotExists([]byte(run))
			if err != nil {
				return err
			}
			v := binary.BigEndian.AppendUint64([]byte{1}, uint64(ms))
			v = append(v, fmt.Sprintf(`{"server":"s","revision":1,"tool":"t","task_id":"x","protocol":"p","created_ms":%d}`, ms-1)...)
			if err := rb.Put([]byte(call), v); err != nil {
				return err
			}
			k := binary.BigEndian.AppendUint64(nil, uint64(ms))
			k = append(append(append(k, run...), 0), call...)
			if err := tx.Bucket([]byte("taskexpiry")).Put(k, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// Two shared Repos on one file (two descriptors, as a host and the CLI
// have) race to fill one run: the file's write lock makes count and write
// one step, so exactly the room left is taken.
func TestTasksTwoOpensAtBound(t *testing.T) {
	t.Parallel()
	path := newStoreFile(t)
	const room = 4
	storeRaw(t, path, taskrules.MaxRunTasks-room, func(int) string { return "full" }, time.Now().Add(time.Hour))
	opts := &boltrepo.Options{Shared: true, NoSync: true}
	repos := []*boltrepo.Repo{openRepo(t, path, opts), openRepo(t, path, opts)}
	errs := make(chan error, 4*room)
	for g := range 4 * room {
		go func() {
			errs <- repos[g%2].SaveTask(context.Background(), taskHandle("full", fmt.Sprintf("new-%02d", g)))
		}()
	}
	saved := 0
	for range 4 * room {
		switch err := <-errs; {
		case err == nil:
			saved++
		case !errors.Is(err, resource.ErrLimit):
			t.Fatal(err)
		}
	}
	got, err := repos[0].Tasks(context.Background(), "full")
	if err != nil {
		t.Fatal(err)
	}
	if saved != room || len(got) != taskrules.MaxRunTasks {
		t.Fatalf("%d saves succeeded, the run holds %d handles; want %d and %d", saved, len(got), room, taskrules.MaxRunTasks)
	}
}

// The sweep bound: of 300 expired handles of other runs, one save
// deletes 256, the next the rest.
func TestTasksSweepBound(t *testing.T) {
	t.Parallel()
	path := newStoreFile(t)
	storeRaw(t, path, 300, func(i int) string { return fmt.Sprintf("raw-%03d", i) }, time.Now().Add(-time.Hour))
	ctx := context.Background()
	for i, want := range []int{300 - 256, 0} {
		repo, err := boltrepo.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.SaveTask(ctx, taskHandle("live", fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if err := repo.Close(); err != nil {
			t.Fatal(err)
		}
		if runs, index := rawBuckets(t, path); len(runs) != want+1 || index != want+i+1 {
			t.Fatalf("after save %d: %d runs, %d index entries; want %d and %d", i+1, len(runs), index, want+1, want+i+1)
		}
	}
}

// newStoreFile returns the path of a new, closed store.
func newStoreFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agt.db")
	repo, err := boltrepo.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeRaw opens the closed store with bbolt and runs f in a write
// transaction.
func writeRaw(t *testing.T, path string, f func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(f); err != nil {
		t.Fatal(err)
	}
}

// A damaged or hostile stored handle is an error, never a panic nor a
// value handed on; the error repeats nothing stored; the read is bounded
// (MaxRunTasks entries of a run, 16 KiB a record).
func TestTasksDamagedRecords(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-STORED-VALUE"
	header := func(expires time.Time) []byte {
		b := []byte{1, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(b[1:], uint64(expires.UnixMilli()))
		return b
	}
	later := time.Now().Add(time.Hour)
	record := func(json string) []byte { return append(header(later), json...) }
	valid := `{"server":"tools/x","revision":1,"tool":"t","task_id":"` + secret + `","protocol":"p","created_ms":1}`
	for _, tt := range []struct {
		name  string
		value []byte // stored at tasks/run/call, when not nil
		fill  func(rb *bolt.Bucket) error
		// save is true when SaveTask to the run fails too (it reads the
		// header of every record of the run).
		save bool
	}{
		{name: "empty", value: []byte{}, save: true},
		{name: "unknown version", value: append([]byte{2}, record(valid)[1:]...), save: true},
		{name: "short header", value: []byte{1, 0, 0}, save: true},
		{name: "over 16 KiB", value: record(valid + strings.Repeat(" ", 16<<10)), save: true},
		{name: "not JSON", value: record(secret + "{")},
		{name: "JSON not an object", value: record(`["` + secret + `"]`)},
		{name: "zero revision", value: record(strings.Replace(valid, `"revision":1`, `"revision":0`, 1))},
		{name: "invalid server", value: record(strings.Replace(valid, `"tools/x"`, `"A/B/C"`, 1))},
		{name: "task id over 1 KiB", value: record(strings.Replace(valid, secret, secret+strings.Repeat("x", 1024), 1))},
		{name: "task id with NUL", value: record(strings.Replace(valid, secret, secret+`\u0000`, 1))},
		{name: "empty tool", value: record(strings.Replace(valid, `"tool":"t"`, `"tool":""`, 1))},
		{name: "created after expires", value: record(strings.Replace(valid, `"created_ms":1`, fmt.Sprintf(`"created_ms":%d`, later.Add(time.Hour).UnixMilli()), 1))},
		{name: "a bucket instead of a record", fill: func(rb *bolt.Bucket) error {
			_, err := rb.CreateBucket([]byte("call"))
			return err
		}, save: true},
		{name: "more than MaxRunTasks records", fill: func(rb *bolt.Bucket) error {
			for i := range taskrules.MaxRunTasks + 1 {
				if err := rb.Put([]byte(fmt.Sprintf("call-%05d", i)), record(valid)); err != nil {
					return err
				}
			}
			return nil
		}, save: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := newStoreFile(t)
			writeRaw(t, path, func(tx *bolt.Tx) error {
				rb, err := tx.Bucket([]byte("tasks")).CreateBucket([]byte("run"))
				if err != nil {
					return err
				}
				if tt.fill != nil {
					return tt.fill(rb)
				}
				return rb.Put([]byte("call"), tt.value)
			})
			repo := openRepo(t, path, nil)
			ctx := context.Background()
			got, err := repo.Tasks(ctx, "run")
			if err == nil || !strings.Contains(err.Error(), "task") {
				t.Fatalf("Tasks = %d handles, %v; want an error about a stored task handle", len(got), err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("Tasks err repeats the stored value: %.200s", err)
			}
			err = repo.SaveTask(ctx, taskHandle("run", "new"))
			if (err != nil) != tt.save || err != nil && strings.Contains(err.Error(), secret) {
				t.Fatalf("SaveTask err = %.200v; want an error %v", err, tt.save)
			}
			// Other runs are unaffected.
			if err := repo.SaveTask(ctx, taskHandle("other", "call")); err != nil {
				t.Fatalf("SaveTask of another run: %v", err)
			}
			if got, err := repo.Tasks(ctx, "other"); err != nil || len(got) != 1 {
				t.Fatalf("Tasks(other) = %v, %v", got, err)
			}
			if tt.value != nil {
				// The damaged record can be deleted, and then the run works.
				if err := repo.DeleteTask(ctx, "run", "call"); err != nil {
					t.Fatal(err)
				}
				if err := repo.DeleteTask(ctx, "run", "new"); err != nil {
					t.Fatal(err)
				}
				if got, err := repo.Tasks(ctx, "run"); err != nil || len(got) != 0 {
					t.Fatalf("Tasks after deleting the damaged record = %v, %v", got, err)
				}
			}
		})
	}
}

// A damaged expiry index entry fails the save that would sweep it, as an
// error naming the store.
func TestTasksDamagedIndex(t *testing.T) {
	t.Parallel()
	path := newStoreFile(t)
	writeRaw(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("taskexpiry")).Put(binary.BigEndian.AppendUint64(nil, 1), nil) // no run, no separator
	})
	repo := openRepo(t, path, nil)
	err := repo.SaveTask(context.Background(), taskHandle("run", "call"))
	if err == nil || !strings.Contains(err.Error(), "index") {
		t.Fatalf("SaveTask err = %v, want one about the damaged index", err)
	}
}

// A file whose task bucket is gone (another program's, or damaged) is an
// error for every task call, never a panic.
func TestTasksBucketMissing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	repo, err := boltrepo.Open(path, &boltrepo.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	writeRaw(t, path, func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("tasks")) })
	ctx := context.Background()
	if _, err := repo.Tasks(ctx, "run"); err == nil || !strings.Contains(err.Error(), "task buckets") {
		t.Fatalf("Tasks err = %v, want one saying the task buckets are missing", err)
	}
	// A write in shared mode creates what is missing, as for the other buckets.
	if err := repo.SaveTask(ctx, taskHandle("run", "call")); err != nil {
		t.Fatal(err)
	}
	if got, err := repo.Tasks(ctx, "run"); err != nil || len(got) != 1 || !bytes.Equal([]byte(got[0].TaskID), []byte("task-call")) {
		t.Fatalf("Tasks = %v, %v", got, err)
	}
}
