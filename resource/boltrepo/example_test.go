package boltrepo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// Open a file, write, and see revisions continue after delete and create.
func Example() {
	dir, err := os.MkdirTemp("", "boltrepo-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
	if err != nil {
		panic(err)
	}
	defer repo.Close()

	ctx := context.Background()
	key := resource.Key{Kind: resource.KindAgent, Ref: "team/helper"}
	res, _ := repo.Create(ctx, key, json.RawMessage(`{"mcps":[]}`))
	fmt.Println("created at revision", res.Revision)
	res, _ = repo.Update(ctx, key, json.RawMessage(`{"mcps":["tools/files"]}`), res.Revision)
	fmt.Println("updated to revision", res.Revision)
	_ = repo.Delete(ctx, key, res.Revision)
	res, _ = repo.Create(ctx, key, json.RawMessage(`{"mcps":[]}`))
	fmt.Println("created again at revision", res.Revision)
	// Output:
	// created at revision 1
	// updated to revision 2
	// created again at revision 3
}

// A host and the agt CLI share one file with Options.Shared.
func ExampleOpen_shared() {
	dir, err := os.MkdirTemp("", "boltrepo-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agt.db")
	host, err := boltrepo.Open(path, &boltrepo.Options{Shared: true})
	if err != nil {
		panic(err)
	}
	defer host.Close()
	cli, err := boltrepo.Open(path, &boltrepo.Options{Shared: true})
	if err != nil {
		panic(err)
	}
	defer cli.Close()

	ctx := context.Background()
	key := resource.Key{Kind: resource.KindMCP, Ref: "search"}
	if _, err := cli.Create(ctx, key, json.RawMessage(`{"mcpServers":{"search":{"url":"https://mcp.example.com/mcp"}}}`)); err != nil {
		panic(err)
	}
	res, err := host.Get(ctx, key)
	fmt.Println(res.Revision, err)
	// Output:
	// 1 <nil>
}
