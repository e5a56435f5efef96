package mcpconn

import (
	"context"
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
