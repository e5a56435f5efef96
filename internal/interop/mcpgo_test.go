package interop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// mcpgoBuild is the mcp-go server, built once per test process from the
// nested module mcpgo.
var mcpgoBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// mcpgoServer returns the path of the built mcp-go server. The build needs
// the go command and mcp-go in the module cache or from the module proxy:
// without them the test is skipped outside CI (unavailable).
func mcpgoServer(t *testing.T) string {
	t.Helper()
	b := &mcpgoBuild
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "agt-interop-mcpgo-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "mcpgo")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b.path, ".")
		cmd.Dir = "mcpgo"
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		unavailable(t, "building the mcp-go server (internal/interop/mcpgo) failed: %v\n%s", b.err, b.out)
	}
	return b.path
}

// removeBuilt deletes the mcp-go server binary, if one was built.
func removeBuilt() {
	if mcpgoBuild.dir != "" {
		_ = os.RemoveAll(mcpgoBuild.dir)
	}
}

// Issue 24 item 8: a server written with another Go SDK,
// github.com/mark3labs/mcp-go v1.2.1 (the nested module mcpgo, so agt's
// go.mod does not depend on it), over stdio and streamable HTTP: its five
// tools listed, each called, and arguments that break a pattern, an enum,
// a bound or a required field refused by agt before the server sees them.
// The server speaks the legacy era (2025-11-25), as agt's handshake asks
// today; the modern era is issue 25.
func TestMCPGoServer(t *testing.T) {
	t.Parallel()
	bin := mcpgoServer(t)
	good := []call{
		{"echo", `{"text":"hello"}`, "hello"},
		{"add", `{"a":2,"b":0.5}`, "2.5"},
		{"set_level", `{"level":"warn"}`, "level warn"},
		{"open_ticket", `{"id":"AGT-24","priority":"high","title":"interop"}`, "opened AGT-24 (high)"},
		{"server_info", `{}`, "agt-interop-mcpgo 1.0.0"},
	}
	bad := []call{
		{tool: "open_ticket", args: `{"id":"agt-24"}`},
		{tool: "open_ticket", args: `{"id":"AGT-24","priority":"urgent"}`},
		{tool: "open_ticket", args: `{"id":"AGT-24","title":""}`},
		{tool: "set_level", args: `{"level":"trace"}`},
		{tool: "add", args: `{"a":"2","b":1}`},
		{tool: "echo", args: `{}`},
	}
	for _, tc := range []struct {
		name   string
		server func(t *testing.T, callLog string) map[string]any
	}{
		{"stdio", func(t *testing.T, callLog string) map[string]any {
			return map[string]any{"command": bin, "args": []string{"-call-log", callLog}, "cwd": t.TempDir()}
		}},
		{"streamable HTTP", func(t *testing.T, callLog string) map[string]any {
			url := mcptest.StartHTTPCommand(t, exec.Command(bin, "-http", "127.0.0.1:0", "-call-log", callLog))
			return map[string]any{"type": resource.TransportHTTP, "url": url}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			callLog := filepath.Join(t.TempDir(), "calls.log")
			runSuite(t, suite{server: tc.server(t, callLog),
				tools: []string{"echo", "add", "set_level", "open_ticket", "server_info"},
				good:  good, bad: bad, callLog: callLog})
		})
	}
}
