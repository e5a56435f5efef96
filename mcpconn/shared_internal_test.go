package mcpconn

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inMemoryShared is a Connector whose servers are in-memory go-sdk
// servers (no process), with the given idle time.
func inMemoryShared(t *testing.T, idle time.Duration) *Connector {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	c := NewConnector(&ConnectorOptions{SharedIdleTimeout: idle,
		Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			if _, err := server.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// An idle timer that fired while a new session took the connection, and
// let go of it again, is stale: it must not close the connection whose
// new idle time has just begun (the timer's callback may wait on the
// pool's lock for as long as that takes).
func TestStaleIdleTimerClosesNothing(t *testing.T) {
	t.Parallel()
	c := inMemoryShared(t, time.Hour)
	srv := resource.MCPServer{Shared: true}
	take := func() *Session {
		t.Helper()
		s, err := c.ConnectWith(context.Background(), "mem", srv, &ConnectOptions{Revision: 1})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := take()
	_ = a.Close()
	p := c.pool
	p.mu.Lock()
	var e *sharedConn
	for _, o := range p.entries {
		e = o
	}
	stale := e.idleGen
	p.mu.Unlock()

	b := take()
	_ = b.Close()
	p.expire(e, stale) // the first timer, late
	if c.SharedConnections() != 1 || e.base.gone() {
		t.Fatal("a stale idle timer closed the connection at the start of its new idle time")
	}
	p.mu.Lock()
	current := e.idleGen
	p.mu.Unlock()
	p.expire(e, current)
	if c.SharedConnections() != 0 || !e.base.closed.Load() {
		t.Error("the current idle timer left the connection open")
	}
}

// poll waits for ok, failing the test after a wide bound.
func poll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A session waiting for a shared start whose starter gave up (its
// context ended) does not take the starter's cancellation: it starts the
// connection again under its own context, and gets it.
func TestSharedWaiterOutlivesAStarterThatGivesUp(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	var dials atomic.Int32
	c := NewConnector(&ConnectorOptions{SharedIdleTimeout: time.Hour,
		Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
			if dials.Add(1) == 1 {
				<-ctx.Done() // the first start hangs until its starter gives up
				return nil, ctx.Err()
			}
			st, ct := mcp.NewInMemoryTransports()
			if _, err := server.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}})
	t.Cleanup(func() { _ = c.Close() })
	srv := resource.MCPServer{Shared: true}
	opts := &ConnectOptions{Revision: 1}
	starterCtx, giveUp := context.WithCancel(context.Background())
	defer giveUp()
	starter := make(chan error, 1)
	go func() {
		_, err := c.ConnectWith(starterCtx, "mem", srv, opts)
		starter <- err
	}()
	poll(t, "the first start", func() bool { return dials.Load() == 1 })
	type result struct {
		s   *Session
		err error
	}
	waiter := make(chan result, 1)
	go func() {
		s, err := c.ConnectWith(context.Background(), "mem", srv, opts)
		waiter <- result{s, err}
	}()
	poll(t, "the waiter joins the start", func() bool {
		c.pool.mu.Lock()
		defer c.pool.mu.Unlock()
		for _, e := range c.pool.entries {
			return e.refs == 2
		}
		return false
	})
	giveUp()
	if err := <-starter; !errors.Is(err, context.Canceled) {
		t.Errorf("the starter that gave up got %v; want context.Canceled", err)
	}
	got := <-waiter
	if got.err != nil {
		t.Fatalf("the waiter took the starter's end: %v", got.err)
	}
	defer got.s.Close()
	if n := dials.Load(); n != 2 {
		t.Errorf("%d starts; want 2 (the waiter's own after the starter gave up)", n)
	}
	if _, err := got.s.Tools(context.Background()); err != nil {
		t.Errorf("the waiter's session: %v", err)
	}
}
