package agt_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Runs of a Host share a registration that says "shared" (one start
// for both), and Host.Close ends the shared connection the idle time
// would have kept (TestMain's goleak sees its goroutines otherwise).
func TestHostRunsShareAndCloseEndsTheSharedConnection(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var dials atomic.Int32
			dial := mcptest.Dial(&mcptest.ServerOptions{Era: e})
			h, err := agt.Open(ctx, t.TempDir(), &agt.Options{Connector: &mcpconn.ConnectorOptions{
				Dial: func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
					dials.Add(1)
					return dial(ctx, ref, srv)
				},
				Limits: &mcpconn.Limits{SharedIdleTimeout: time.Hour},
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			write(t, h, resource.KindMCP, "clock", `{"mcpServers": {"clock": {"command": "fakemcp", "cwd": "/", "shared": true}}}`)
			write(t, h, resource.KindAgent, "writer", `{"mcps": ["clock"]}`)
			for range 2 {
				r, err := h.NewRun(ctx, "writer", &run.Options{Permission: policy.AutoAllow(), FailOnMountError: true})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
			}
			if got := dials.Load(); got != 1 {
				t.Errorf("two Runs of a shared registration started %d connections; want 1", got)
			}
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			if got := h.Connector().SharedConnections(); got != 0 {
				t.Errorf("SharedConnections after Host.Close = %d; want 0", got)
			}
		})
	}
}
