package agt_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// The launch allowlist set on the Connector reaches the Host's Service:
// Test, an agent's write, a probe and a Run decide the same way.
func TestHostAllowlistIsOneRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := agt.Open(ctx, filepath.Join(t.TempDir(), "agt.db"), &agt.Options{
		Connector: &mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Allow: &resource.LaunchAllowlist{Commands: []string{mcptest.Command(t)}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	cwd := filepath.ToSlash(t.TempDir())
	write(t, h, resource.KindMCP, "ok", `{"mcpServers": {"s": {"command": "`+mcptest.Command(t)+`", "cwd": "`+cwd+`"}}}`)
	write(t, h, resource.KindMCP, "sh", `{"mcpServers": {"s": {"command": "/bin/sh", "cwd": "`+cwd+`"}}}`)
	write(t, h, resource.KindAgent, "boss", `{"manager": true, "mcps": ["ok", "sh"]}`)

	rep, err := h.Resources().Test(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: "sh"})
	if err != nil || rep.OK || len(rep.Findings) != 1 || rep.Findings[0].Code != findcode.NotAllowed {
		t.Fatalf("Test: %+v, %v; want one %s finding", rep, err, findcode.NotAllowed)
	}
	_, err = h.Resources().Write(ctx, resource.AgentCaller("boss"), resource.WriteRequest{Kind: resource.KindMCP, Ref: "sh2", Create: true,
		Data: json.RawMessage(`{"mcpServers": {"s": {"command": "/bin/sh", "cwd": "` + cwd + `"}}}`)})
	if !errors.Is(err, resource.ErrPermission) {
		t.Fatalf("agent write of an unlisted command: %v, want ErrPermission", err)
	}
	if _, err := h.Prober().Probe(ctx, "sh"); !errors.Is(err, mcpconn.ErrNotAllowed) {
		t.Fatalf("probe: %v, want ErrNotAllowed", err)
	}
	r, err := h.NewRun(ctx, "boss", &run.Options{Permission: policy.AutoAllow()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if me := r.MountErrors(); len(me) != 1 || me[0].Ref != "sh" || !errors.Is(me[0].Err, mcpconn.ErrNotAllowed) {
		t.Fatalf("mount errors = %v, want sh refused by the allowlist", me)
	}
}
