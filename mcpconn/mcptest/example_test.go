package mcptest_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// The fake server in-process, on the go-sdk's in-memory transports.
func ExampleNewServer() {
	ctx := context.Background()
	counters := &mcptest.Counters{}
	server := mcptest.NewServer(&mcptest.ServerOptions{Counters: counters})
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverEnd, nil) // the server first
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).
		Connect(ctx, clientEnd, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolSearch,
		Arguments: map[string]any{"query": "ta", "limit": 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)

	// limit past its maximum: the server refuses the call itself.
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolSearch,
		Arguments: map[string]any{"query": "ta", "limit": mcptest.SearchLimitMax + 1}})
	fmt.Println(res.IsError, counters.Calls())
	// Output:
	// false {"results":["beta","delta"]}
	// true 2
}
