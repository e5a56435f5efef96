package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// A Run over the bundled fake MCP server (in memory): one valid call, one
// with bad arguments, one the policy denies.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agt-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer repo.Close()

	// Register the server and mount it on the agent.
	mcpDoc, _ := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{
		"notes": {Command: "fakemcp", Cwd: dir},
	}})
	agentDoc, _ := json.Marshal(resource.AgentDocument{MCPs: []resource.Ref{"notes"}})
	_, _ = repo.Create(ctx, resource.Key{Kind: resource.KindMCP, Ref: "notes"}, mcpDoc)
	_, _ = repo.Create(ctx, resource.Key{Kind: resource.KindAgent, Ref: "writer"}, agentDoc)

	r, err := run.New(ctx, &run.Options{
		Agent:      "writer",
		Repository: repo,
		// The in-memory fake server stands in for the stdio process.
		Connector: mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)}),
		Permission: policy.Rules{
			Deny:  []string{"mcp__notes__note_delete"},
			Allow: []string{"mcp__notes__*"},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	out, err := r.Execute(ctx, run.Batch{ID: "step-1", Agent: "writer", Calls: []run.Call{
		{ID: "call-1", Name: "mcp__notes__echo", Arguments: json.RawMessage(`{"text":"hello"}`)},
		{ID: "call-2", Name: "mcp__notes__search", Arguments: json.RawMessage(`{"query":"go","limit":0}`)},
		{ID: "call-3", Name: "mcp__notes__note_delete", Arguments: json.RawMessage(`{"id":"n1","caller":"bob"}`)},
	}})
	if err != nil {
		log.Fatal(err)
	}
	for _, res := range out.Results {
		if res.Failed() {
			fmt.Println(res.CallID, res.Code, res.Violations)
			continue
		}
		fmt.Println(res.CallID, string(res.ForModel()))
	}
	// Output:
	// call-1 [{"type":"text","text":"hello"}]
	// call-2 invalid_arguments [{/limit #/properties/limit/minimum must be >= 1}]
	// call-3 permission_denied []
}

// Alias is a pure function of the resource reference and the remote tool
// name.
func ExampleAlias() {
	fmt.Println(run.Alias("notes", "search"))
	fmt.Println(len(run.Alias("team/notes", "search")) <= 64)
	// Output:
	// mcp__notes__search
	// true
}
