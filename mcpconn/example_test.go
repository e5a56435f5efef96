package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// Connect to a server, list its tools and call one. Dial runs the bundled
// fake server in-process; without it the Connector starts the document's
// command in its cwd.
func Example() {
	ctx := context.Background()
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)})
	s, err := c.Connect(ctx, "tools/fake", resource.MCPServer{Command: "fakemcp", Cwd: "/srv/fake"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.ServerInfo().Name, s.ProtocolVersion())

	tools, err := s.Tools(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(tools), "tools, first:", tools[0].Name)

	res, err := s.CallTool(ctx, mcptest.ToolEcho, json.RawMessage(`{"text":"hello"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, res.Content[0].(*content.Text).Text)

	// A business refusal is a result, not an error.
	res, _ = s.CallTool(ctx, mcptest.ToolNoteDelete, json.RawMessage(`{"id":"n1","caller":"bob"}`))
	fmt.Println(res.IsError)
	// Output:
	// agt-fakemcp 2026-07-28
	// 8 tools, first: echo
	// false hello
	// true
}

// Probe a registered server: handshake, tools/list, compile every schema,
// close; no tool is called.
func ExampleProber() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "agt-example-")
	defer os.RemoveAll(dir)
	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer repo.Close()
	doc := []byte(`{"mcpServers":{"fake":{"command":"fakemcp","cwd":"/srv/fake"}}}`)
	if _, err := repo.Create(ctx, resource.Key{Kind: resource.KindMCP, Ref: "tools/fake"}, doc); err != nil {
		fmt.Println(err)
		return
	}

	counters := &mcptest.Counters{}
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		Dial: mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultRootString}, Counters: counters}),
	})
	report, err := mcpconn.NewProber(repo, c, nil).Probe(ctx, "tools/fake")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(report.Server.Name, report.OK, len(report.Tools))
	for _, t := range report.Tools {
		if !t.OK {
			fmt.Println(t.Name, "failed to load")
		}
	}
	fmt.Println("tool calls:", counters.Calls())
	// Output:
	// agt-fakemcp false 9
	// bad_root_string failed to load
	// tool calls: 0
}

// A legacy record without an absolute cwd fails before anything starts.
func ExampleConnector_Connect_legacy() {
	c := mcpconn.NewConnector(nil)
	_, err := c.Connect(context.Background(), "old", resource.MCPServer{Command: "node", Args: []string{"server.js"}}, nil)
	fmt.Println(errors.Is(err, mcpconn.ErrNoAbsoluteCwd))
	// Output: true
}
