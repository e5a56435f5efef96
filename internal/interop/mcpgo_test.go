package interop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// goBuild is a server binary built once per test process with go build.
type goBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// The servers built: mcp-go's from the nested module mcpgo, the go-sdk's
// from the package gosdkserver of agt's module.
var mcpgoBuild, gosdkBuild goBuild

// binary builds the package pkg in the directory dir once, as name, and
// returns the binary's path. The build needs the go command, and the modules it
// imports in the module cache or from the module proxy: without them the
// test is skipped outside CI (unavailable).
func (b *goBuild) binary(t *testing.T, name, dir, pkg string) string {
	t.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "agt-interop-"+name+"-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, name)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b.path, pkg)
		cmd.Dir = dir
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		unavailable(t, "building the server %s failed: %v\n%s", pkg, b.err, b.out)
	}
	return b.path
}

// mcpgoServer returns the path of the built mcp-go server.
func mcpgoServer(t *testing.T) string {
	t.Helper()
	return mcpgoBuild.binary(t, "mcpgo", "mcpgo", ".")
}

// removeBuilt deletes the server binaries built.
func removeBuilt() {
	for _, b := range []*goBuild{&mcpgoBuild, &gosdkBuild} {
		if b.dir != "" {
			_ = os.RemoveAll(b.dir)
		}
	}
}

// Issue 24 item 8: a server written with another Go SDK,
// github.com/mark3labs/mcp-go v1.2.1 (the nested module mcpgo, so agt's
// go.mod does not depend on it), over stdio and streamable HTTP: its five
// tools listed, each called, and arguments that break a pattern, an enum,
// a bound or a required field refused by agt before the server sees them.
// mcp-go v1.2.1 speaks both eras (server/discover, and initialize): agt,
// pinned to nothing, negotiates 2026-07-28 with it (issue 25 item 9).
func TestMCPGoServer(t *testing.T) {
	t.Parallel()
	bin := mcpgoServer(t)
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
