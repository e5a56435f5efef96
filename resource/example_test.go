package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// Register an MCP server, mount it on an agent, and see a stale form lose.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
	if err != nil {
		panic(err)
	}
	defer repo.Close()
	svc := resource.NewService(repo, nil)

	// Stored as {"mcpServers": {"files": {...}}}: the name part of the reference.
	files := &resource.MCPServer{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "${cwd}"}, Cwd: dir}
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{Ref: "tools/files", Create: true, Server: files}); err != nil {
		panic(err)
	}
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: "helper", Create: true}); err != nil {
		panic(err)
	}
	res, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Kind: resource.KindAgent, Ref: "helper", Add: map[string][]string{"mcps": {"tools/files"}}, ExpectedRevision: 1,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("agent revision:", res.Resource.Revision)

	mounts, err := svc.AgentMCPList(ctx, resource.Direct(), "helper")
	if err != nil {
		panic(err)
	}
	for _, m := range mounts {
		fmt.Printf("mount %s resolves=%v revision=%d\n", m.Ref, m.Resolves, m.Revision)
	}

	// A form read at revision 1 is stale now.
	_, err = svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Kind: resource.KindAgent, Ref: "helper", Data: json.RawMessage(`{"mcps": []}`), ExpectedRevision: 1,
	})
	var conflict *resource.ConflictError
	if errors.As(err, &conflict) {
		fmt.Println("conflict: stored revision is", conflict.Current)
	}
	// Output:
	// agent revision: 2
	// mount tools/files resolves=true revision=1
	// conflict: stored revision is 2
}

// A relative command is refused with the field, the reason and the fix.
func ExampleValidateMCP() {
	_, _, err := resource.ValidateMCP(json.RawMessage(`{"mcpServers": {"s": {"command": "./server", "cwd": "/srv/s"}}}`))
	var de *resource.DocumentError
	if errors.As(err, &de) {
		fmt.Println(de.Field)
		fmt.Println(de.Code)
		fmt.Println(errors.Is(err, resource.ErrInvalid))
	}
	// Output:
	// /mcpServers/s/command
	// command
	// true
}

// An agent without resource_management may not manage resources.
func ExampleAgentCaller() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
	if err != nil {
		panic(err)
	}
	defer repo.Close()
	svc := resource.NewService(repo, nil)
	for ref, data := range map[resource.Ref]string{"worker": `{}`, "admin": `{"capabilities": ["resource_management"]}`} {
		if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: ref, Create: true, Data: json.RawMessage(data)}); err != nil {
			panic(err)
		}
	}
	_, err = svc.List(ctx, resource.AgentCaller("worker"), resource.KindAgent, "")
	fmt.Println("worker:", errors.Is(err, resource.ErrPermission))
	list, err := svc.List(ctx, resource.AgentCaller("admin"), resource.KindAgent, "")
	fmt.Println("admin:", len(list), err)
	// Output:
	// worker: true
	// admin: 2 <nil>
}
