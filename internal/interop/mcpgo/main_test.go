package main

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// The server's own contract, through mcp-go's in-process client: the
// tools agt's interop test expects, their results, and the call log hook.
// agt drives the built binary in internal/interop.
func TestServerTools(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		calls []string
	)
	c, err := client.NewInProcessClient(newServer(func(name string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, name)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	initReq := mcp.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	initReq.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, initReq); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"add", "echo", "open_ticket", "server_info", "set_level"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"text": "hi"}, "hi"},
		{"add", map[string]any{"a": 2, "b": 0.5}, "2.5"},
		{"set_level", map[string]any{"level": "warn"}, "level warn"},
		{"open_ticket", map[string]any{"id": "AGT-24", "priority": "high"}, "opened AGT-24 (high)"},
		{"server_info", nil, Name + " " + Version},
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tc.tool, tc.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Errorf("%s: %v", tc.tool, err)
			continue
		}
		if len(res.Content) != 1 || res.IsError {
			t.Errorf("%s = %+v, want one text block", tc.tool, res)
			continue
		}
		if text, ok := res.Content[0].(mcp.TextContent); !ok || text.Text != tc.want {
			t.Errorf("%s = %+v, want %q", tc.tool, res.Content[0], tc.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"echo", "add", "set_level", "open_ticket", "server_info"}; !slices.Equal(calls, want) {
		t.Errorf("call log = %v, want %v", calls, want)
	}
}
