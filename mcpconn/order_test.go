//lint:file-ignore SA1019 logging is current in protocol 2025-11-25

package mcpconn_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 24 item 5: the log lines and progress a server sends before a
// call's result have reached their handlers, with the call, when
// CallTool returns (no waiting in the test), on every transport; over
// streamable HTTP a line that names no call is the call's by the event
// stream it came on, read there. A handler that never returns holds a
// result at most the tool timeout.
func TestNotificationsBeforeResult(t *testing.T) {
	t.Parallel()
	stdio, _ := clientFeatures(t)
	args := []string{"-fault", string(mcptest.FaultClientFeatures)}
	for _, tt := range []struct {
		name string
		srv  resource.MCPServer
	}{
		{"stdio", stdio},
		{"streamable HTTP", resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, args...)}},
		{"SSE", resource.MCPServer{Type: resource.TransportSSE, URL: mcptest.StartHTTP(t, append(args, "-sse")...)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []string
			note := func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
			s := connectWith(t, quickConnector(nil), tt.srv, &mcpconn.Handlers{
				Log: func(_ context.Context, in mcpconn.Incoming, p *mcp.LoggingMessageParams) {
					note(fmt.Sprintf("log %v %v", in.Calls, p.Data))
				},
				Progress: func(_ context.Context, in mcpconn.Incoming, p *mcp.ProgressNotificationParams) {
					note(fmt.Sprintf("progress %v %v", in.Calls, p.Progress))
				},
			})
			for i := range 10 {
				call(t, s, mcpconn.WithCallTag(context.Background(), "L"), mcptest.ToolLog, mcptest.LogIn{Count: 2})
				call(t, s, mcpconn.WithCallTag(context.Background(), "P"), mcptest.ToolProgress, mcptest.ProgressIn{Steps: 2})
				mu.Lock()
				want := []string{"log [L] line 0", "log [L] line 1", "progress [P] 1", "progress [P] 2"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("round %d: handled when the calls returned (-want +got):\n%s", i, diff)
				}
				got = nil
				mu.Unlock()
			}
		})
	}
}
