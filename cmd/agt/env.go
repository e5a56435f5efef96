package main

import (
	"context"
	"fmt"
	"time"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// env is what one invocation of agt carries: its streams, the global flags,
// and the host, opened on first use.
type env struct {
	stdio
	global globalFlags
	h      *agt.Host
}

// host opens the store named by --db (or its defaults) on first use. A
// bbolt file is opened in shared mode: only for the span of each
// operation, so a running host that also uses shared mode and the CLI can
// work on one file.
func (e *env) host(ctx context.Context) (*agt.Host, error) {
	if e.h != nil {
		return e.h, nil
	}
	store := e.global.store
	if store == "" {
		var err error
		if store, err = agt.DefaultStore(); err != nil {
			return nil, fmt.Errorf("%w, or pass --db STORE", err)
		}
	}
	h, err := agt.Open(ctx, store, &agt.Options{Bolt: &boltrepo.Options{Shared: true}})
	if err != nil {
		return nil, err
	}
	e.h = h
	return h, nil
}

func (e *env) close() {
	if e.h != nil {
		_ = e.h.Close()
	}
}

// hostForTimed starts the commands that start or contact servers: it parses
// the reference argument, checks --timeout and opens the store.
func (e *env) hostForTimed(ctx context.Context, cmd, refArg string, timeout time.Duration) (resource.Ref, *agt.Host, error) {
	ref, err := parseRefArg(cmd, refArg)
	if err != nil {
		return "", nil, err
	}
	if timeout <= 0 {
		return "", nil, usagef(cmd, "--timeout must be positive")
	}
	h, err := e.host(ctx)
	if err != nil {
		return "", nil, err
	}
	return ref, h, nil
}
