package mcpconn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inMemoryShared is a Connector whose servers are in-memory go-sdk
// servers (no process), with the given idle time.
func inMemoryShared(t *testing.T, idle time.Duration) *Connector {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	c := NewConnector(&ConnectorOptions{
		Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			if _, err := server.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		},
		Limits: &Limits{SharedIdleTimeout: idle}})
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
		s, err := c.Connect(context.Background(), "mem", srv, &ConnectOptions{Revision: 1, Share: true})
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

// A session waiting for a shared start whose starter gave up (its
// context ended) does not take the starter's cancellation: it starts the
// connection again under its own context, and gets it.
func TestSharedWaiterOutlivesAStarterThatGivesUp(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	var dials atomic.Int32
	c := NewConnector(&ConnectorOptions{
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
		},
		Limits: &Limits{SharedIdleTimeout: time.Hour}})
	t.Cleanup(func() { _ = c.Close() })
	srv := resource.MCPServer{Shared: true}
	opts := &ConnectOptions{Revision: 1, Share: true}
	starterCtx, giveUp := context.WithCancel(context.Background())
	defer giveUp()
	starter := make(chan error, 1)
	go func() {
		_, err := c.Connect(starterCtx, "mem", srv, opts)
		starter <- err
	}()
	poll.Until(t, "the first start", func() bool { return dials.Load() == 1 })
	type result struct {
		s   *Session
		err error
	}
	waiter := make(chan result, 1)
	go func() {
		s, err := c.Connect(context.Background(), "mem", srv, opts)
		waiter <- result{s, err}
	}()
	poll.Until(t, "the waiter joins the start", func() bool {
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

// Many sessions taking and letting go of shared connections of three
// revisions at once, with an idle time short enough that timers fire
// among them, then Connector.Close: every session works while it holds
// its lease, and nothing is left (TestMain's goleak sees goroutines).
func TestSharedPoolUnderChurn(t *testing.T) {
	t.Parallel()
	c := inMemoryShared(t, time.Millisecond)
	srv := resource.MCPServer{Shared: true}
	const workers, rounds = 16, 40
	var wg sync.WaitGroup
	var failed atomic.Int32
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				s, err := c.Connect(context.Background(), "mem", srv, &ConnectOptions{Revision: int64(1 + (w+i)%3), Share: true})
				if err != nil {
					failed.Add(1)
					t.Errorf("Connect: %v", err)
					return
				}
				if _, err := s.Tools(context.Background()); err != nil {
					// Only a newer revision's start may not end a lease's
					// connection: this one must work.
					failed.Add(1)
					t.Errorf("Tools on a held lease: %v", err)
				}
				_ = s.Close()
			}
		})
	}
	wg.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := c.SharedConnections(); n != 0 {
		t.Errorf("SharedConnections = %d after Close; want 0", n)
	}
	c.pool.mu.Lock()
	defer c.pool.mu.Unlock()
	if len(c.pool.entries) != 0 || len(c.pool.open) != 0 {
		t.Errorf("the pool keeps %d entries, %d open after Close", len(c.pool.entries), len(c.pool.open))
	}
}

// Connector.Close while sessions take and let go of shared connections:
// a take after it fails with ErrUnavailable, a lease held across it
// sees its connection lost, and nothing is left.
func TestConnectorCloseDuringChurn(t *testing.T) {
	t.Parallel()
	c := inMemoryShared(t, time.Millisecond)
	srv := resource.MCPServer{Shared: true}
	const workers = 16
	var wg sync.WaitGroup
	started := make(chan struct{}, workers)
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				s, err := c.Connect(context.Background(), "mem", srv, &ConnectOptions{Revision: int64(1 + (w+i)%3), Share: true})
				if i == 0 {
					started <- struct{}{}
				}
				if err != nil {
					if !errors.Is(err, ErrUnavailable) {
						t.Errorf("Connect during Close: %v; want ErrUnavailable", err)
					}
					return
				}
				if _, err := s.Tools(context.Background()); err != nil && !s.Lost() {
					t.Errorf("Tools on a lease not lost: %v", err)
				}
				_ = s.Close()
			}
		})
	}
	for range workers {
		<-started
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := c.SharedConnections(); n != 0 {
		t.Errorf("SharedConnections = %d after Close; want 0", n)
	}
}

// Tools of a lease that waits for another lease's walk (one at a time on
// the connection) is bounded by its own context: a server slow to list
// for one Run does not hold another Run's start past its deadline.
func TestLeaseToolsWaitIsBoundedByItsContext(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	listing, release := make(chan struct{}, 1), make(chan struct{})
	var held atomic.Bool
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" && held.CompareAndSwap(false, true) {
				listing <- struct{}{}
				<-release // the first walk hangs until the test lets it go
			}
			return next(ctx, method, req)
		}
	})
	c := NewConnector(&ConnectorOptions{
		Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			if _, err := server.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}})
	t.Cleanup(func() { _ = c.Close() })
	defer close(release)
	srv := resource.MCPServer{Shared: true}
	take := func() *Session {
		t.Helper()
		s, err := c.Connect(context.Background(), "mem", srv, &ConnectOptions{Revision: 1, Share: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := take(), take()
	go func() { _, _ = a.Tools(context.Background()) }()
	<-listing
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.Tools(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Tools past its deadline = %v; want context.DeadlineExceeded", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Tools waits for another lease's walk 20 s past its own 100 ms deadline")
	}
}

// A shared start that fails for the server's reason fails its waiters
// with the same error, once (they do not start again each), keeps
// nothing in the pool, and the next session starts anew.
func TestSharedStartFailureReachesWaitersOnce(t *testing.T) {
	t.Parallel()
	var dials atomic.Int32
	gate := make(chan struct{})
	c := NewConnector(&ConnectorOptions{
		Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
			dials.Add(1)
			<-gate
			return nil, errors.New("no such server")
		}})
	t.Cleanup(func() { _ = c.Close() })
	srv := resource.MCPServer{Shared: true}
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := c.Connect(context.Background(), "mem", srv, &ConnectOptions{Revision: 1, Share: true})
			errs <- err
		}()
	}
	poll.Until(t, "all sessions wait on the one start", func() bool {
		c.pool.mu.Lock()
		defer c.pool.mu.Unlock()
		for _, e := range c.pool.entries {
			return e.refs == n
		}
		return false
	})
	close(gate)
	for range n {
		if err := <-errs; !errors.Is(err, ErrStart) {
			t.Errorf("a session of the failed start got %v; want ErrStart", err)
		}
	}
	if d := dials.Load(); d != 1 {
		t.Errorf("%d starts for %d sessions of a failing server; want 1", d, n)
	}
	if got := c.SharedConnections(); got != 0 {
		t.Errorf("SharedConnections = %d after a failed start; want 0", got)
	}
	if _, err := c.Connect(context.Background(), "mem", srv, &ConnectOptions{Revision: 1, Share: true}); err == nil || dials.Load() != 2 {
		t.Errorf("the next session: %v after %d starts; want a new start, failing", err, dials.Load())
	}
}

// Issue 27 item 1: sharing is asked for with ConnectOptions.Share, not
// implied by a revision: a shared document given a revision without Share,
// or Share without the document's "shared", gets a session of its own;
// Share and the document together get the one connection.
func TestShareIsExplicit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		shared bool
		opts   *ConnectOptions
		want   int // shared connections after two sessions
	}{
		{"revision without Share", true, &ConnectOptions{Revision: 1}, 0},
		{"Share without the document's shared", false, &ConnectOptions{Revision: 1, Share: true}, 0},
		{"nil options", true, nil, 0},
		{"Share", true, &ConnectOptions{Revision: 1, Share: true}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := inMemoryShared(t, time.Hour)
			srv := resource.MCPServer{Shared: tt.shared}
			for range 2 {
				s, err := c.Connect(context.Background(), "mem", srv, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
			}
			if got := c.SharedConnections(); got != tt.want {
				t.Errorf("SharedConnections = %d; want %d", got, tt.want)
			}
		})
	}
}
