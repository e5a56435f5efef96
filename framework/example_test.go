package framework_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// A manager agent's Run lists the framework tools; another agent's does not.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agt-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer repo.Close()

	svc := resource.NewService(repo, nil)
	connector := mcpconn.NewConnector(nil)
	tools := framework.Tools(svc, mcpconn.NewProber(repo, connector, nil), nil)
	for _, agent := range []string{`{"manager": true}`, `{}`} {
		ref := resource.Ref(fmt.Sprintf("agent-%d", len(agent)))
		if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: ref, Create: true, Data: []byte(agent)}); err != nil {
			log.Fatal(err)
		}
		r, err := run.New(ctx, &run.Options{Agent: ref, Repository: repo, Connector: connector, Permission: policy.AutoAllow(), HostTools: tools})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s:", agent)
		for _, t := range r.Tools() {
			fmt.Printf(" %s", t.Name)
		}
		fmt.Println()
		r.Close()
	}
	// Output:
	// {"manager": true}: agent_mcp_list mcp_probe resource_read resource_test resource_write
	// {}:
}
