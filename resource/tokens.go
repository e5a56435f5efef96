package resource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
)

// TokenStore keeps the OAuth credentials of MCP registrations (tokens, the
// client registration obtained for them), one opaque value per reference.
// They are credentials, not configuration: never in documents, and a store
// never puts them in an error. mcpconn owns their encoding.
//
// Implementations are safe for concurrent use; Update is an atomic
// read-modify-write, so several Runs refreshing one token at once never
// lose a write. Every store refuses a value larger than MaxTokenBytes and
// an invalid reference.
type TokenStore interface {
	// Load returns a copy of the stored value, or an error matching
	// ErrNotFound when there is none.
	Load(ctx context.Context, ref Ref) ([]byte, error)
	// Update calls f with a copy of the stored value (nil when there is
	// none) and stores what f returns, with no other write of ref in
	// between: nil (or empty) deletes the value. An error from f is
	// returned as is and nothing is written. f runs while the store holds
	// the value locked: it must be quick and must not call the store. A
	// store may call f more than once (each attempt sees the value then
	// stored); only the last call's result is written.
	Update(ctx context.Context, ref Ref, f func(old []byte) ([]byte, error)) error
}

// MaxTokenBytes bounds one value of a TokenStore (64 KiB): a token
// response with its refresh token and a client registration fit many
// times over. Stores refuse to write more, and refuse a stored value
// larger than that (a damaged or foreign store) as an error. Fixed.
const MaxTokenBytes = 64 << 10

// CheckToken reports whether a TokenStore may hold value under ref: ref
// must be valid and value at most MaxTokenBytes. Stores call it before
// writing; the error names neither the value nor its content.
func CheckToken(ref Ref, value []byte) error {
	if !ref.Valid() {
		return errors.New("token store: invalid reference: want name or category/name")
	}
	if len(value) > MaxTokenBytes {
		return fmt.Errorf("token store: %s: the credential is %d bytes, more than MaxTokenBytes (%d)", ref, len(value), MaxTokenBytes)
	}
	return nil
}

// NewMemoryTokenStore returns a TokenStore that keeps its values in memory
// for the life of the process.
func NewMemoryTokenStore() TokenStore {
	return &memoryTokenStore{values: map[Ref][]byte{}}
}

type memoryTokenStore struct {
	mu     sync.Mutex
	values map[Ref][]byte
}

func (m *memoryTokenStore) Load(ctx context.Context, ref Ref) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckToken(ref, nil); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[ref]
	if !ok {
		return nil, fmt.Errorf("token store: %s: %w", ref, ErrNotFound)
	}
	return bytes.Clone(v), nil
}

func (m *memoryTokenStore) Update(ctx context.Context, ref Ref, f func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckToken(ref, nil); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next, err := f(bytes.Clone(m.values[ref]))
	if err != nil {
		return err
	}
	if err := CheckToken(ref, next); err != nil {
		return err
	}
	if len(next) == 0 {
		delete(m.values, ref)
		return nil
	}
	m.values[ref] = bytes.Clone(next)
	return nil
}
