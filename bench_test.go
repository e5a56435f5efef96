package agt_test

import (
	"context"
	"testing"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// BenchmarkNewRun starts and closes a Run of an agent with one mounted fake
// server (in memory) through the Host, beside the same wiring by hand with
// the sub-packages: the ratio is the facade's cost, which should be none.
//
//	go test -run '^$' -bench NewRun -benchmem .
func BenchmarkNewRun(b *testing.B) {
	ctx := context.Background()
	dial := &mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)}
	setup := func(b *testing.B, h *agt.Host) {
		for _, w := range []resource.WriteRequest{
			{Kind: resource.KindMCP, Ref: "notes", Create: true, Data: []byte(`{"mcpServers": {"notes": {"command": "fakemcp", "cwd": "/"}}}`)},
			{Kind: resource.KindAgent, Ref: "writer", Create: true, Data: []byte(`{"manager": true, "mcps": ["notes"]}`)},
		} {
			if _, err := h.Resources().Write(ctx, resource.Direct(), w); err != nil {
				b.Fatal(err)
			}
		}
	}

	b.Run("host", func(b *testing.B) {
		h, err := agt.Open(ctx, b.TempDir(), &agt.Options{Connector: dial})
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		setup(b, h)
		b.ResetTimer()
		for b.Loop() {
			r, err := h.NewRun(ctx, "writer", &run.Options{Permission: policy.AutoAllow()})
			if err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})

	b.Run("by-hand", func(b *testing.B) {
		repo, err := boltrepo.Open(b.TempDir()+"/agt.db", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer repo.Close()
		h, err := agt.New(repo, nil)
		if err != nil {
			b.Fatal(err)
		}
		setup(b, h)
		svc := resource.NewService(repo, nil)
		connector := mcpconn.NewConnector(dial)
		tools := framework.Tools(svc, mcpconn.NewProber(repo, connector, nil), nil)
		b.ResetTimer()
		for b.Loop() {
			r, err := run.New(ctx, &run.Options{Agent: "writer", Repository: repo, Connector: connector,
				Permission: policy.AutoAllow(), HostTools: tools})
			if err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
}
