package boltrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agtsdk/agt/resource"
)

// Token store layout:
//
//	tokens/<ref>  -> the value, as the caller gave it
//	meta/format   -> "tokens-1"
var (
	bucketTokens       = []byte("tokens")
	tokenFormatVersion = []byte("tokens-1")
)

// TokenStoreOptions configure OpenTokenStore. A nil *TokenStoreOptions
// means the defaults of each field.
type TokenStoreOptions struct {
	// LockTimeout bounds the wait of each operation for the file lock
	// another process holds. Zero means DefaultLockTimeout.
	LockTimeout time.Duration

	// NoSync skips the fsync at each commit, as Options.NoSync does. Meant
	// for tests. False (the zero value) fsyncs every commit.
	NoSync bool
}

// TokenStore is a resource.TokenStore on its own bbolt file. It opens the
// file only for the span of each operation (the shared mode of Options),
// so a host and the agt CLI can use one file at once; token operations
// are rare, so the cost of an open per operation does not matter. It is
// safe for concurrent use, also by several processes: every Update is one
// bbolt write transaction under the file's exclusive lock.
type TokenStore struct {
	repo *Repo
}

var _ resource.TokenStore = (*TokenStore)(nil)

// OpenTokenStore opens (creating if missing, with mode 0600) the token
// file at path and checks it. The file holds credentials: an existing file
// that group or others may read or write is refused (on Unix systems,
// checked at every operation), and so is a damaged file (ErrDamaged) or a
// resource store's file. Close it when done.
func OpenTokenStore(path string, opts *TokenStoreOptions) (*TokenStore, error) {
	var o TokenStoreOptions
	if opts != nil {
		o = *opts
	}
	repo, err := openRepo(&Repo{path: path, initFn: initTokenBuckets, private: true}, &Options{
		LockTimeout: o.LockTimeout,
		Shared:      true,
		NoSync:      o.NoSync,
		FileMode:    0o600,
	})
	if err != nil {
		return nil, err
	}
	return &TokenStore{repo: repo}, nil
}

func initTokenBuckets(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	switch v := meta.Get(keyFormat); {
	case v == nil:
		if tx.Bucket(bucketResources) != nil {
			return errors.New("the file is a resource store, not a token store: give the token store its own file")
		}
		if err := meta.Put(keyFormat, tokenFormatVersion); err != nil {
			return err
		}
	case bytes.Equal(v, formatVersion):
		return errors.New("the file is a resource store, not a token store: give the token store its own file")
	case !bytes.Equal(v, tokenFormatVersion):
		return fmt.Errorf("the file's format is not %s: it was written by another version of agt; use that version, or a new file", tokenFormatVersion)
	}
	_, err = tx.CreateBucketIfNotExists(bucketTokens)
	return err
}

// Path returns the file path the store was opened with.
func (s *TokenStore) Path() string { return s.repo.path }

// Close marks the store closed: later operations return ErrClosed. The
// file is open only during operations, so nothing else is released.
func (s *TokenStore) Close() error { return s.repo.Close() }

// tokensBucket returns the tokens bucket; a file without it is not a
// token store.
func (s *TokenStore) tokensBucket(tx *bolt.Tx) (*bolt.Bucket, error) {
	b := tx.Bucket(bucketTokens)
	if b == nil {
		return nil, fmt.Errorf("boltrepo: %s holds no tokens bucket: it is not a token store (was the file replaced?)", s.repo.path)
	}
	return b, nil
}

// Load returns a copy of ref's value, or an error matching
// resource.ErrNotFound.
func (s *TokenStore) Load(ctx context.Context, ref resource.Ref) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := resource.CheckToken(ref, nil); err != nil {
		return nil, err
	}
	var out []byte
	err := s.repo.withDB(ctx, false, func(tx *bolt.Tx) error {
		b, err := s.tokensBucket(tx)
		if err != nil {
			return err
		}
		v := b.Get([]byte(ref))
		if v == nil {
			return fmt.Errorf("boltrepo: token %s: %w", ref, resource.ErrNotFound)
		}
		if err := s.checkStored(ref, v); err != nil {
			return err
		}
		out = bytes.Clone(v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkStored refuses a stored value over the bound: the file is hostile
// input, and a caller must never be handed more than it could write.
func (s *TokenStore) checkStored(ref resource.Ref, v []byte) error {
	if len(v) > resource.MaxTokenBytes {
		return fmt.Errorf("boltrepo: %s: the stored token of %s is %d bytes, more than resource.MaxTokenBytes: the file was not written by this package; remove the entry or the file", s.repo.path, ref, len(v))
	}
	return nil
}

// Update runs f on ref's value inside one bbolt write transaction, under
// the file's exclusive lock, and stores its result (nil or empty
// deletes). An error from f writes nothing and is returned as is.
func (s *TokenStore) Update(ctx context.Context, ref resource.Ref, f func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := resource.CheckToken(ref, nil); err != nil {
		return err
	}
	var fnPanic *hostPanic
	err := s.repo.withDB(ctx, true, func(tx *bolt.Tx) error {
		b, err := s.tokensBucket(tx)
		if err != nil {
			return err
		}
		key := []byte(ref)
		var old []byte
		if v := b.Get(key); v != nil {
			if err := s.checkStored(ref, v); err != nil {
				return err
			}
			old = bytes.Clone(v)
		}
		next, err := callHost(f, old, &fnPanic)
		if err != nil {
			return err
		}
		if err := resource.CheckToken(ref, next); err != nil {
			return err
		}
		if len(next) == 0 {
			return b.Delete(key)
		}
		return b.Put(key, bytes.Clone(next))
	})
	if fnPanic != nil {
		panic(fnPanic.value) // rolled back; the caller's panic goes on
	}
	return err
}
