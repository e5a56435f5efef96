package interop_test

import (
	"testing"

	"github.com/agtsdk/agt/internal/interop/servers"
)

// Issue 24 item 8: a server written with another Go SDK,
// github.com/mark3labs/mcp-go v1.2.1 (the nested module mcpgo, so agt's
// go.mod does not depend on it), over stdio and streamable HTTP: its five
// tools listed, each called, and arguments that break a pattern, an enum,
// a bound or a required field refused by agt before the server sees them.
// mcp-go v1.2.1 speaks both eras (server/discover, and initialize): agt,
// pinned to nothing, negotiates 2026-07-28 with it (issue 25 item 9).
func TestMCPGoServer(t *testing.T) {
	t.Parallel()
	bin := servers.MCPGo.Binary(t)
	tools, good, bad := ticketTools("agt-interop-mcpgo 1.0.0")
	launch{command: bin, callLogFlag: "-call-log", httpArgs: []string{"-http", "127.0.0.1:0"}}.each(t,
		func(t *testing.T, server map[string]any, callLog string) {
			runSuite(t, suite{server: server, tools: tools, good: good, bad: bad, callLog: callLog, version: modernVersion})
		})
}

// ticketTools is the suite of the five tools that the mcp-go and the
// go-sdk servers both have; serverInfo is the text of server_info.
func ticketTools(serverInfo string) (tools []string, good, bad []call) {
	tools = []string{"echo", "add", "set_level", "open_ticket", "server_info"}
	good = []call{
		{"echo", `{"text":"hello"}`, "hello"},
		{"add", `{"a":2,"b":0.5}`, "2.5"},
		{"set_level", `{"level":"warn"}`, "level warn"},
		{"open_ticket", `{"id":"AGT-24","priority":"high","title":"interop"}`, "opened AGT-24 (high)"},
		{"server_info", `{}`, serverInfo},
	}
	bad = []call{
		{tool: "open_ticket", args: `{"id":"agt-24"}`},
		{tool: "open_ticket", args: `{"id":"AGT-24","priority":"urgent"}`},
		{tool: "open_ticket", args: `{"id":"AGT-24","title":""}`},
		{tool: "set_level", args: `{"level":"trace"}`},
		{tool: "add", args: `{"a":"2","b":1}`},
		{tool: "echo", args: `{}`},
	}
	return tools, good, bad
}
