package framework_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// allowlistHost is a host whose Connector admits only the bundled fake
// server, with the Service judging by the same allowlist.
func allowlistHost(t *testing.T) *host {
	t.Helper()
	env := &resource.LaunchEnv{Allow: &resource.LaunchAllowlist{Commands: []string{mcptest.Command(t)}}}
	h := newHost(t, &mcpconn.ConnectorOptions{LaunchEnv: env})
	h.svc = resource.NewService(h.repo, &resource.ServiceOptions{LaunchEnv: env})
	h.prober = mcpconn.NewProber(h.repo, h.connector, nil)
	return h
}

// A program that leaves a file beside itself when it runs.
func marker(t *testing.T) (command, ran string) {
	t.Helper()
	command = filepath.Join(t.TempDir(), "launcher")
	if err := os.WriteFile(command, []byte("#!/bin/sh\n: > \"$0.ran\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return command, command + ".ran"
}

func serverData(command, cwd string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": command, "cwd": cwd}}})
	return b
}

// A manager inside a Run can neither register and probe an unlisted
// command, nor change a mounted server's command to one (the refresh at
// the boundary would start it), nor raise privileges: each attempt through
// resource_write is refused as unauthorized and nothing is started. A
// probe, and a new Run, refuse an unlisted command the host stored.
func TestManagerCannotEscapeTheAllowlistOrItsRights(t *testing.T) {
	h := allowlistHost(t)
	script, ran := marker(t)
	cwd := t.TempDir()
	h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "notes", Create: true, Data: serverData(mcptest.Command(t), cwd)})
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true,"mcps":["notes"]}`)})
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Create: true, Data: json.RawMessage(`{}`)})
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "off", Create: true, Data: json.RawMessage(`{"enabled":false}`)})
	m := &model{t: t, r: h.newRun(t, "boss", policy.AutoAllow())}
	if !hasTool(m.r, run.Alias("notes", mcptest.ToolEcho)) {
		t.Fatalf("the admitted server is not mounted: %v", toolNames(m.r))
	}

	write := func(kind, ref string, create bool, data any, add map[string][]string) string {
		req := map[string]any{"kind": kind, "reference": ref, "create": create}
		if data != nil {
			req["data"] = data
		}
		if add != nil {
			req["add"] = add
		}
		b, _ := json.Marshal(req)
		return string(b)
	}
	server := func(command string) any {
		return map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": command, "cwd": cwd}}}
	}
	for _, tc := range []struct {
		name, args, inMsg string
	}{
		{"register an unlisted command", write("mcp", "sh", true, server(script), nil), "/command"},
		{"register a shell", write("mcp", "sh", true, server("/bin/sh"), nil), "/command"},
		{"change the mounted server's command", write("mcp", "notes", false, server(script), nil), "/command"},
		{"grant a capability", write("agent", "worker", false, nil, map[string][]string{"capabilities": {"resource_management"}}), "capabilities"},
		{"make another a manager", write("agent", "worker", false, map[string]any{"manager": true}, nil), "manager"},
		{"re-enable a disabled agent", write("agent", "off", false, map[string]any{"enabled": true}, nil), "enabled"},
		{"create a manager", write("agent", "deputy", true, map[string]any{"manager": true}, nil), "manager"},
	} {
		out := m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(tc.args)})
		res := out.Results[0]
		mustCode(t, res, run.CodeUnauthorized)
		if te := string(res.ToolError()); !strings.Contains(te, tc.inMsg) || strings.Contains(te, script) {
			t.Errorf("%s: ToolError %s does not name %s, or repeats the command", tc.name, te, tc.inMsg)
		}
		if out.Refresh != nil {
			t.Errorf("%s: a refused write refreshed the Run: %+v", tc.name, out.Refresh)
		}
	}
	if !hasTool(m.r, run.Alias("notes", mcptest.ToolEcho)) {
		t.Fatal("the mounted server was lost")
	}

	// What the host stored outside the allowlist is refused at the probe
	// and at a Run's start.
	h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "hosted", Create: true, Data: serverData(script, cwd)})
	rep := structured[mcpconn.ProbeReport](t, m.one(framework.ToolMCPProbe, `{"reference":"hosted"}`))
	if rep.OK || !strings.Contains(rep.Error, "launch allowlist") {
		t.Fatalf("probe of an unlisted command: %+v", rep)
	}
	// Mounting it is an assembly edit a manager may make; the refresh at
	// the boundary refuses to start it.
	out := m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(`{"kind":"agent","reference":"boss","add":{"mcps":["hosted"]}}`)})
	mustOK(t, out.Results[0])
	if out.Refresh == nil || out.Refresh.OK || !errors.Is(out.Refresh.Err, mcpconn.ErrNotAllowed) {
		t.Fatalf("refresh with an unlisted mount: %+v", out.Refresh)
	}
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Data: json.RawMessage(`{"mcps":["hosted"]}`)})
	wr, err := run.New(context.Background(), &run.Options{Agent: "worker", Repository: h.repo, Connector: h.connector, Permission: policy.AutoAllow()})
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close()
	if me := wr.MountErrors(); len(me) != 1 || !errors.Is(me[0].Err, mcpconn.ErrNotAllowed) {
		t.Fatalf("the Run's mount errors = %v, want one ErrNotAllowed", me)
	}
	_, err = run.New(context.Background(), &run.Options{Agent: "worker", Repository: h.repo, Connector: h.connector, Permission: policy.AutoAllow(), FailOnMountError: true})
	if !errors.Is(err, mcpconn.ErrNotAllowed) {
		t.Fatalf("run.New with an unlisted mount: %v, want ErrNotAllowed", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("an unlisted command was started")
	}
	// Admitted, the same script runs: the check above can fail.
	open := mcpconn.NewConnector(nil)
	if _, err := open.Connect(context.Background(), "hosted", resource.MCPServer{Command: script, Cwd: cwd}, nil); err == nil {
		t.Fatal("the marker script completed a handshake")
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the marker script did not run: %v", err)
	}
}
