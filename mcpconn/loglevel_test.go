//lint:file-ignore SA1019 logging is current in protocol 2025-11-25

package mcpconn_test

import (
	"context"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 24 item 7: Handlers.LogLevel "" is "info", for sharing too: a
// session asking "" and one asking "info" share one connection; one
// asking "debug" gets its own.
func TestLogLevelSharedKey(t *testing.T) {
	t.Parallel()
	srv, _ := clientFeatures(t)
	srv.Shared = true
	c := quickConnector(nil)
	t.Cleanup(func() { _ = c.Close() })
	logf := func(context.Context, mcpconn.Incoming, *mcp.LoggingMessageParams) {}
	for i, level := range []mcp.LoggingLevel{"", "info", "debug"} {
		s, err := c.Connect(context.Background(), "tools/fake", srv, &mcpconn.ConnectOptions{Handlers: &mcpconn.Handlers{Log: logf, LogLevel: level}, Revision: 1, Share: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if n, want := c.SharedConnections(), []int{1, 1, 2}[i]; n != want {
			t.Errorf("after a session asking %q: %d shared connections; want %d", level, n, want)
		}
	}
}
