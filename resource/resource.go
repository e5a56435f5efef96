package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind names a family of resources. The repository accepts any kind that is a
// valid name; the service knows KindMCP and KindAgent.
type Kind string

const (
	// KindMCP is a stored registration of one MCP server.
	KindMCP Kind = "mcp"
	// KindAgent is a stored agent whose mcps field lists its mounts.
	KindAgent Kind = "agent"
)

// Valid reports whether k is a non-empty kind made of lowercase letters,
// digits, '_' and '-', at most 32 bytes long.
func (k Kind) Valid() bool {
	if len(k) == 0 || len(k) > 32 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// maxRefLen is the longest reference accepted, in bytes.
const maxRefLen = 128

// maxSegmentLen bounds each of a reference's one or two segments.
const maxSegmentLen = 64

// Ref is a resource reference: "name" or "category/name". Each
// segment is 1 to 64 characters of lowercase letters, digits, '.', '_' and
// '-', and starts with a letter or digit. Construct one with ParseRef; the
// zero Ref is invalid.
type Ref string

// ParseRef validates s as a reference.
func ParseRef(s string) (Ref, error) {
	if s == "" {
		return "", errors.New("resource: empty reference: write name or category/name")
	}
	if len(s) > maxRefLen {
		return "", fmt.Errorf("resource: reference is %d bytes long; the limit is %d", len(s), maxRefLen)
	}
	segs := strings.Split(s, "/")
	if len(segs) > 2 {
		return "", fmt.Errorf("resource: reference %q has %d segments: write name or category/name", s, len(segs))
	}
	for _, seg := range segs {
		if err := checkSegment(seg); err != nil {
			return "", fmt.Errorf("resource: reference %q: %w", s, err)
		}
	}
	return Ref(s), nil
}

func checkSegment(seg string) error {
	if seg == "" {
		return errors.New("empty segment")
	}
	if len(seg) > maxSegmentLen {
		return fmt.Errorf("segment is %d bytes long; the limit is %d", len(seg), maxSegmentLen)
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '.' || c == '_' || c == '-':
			if i == 0 {
				return fmt.Errorf("segment %q must start with a lowercase letter or digit", seg)
			}
		default:
			return fmt.Errorf("segment %q may only hold lowercase letters, digits, '.', '_' and '-'", seg)
		}
	}
	return nil
}

// Valid reports whether r would pass ParseRef.
func (r Ref) Valid() bool { _, err := ParseRef(string(r)); return err == nil }

// Category is the part before '/', or "" for a plain name.
func (r Ref) Category() string {
	if i := strings.IndexByte(string(r), '/'); i >= 0 {
		return string(r[:i])
	}
	return ""
}

// Name is the part after '/', or the whole reference for a plain name.
func (r Ref) Name() string {
	if i := strings.IndexByte(string(r), '/'); i >= 0 {
		return string(r[i+1:])
	}
	return string(r)
}

func (r Ref) String() string { return string(r) }

// Key identifies one stored resource.
type Key struct {
	Kind Kind
	Ref  Ref
}

func (k Key) String() string { return string(k.Kind) + ":" + string(k.Ref) }

// Resource is one stored document with its revision. Revision starts at 1
// for a new resource and strictly increases with every write; it never
// repeats for a Key, even after delete and create.
type Resource struct {
	Kind      Kind            `json:"kind"`
	Ref       Ref             `json:"reference"`
	Revision  int64           `json:"revision"`
	Data      json.RawMessage `json:"data"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Key returns the resource's key.
func (r Resource) Key() Key { return Key{Kind: r.Kind, Ref: r.Ref} }

// AnyRevision, passed as an expected revision, skips the compare: the write
// is blind but still gets a new revision, and never fails with a conflict
// (only ErrNotFound when the key is missing at that moment).
const AnyRevision int64 = 0

// Repository stores resources. Implementations must be safe for concurrent
// use, must copy bytes they hand out, and must pass resourcetest.Run.
//
// Errors: ErrNotFound when the key is missing, ErrExists when Create finds
// one, *ConflictError (errors.Is ErrConflict) when an expected revision
// differs from the stored one. Other errors are store failures.
type Repository interface {
	// Get returns the stored resource.
	Get(ctx context.Context, key Key) (Resource, error)
	// Create stores a new resource; ErrExists if the key is taken.
	Create(ctx context.Context, key Key, data json.RawMessage) (Resource, error)
	// Update replaces the data of an existing resource if its revision equals
	// expected (AnyRevision skips the check) and returns the new resource.
	Update(ctx context.Context, key Key, data json.RawMessage, expected int64) (Resource, error)
	// Modify reads the current resource, passes it to fn and stores what fn
	// returns, atomically: no other write to key lands in between. If expected
	// is not AnyRevision the current revision must equal it. If fn returns nil
	// data, nothing is written and the current resource is returned. If fn
	// returns an error, nothing is written and that error is returned. fn may
	// be called more than once and must not have side effects.
	Modify(ctx context.Context, key Key, expected int64, fn func(cur Resource) (json.RawMessage, error)) (Resource, error)
	// Delete removes a resource if its revision equals expected (AnyRevision
	// skips the check).
	Delete(ctx context.Context, key Key, expected int64) error
	// List returns the resources of one kind sorted by Ref; a non-empty
	// category keeps only references in that category.
	List(ctx context.Context, kind Kind, category string) ([]Resource, error)
}

// GuardedRepository is a Repository that can judge another stored
// resource inside the transaction of a write. The Service uses it to check
// an agent caller's own document (enabled, manager, capabilities) in the
// same transaction as the caller's write, so a host that takes the rights
// away is never overtaken by a write judged just before; with a plain
// Repository the caller is judged by a read just before the write.
// boltrepo and pgrepo implement it; resourcetest.Run checks it when a
// Repository does.
type GuardedRepository interface {
	Repository
	// Guarded returns a view of the repository whose Create, Update,
	// Modify and Delete read the resource at guard inside their own
	// transaction, before they change anything, and call check with it
	// (with the zero Resource and an error wrapping ErrNotFound when it is
	// missing). An error from check aborts the write, which then changes
	// nothing and returns that error. The guard stays as check saw it
	// until the write commits. Get and List are the repository's own.
	// check may run more than once and must not call the repository.
	Guarded(guard Key, check func(Resource, error) error) Repository
}

// Sentinel errors; test with errors.Is.
var (
	ErrNotFound   = errors.New("resource: not found")
	ErrExists     = errors.New("resource: already exists")
	ErrConflict   = errors.New("resource: revision conflict")
	ErrPermission = errors.New("resource: permission denied")
)

// ConflictError reports a compare-and-set that lost: the caller expected one
// revision and the store holds another.
type ConflictError struct {
	Key      Key
	Expected int64
	Current  int64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("resource: %s: expected revision %d, stored revision is %d: read it again and reapply your change", e.Key, e.Expected, e.Current)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// validRef reports whether s is a valid reference without allocating; it is
// the hot-path twin of ParseRef.
func validRef(s string) bool {
	if len(s) == 0 || len(s) > maxRefLen {
		return false
	}
	segs, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '/' {
			continue
		}
		seg := s[start:i]
		segs++
		if segs > 2 || len(seg) == 0 || len(seg) > maxSegmentLen {
			return false
		}
		for j := 0; j < len(seg); j++ {
			c := seg[j]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			case (c == '.' || c == '_' || c == '-') && j > 0:
			default:
				return false
			}
		}
		start = i + 1
	}
	return true
}

// Validate reports why k cannot name a stored resource: an invalid kind or
// reference. Repositories call it before touching the store.
func (k Key) Validate() error {
	if !k.Kind.Valid() {
		return errors.New("resource: invalid kind: want 1 to 32 of lowercase letters, digits, '_' and '-'")
	}
	if validRef(string(k.Ref)) {
		return nil
	}
	_, err := ParseRef(string(k.Ref))
	return err
}
