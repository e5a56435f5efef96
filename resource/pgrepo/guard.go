package pgrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agtsdk/agt/resource"
)

var _ resource.GuardedRepository = (*Repo)(nil)

// guard is the check a guarded write makes of another resource.
type guard struct {
	key   resource.Key
	check func(resource.Resource, error) error
}

// Guarded implements resource.GuardedRepository: each write runs as one
// transaction that first reads the guard's row FOR SHARE, so a write to
// the guard waits until the guarded write has committed or rolled back.
// Two guarded writes that lock each other's guard deadlock; PostgreSQL
// aborts one, which runs again (nothing of it was committed).
func (r *Repo) Guarded(key resource.Key, check func(resource.Resource, error) error) resource.Repository {
	return guarded{r: r, g: &guard{key: key, check: check}}
}

// judgeRow calls the check with a row read for the guard; err is the
// read's: nil or pgx.ErrNoRows.
func (g *guard) judgeRow(cur resource.Resource, err error, op string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return g.check(resource.Resource{}, fmt.Errorf("pgrepo: %s: %s: %w", op, g.key, resource.ErrNotFound))
	}
	return g.check(copyResource(cur), nil)
}

// lockRow locks the row of key FOR UPDATE in tx and returns it, after
// judging g (when not nil): a guard of another key is locked FOR SHARE
// and judged first; the row of key itself is judged as locked. retry is
// true for a failure after which the transaction may run again.
func (r *Repo) lockRow(ctx context.Context, tx pgx.Tx, op string, key resource.Key, g *guard) (cur resource.Resource, retry bool, err error) {
	if g != nil && g.key != key {
		if retry, err := r.judge(ctx, tx, op, key, g); err != nil {
			return resource.Resource{}, retry, err
		}
	}
	cur = resource.Resource{Kind: key.Kind, Ref: key.Ref}
	err = tx.QueryRow(ctx, r.sql.modifyLock, string(key.Kind), string(key.Ref)).Scan(&cur.Revision, &cur.Data, &cur.CreatedAt, &cur.UpdatedAt)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return resource.Resource{}, retryable(err), fmt.Errorf("pgrepo: %s %s: nothing was written: %w", op, key, err)
	}
	cur = normalize(cur)
	if g != nil && g.key == key {
		if cerr := g.judgeRow(cur, err, op); cerr != nil {
			return resource.Resource{}, false, cerr
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return resource.Resource{}, false, fmt.Errorf("pgrepo: %s %s: %w", op, key, resource.ErrNotFound)
	}
	return cur, false, nil
}

// judge reads g's row FOR SHARE in tx, which keeps it as read until tx
// ends, and calls the check with it.
func (r *Repo) judge(ctx context.Context, tx pgx.Tx, op string, key resource.Key, g *guard) (retry bool, err error) {
	if err := checkKey(g.key); err != nil {
		return false, g.check(resource.Resource{}, err)
	}
	cur := resource.Resource{Kind: g.key.Kind, Ref: g.key.Ref}
	err = tx.QueryRow(ctx, r.sql.guardLock, string(g.key.Kind), string(g.key.Ref)).Scan(&cur.Revision, &cur.Data, &cur.CreatedAt, &cur.UpdatedAt)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return retryable(err), fmt.Errorf("pgrepo: %s %s: nothing was written: %w", op, key, err)
	}
	return false, g.judgeRow(normalize(cur), err, op)
}

// retryable reports a failure after which a transaction cannot have
// committed and may run again: a broken connection before COMMIT was
// sent, or PostgreSQL ending it for a deadlock.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "40P01" { // deadlock_detected
		return true
	}
	return connectionFailed(err)
}

// inTx runs one guarded write, body, as a transaction and commits it,
// again (within the connection attempts) while it fails retryably.
func (r *Repo) inTx(ctx context.Context, op string, key resource.Key, body func(tx pgx.Tx) (retry bool, err error)) error {
	for attempt := 1; ; attempt++ {
		retry, err := r.txOnce(ctx, op, key, body)
		if retry && attempt < r.connAttempts() && ctx.Err() == nil {
			continue
		}
		return err
	}
}

func (r *Repo) txOnce(ctx context.Context, op string, key resource.Key, body func(tx pgx.Tx) (bool, error)) (retry bool, err error) {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return connectionFailed(err), fmt.Errorf("pgrepo: %s %s: nothing was written: %w", op, key, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if retry, err := body(tx); err != nil {
		return retry, err
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("pgrepo: %s %s: nothing was written: %w", op, key, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, writeError(op, key, err)
	}
	return false, nil
}

// guarded is the view Guarded returns: writes judge the guard first in
// their transaction, reads are the Repo's.
type guarded struct {
	r *Repo
	g *guard
}

func (v guarded) Get(ctx context.Context, key resource.Key) (resource.Resource, error) {
	return v.r.Get(ctx, key)
}

func (v guarded) List(ctx context.Context, kind resource.Kind, category string) ([]resource.Resource, error) {
	return v.r.List(ctx, kind, category)
}

func (v guarded) Modify(ctx context.Context, key resource.Key, expected int64, fn func(cur resource.Resource) (json.RawMessage, error)) (resource.Resource, error) {
	if err := checkKey(key); err != nil {
		return resource.Resource{}, err
	}
	return v.r.modify(ctx, key, expected, fn, v.g)
}

func (v guarded) Update(ctx context.Context, key resource.Key, data json.RawMessage, expected int64) (resource.Resource, error) {
	if err := checkKey(key); err != nil {
		return resource.Resource{}, err
	}
	if err := checkData(key, data); err != nil {
		return resource.Resource{}, err
	}
	return v.r.modify(ctx, key, expected, func(resource.Resource) (json.RawMessage, error) { return data, nil }, v.g)
}

func (v guarded) Create(ctx context.Context, key resource.Key, data json.RawMessage) (resource.Resource, error) {
	if err := checkKey(key); err != nil {
		return resource.Resource{}, err
	}
	if err := checkData(key, data); err != nil {
		return resource.Resource{}, err
	}
	var res resource.Resource
	err := v.r.inTx(ctx, "create", key, func(tx pgx.Tx) (bool, error) {
		if retry, err := v.r.judge(ctx, tx, "create", key, v.g); err != nil {
			return retry, err
		}
		res = resource.Resource{Kind: key.Kind, Ref: key.Ref}
		err := tx.QueryRow(ctx, v.r.sql.create, string(key.Kind), string(key.Ref), []byte(data)).Scan(&res.Revision, &res.Data, &res.CreatedAt, &res.UpdatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, fmt.Errorf("pgrepo: create %s: %w", key, resource.ErrExists)
		}
		if err != nil {
			return retryable(err), fmt.Errorf("pgrepo: create %s: nothing was written: %w", key, err)
		}
		return false, nil
	})
	if err != nil {
		return resource.Resource{}, err
	}
	return normalize(res), nil
}

func (v guarded) Delete(ctx context.Context, key resource.Key, expected int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return v.r.inTx(ctx, "delete", key, func(tx pgx.Tx) (bool, error) {
		cur, retry, err := v.r.lockRow(ctx, tx, "delete", key, v.g)
		if err != nil {
			return retry, err
		}
		if expected != resource.AnyRevision && cur.Revision != expected {
			return false, &resource.ConflictError{Key: key, Expected: expected, Current: cur.Revision}
		}
		if _, err := tx.Exec(ctx, v.r.sql.deleteLocked, string(key.Kind), string(key.Ref)); err != nil {
			return false, fmt.Errorf("pgrepo: delete %s: nothing was written: %w", key, err)
		}
		return false, nil
	})
}
