package pgrepo

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agtsdk/agt/resource"
)

// TokenTableName is the table of the Repo's TokenStore, beside TableName.
const TokenTableName = "agt_oauth_tokens"

// tokenDDL is the token table, as documented in doc.go; %s is its quoted
// name. The CHECK repeats resource.MaxTokenBytes, so the database itself
// refuses a larger value.
const tokenDDL = `CREATE TABLE IF NOT EXISTS %s (
	ref        text COLLATE "C" PRIMARY KEY,
	data       bytea CHECK (octet_length(data) <= 65536),
	updated_at timestamptz NOT NULL DEFAULT now()
)`

// maxTokenAttempts bounds the transactions of one Update: an attempt is
// repeated only when another writer deleted the row between its two
// statements, or the connection broke before COMMIT was sent.
const maxTokenAttempts = 8

// TokenStore is a resource.TokenStore on the Repo's database, in its own
// table (TokenTableName, in the Repo's schema). It is safe for concurrent
// use by any number of processes: Update locks the row (SELECT ... FOR
// UPDATE) for its transaction. It shares the Repo's pool: closing the Repo
// closes it.
type TokenStore struct {
	repo  *Repo
	table string
	sql   struct{ load, placeholder, lock, write, delete string }

	// ready: the table was created or checked.
	ready lazyTable
}

var _ resource.TokenStore = (*TokenStore)(nil)

// TokenStore returns the token store of the Repo's database. Its first
// call that succeeds creates the table (TokenTableName) when missing, or,
// with Options.SkipCreate, checks that it can be read: a host that never
// uses OAuth never touches the table, and a database where it cannot be
// created fails only the token calls, with an error saying what to do.
func (r *Repo) TokenStore() resource.TokenStore {
	s := &TokenStore{repo: r}
	if r.schema != "" {
		s.table = pgx.Identifier{r.schema, TokenTableName}.Sanitize()
	} else {
		s.table = pgx.Identifier{TokenTableName}.Sanitize()
	}
	t := s.table
	// A row whose data is NULL is an Update's placeholder, never committed.
	s.sql.load = "SELECT data FROM " + t + " WHERE ref = $1 AND data IS NOT NULL"
	s.sql.placeholder = "INSERT INTO " + t + " (ref, data) VALUES ($1, NULL) ON CONFLICT (ref) DO NOTHING"
	s.sql.lock = "SELECT data FROM " + t + " WHERE ref = $1 FOR UPDATE"
	s.sql.write = "UPDATE " + t + " SET data = $2, updated_at = now() WHERE ref = $1"
	s.sql.delete = "DELETE FROM " + t + " WHERE ref = $1"
	return s
}

// prepare creates or checks the table once.
func (s *TokenStore) prepare(ctx context.Context) error {
	return s.ready.prepare(ctx, s.repo, "token store", s.table, "ref, data, updated_at", tokenDDL)
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
	if err := s.prepare(ctx); err != nil {
		return nil, err
	}
	var data []byte
	err := s.repo.read(ctx, func() error {
		return s.repo.pool.QueryRow(ctx, s.sql.load, string(ref)).Scan(&data)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pgrepo: token %s: %w", ref, resource.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pgrepo: load token %s: %w", ref, err)
	}
	if err := checkStoredToken(ref, data); err != nil {
		return nil, err
	}
	return data, nil
}

// checkStoredToken refuses a stored value over the bound (a table written
// by something else, without the CHECK).
func checkStoredToken(ref resource.Ref, data []byte) error {
	if len(data) > resource.MaxTokenBytes {
		return fmt.Errorf("pgrepo: the stored token of %s is %d bytes, more than resource.MaxTokenBytes: it was not written by this package; delete the row", ref, len(data))
	}
	return nil
}

// Update runs f on ref's value in one transaction that holds the row lock
// (SELECT ... FOR UPDATE) from the read to the write, and stores f's
// result (nil or empty deletes). A missing value is locked through a
// placeholder row inserted in the same transaction, so two first logins
// also serialize. An error from f rolls back and is returned as is.
func (s *TokenStore) Update(ctx context.Context, ref resource.Ref, f func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := resource.CheckToken(ref, nil); err != nil {
		return err
	}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		retry, err := s.updateOnce(ctx, ref, f)
		if !retry || ctx.Err() != nil {
			return err
		}
		if attempt >= maxTokenAttempts {
			return fmt.Errorf("pgrepo: update token %s: nothing was written after %d attempts: %w", ref, attempt, err)
		}
	}
}

// errTokenVanished is an attempt that found its row deleted by another
// writer between the placeholder insert and the lock.
var errTokenVanished = errors.New("the row was deleted by another writer meanwhile")

// updateOnce runs one Update transaction. retry is true when it cannot
// have committed and may run again.
func (s *TokenStore) updateOnce(ctx context.Context, ref resource.Ref, f func(old []byte) ([]byte, error)) (retry bool, err error) {
	key := resource.Key{Kind: "token", Ref: ref}
	tx, err := s.repo.pool.Begin(ctx)
	if err != nil {
		return connectionFailed(err), fmt.Errorf("pgrepo: update token %s: nothing was written: %w", ref, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, s.sql.placeholder, string(ref)); err != nil {
		return connectionFailed(err), fmt.Errorf("pgrepo: update token %s: nothing was written: %w", ref, err)
	}
	var old []byte
	err = tx.QueryRow(ctx, s.sql.lock, string(ref)).Scan(&old)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, fmt.Errorf("pgrepo: update token %s: %w", ref, errTokenVanished)
	}
	if err != nil {
		return connectionFailed(err), fmt.Errorf("pgrepo: update token %s: nothing was written: %w", ref, err)
	}
	if err := checkStoredToken(ref, old); err != nil {
		return false, err
	}
	next, err := f(old)
	if err != nil {
		return false, err
	}
	if err := resource.CheckToken(ref, next); err != nil {
		return false, err
	}
	if len(next) == 0 {
		_, err = tx.Exec(ctx, s.sql.delete, string(ref))
	} else {
		_, err = tx.Exec(ctx, s.sql.write, string(ref), next)
	}
	if err != nil {
		return false, fmt.Errorf("pgrepo: update token %s: nothing was written: %w", ref, err)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("pgrepo: update token %s: nothing was written: %w", ref, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, writeError("update", key, err)
	}
	return false, nil
}
