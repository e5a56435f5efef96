package boltrepo

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/agtsdk/agt/resource"
)

// Compile-time check: Repo is a resource.Repository.
var _ resource.Repository = (*Repo)(nil)

// DefaultLockTimeout is how long Open (and, in shared mode, every operation)
// waits for the file lock held by another process when
// Options.LockTimeout is zero.
const DefaultLockTimeout = 5 * time.Second

// Options configure Open. The zero value (and a nil *Options) is the
// recommended setting for a host.
type Options struct {
	// LockTimeout bounds the wait for the file lock another process holds;
	// an operation's context ends its wait too. Zero means
	// DefaultLockTimeout; bbolt itself would wait forever.
	LockTimeout time.Duration

	// Shared opens the file only for the span of each operation, so several
	// processes (a running host and the agt CLI) can use one file. Each
	// operation then pays an open, a file lock, a memory map and a close:
	// measured (BenchmarkSharedVsExclusive, median of interleaved rounds) a
	// read costs about 25 times an exclusive one and a write about 1.5 times
	// (the fsync dominates). Reads of different processes share the lock;
	// a write waits for every other operation on the file. False (the zero
	// value) keeps the file open and locked from Open to Close: the
	// fastest, single-process mode.
	Shared bool

	// NoSync skips the fsync at each commit. A process crash still loses
	// nothing, but an OS crash or power loss may lose the last writes or
	// corrupt the file. Meant for tests. False (the zero value) fsyncs every
	// commit.
	NoSync bool

	// FileMode is the permission of a newly created file. Zero means 0600.
	FileMode os.FileMode
}

// Repo is a resource.Repository on one bbolt file. It is safe for
// concurrent use by many goroutines.
type Repo struct {
	path string
	opts Options

	// initFn creates or checks the file's buckets: a resource store's
	// (initBuckets) or a token store's (initTokenBuckets). private refuses
	// a file that group or others may read or write (a token store).
	initFn  func(*bolt.Tx) error
	private bool

	// db is the open database in exclusive mode; nil in shared mode. file is
	// its descriptor, closed directly when bbolt's locks cannot be trusted.
	db   *bolt.DB
	file *os.File

	// sharedMu serializes this process's writes in shared mode: two opens
	// of one file in one process would wait on each other's file lock.
	sharedMu sync.RWMutex

	// writeMu serializes writes in exclusive mode (bbolt does too), so that
	// a writer waits here, not on a bbolt lock a panicked write left held.
	writeMu sync.Mutex

	// verified is the last file state checkTree accepted or this Repo
	// wrote: in shared mode, an open of the file unchanged since skips the
	// walk of its pages.
	verified atomic.Pointer[verifiedFile]

	// damage is, in exclusive mode, the first damage found: every later
	// call returns its error. An atomic load keeps the read path free of
	// another lock.
	damage atomic.Pointer[damageState]

	closeMu sync.RWMutex
	closed  bool
}

// Bucket layout:
//
//	resources/<kind>/<ref>  -> record (see encodeRecord)
//	highwater/<kind>/<ref>  -> 8-byte big-endian last revision of a deleted key
//	tasks/..., taskexpiry/... -> task handles (see tasks.go)
//	meta/format             -> "1"
var (
	bucketResources = []byte("resources")
	bucketHighWater = []byte("highwater")
	bucketMeta      = []byte("meta")
	keyFormat       = []byte("format")
	formatVersion   = []byte("1")
)

// ErrClosed is returned by operations on a closed Repo.
var ErrClosed = errors.New("boltrepo: repository is closed")

// Open opens (creating if missing) the bbolt file at path. Close it when
// done. An exclusive Repo (the default) holds the file lock until Close;
// another process opening the same file waits up to Options.LockTimeout and
// then fails. A damaged file is an error that matches ErrDamaged.
func Open(path string, opts *Options) (*Repo, error) {
	return openRepo(&Repo{path: path, initFn: initBuckets}, opts)
}

// openRepo opens r.path for r, with opts filled in as Open documents.
func openRepo(r *Repo, opts *Options) (*Repo, error) {
	path := r.path
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.LockTimeout <= 0 {
		r.opts.LockTimeout = DefaultLockTimeout
	}
	if r.opts.FileMode == 0 {
		r.opts.FileMode = 0o600
	}
	db, file, err := r.open(context.Background(), false)
	if err != nil {
		return nil, err
	}
	var txid int
	if held, err := r.runTx(db, true, func(tx *bolt.Tx) error {
		txid = tx.ID()
		return r.initTx(tx)
	}); err != nil {
		release(db, file, held)
		return nil, err
	}
	if r.opts.Shared {
		r.rememberWrite(file, txid)
		if err := db.Close(); err != nil {
			return nil, fmt.Errorf("boltrepo: close %s: %w", path, err)
		}
		return r, nil
	}
	r.db, r.file = db, file
	return r, nil
}

// initTx creates the buckets, or checks them and the format of an existing
// file.
func (r *Repo) initTx(tx *bolt.Tx) error {
	if err := r.initFn(tx); err != nil {
		return fmt.Errorf("boltrepo: initialise %s: %w", r.path, err)
	}
	return nil
}

func (r *Repo) openError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, berrors.ErrTimeout) && r.opts.Shared:
		// Shared already: another process holds the file for longer
		// than the wait (an exclusive opener, or a long operation).
		return fmt.Errorf("boltrepo: %s is locked by another process (waited %s); try again, or raise the LockTimeout option: %w", r.path, r.opts.LockTimeout, err)
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("boltrepo: %s is locked by another process (waited %s); close it there, or open both with Options.Shared: %w", r.path, r.opts.LockTimeout, err)
	case errors.Is(err, ErrDamaged):
		return err
	}
	return fmt.Errorf("boltrepo: open %s: %w", r.path, err)
}

// open opens the file: for the Repo's life (exclusive) or one operation
// (shared). Before bbolt maps the file, checkFile checks it under the file
// lock. bbolt polls a held lock only every 50 ms, so a process doing
// back-to-back operations would starve the other one; instead each attempt
// tries the lock once and the wait between attempts grows from 1 ms to
// 10 ms, with jitter, until LockTimeout or the end of ctx. file is the
// descriptor bbolt uses.
func (r *Repo) open(ctx context.Context, readOnly bool) (db *bolt.DB, file *os.File, err error) {
	deadline := time.Now().Add(r.opts.LockTimeout)
	wait := time.Millisecond
	for {
		db, file, err = r.openOnce(readOnly)
		if err == nil {
			return db, file, nil
		}
		if !errors.Is(err, berrors.ErrTimeout) || time.Now().After(deadline) {
			return nil, nil, r.openError(err)
		}
		// The caller's context ends the wait too.
		t := time.NewTimer(wait/2 + time.Duration(rand.Int64N(int64(wait))))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, nil, fmt.Errorf("boltrepo: %s is locked by another process; stopped waiting: %w", r.path, ctx.Err())
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// openOnce is one attempt of open. bbolt's Open reads the freelist of a
// writable file: a panic or a memory fault there (or in the checks) is
// recovered, and the descriptor unlocked and closed.
func (r *Repo) openOnce(readOnly bool) (db *bolt.DB, file *os.File, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			if file != nil {
				unlockFile(file)
				_ = file.Close()
			}
			db, file, err = nil, nil, damaged(r.path, "bbolt failed on it while opening it")
		}
	}()
	db, err = bolt.Open(r.path, r.opts.FileMode, &bolt.Options{
		Timeout:  time.Nanosecond, // one attempt: lockForCheck has the lock already
		NoSync:   r.opts.NoSync,
		ReadOnly: readOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err != nil {
				return nil, err
			}
			file = f // from here on, a panic closes it
			if r.private {
				if err := checkPrivate(f, r.path); err != nil {
					file = nil
					_ = f.Close()
					return nil, err
				}
			}
			if err := lockForCheck(f, !readOnly); err != nil {
				file = nil
				_ = f.Close()
				return nil, err
			}
			if err := checkFile(f, r.path, &r.verified); err != nil {
				file = nil
				_ = f.Close() // releases the lock: nothing maps f yet
				return nil, err
			}
			return f, nil
		},
	})
	if err != nil {
		return nil, nil, err
	}
	return db, file, nil
}

// runTx runs fn in one transaction of db and commits it when writable and
// fn returns nil. A panic of bbolt (or a memory fault reading the mapped
// file) becomes an ErrDamaged error. held reports that the panic left
// bbolt's locks held: db must then not be used or closed (Close would wait
// forever), only its descriptor closed. Panics of a host's function never
// reach here (see callHost).
func (r *Repo) runTx(db *bolt.DB, writable bool, fn func(*bolt.Tx) error) (held bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var tx *bolt.Tx
	defer func() {
		p := recover()
		if tx != nil && tx.DB() != nil {
			// A panic, or runtime.Goexit, left the transaction open.
			held = !rollbackAfterPanic(tx)
		} else if p != nil && tx == nil {
			held = true // Begin panicked, holding its locks
		}
		if p != nil {
			err = damaged(r.path, "bbolt failed on a page of it")
		}
	}()
	tx, err = db.Begin(writable)
	if err != nil {
		return false, fmt.Errorf("boltrepo: %s: %w", r.path, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return false, err
	}
	if writable {
		if err := tx.Commit(); err != nil {
			return false, fmt.Errorf("boltrepo: commit to %s: %w", r.path, err)
		}
		return false, nil
	}
	return false, tx.Rollback()
}

// rollbackAfterPanic rolls back a transaction a panic interrupted and
// reports whether that released its locks.
func rollbackAfterPanic(tx *bolt.Tx) (released bool) {
	defer func() {
		if recover() != nil {
			released = false
		}
	}()
	_ = tx.Rollback()
	return tx.DB() == nil
}

// release closes a database a failed operation leaves behind: normally, or,
// when a panic left bbolt's locks held, only its file lock and descriptor;
// the memory map then stays until the process exits.
func release(db *bolt.DB, file *os.File, held bool) {
	if held {
		unlockFile(file)
		_ = file.Close()
		return
	}
	_ = db.Close()
}

func initBuckets(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	switch v := meta.Get(keyFormat); {
	case v == nil:
		if err := meta.Put(keyFormat, formatVersion); err != nil {
			return err
		}
	case bytes.Equal(v, tokenFormatVersion):
		return errors.New("the file is a token store (boltrepo.OpenTokenStore), not a resource store: give the resource store's own file")
	case !bytes.Equal(v, formatVersion):
		return fmt.Errorf("the file's format is not format %s: it was written by another version of agt; open it with that version, or use a new file", formatVersion)
	}
	for _, b := range [][]byte{bucketResources, bucketHighWater, bucketTasks, bucketTaskExpiry} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the file. Operations after Close return ErrClosed. Close
// waits for operations in flight.
func (r *Repo) Close() error {
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.db == nil {
		return nil
	}
	if d := r.damage.Load(); d != nil && d.locksHeld {
		release(r.db, r.file, true)
		return nil
	}
	return r.db.Close()
}

// rememberWrite records the file as this Repo's commit txid left it, while
// the file lock is still held: bbolt wrote a tree from a checked one, so
// the next open need not walk it again.
func (r *Repo) rememberWrite(file *os.File, txid int) {
	st, err := file.Stat()
	if err != nil || txid < 0 {
		r.verified.Store(nil)
		return
	}
	r.verified.Store(&verifiedFile{info: st, size: st.Size(), mod: st.ModTime(), txid: uint64(txid)})
}

// damageState is the damage an exclusive Repo found. locksHeld is true when
// a panic left bbolt's locks held: Close must not wait for them.
type damageState struct {
	err       error
	locksHeld bool
}

// setDamaged records damage: the first error stays, locksHeld accumulates.
func (r *Repo) setDamaged(err error, held bool) {
	for {
		old := r.damage.Load()
		next := &damageState{err: err, locksHeld: held}
		if old != nil {
			next = &damageState{err: old.err, locksHeld: old.locksHeld || held}
		}
		if r.damage.CompareAndSwap(old, next) {
			return
		}
	}
}

// Path returns the file path the Repo was opened with.
func (r *Repo) Path() string { return r.path }

// withDB runs fn in a transaction, opening the file around it in shared
// mode. Damage found in exclusive mode is kept: the file is not touched
// again, every later call returns the same error.
func (r *Repo) withDB(ctx context.Context, writable bool, fn func(*bolt.Tx) error) error {
	r.closeMu.RLock()
	defer r.closeMu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	if r.db != nil {
		if writable {
			r.writeMu.Lock()
			defer r.writeMu.Unlock()
		}
		if d := r.damage.Load(); d != nil {
			return d.err
		}
		held, err := r.runTx(r.db, writable, fn)
		if errors.Is(err, ErrDamaged) {
			r.setDamaged(err, held)
		}
		return err
	}
	if writable {
		r.sharedMu.Lock()
		defer r.sharedMu.Unlock()
	} else {
		r.sharedMu.RLock()
		defer r.sharedMu.RUnlock()
	}
	db, file, err := r.open(ctx, !writable)
	if err != nil {
		return err
	}
	var txid int
	if writable {
		// The file may have been removed and recreated empty since Open;
		// initTx also checks the format again.
		inner := fn
		fn = func(tx *bolt.Tx) error {
			txid = tx.ID()
			if err := r.initTx(tx); err != nil {
				return err
			}
			return inner(tx)
		}
	}
	held, err := r.runTx(db, writable, fn)
	// Close even after a panic: an open db holds the file lock, and every
	// later operation of every process would wait for it.
	if held {
		release(db, file, true)
		return err
	}
	if writable && err == nil {
		r.rememberWrite(file, txid)
	}
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("boltrepo: close %s: %w", r.path, cerr)
	}
	return err
}

// kindBucket returns the bucket of one kind, nil when none was written yet.
// A file without the resources bucket is not a store of this package.
func (r *Repo) kindBucket(tx *bolt.Tx, kind resource.Kind) (*bolt.Bucket, error) {
	rb := tx.Bucket(bucketResources)
	if rb == nil {
		return nil, fmt.Errorf("boltrepo: %s holds no resources: it is not an agt store (was the file replaced?)", r.path)
	}
	return rb.Bucket([]byte(kind)), nil
}

// lookup finds the stored record of key: its kind bucket and raw value
// (valid only inside tx), or an error wrapping resource.ErrNotFound.
func (r *Repo) lookup(tx *bolt.Tx, key resource.Key) (*bolt.Bucket, []byte, error) {
	kb, err := r.kindBucket(tx, key.Kind)
	if err != nil {
		return nil, nil, err
	}
	if kb == nil {
		return nil, nil, notFound(key)
	}
	v := kb.Get([]byte(key.Ref))
	if v == nil {
		return nil, nil, notFound(key)
	}
	return kb, v, nil
}

// record is the decoded value of one stored resource.
//
// Encoding: 1 byte version (1), then big-endian int64 revision, created and
// updated (Unix nanoseconds), then the JSON data.
const (
	recordVersion    = 1
	recordHeaderSize = 1 + 8 + 8 + 8
)

func encodeRecord(rev int64, created, updated time.Time, data []byte) []byte {
	buf := make([]byte, recordHeaderSize+len(data))
	buf[0] = recordVersion
	binary.BigEndian.PutUint64(buf[1:], uint64(rev))
	binary.BigEndian.PutUint64(buf[9:], uint64(created.UnixNano()))
	binary.BigEndian.PutUint64(buf[17:], uint64(updated.UnixNano()))
	copy(buf[recordHeaderSize:], data)
	return buf
}

// decodeRecord copies v out of the transaction into a Resource.
func decodeRecord(key resource.Key, v []byte) (resource.Resource, error) {
	if len(v) < recordHeaderSize || v[0] != recordVersion {
		return resource.Resource{}, fmt.Errorf("boltrepo: %s: stored record is corrupt or of an unknown version", key)
	}
	data := make([]byte, len(v)-recordHeaderSize)
	copy(data, v[recordHeaderSize:])
	return resource.Resource{
		Kind:      key.Kind,
		Ref:       key.Ref,
		Revision:  int64(binary.BigEndian.Uint64(v[1:])),
		CreatedAt: time.Unix(0, int64(binary.BigEndian.Uint64(v[9:]))).UTC(),
		UpdatedAt: time.Unix(0, int64(binary.BigEndian.Uint64(v[17:]))).UTC(),
		Data:      data,
	}, nil
}

// revisionOf reads only the revision of a stored record.
func revisionOf(v []byte) int64 {
	if len(v) < recordHeaderSize {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v[1:]))
}

func check(ctx context.Context, key resource.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return key.Validate()
}

func checkData(key resource.Key, data json.RawMessage) error {
	if !json.Valid(data) {
		return fmt.Errorf("boltrepo: %s: data is not valid JSON", key)
	}
	return nil
}

func notFound(key resource.Key) error {
	return fmt.Errorf("boltrepo: %s: %w", key, resource.ErrNotFound)
}

// Get returns the stored resource.
func (r *Repo) Get(ctx context.Context, key resource.Key) (resource.Resource, error) {
	if err := check(ctx, key); err != nil {
		return resource.Resource{}, err
	}
	var res resource.Resource
	err := r.withDB(ctx, false, func(tx *bolt.Tx) error {
		_, v, err := r.lookup(tx, key)
		if err != nil {
			return err
		}
		res, err = decodeRecord(key, v)
		return err
	})
	return res, err
}

// Create stores a new resource at revision 1, or one past the last revision
// the key had before it was deleted.
func (r *Repo) Create(ctx context.Context, key resource.Key, data json.RawMessage) (resource.Resource, error) {
	return r.create(ctx, key, data, nil)
}

// create is Create; g, when not nil, is judged first in the transaction.
func (r *Repo) create(ctx context.Context, key resource.Key, data json.RawMessage, g *guard) (resource.Resource, error) {
	if err := check(ctx, key); err != nil {
		return resource.Resource{}, err
	}
	if err := checkData(key, data); err != nil {
		return resource.Resource{}, err
	}
	var res resource.Resource
	var gPanic *hostPanic
	err := r.withDB(ctx, true, func(tx *bolt.Tx) error {
		if _, err := r.kindBucket(tx, key.Kind); err != nil {
			return err
		}
		if err := r.judge(tx, g, &gPanic); err != nil {
			return err
		}
		kb, err := tx.Bucket(bucketResources).CreateBucketIfNotExists([]byte(key.Kind))
		if err != nil {
			return err
		}
		ref := []byte(key.Ref)
		if kb.Get(ref) != nil {
			return fmt.Errorf("boltrepo: %s: %w", key, resource.ErrExists)
		}
		rev := int64(1)
		if hb := tx.Bucket(bucketHighWater).Bucket([]byte(key.Kind)); hb != nil {
			if v := hb.Get(ref); len(v) == 8 {
				rev = int64(binary.BigEndian.Uint64(v)) + 1
			}
		}
		now := time.Now().UTC()
		rec := encodeRecord(rev, now, now, data)
		if err := kb.Put(ref, rec); err != nil {
			return err
		}
		res, err = decodeRecord(key, rec)
		return err
	})
	if gPanic != nil {
		panic(gPanic.value)
	}
	return res, err
}

// Update replaces the data if the stored revision equals expected
// (resource.AnyRevision skips the check).
func (r *Repo) Update(ctx context.Context, key resource.Key, data json.RawMessage, expected int64) (resource.Resource, error) {
	return r.update(ctx, key, data, expected, nil)
}

func (r *Repo) update(ctx context.Context, key resource.Key, data json.RawMessage, expected int64, g *guard) (resource.Resource, error) {
	if err := checkData(key, data); err != nil {
		return resource.Resource{}, err
	}
	return r.modify(ctx, key, expected, func(resource.Resource) (json.RawMessage, error) {
		return data, nil
	}, false, g)
}

// Modify runs fn on the current resource and stores its result in one bbolt
// write transaction, so no other write lands in between. fn runs while the
// write lock is held: it must be quick and must not call the Repo.
func (r *Repo) Modify(ctx context.Context, key resource.Key, expected int64, fn func(cur resource.Resource) (json.RawMessage, error)) (resource.Resource, error) {
	return r.modify(ctx, key, expected, fn, true, nil)
}

// modify is Modify; validate is false when the caller checked the data; g,
// when not nil, is judged first in the transaction.
func (r *Repo) modify(ctx context.Context, key resource.Key, expected int64, fn func(cur resource.Resource) (json.RawMessage, error), validate bool, g *guard) (resource.Resource, error) {
	if err := check(ctx, key); err != nil {
		return resource.Resource{}, err
	}
	var res resource.Resource
	var fnPanic *hostPanic
	err := r.withDB(ctx, true, func(tx *bolt.Tx) error {
		if err := r.judge(tx, g, &fnPanic); err != nil {
			return err
		}
		kb, v, err := r.lookup(tx, key)
		if err != nil {
			return err
		}
		cur, err := decodeRecord(key, v)
		if err != nil {
			return err
		}
		if expected != resource.AnyRevision && cur.Revision != expected {
			return &resource.ConflictError{Key: key, Expected: expected, Current: cur.Revision}
		}
		data, err := callHost(fn, cur, &fnPanic)
		if err != nil {
			return err
		}
		if data == nil {
			res = cur
			return nil
		}
		if validate {
			if err := checkData(key, data); err != nil {
				return err
			}
		}
		rec := encodeRecord(cur.Revision+1, cur.CreatedAt, time.Now().UTC(), data)
		if err := kb.Put([]byte(key.Ref), rec); err != nil {
			return err
		}
		res, err = decodeRecord(key, rec)
		return err
	})
	if fnPanic != nil {
		// The transaction was rolled back; the host's panic goes on.
		panic(fnPanic.value)
	}
	if err != nil {
		return resource.Resource{}, err
	}
	return res, nil
}

// hostPanic carries a panic of a host's function (Modify's fn, a token
// Update's f) out of the transaction, which is rolled back as for an
// error: the recovery of bbolt's panics must not take it for damage, nor
// swallow it.
type hostPanic struct{ value any }

func (*hostPanic) Error() string { return "boltrepo: the host's function panicked" }

// callHost calls fn(arg); a panic of fn is stored in *p and returned as
// an error.
func callHost[A, R any](fn func(A) (R, error), arg A, p **hostPanic) (out R, err error) {
	defer func() {
		if v := recover(); v != nil {
			*p = &hostPanic{value: v}
			err = *p
		}
	}()
	return fn(arg)
}

// Delete removes the resource if its revision equals expected
// (resource.AnyRevision skips the check). The key's last revision is kept,
// so a later Create continues above it.
func (r *Repo) Delete(ctx context.Context, key resource.Key, expected int64) error {
	return r.delete(ctx, key, expected, nil)
}

// delete is Delete; g, when not nil, is judged first in the transaction.
func (r *Repo) delete(ctx context.Context, key resource.Key, expected int64, g *guard) error {
	if err := check(ctx, key); err != nil {
		return err
	}
	var gPanic *hostPanic
	err := r.withDB(ctx, true, func(tx *bolt.Tx) error {
		if err := r.judge(tx, g, &gPanic); err != nil {
			return err
		}
		kb, v, err := r.lookup(tx, key)
		if err != nil {
			return err
		}
		ref := []byte(key.Ref)
		rev := revisionOf(v)
		if expected != resource.AnyRevision && rev != expected {
			return &resource.ConflictError{Key: key, Expected: expected, Current: rev}
		}
		hb, err := tx.Bucket(bucketHighWater).CreateBucketIfNotExists([]byte(key.Kind))
		if err != nil {
			return err
		}
		var hw [8]byte
		binary.BigEndian.PutUint64(hw[:], uint64(rev))
		if err := hb.Put(ref, hw[:]); err != nil {
			return err
		}
		return kb.Delete(ref)
	})
	if gPanic != nil {
		panic(gPanic.value)
	}
	return err
}

// List returns the resources of one kind sorted by reference; a non-empty
// category keeps only references in that category.
func (r *Repo) List(ctx context.Context, kind resource.Kind, category string) ([]resource.Resource, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !kind.Valid() {
		return nil, errors.New("boltrepo: invalid kind: want 1 to 32 of lowercase letters, digits, '_' and '-'")
	}
	var prefix []byte
	if category != "" {
		if !resource.Ref(category).Valid() || resource.Ref(category).Category() != "" {
			return nil, errors.New("boltrepo: invalid category: want one reference segment")
		}
		prefix = []byte(category + "/")
	}
	var out []resource.Resource
	err := r.withDB(ctx, false, func(tx *bolt.Tx) error {
		kb, err := r.kindBucket(tx, kind)
		if kb == nil {
			return err
		}
		c := kb.Cursor()
		k, v := c.First()
		if prefix != nil {
			k, v = c.Seek(prefix)
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			res, err := decodeRecord(resource.Key{Kind: kind, Ref: resource.Ref(k)}, v)
			if err != nil {
				return err
			}
			out = append(out, res)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
