package boltrepo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"

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

// checkFile checks, before bbolt maps f, everything bbolt trusts without
// checking when it opens a file: both meta pages (magic, version,
// checksum), the page size, the file size against the high-water mark of
// the meta bbolt will use, and that meta's root and freelist pages, with
// the freelist's length. bbolt reads past the end of the mapping (SIGSEGV,
// SIGBUS: not recoverable) or panics when these are wrong. It reads the two
// meta pages and one page header, nothing more.
//
// An empty file is fine (bbolt initialises it). A file of which no meta
// page has bbolt's magic is reported as bbolt does (errors.ErrInvalid), so
// is one whose meta pages are intact but of another bbolt format
// (errors.ErrVersionMismatch); anything else wrong is ErrDamaged.
func checkFile(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size == 0 {
		return nil
	}
	first, err := readAtMost(f, 0, 4096)
	if err != nil {
		return err
	}
	m0 := parseMeta(first)
	magicSeen := m0.err != errMetaMagic

	// The page size, found as bbolt finds it: from the first meta, or else
	// from the first valid meta at 1 KiB, 2 KiB, ... 16 MiB.
	pageSize := int64(m0.pageSize)
	if m0.err != nil {
		pageSize = 0
		for pos := int64(minPageSize); pos <= maxPageSize && pos < size-1024; pos <<= 1 {
			b, err := readAtMost(f, pos, pageHeaderSize+metaSize)
			if err != nil {
				return err
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
			return berrors.ErrInvalid
		}
		return damaged(path, "both meta pages are invalid")
	}
	if pageSize < minPageSize || pageSize > maxPageSize {
		return damaged(path, "its page size %d is outside %d to %d", pageSize, minPageSize, maxPageSize)
	}
	if size < 2*pageSize {
		return damaged(path, "it is %d bytes long, shorter than its two meta pages (%d bytes)", size, 2*pageSize)
	}
	second, err := readAtMost(f, pageSize, pageHeaderSize+metaSize)
	if err != nil {
		return err
	}
	m1 := parseMeta(second)

	// bbolt uses the valid meta with the higher txid.
	var active meta
	switch {
	case m0.err == nil && m1.err == nil:
		if m0.pageSize != m1.pageSize {
			return damaged(path, "its meta pages disagree on the page size")
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
		return berrors.ErrInvalid
	case m0.err == errMetaVersion && m1.err == errMetaVersion:
		return berrors.ErrVersionMismatch
	default:
		return damaged(path, "both meta pages are invalid")
	}

	pages := uint64(size / pageSize)
	if active.pgid > pages {
		return damaged(path, "it is %d bytes long, shorter than the %d pages of %d bytes its meta page counts", size, active.pgid, pageSize)
	}
	if active.root < 2 || active.root >= active.pgid {
		return damaged(path, "its root page %d is outside pages 2 to %d", active.root, active.pgid)
	}
	if active.freelist == noFreelist {
		return nil
	}
	if active.freelist < 2 || active.freelist >= active.pgid {
		return damaged(path, "its freelist page %d is outside pages 2 to %d", active.freelist, active.pgid)
	}
	// The freelist's header: bbolt reads count page ids after it (the count
	// is the first id when the header's count is 0xFFFF) without checking
	// that they lie inside the pages the freelist occupies.
	b, err := readAtMost(f, int64(active.freelist)*pageSize, pageHeaderSize+8)
	if err != nil {
		return err
	}
	if len(b) < pageHeaderSize+8 {
		return damaged(path, "its freelist page %d is cut short", active.freelist)
	}
	ne := binary.NativeEndian
	flags, count, overflow := ne.Uint16(b[8:]), uint64(ne.Uint16(b[10:])), uint64(ne.Uint32(b[12:]))
	if flags != freelistPageFlag {
		return damaged(path, "its freelist page %d is not a freelist page", active.freelist)
	}
	if active.freelist+overflow >= active.pgid {
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
