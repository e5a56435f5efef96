package boltrepo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sync/atomic"
	"time"

	berrors "go.etcd.io/bbolt/errors"
)

// ErrDamaged is matched (errors.Is) by every error that says the bbolt file
// is damaged: it failed the check made before bbolt maps it, or bbolt
// panicked or faulted while reading it. It wraps no resource sentinel: the
// request was fine, the file is not.
var ErrDamaged = errors.New("boltrepo: the file is damaged")

// damagedError names the file and what is wrong with it, never what it holds.
type damagedError struct {
	path   string
	reason string
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("boltrepo: %s is damaged (%s): restore it from a backup, or examine it with `bbolt check`", e.path, e.reason)
}

func (e *damagedError) Is(target error) bool { return target == ErrDamaged }

func damaged(path, format string, args ...any) error {
	return &damagedError{path: path, reason: fmt.Sprintf(format, args...)}
}

// bbolt v1.5.0's file layout (go.etcd.io/bbolt/internal/common: page.go,
// meta.go), in the machine's byte order. Every page starts with a 16-byte
// header (id uint64, flags uint16, count uint16, overflow uint32); pages 0
// and 1 hold a meta: magic, version, pageSize, flags (uint32 each), the root
// bucket (root page id, sequence), the freelist page id, the high-water mark
// pgid (pages in use), txid, then an FNV-64a checksum of the bytes before it.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	metaChecksumAt   = 56
	metaSize         = metaChecksumAt + 8
	freelistPageFlag = 0x10
	noFreelist       = ^uint64(0)

	// bbolt looks for the second meta page from 1 KiB to 16 MiB; a page
	// size outside that range is not one bbolt writes.
	minPageSize = 1024
	maxPageSize = 1024 << 14
)

var (
	errMetaMagic    = errors.New("no bbolt magic")
	errMetaVersion  = errors.New("other bbolt version")
	errMetaChecksum = errors.New("checksum mismatch")
)

type meta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
	err      error // nil when the meta is valid, as bbolt's Meta.Validate
}

// parseMeta reads the meta of the page that starts at b.
func parseMeta(b []byte) meta {
	if len(b) < pageHeaderSize+metaSize {
		return meta{err: errMetaMagic}
	}
	b = b[pageHeaderSize : pageHeaderSize+metaSize]
	ne := binary.NativeEndian
	m := meta{
		pageSize: ne.Uint32(b[8:]),
		root:     ne.Uint64(b[16:]),
		freelist: ne.Uint64(b[32:]),
		pgid:     ne.Uint64(b[40:]),
		txid:     ne.Uint64(b[48:]),
	}
	h := fnv.New64a()
	h.Write(b[:metaChecksumAt])
	switch {
	case ne.Uint32(b[0:]) != boltMagic:
		m.err = errMetaMagic
	case ne.Uint32(b[4:]) != boltVersion:
		m.err = errMetaVersion
	case ne.Uint64(b[metaChecksumAt:]) != h.Sum64():
		m.err = errMetaChecksum
	}
	return m
}

// readAtMost reads up to n bytes at off; a short file gives a short slice.
func readAtMost(f *os.File, off int64, n int) ([]byte, error) {
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:got], nil
}

// checkMeta checks, before bbolt maps f, what bbolt trusts without checking
// when it opens a file: both meta pages (magic, version, checksum), the
// page size, the file size against the high-water mark of the meta bbolt
// will use, and that meta's root page. bbolt reads past the end of the
// mapping (SIGSEGV, SIGBUS: not recoverable) or panics when these are
// wrong. It reads the two meta pages (one read for pages of 4 KiB or less)
// and returns the meta bbolt will use (a zero meta for an empty file) and
// the page size.
//
// An empty file is fine (bbolt initialises it). A file of which no meta
// page has bbolt's magic is reported as bbolt does (errors.ErrInvalid), so
// is one whose meta pages are intact but of another bbolt format
// (errors.ErrVersionMismatch); anything else wrong is ErrDamaged.
func checkMeta(f *os.File, path string, st os.FileInfo) (active meta, pageSize int64, err error) {
	size := st.Size()
	if size == 0 {
		return meta{}, 0, nil
	}
	// Two pages of the most common size in one read: both meta pages.
	first, err := readAtMost(f, 0, 2*4096)
	if err != nil {
		return meta{}, 0, err
	}
	m0 := parseMeta(first)
	magicSeen := m0.err != errMetaMagic

	// The page size, found as bbolt finds it: from the first meta, or else
	// from the first valid meta at 1 KiB, 2 KiB, ... 16 MiB.
	pageSize = int64(m0.pageSize)
	if m0.err != nil {
		pageSize = 0
		for pos := int64(minPageSize); pos <= maxPageSize && pos < size-1024; pos <<= 1 {
			b, err := readAtMost(f, pos, pageHeaderSize+metaSize)
			if err != nil {
				return meta{}, 0, err
			}
			m := parseMeta(b)
			magicSeen = magicSeen || m.err != errMetaMagic
			if m.err == nil {
				pageSize = int64(m.pageSize)
				break
			}
		}
	}
	if pageSize == 0 {
		if !magicSeen {
			return meta{}, 0, berrors.ErrInvalid
		}
		return meta{}, 0, damaged(path, "both meta pages are invalid")
	}
	if pageSize < minPageSize || pageSize > maxPageSize {
		return meta{}, 0, damaged(path, "its page size %d is outside %d to %d", pageSize, minPageSize, maxPageSize)
	}
	if size < 2*pageSize {
		return meta{}, 0, damaged(path, "it is %d bytes long, shorter than its two meta pages (%d bytes)", size, 2*pageSize)
	}
	second := first[min(pageSize, int64(len(first))):]
	if len(second) < pageHeaderSize+metaSize {
		if second, err = readAtMost(f, pageSize, pageHeaderSize+metaSize); err != nil {
			return meta{}, 0, err
		}
	}
	m1 := parseMeta(second)

	// bbolt uses the valid meta with the higher txid.
	switch {
	case m0.err == nil && m1.err == nil:
		if m0.pageSize != m1.pageSize {
			return meta{}, 0, damaged(path, "its meta pages disagree on the page size")
		}
		active = m0
		if m1.txid > m0.txid {
			active = m1
		}
	case m0.err == nil:
		active = m0
	case m1.err == nil:
		active = m1
	case m0.err == errMetaMagic && m1.err == errMetaMagic:
		return meta{}, 0, berrors.ErrInvalid
	case m0.err == errMetaVersion && m1.err == errMetaVersion:
		return meta{}, 0, berrors.ErrVersionMismatch
	default:
		return meta{}, 0, damaged(path, "both meta pages are invalid")
	}

	pages := uint64(size / pageSize)
	if active.pgid > pages {
		return meta{}, 0, damaged(path, "it is %d bytes long, shorter than the %d pages of %d bytes its meta page counts", size, active.pgid, pageSize)
	}
	if active.root < 2 || active.root >= active.pgid {
		return meta{}, 0, damaged(path, "its root page %d is outside pages 2 to %d", active.root, active.pgid)
	}
	return active, pageSize, nil
}

// checkFreelist checks the freelist page of m: inside the file and, as
// bbolt reads count page ids after its header (the count is the first id
// when the header's count is 0xFFFF) without checking that they lie inside
// the pages the freelist occupies, that they do.
func checkFreelist(f *os.File, path string, m meta, pageSize int64) error {
	if m.freelist == noFreelist {
		return nil
	}
	if m.freelist < 2 || m.freelist >= m.pgid {
		return damaged(path, "its freelist page %d is outside pages 2 to %d", m.freelist, m.pgid)
	}
	b, err := readAtMost(f, int64(m.freelist)*pageSize, pageHeaderSize+8)
	if err != nil {
		return err
	}
	if len(b) < pageHeaderSize+8 {
		return damaged(path, "its freelist page %d is cut short", m.freelist)
	}
	ne := binary.NativeEndian
	flags, count, overflow := ne.Uint16(b[8:]), uint64(ne.Uint16(b[10:])), uint64(ne.Uint32(b[12:]))
	if flags != freelistPageFlag {
		return damaged(path, "its freelist page %d is not a freelist page", m.freelist)
	}
	if m.freelist+overflow >= m.pgid {
		return damaged(path, "its freelist runs past the last page")
	}
	room := ((overflow+1)*uint64(pageSize) - pageHeaderSize) / 8
	if count == 0xFFFF {
		// The first slot holds the count; compared before adding one, so a
		// count of 2^64-1 cannot wrap.
		if n := ne.Uint64(b[pageHeaderSize:]); n >= room {
			return damaged(path, "its freelist counts more page ids than its pages hold")
		}
	} else if count > room {
		return damaged(path, "its freelist counts more page ids than its pages hold")
	}
	return nil
}

const (
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	bucketLeafFlag  = 0x01
	elementSize     = 16 // a branch or leaf element header
	inBucketSize    = 16 // a bucket's header in its parent: root page, sequence
	maxInlineNested = 64
)

// checkTree walks the page tree of the meta bbolt will use, from the root
// bucket through every branch page and every sub-bucket, and checks that it
// is a tree: each page inside the file, of the type its place needs,
// identifying as itself, reached once, and not on the freelist. bbolt
// trusts this too: a branch page that lists itself (or an ancestor) as a
// child makes its cursor recurse until the goroutine's stack overflows, a
// fatal error no recover stops, and a page both free and in use is
// overwritten by the next write. It reads every page in use once, up to
// readAhead pages per read.
func checkTree(f *os.File, path string, m meta, pageSize int64) error {
	w := treeWalk{f: f, path: path, pageSize: pageSize, pgid: m.pgid, seen: make([]uint64, (m.pgid+63)/64)}
	w.stack = append(w.stack, m.root)
	for len(w.stack) > 0 {
		id := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		if err := w.page(id); err != nil {
			return err
		}
	}
	if m.freelist == noFreelist {
		return nil
	}
	// The freelist's own pages must not be in the tree (read marks them:
	// "reached twice"), nor any page it lists.
	page, err := w.read(m.freelist)
	if err != nil {
		return err
	}
	ne := binary.NativeEndian
	count, ids := uint64(ne.Uint16(page[10:])), page[pageHeaderSize:]
	if count == 0xFFFF {
		count, ids = ne.Uint64(ids), ids[8:]
	}
	if count > uint64(len(ids))/8 {
		return damaged(path, "its freelist counts more page ids than its pages hold")
	}
	for i := range count {
		if id := ne.Uint64(ids[8*i:]); id < m.pgid && w.isSeen(id) {
			return damaged(path, "page %d is both free and in use", id)
		}
	}
	return nil
}

type treeWalk struct {
	f        *os.File
	path     string
	pageSize int64
	pgid     uint64
	seen     []uint64 // bit set of the pages reached
	stack    []uint64 // pages to visit
	buf      []byte   // pages [at, at+len(buf)/pageSize) of the file
	at       uint64
}

// readAhead is how many pages one read brings in: bbolt writes the pages
// of a commit side by side, so the next page visited is often among them.
const readAhead = 32

func (w *treeWalk) isSeen(id uint64) bool { return w.seen[id/64]&(1<<(id%64)) != 0 }

// read returns page id with its overflow pages and marks them reached. The
// returned bytes are valid until the next read.
func (w *treeWalk) read(id uint64) ([]byte, error) {
	if id < 2 || id >= w.pgid {
		return nil, damaged(w.path, "a page reference %d is outside pages 2 to %d", id, w.pgid)
	}
	hdr, err := w.pages(id, 1)
	if err != nil {
		return nil, err
	}
	ne := binary.NativeEndian
	if self := ne.Uint64(hdr[0:]); self != id {
		return nil, damaged(w.path, "page %d identifies as page %d", id, self)
	}
	overflow := uint64(ne.Uint32(hdr[12:]))
	if overflow >= w.pgid-id {
		return nil, damaged(w.path, "page %d runs past the last page", id)
	}
	for p := id; p <= id+overflow; p++ {
		if w.isSeen(p) {
			return nil, damaged(w.path, "page %d is reached twice", p)
		}
		w.seen[p/64] |= 1 << (p % 64)
	}
	return w.pages(id, overflow+1)
}

// pages returns n pages from id, from the buffer or read with the pages
// after them (up to readAhead, never past the high-water mark).
func (w *treeWalk) pages(id, n uint64) ([]byte, error) {
	ps := uint64(w.pageSize)
	if id >= w.at && id+n <= w.at+uint64(len(w.buf))/ps {
		return w.buf[(id-w.at)*ps : (id-w.at+n)*ps], nil
	}

	count := min(max(n, readAhead), w.pgid-id)
	if uint64(cap(w.buf)) < count*ps {
		w.buf = make([]byte, max(count, readAhead)*ps)
	}
	w.buf, w.at = w.buf[:count*ps], id
	if _, err := w.f.ReadAt(w.buf, int64(id*ps)); err != nil {
		w.buf = w.buf[:0]
		return nil, err
	}
	return w.buf[:n*ps], nil
}

// page checks one page of the tree and queues its children.
func (w *treeWalk) page(id uint64) error {
	page, err := w.read(id)
	if err != nil {
		return err
	}
	ne := binary.NativeEndian
	flags, count := ne.Uint16(page[8:]), int(ne.Uint16(page[10:]))
	switch flags {
	case branchPageFlag:
		// bbolt never writes an empty branch page, and reads a child of one
		// anyway: the bytes after its header.
		if count == 0 || pageHeaderSize+count*elementSize > len(page) {
			return damaged(w.path, "branch page %d holds %d elements", id, count)
		}
		// Last child first on the stack: the walk then visits the children
		// in key order, which is mostly file order.
		for i := count - 1; i >= 0; i-- {
			w.stack = append(w.stack, ne.Uint64(page[pageHeaderSize+i*elementSize+8:]))
		}
		return nil
	case leafPageFlag:
		return w.leaf(id, page, 0)
	}
	return damaged(w.path, "page %d is neither a branch nor a leaf page", id)
}

// leaf queues the root pages of the sub-buckets a leaf page (or a bucket
// stored inline in one, nested up to depth) holds.
func (w *treeWalk) leaf(id uint64, page []byte, depth int) error {
	ne := binary.NativeEndian
	count := int(ne.Uint16(page[10:]))
	if pageHeaderSize+count*elementSize > len(page) {
		return damaged(w.path, "leaf page %d holds %d elements", id, count)
	}
	for i := range count {
		at := pageHeaderSize + i*elementSize
		e := page[at : at+elementSize]
		if ne.Uint32(e[0:])&bucketLeafFlag == 0 {
			continue
		}
		pos, ksize, vsize := uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
		start := uint64(at) + pos + ksize
		if vsize < inBucketSize || start+vsize > uint64(len(page)) {
			return damaged(w.path, "a bucket in leaf page %d lies outside it", id)
		}
		v := page[start : start+vsize]
		if root := ne.Uint64(v); root != 0 {
			w.stack = append(w.stack, root)
			continue
		}
		inline := v[inBucketSize:]
		if depth >= maxInlineNested || len(inline) < pageHeaderSize || ne.Uint16(inline[8:]) != leafPageFlag {
			return damaged(w.path, "a bucket in leaf page %d is not a leaf page", id)
		}
		if err := w.leaf(id, inline, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// verifiedFile is a file checkTree accepted: a later open of the same file,
// unchanged (same size, modification time and meta page in use), skips the
// walk. Writes through bbolt keep the tree a tree, so after its own write
// a Repo records the file again.
type verifiedFile struct {
	info os.FileInfo
	size int64
	mod  time.Time
	txid uint64
}

func (v *verifiedFile) matches(st os.FileInfo, txid uint64) bool {
	return v != nil && v.txid == txid && v.size == st.Size() && v.mod.Equal(st.ModTime()) && os.SameFile(v.info, st)
}

// checkFile checks f before bbolt maps it: its meta pages (checkMeta), then
// its page tree (checkTree) unless verified holds this very file, unchanged.
func checkFile(f *os.File, path string, verified *atomic.Pointer[verifiedFile]) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	active, pageSize, err := checkMeta(f, path, st)
	if err != nil || active.pgid == 0 || verified.Load().matches(st, active.txid) {
		return err
	}
	if err := checkFreelist(f, path, active, pageSize); err != nil {
		return err
	}
	if err := checkTree(f, path, active, pageSize); err != nil {
		return err
	}
	verified.Store(&verifiedFile{info: st, size: st.Size(), mod: st.ModTime(), txid: active.txid})
	return nil
}
