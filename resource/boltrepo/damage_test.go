package boltrepo_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

const (
	sweepDirEnv   = "AGT_BOLTREPO_TEST_SWEEP_DIR"
	sweepStartEnv = "AGT_BOLTREPO_TEST_SWEEP_START"

	// secretMarker is in every stored document: no error may repeat it.
	secretMarker = "s3cr3t-marker"
)

// knownKey is a key the damage store holds.
var knownKey = resource.Key{Kind: resource.KindMCP, Ref: "tools/srv-07"}

// damagePageSize is the page size of the damage store, whatever the
// machine's: the same bytes everywhere.
const damagePageSize = 4096

// buildDamageStore writes a real store to path, byte for byte the same on
// every run: 60 MCP and 12 agent resources, one transaction each, enough to
// fill several leaf pages under a branch page; then updates and deletes, so
// that the freelist holds pages. It writes what Repo writes (the buckets,
// format "1", records of version 1, high-water marks) with bbolt directly:
// with fixed timestamps, and the array freelist, whose page allocation is
// deterministic (the default one picks among free spans in map order).
func buildDamageStore(t *testing.T, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true, PageSize: damagePageSize, FreelistType: bolt.FreelistArrayType, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	record := func(i, rev int) []byte {
		data := fmt.Sprintf(`{"command":"srv-%d","rev":%d,"env":{"TOKEN":"%s-%d"},"pad":%q}`,
			i, rev, secretMarker, i, strings.Repeat("p", 200+i*13))
		b := make([]byte, 25, 25+len(data))
		b[0] = 1
		binary.BigEndian.PutUint64(b[1:], uint64(rev))
		binary.BigEndian.PutUint64(b[9:], uint64(at))
		binary.BigEndian.PutUint64(b[17:], uint64(at+int64(rev)))
		return append(b, data...)
	}
	kindBucket := func(tx *bolt.Tx, root, kind string) (*bolt.Bucket, error) {
		return tx.Bucket([]byte(root)).CreateBucketIfNotExists([]byte(kind))
	}
	put := func(kind, ref string, v []byte) {
		t.Helper()
		if err := db.Update(func(tx *bolt.Tx) error {
			b, err := kindBucket(tx, "resources", kind)
			if err != nil {
				return err
			}
			return b.Put([]byte(ref), v)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Update(createFormat1); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		put("mcp", fmt.Sprintf("tools/srv-%02d", i), record(i, 1))
	}
	for i := range 12 {
		put("agent", fmt.Sprintf("agent-%02d", i), record(i, 1))
	}
	for i := 0; i < 60; i += 3 {
		put("mcp", fmt.Sprintf("tools/srv-%02d", i), record(i, 2))
	}
	// One bucket changed per transaction: bbolt spills the sub-buckets of
	// a transaction in map order, which would vary the page layout.
	for i := 1; i < 60; i += 5 {
		ref := []byte(fmt.Sprintf("tools/srv-%02d", i))
		for _, step := range []func(tx *bolt.Tx) error{
			func(tx *bolt.Tx) error {
				hb, err := kindBucket(tx, "highwater", "mcp")
				if err != nil {
					return err
				}
				return hb.Put(ref, binary.BigEndian.AppendUint64(nil, 1))
			},
			func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("resources")).Bucket([]byte("mcp")).Delete(ref)
			},
		} {
			if err := db.Update(step); err != nil {
				t.Fatal(err)
			}
		}
	}
	return damagePageSize
}

// createFormat1 creates the buckets of a resource store of format "1" as
// agt wrote it before the task buckets: meta (with the format), resources
// and highwater.
func createFormat1(tx *bolt.Tx) error {
	mb, err := tx.CreateBucket([]byte("meta"))
	if err != nil {
		return err
	}
	if err := mb.Put([]byte("format"), []byte("1")); err != nil {
		return err
	}
	if _, err := tx.CreateBucket([]byte("resources")); err != nil {
		return err
	}
	_, err = tx.CreateBucket([]byte("highwater"))
	return err
}

// Meta field offsets inside a meta page (bbolt v1.5.0: 16-byte page header,
// then magic, version, pageSize, flags, root, sequence, freelist, pgid,
// txid, checksum).
const (
	offPageSize = 16 + 8
	offRoot     = 16 + 16
	offFreelist = 16 + 32
	offPgid     = 16 + 40
	offTxid     = 16 + 48
	offChecksum = 16 + 56
)

// resum recomputes the checksum of the meta page at off, as a hostile
// writer would, so that only the consistency checks can refuse it.
func resum(b []byte, off int) {
	h := fnv.New64a()
	h.Write(b[off+16 : off+offChecksum])
	binary.NativeEndian.PutUint64(b[off+offChecksum:], h.Sum64())
}

// activeMeta returns the offset of the meta page bbolt uses (higher txid).
func activeMeta(b []byte, pageSize int) int {
	if binary.NativeEndian.Uint64(b[pageSize+offTxid:]) > binary.NativeEndian.Uint64(b[offTxid:]) {
		return pageSize
	}
	return 0
}

// bucketRootPage returns the root page of the bucket name in the leaf page
// page, -1 if it holds none.
func bucketRootPage(b []byte, pageSize, page int, name string) int {
	if at := bucketHeader(b, pageSize, page, name); at >= 0 {
		return int(binary.NativeEndian.Uint64(b[at:]))
	}
	return -1
}

func setBucketRootPage(b []byte, pageSize, page int, name string, root int) {
	binary.NativeEndian.PutUint64(b[bucketHeader(b, pageSize, page, name):], uint64(root))
}

// bucketHeader is the offset of the bucket header of name in leaf page page
// (bbolt's leaf element: flags, pos, ksize, vsize; the key at pos from the
// element, the value after it).
func bucketHeader(b []byte, pageSize, page int, name string) int {
	ne := binary.NativeEndian
	base := page * pageSize
	for i := range int(ne.Uint16(b[base+10:])) {
		e := base + 16 + i*16
		pos, ksize := int(ne.Uint32(b[e+4:])), int(ne.Uint32(b[e+8:]))
		if ne.Uint32(b[e:])&1 != 0 && string(b[e+pos:e+pos+ksize]) == name {
			return e + pos + ksize
		}
	}
	return -1
}

type damagedCopy struct {
	name string
	data []byte
}

// damageSet derives the damaged copies from a sound file, deterministically.
func damageSet(orig []byte, pageSize int) []damagedCopy {
	var set []damagedCopy
	add := func(name string, mutate func(b []byte) []byte) {
		set = append(set, damagedCopy{name, mutate(slices.Clone(orig))})
	}
	// Damage goes where bbolt reads: the pages below the high-water mark,
	// and one page past it (the file is longer: bbolt grows it ahead).
	pages := int(binary.NativeEndian.Uint64(orig[activeMeta(orig, pageSize)+offPgid:])) + 1
	used := pages * pageSize
	rng := rand.New(rand.NewPCG(11, 4))

	// Truncations: at and around every page boundary, the CLI's 10000, and
	// seeded offsets.
	cuts := []int{1, 15, 16, 80, 100, pageSize / 2, 10000}
	for p := 1; p < pages; p++ {
		cuts = append(cuts, p*pageSize-1, p*pageSize, p*pageSize+1)
	}
	for range 20 {
		cuts = append(cuts, 1+rng.IntN(used-1))
	}
	slices.Sort(cuts)
	for _, n := range slices.Compact(cuts) {
		if n < len(orig) {
			add(fmt.Sprintf("truncated-%d", n), func(b []byte) []byte { return b[:n] })
		}
	}
	// Every page zeroed, and every page's header zeroed.
	for p := range pages {
		add(fmt.Sprintf("zeroed-page-%d", p), func(b []byte) []byte {
			clear(b[p*pageSize : (p+1)*pageSize])
			return b
		})
		add(fmt.Sprintf("zeroed-header-%d", p), func(b []byte) []byte {
			clear(b[p*pageSize : p*pageSize+16])
			return b
		})
	}
	// Bytes flipped at seeded offsets: one byte, and bursts of eight.
	for i := range 100 {
		off, x := rng.IntN(used), byte(1+rng.IntN(255))
		add(fmt.Sprintf("flipped-%d-at-%d", i, off), func(b []byte) []byte {
			b[off] ^= x
			return b
		})
	}
	for i := range 30 {
		off := rng.IntN(used - 8)
		add(fmt.Sprintf("burst-%d-at-%d", i, off), func(b []byte) []byte {
			for j := range 8 {
				b[off+j] ^= byte(1 + rng.IntN(255))
			}
			return b
		})
	}
	// One meta page damaged (bbolt falls back to the other), then both.
	for _, m := range []int{0, 1} {
		add(fmt.Sprintf("meta%d-checksum", m), func(b []byte) []byte {
			b[m*pageSize+offTxid] ^= 0xFF
			return b
		})
		add(fmt.Sprintf("meta%d-magic", m), func(b []byte) []byte {
			b[m*pageSize+16] ^= 0xFF
			return b
		})
	}
	add("both-metas-checksum", func(b []byte) []byte {
		b[offTxid] ^= 0xFF
		b[pageSize+offTxid] ^= 0xFF
		return b
	})
	add("both-metas-zeroed", func(b []byte) []byte {
		clear(b[:2*pageSize])
		return b
	})
	add("both-metas-version", func(b []byte) []byte {
		for _, off := range []int{0, pageSize} {
			b[off+20] = 9
			resum(b, off)
		}
		return b
	})
	// Hostile metas with a valid checksum: only the consistency checks
	// stand between them and bbolt.
	hostile := map[string]func(b []byte, off int){
		"pgid-huge":        func(b []byte, off int) { binary.NativeEndian.PutUint64(b[off+offPgid:], 1<<40) },
		"pgid-past-end":    func(b []byte, off int) { binary.NativeEndian.PutUint64(b[off+offPgid:], uint64(pages+3)) },
		"root-past-pgid":   func(b []byte, off int) { binary.NativeEndian.PutUint64(b[off+offRoot:], uint64(pages+1)) },
		"root-is-meta":     func(b []byte, off int) { binary.NativeEndian.PutUint64(b[off+offRoot:], 1) },
		"freelist-huge":    func(b []byte, off int) { binary.NativeEndian.PutUint64(b[off+offFreelist:], 1<<50) },
		"freelist-is-root": func(b []byte, off int) { copy(b[off+offFreelist:off+offFreelist+8], b[off+offRoot:off+offRoot+8]) },
		"pagesize-1":       func(b []byte, off int) { binary.NativeEndian.PutUint32(b[off+offPageSize:], 1) },
		"pagesize-double":  func(b []byte, off int) { binary.NativeEndian.PutUint32(b[off+offPageSize:], uint32(2*pageSize)) },
		"pagesize-huge":    func(b []byte, off int) { binary.NativeEndian.PutUint32(b[off+offPageSize:], 1<<30) },
	}
	names := make([]string, 0, len(hostile))
	for name := range hostile {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		mutate := hostile[name]
		add("hostile-active-"+name, func(b []byte) []byte {
			off := activeMeta(b, pageSize)
			mutate(b, off)
			resum(b, off)
			return b
		})
		add("hostile-both-"+name, func(b []byte) []byte {
			for _, off := range []int{0, pageSize} {
				mutate(b, off)
				resum(b, off)
			}
			return b
		})
	}
	// A tree that is not a tree: bbolt's cursor would recurse through a
	// cycle until the stack overflows (fatal), and a page both free and in
	// use would be overwritten by the next write.
	root := int(binary.NativeEndian.Uint64(orig[activeMeta(orig, pageSize)+offRoot:]))
	resources := bucketRootPage(orig, pageSize, root, "resources")
	mcp := bucketRootPage(orig, pageSize, resources, "mcp")
	if resources <= 0 || mcp <= 0 || binary.NativeEndian.Uint16(orig[mcp*pageSize+8:]) != 0x01 {
		panic("the damage store's mcp bucket has no branch page at its root; make the store larger")
	}
	setChild := func(b []byte, page, i, child int) {
		binary.NativeEndian.PutUint64(b[page*pageSize+16+i*16+8:], uint64(child))
	}
	add("cycle-branch-to-itself", func(b []byte) []byte {
		setChild(b, mcp, 0, mcp)
		return b
	})
	add("cycle-branch-last-to-itself", func(b []byte) []byte {
		setChild(b, mcp, int(binary.NativeEndian.Uint16(b[mcp*pageSize+10:]))-1, mcp)
		return b
	})
	add("cycle-branch-twice-same-child", func(b []byte) []byte {
		copy(b[mcp*pageSize+16+16+8:mcp*pageSize+16+16+16], b[mcp*pageSize+16+8:mcp*pageSize+16+16])
		return b
	})
	add("cycle-empty-branch-to-itself", func(b []byte) []byte {
		binary.NativeEndian.PutUint16(b[mcp*pageSize+10:], 0)
		setChild(b, mcp, 0, mcp)
		return b
	})
	add("cycle-bucket-to-root", func(b []byte) []byte {
		setBucketRootPage(b, pageSize, resources, "mcp", root)
		return b
	})
	add("cycle-bucket-to-itself", func(b []byte) []byte {
		setBucketRootPage(b, pageSize, resources, "mcp", resources)
		return b
	})
	add("cycle-free-and-in-use", func(b []byte) []byte {
		fl := int(binary.NativeEndian.Uint64(b[activeMeta(b, pageSize)+offFreelist:]))
		if binary.NativeEndian.Uint16(b[fl*pageSize+10:]) == 0 {
			panic("the damage store has an empty freelist")
		}
		binary.NativeEndian.PutUint64(b[fl*pageSize+16:], uint64(mcp))
		return b
	})

	// The freelist page's header: a count too large for its pages.
	add("freelist-count-overflow", func(b []byte) []byte {
		fl := int(binary.NativeEndian.Uint64(b[activeMeta(b, pageSize)+offFreelist:]))
		binary.NativeEndian.PutUint16(b[fl*pageSize+10:], 0xFFFF)
		binary.NativeEndian.PutUint64(b[fl*pageSize+16:], 1<<40)
		return b
	})
	add("freelist-count-max", func(b []byte) []byte {
		fl := int(binary.NativeEndian.Uint64(b[activeMeta(b, pageSize)+offFreelist:]))
		binary.NativeEndian.PutUint16(b[fl*pageSize+10:], 0xFFFF)
		binary.NativeEndian.PutUint64(b[fl*pageSize+16:], ^uint64(0))
		return b
	})
	add("freelist-wrong-flags", func(b []byte) []byte {
		fl := int(binary.NativeEndian.Uint64(b[activeMeta(b, pageSize)+offFreelist:]))
		binary.NativeEndian.PutUint16(b[fl*pageSize+8:], 0x02)
		return b
	})
	return set
}

// sweepOp is the outcome of one repository call in the child.
type sweepOp struct {
	copy  int // index in the damage set
	op    string
	class string // "ok" or the kind of error
}

// errorClass names the kind of an error for the sweep's tally.
func errorClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, boltrepo.ErrDamaged):
		return "damaged"
	case errors.Is(err, berrors.ErrInvalid):
		return "not-bbolt"
	case errors.Is(err, berrors.ErrVersionMismatch):
		return "bbolt-version"
	case errors.Is(err, resource.ErrNotFound):
		return "not-found"
	case errors.Is(err, resource.ErrExists):
		return "exists"
	case strings.Contains(err.Error(), "corrupt"):
		return "corrupt-record"
	case strings.Contains(err.Error(), "not an agt store"):
		return "not-agt-store"
	case strings.Contains(err.Error(), "format"):
		return "format"
	}
	return "other"
}

// sweepCopy runs open, list, get, write and delete on a copy of the damaged
// file src, in exclusive and in shared mode.
func sweepCopy(src, work string) ([]sweepOp, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	var ops []sweepOp
	for _, shared := range []bool{false, true} {
		mode := "exclusive"
		if shared {
			mode = "shared"
		}
		if err := os.WriteFile(work, data, 0o600); err != nil {
			return nil, err
		}
		record := func(op string, err error) {
			if err != nil && strings.Contains(err.Error(), secretMarker) {
				panic(fmt.Sprintf("%s %s: the error repeats stored data: %v", mode, op, err))
			}
			ops = append(ops, sweepOp{op: mode + "/" + op, class: errorClass(err)})
		}
		ctx := context.Background()
		repo, err := boltrepo.Open(work, &boltrepo.Options{Shared: shared, NoSync: true, LockTimeout: time.Second})
		record("open", err)
		if err != nil {
			continue
		}
		_, err = repo.List(ctx, resource.KindMCP, "")
		record("list", err)
		_, err = repo.List(ctx, resource.KindAgent, "")
		record("list-agents", err)
		_, err = repo.Get(ctx, knownKey)
		record("get", err)
		_, err = repo.Create(ctx, resource.Key{Kind: resource.KindMCP, Ref: "tools/new"}, json.RawMessage(`{"new":true}`))
		record("create", err)
		_, err = repo.Update(ctx, knownKey, json.RawMessage(`{"updated":true}`), resource.AnyRevision)
		record("update", err)
		err = repo.Delete(ctx, resource.Key{Kind: resource.KindAgent, Ref: "agent-03"}, resource.AnyRevision)
		record("delete", err)
		_, err = repo.Get(ctx, knownKey)
		record("get-again", err)
		record("close", repo.Close())
	}
	return ops, nil
}

// runSweepChild is the body of the child process: it sweeps the copies in
// dir from index start on, one line before and after each, so that the
// parent can tell which copy a crash happened on.
func runSweepChild(dir string, start int) int {
	names, err := sweepFiles(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	work := filepath.Join(dir, "work", "copy.db")
	if err := os.MkdirAll(filepath.Dir(work), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fdsBefore := -1 // counted after the first copy: Go opens its poller's descriptors on first use
	for i := start; i < len(names); i++ {
		fmt.Printf("begin %d\n", i)
		ops, err := sweepCopy(filepath.Join(dir, names[i]), work)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, op := range ops {
			fmt.Printf("op %d %s %s\n", i, op.op, op.class)
		}
		fmt.Printf("end %d\n", i)
		if i == start {
			fdsBefore = openFDs()
		}
	}
	if fdsBefore >= 0 {
		fmt.Printf("fds %d %d\n", fdsBefore, openFDs())
	}
	return 0
}

// openFDs counts this process's open descriptors where /proc shows them,
// -1 elsewhere.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

func sweepFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".db") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// Issue 11: a deterministic set of damaged copies of a real store
// (truncated, zeroed pages, flipped bytes, one or both meta pages damaged,
// hostile metas with valid checksums) goes through open, list, get, write
// and delete in exclusive and shared mode. A SIGSEGV or SIGBUS cannot be
// recovered in-process, so a child process does the work; it must never
// die or hang, and every call must return (a copy whose damage bbolt never
// reads may succeed).
func TestDamagedFilesNeverCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orig := filepath.Join(t.TempDir(), "store.db")
	pageSize := buildDamageStore(t, orig)
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	set := damageSet(data, pageSize)
	if len(set) < 200 {
		t.Fatalf("the damage set has %d copies, want at least 200", len(set))
	}
	refused := 0 // copies the checks before bbolt refuse
	for i, c := range set {
		path := filepath.Join(dir, fmt.Sprintf("%04d-%s.db", i, c.name))
		if err := os.WriteFile(path, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		// In-process and unrecovered: the checks must not panic themselves.
		if boltrepo.CheckFile(path) != nil {
			refused++
		}
	}
	t.Logf("store: %d bytes, %d pages of %d bytes in use; %d damaged copies", len(data),
		binary.NativeEndian.Uint64(data[activeMeta(data, pageSize)+offPgid:]), pageSize, len(set))

	tally := map[string]int{} // outcome class -> calls
	copiesOK := 0             // copies on which every call succeeded
	var crashes []string
	opened := map[string][]string{} // copy name -> modes in which Open succeeded
	for start := 0; start < len(set); {
		res := runSweep(t, dir, start)
		for _, op := range res.ops {
			tally[op.class]++
			if mode, ok := strings.CutSuffix(op.op, "/open"); ok && op.class == "ok" {
				opened[set[op.copy].name] = append(opened[set[op.copy].name], mode)
			}
		}
		copiesOK += res.copiesOK
		if res.fdsLeaked > 0 {
			t.Errorf("the sweep child from copy %d on ended with %d more open descriptors than it started with", start, res.fdsLeaked)
		}
		if res.crashed < 0 {
			break
		}
		crashes = append(crashes, fmt.Sprintf("%s: %s\n%s", set[res.crashed].name, res.how, res.stderr))
		start = res.crashed + 1
	}
	calls := 0
	for _, n := range tally {
		calls += n
	}
	t.Logf("%d copies, %d refused by the checks before bbolt maps them; x 2 modes: %d calls: ok %d, error %d (%v); copies read without error: %d; crashes or hangs: %d",
		len(set), refused, calls, tally["ok"], calls-tally["ok"], tally, copiesOK, len(crashes))
	for _, c := range crashes {
		t.Errorf("crash: %s", c)
	}
	// A file whose tree is not a tree, or whose freelist does not fit, is
	// refused at Open, before bbolt reads any of it.
	for _, c := range set {
		if (strings.HasPrefix(c.name, "cycle-") || strings.HasPrefix(c.name, "freelist-")) && len(opened[c.name]) > 0 {
			t.Errorf("%s: Open succeeded in %v mode, want ErrDamaged", c.name, opened[c.name])
		}
	}
	if tally["other"] > 0 {
		t.Errorf("%d calls failed with an unclassified error", tally["other"])
	}
}

type sweepResult struct {
	ops      []sweepOp
	copiesOK int
	crashed  int // index of the copy the child died or hung on; -1 if none
	// fdsLeaked is how many more descriptors the child had open after its
	// copies than before (0 where /proc does not show them).
	fdsLeaked int
	how       string
	stderr    string
}

// runSweep runs one child from copy start on until it ends or dies; a copy
// that makes no progress for a minute counts as a hang.
func runSweep(t *testing.T, dir string, start int) sweepResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), sweepDirEnv+"="+dir, sweepStartEnv+"="+strconv.Itoa(start))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	res := sweepResult{crashed: -1}
	current, currentOK := -1, true
	hung := false
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
read:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				break read
			}
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "begin":
				current, _ = strconv.Atoi(f[1])
				currentOK = true
				timer.Reset(time.Minute)
			case len(f) == 4 && f[0] == "op":
				n, _ := strconv.Atoi(f[1])
				res.ops = append(res.ops, sweepOp{copy: n, op: f[2], class: f[3]})
				currentOK = currentOK && f[3] == "ok"
			case len(f) == 3 && f[0] == "fds":
				before, _ := strconv.Atoi(f[1])
				after, _ := strconv.Atoi(f[2])
				res.fdsLeaked = after - before
			case len(f) == 2 && f[0] == "end":
				if currentOK {
					res.copiesOK++
				}
				current = -1
			}
		case <-timer.C:
			hung = true
			_ = cmd.Process.Kill()
			for range lines {
			}
			break read
		}
	}
	err = cmd.Wait()
	res.stderr = stderr.String()
	switch {
	case hung:
		res.crashed, res.how = current, "no progress for a minute"
	case err != nil && current >= 0:
		res.crashed, res.how = current, err.Error()
	case err != nil:
		t.Fatalf("sweep child: %v\n%s", err, res.stderr)
	}
	if res.crashed < 0 && current >= 0 {
		t.Fatalf("sweep child stopped inside copy %d without an error", current)
	}
	return res
}

// within runs fn and fails the test if it has not returned after a generous
// bound: a call after damage must return, not wait on a lock forever.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s has not returned after 20s", what)
	}
}

// damageInPlace overwrites part of the file a Repo has open, as another
// program (or a failing disk) would.
func damageInPlace(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// rootPageOffset is where the root bucket's page of the file at path lies.
func rootPageOffset(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := damagePageSize
	return int64(binary.NativeEndian.Uint64(b[activeMeta(b, ps)+offRoot:])) * int64(ps)
}

// allCalls runs every repository call once and returns their errors.
func allCalls(repo *boltrepo.Repo) map[string]error {
	ctx := context.Background()
	errs := map[string]error{}
	_, errs["get"] = repo.Get(ctx, knownKey)
	_, errs["list"] = repo.List(ctx, resource.KindMCP, "")
	_, errs["create"] = repo.Create(ctx, resource.Key{Kind: resource.KindMCP, Ref: "tools/late"}, json.RawMessage(`{}`))
	_, errs["update"] = repo.Update(ctx, knownKey, json.RawMessage(`{}`), resource.AnyRevision)
	_, errs["modify"] = repo.Modify(ctx, knownKey, resource.AnyRevision, func(resource.Resource) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})
	errs["delete"] = repo.Delete(ctx, knownKey, resource.AnyRevision)
	return errs
}

func wantAllDamaged(t *testing.T, when string, errs map[string]error) {
	t.Helper()
	for op, err := range errs {
		if !errors.Is(err, boltrepo.ErrDamaged) {
			t.Errorf("%s: %s err = %v, want ErrDamaged", when, op, err)
		}
	}
}

// Issue 11: a shared Repo reopens the file for each call, so a file damaged
// while the host runs is found by the next call, which returns ErrDamaged;
// so do the calls after it (no lock left held), and once the file is
// restored the Repo works again.
func TestSharedFileDamagedWhileOpen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"truncated to 10000 bytes", func(t *testing.T, path string) {
			if err := os.Truncate(path, 10000); err != nil {
				t.Fatal(err)
			}
		}},
		{"root page zeroed", func(t *testing.T, path string) {
			damageInPlace(t, path, rootPageOffset(t, path), make([]byte, damagePageSize))
		}},
		// A foreign write that keeps the file's size and meta page: the
		// Repo's record of the file it checked must not hide it.
		{"branch page made its own child", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			root := int(binary.NativeEndian.Uint64(b[activeMeta(b, damagePageSize)+offRoot:]))
			mcp := bucketRootPage(b, damagePageSize, bucketRootPage(b, damagePageSize, root, "resources"), "mcp")
			self := binary.NativeEndian.AppendUint64(nil, uint64(mcp))
			damageInPlace(t, path, int64(mcp*damagePageSize+16+8), self)
		}},
		{"both meta pages zeroed but the magic", func(t *testing.T, path string) {
			ps := damagePageSize
			for _, off := range []int64{0, int64(ps)} {
				damageInPlace(t, path, off+offRoot, make([]byte, 48))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "agt.db")
			buildDamageStore(t, path)
			sound, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			repo := openRepo(t, path, &boltrepo.Options{Shared: true, NoSync: true, LockTimeout: time.Second})
			tt.damage(t, path)
			within(t, "the calls on the damaged file", func() {
				wantAllDamaged(t, "first calls", allCalls(repo))
				wantAllDamaged(t, "second calls", allCalls(repo))
			})
			if err := os.WriteFile(path, sound, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := repo.Get(context.Background(), knownKey); err != nil {
				t.Fatalf("Get after the file was restored: %v", err)
			}
		})
	}
}

// Issue 11: an exclusive Repo maps the file once; damage written into it
// while open (another program ignoring the lock, a failing disk) makes the
// next call return ErrDamaged, and every later call the same error without
// touching the file or waiting on a lock bbolt's panic left held. Close
// returns.
func TestExclusiveFileDamagedWhileOpen(t *testing.T) {
	t.Parallel()
	ps := damagePageSize
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		// bbolt panics inside the transaction; it rolls back cleanly.
		{"root page zeroed", func(t *testing.T, path string) {
			damageInPlace(t, path, rootPageOffset(t, path), make([]byte, ps))
		}},
		// bbolt panics in Begin, holding its locks.
		{"both meta pages zeroed", func(t *testing.T, path string) {
			damageInPlace(t, path, 0, make([]byte, 2*ps))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "agt.db")
			buildDamageStore(t, path)
			repo, err := boltrepo.Open(path, &boltrepo.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := repo.Get(context.Background(), knownKey); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, path)
			within(t, "the calls on the damaged file and Close", func() {
				first := allCalls(repo)
				wantAllDamaged(t, "first calls", first)
				second := allCalls(repo)
				wantAllDamaged(t, "second calls", second)
				if err := repo.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			// Close released the file lock: another Repo can open the
			// file (and finds the damage itself).
			other, err := boltrepo.Open(path, &boltrepo.Options{LockTimeout: time.Second})
			if err == nil {
				other.Close()
			} else if !errors.Is(err, boltrepo.ErrDamaged) && !errors.Is(err, berrors.ErrInvalid) {
				t.Fatalf("Open after Close: %v, want ErrDamaged or not a bbolt file (not a lock timeout)", err)
			}
		})
	}
}

// A panic of the host's Modify function is the host's: it reaches the
// caller, the write is rolled back, and the Repo is not taken for damaged.
func TestModifyPanicReachesCaller(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo := openRepo(t, filepath.Join(t.TempDir(), "agt.db"), &boltrepo.Options{Shared: shared, NoSync: true})
			key := resource.Key{Kind: resource.KindMCP, Ref: "a"}
			if _, err := repo.Create(ctx, key, json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			type hostBug struct{ n int }
			func() {
				defer func() {
					if p := recover(); p != (hostBug{7}) {
						t.Fatalf("recovered %v, want the host's own panic value", p)
					}
				}()
				_, _ = repo.Modify(ctx, key, resource.AnyRevision, func(resource.Resource) (json.RawMessage, error) {
					panic(hostBug{7})
				})
			}()
			res, err := repo.Update(ctx, key, json.RawMessage(`{"after":"panic"}`), 1)
			if err != nil || res.Revision != 2 {
				t.Fatalf("Update after the host's panic = revision %d, %v; want revision 2", res.Revision, err)
			}
		})
	}
}

// The error names the file and what to do, and nothing the file holds.
func TestDamagedFileError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	buildDamageStore(t, path)
	if err := os.Truncate(path, 10000); err != nil {
		t.Fatal(err)
	}
	for _, shared := range []bool{false, true} {
		repo, err := boltrepo.Open(path, &boltrepo.Options{Shared: shared})
		if err == nil {
			repo.Close()
			t.Fatalf("shared=%v: Open of a truncated file succeeded", shared)
		}
		msg := err.Error()
		if !errors.Is(err, boltrepo.ErrDamaged) || !strings.Contains(msg, path+" is damaged") ||
			!strings.Contains(msg, "restore it from a backup") || !strings.Contains(msg, "bbolt check") ||
			strings.Contains(msg, secretMarker) || strings.Contains(msg, "agt ") {
			t.Errorf("shared=%v: err = %q; want ErrDamaged naming the file, a backup and bbolt check", shared, msg)
		}
	}
}

// bbolt keeps two meta pages and uses the other when one is damaged: such a
// file opens. Damage to the older one loses nothing; damage to the newer
// one falls back to the file as of the write before.
func TestOneMetaPageDamaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ps := damagePageSize
	for _, newer := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "agt.db")
		buildDamageStore(t, path)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		off := activeMeta(b, ps)
		if !newer {
			off = ps - off
		}
		damageInPlace(t, path, int64(off+offTxid), []byte{^b[off+offTxid]})
		repo, err := boltrepo.Open(path, &boltrepo.Options{NoSync: true})
		if err != nil {
			t.Fatalf("newer=%v: Open with one meta page damaged: %v", newer, err)
		}
		got, err := repo.List(ctx, resource.KindMCP, "")
		if err != nil {
			t.Fatalf("newer=%v: %v", newer, err)
		}
		// The last write of buildDamageStore deleted tools/srv-56.
		want := 48
		if newer {
			want = 49
		}
		if len(got) != want {
			t.Errorf("newer=%v: %d resources, want %d", newer, len(got), want)
		}
		if err := repo.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// An empty file (size 0) is a new store, as a missing one.
func TestEmptyFileIsNewStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agt.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, shared := range []bool{false, true} {
		repo := openRepo(t, path, &boltrepo.Options{Shared: shared, NoSync: true})
		if _, err := repo.Create(context.Background(), resource.Key{Kind: resource.KindMCP, Ref: resource.Ref(fmt.Sprintf("a%v", shared))}, json.RawMessage(`{}`)); err != nil {
			t.Fatalf("shared=%v: %v", shared, err)
		}
		if err := repo.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
