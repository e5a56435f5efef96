package agt_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// A host registers an MCP server, mounts it on an agent, starts a Run and
// executes one model step: a call with a bad argument comes back as
// invalid_arguments with its path (the server never sees it), the other
// runs.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agt-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A real host leaves Connector nil: servers start from their documents.
	// Here the bundled fake server runs in memory instead.
	host, err := agt.Open(ctx, dir, &agt.Options{Connector: &mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)}})
	if err != nil {
		log.Fatal(err)
	}
	defer host.Close()

	svc := host.Resources()
	for _, w := range []resource.WriteRequest{
		{Ref: "notes", Create: true, Server: &resource.MCPServer{Command: "fakemcp", Cwd: "/"}}, // {"mcpServers": {"notes": {...}}}
		{Ref: "writer", Create: true, Agent: &resource.AgentDocument{MCPs: []resource.Ref{"notes"}}},
	} {
		if _, err := svc.Write(ctx, resource.Direct(), w); err != nil {
			log.Fatal(err)
		}
	}

	r, err := host.NewRun(ctx, "writer", &run.Options{Permission: policy.AutoAllow()})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	out, err := r.Execute(ctx, run.Batch{ID: "step-1", Agent: "writer", Calls: []run.Call{
		{ID: "call-1", Name: "mcp__notes__search", Arguments: []byte(`{"query": "alpha", "limit": 0}`)},
		{ID: "call-2", Name: "mcp__notes__search", Arguments: []byte(`{"query": "alpha", "limit": 1}`)},
	}})
	if err != nil {
		log.Fatal(err)
	}
	for _, res := range out.Results {
		fmt.Printf("%s: %s\n", res.CallID, res.ForModel())
	}
	// Output:
	// call-1: {"error":{"code":"invalid_arguments","message":"the arguments do not match the tool's input schema (1 violation(s)); fix them and call again","violations":[{"path":"/limit","schema_path":"#/properties/limit/minimum","message":"must be >= 1"}]}}
	// call-2: {"results":["alpha"]}
}
