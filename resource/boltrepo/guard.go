package boltrepo

import (
	"context"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/agtsdk/agt/resource"
)

var _ resource.GuardedRepository = (*Repo)(nil)

// guard is the check a guarded write makes of another resource.
type guard struct {
	key   resource.Key
	check func(resource.Resource, error) error
}

// Guarded implements resource.GuardedRepository: the guard is read and
// judged inside each write's transaction, which holds the file's single
// writer lock, so no write to the guard lands before the write commits.
func (r *Repo) Guarded(key resource.Key, check func(resource.Resource, error) error) resource.Repository {
	return guarded{r: r, g: &guard{key: key, check: check}}
}

// judge reads g's resource in tx and calls its check; a nil g passes. A
// panic of check is stored in *p, as callHost does for Modify's fn.
func (r *Repo) judge(tx *bolt.Tx, g *guard, p **hostPanic) error {
	if g == nil {
		return nil
	}
	var cur resource.Resource
	readErr := g.key.Validate()
	if readErr == nil {
		var v []byte
		if _, v, readErr = r.lookup(tx, g.key); readErr == nil {
			cur, readErr = decodeRecord(g.key, v)
		}
	}
	_, err := callHost(func(cur resource.Resource) (struct{}, error) { return struct{}{}, g.check(cur, readErr) }, cur, p)
	return err
}

// guarded is the view Guarded returns: writes judge the guard first,
// reads are the Repo's.
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

func (v guarded) Create(ctx context.Context, key resource.Key, data json.RawMessage) (resource.Resource, error) {
	return v.r.create(ctx, key, data, v.g)
}

func (v guarded) Update(ctx context.Context, key resource.Key, data json.RawMessage, expected int64) (resource.Resource, error) {
	return v.r.update(ctx, key, data, expected, v.g)
}

func (v guarded) Modify(ctx context.Context, key resource.Key, expected int64, fn func(cur resource.Resource) (json.RawMessage, error)) (resource.Resource, error) {
	return v.r.modify(ctx, key, expected, fn, true, v.g)
}

func (v guarded) Delete(ctx context.Context, key resource.Key, expected int64) error {
	return v.r.delete(ctx, key, expected, v.g)
}
