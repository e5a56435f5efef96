package resource

import (
	"context"
	"slices"
	"sync"
)

// TokenStore keeps the OAuth credentials of MCP registrations (tokens, the
// client registration obtained for them). They are credentials, not
// configuration: never in documents. The bytes are opaque to the store;
// mcpconn owns their encoding. A TokenStore must be safe for concurrent
// use.
type TokenStore interface {
	// Load returns the credential stored for ref; ErrNotFound when none.
	Load(ctx context.Context, ref Ref) ([]byte, error)
	// Update is an atomic read-modify-write of ref's credential: f gets
	// the stored bytes (nil when none) and returns the new ones; f
	// returning nil, nil deletes, an error leaves the store as it was.
	Update(ctx context.Context, ref Ref, f func(old []byte) ([]byte, error)) error
}

// NewMemoryTokenStore returns a TokenStore that keeps the credentials in
// memory, for the life of the process.
func NewMemoryTokenStore() TokenStore { return &memoryTokenStore{m: map[Ref][]byte{}} }

type memoryTokenStore struct {
	mu sync.Mutex
	m  map[Ref][]byte
}

func (s *memoryTokenStore) Load(ctx context.Context, ref Ref) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[ref]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(b), nil
}

func (s *memoryTokenStore) Update(ctx context.Context, ref Ref, f func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.m[ref]
	if ok {
		old = slices.Clone(old)
	}
	b, err := f(old)
	if err != nil {
		return err
	}
	if b == nil {
		delete(s.m, ref)
		return nil
	}
	s.m[ref] = slices.Clone(b)
	return nil
}
