package mcpconn_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// markerScript is a program that leaves a file beside itself when it runs,
// so a test can tell whether anything was started.
func markerScript(t *testing.T) (resource.MCPServer, string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "launcher")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n: > \"$0.ran\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return resource.MCPServer{Command: script, Cwd: dir, StartupTimeoutMS: 20000}, script + ".ran"
}

func ran(marker string) bool {
	_, err := os.Stat(marker)
	return err == nil
}

// With a launch allowlist, Connect and the Prober refuse an unlisted
// command, cwd or origin with ErrNotAllowed before anything starts or is
// contacted; a listed one starts as before.
func TestLaunchAllowlistRefusesBeforeStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake, tag := fakeStdio(t)
	script, marker := markerScript(t)
	var hits atomic.Int64
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(web.Close)
	remote := resource.MCPServer{URL: web.URL + "/mcp", StartupTimeoutMS: 20000}

	allow := &resource.LaunchAllowlist{Commands: []string{mcptest.Command(t)}, Origins: []string{"https://mcp.example.com"}}
	c := quickConnector(&mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Allow: allow}})
	allow.Commands[0] = script.Command // a change after NewConnector changes nothing

	s, err := c.Connect(ctx, "fake", fake, nil)
	if err != nil {
		t.Fatalf("listed command: %v", err)
	}
	_ = s.Close()
	assertNoLeftovers(t, tag)

	for _, tc := range []struct {
		name string
		srv  resource.MCPServer
	}{
		{"unlisted command", script},
		{"unlisted origin", remote},
	} {
		_, err := c.Connect(ctx, "x", tc.srv, nil)
		if !errors.Is(err, mcpconn.ErrNotAllowed) {
			t.Fatalf("%s: Connect = %v, want ErrNotAllowed", tc.name, err)
		}
		if !strings.Contains(err.Error(), "LaunchAllowlist.") {
			t.Errorf("%s: %q does not name the allowlist field to set", tc.name, err)
		}
		if strings.Contains(err.Error(), script.Command) || strings.Contains(err.Error(), web.URL) {
			t.Errorf("%s: %q repeats a value", tc.name, err)
		}
	}

	repo := newMemRepo()
	repo.store(t, "tools/sh", script)
	repo.store(t, "tools/web", remote)
	p := mcpconn.NewProber(repo, c, nil)
	for _, ref := range []resource.Ref{"tools/sh", "tools/web"} {
		rep, err := p.Probe(ctx, ref)
		if !errors.Is(err, mcpconn.ErrNotAllowed) || rep == nil {
			t.Fatalf("Probe(%s): %v, want ErrNotAllowed and a report", ref, err)
		}
		if rep.OK || !strings.Contains(rep.Error, "launch allowlist") {
			t.Fatalf("Probe(%s) = %+v, want a refusal by the allowlist", ref, rep)
		}
	}
	if ran(marker) || hits.Load() != 0 {
		t.Fatalf("a refused server was started (%v) or contacted (%d requests)", ran(marker), hits.Load())
	}

	// The same servers, admitted, are started and contacted: the checks
	// above can fail.
	open := quickConnector(&mcpconn.ConnectorOptions{
		LaunchEnv: &resource.LaunchEnv{Allow: &resource.LaunchAllowlist{
			Commands: []string{script.Command}, Origins: []string{web.URL},
		}},
	})
	if _, err := open.Connect(ctx, "x", script, nil); err == nil || errors.Is(err, mcpconn.ErrNotAllowed) {
		t.Fatalf("admitted script: %v, want a failed handshake", err)
	}
	if _, err := open.Connect(ctx, "x", remote, nil); err == nil || errors.Is(err, mcpconn.ErrNotAllowed) {
		t.Fatalf("admitted origin: %v, want a failed handshake", err)
	}
	if !ran(marker) || hits.Load() == 0 {
		t.Fatalf("an admitted server was not started (%v) or contacted (%d requests)", ran(marker), hits.Load())
	}
}
