package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// Every library sentinel and code that has a command hint gets it, with
// the resource the error is about; a message that names the command
// already is not told twice.
func TestCommandHint(t *testing.T) {
	t.Parallel()
	connErr := func(kind error, detail string) error {
		return &mcpconn.Error{Ref: "notes", Op: "connect", Kind: kind, Detail: detail}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no absolute cwd", connErr(mcpconn.ErrNoAbsoluteCwd, "set cwd"), "next: agt mcp update notes --cwd /abs/dir"},
		{"no absolute cwd, named already", connErr(mcpconn.ErrNoAbsoluteCwd, "set cwd, e.g. `agt mcp update notes --cwd /abs/dir`"), ""},
		{"limit", &mcpconn.Error{Ref: "notes", Op: "list tools", Kind: mcpconn.ErrUnavailable, Err: mcpconn.ErrLimit}, "next: the server sent more than agt accepts"},
		{"invalid server", connErr(mcpconn.ErrInvalidServer, ""), "next: 'agt mcp test notes' shows what is wrong; 'agt mcp update notes' fixes it"},
		{"start", connErr(mcpconn.ErrStart, ""), "next: 'agt mcp test notes' checks the command and cwd"},
		{"handshake timed out", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrHandshake, Err: context.DeadlineExceeded}, "next: a slow server needs a longer start: 'agt mcp update notes --startup-timeout 90s'"},
		{"handshake failed", connErr(mcpconn.ErrHandshake, "exited"), "next: its stderr says why it did not answer; 'agt mcp test notes' checks the configuration"},
		{"login required", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrLoginRequired}, "next: agt mcp login notes"},
		{"login required, named already", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrLoginRequired, Detail: "run agt mcp login notes"}, ""},
		{"unauthorized", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrHandshake, Err: mcpconn.ErrUnauthorized}, "next: agt mcp update notes --oauth, then 'agt mcp login notes', for a server that uses OAuth; else a header: --header 'Authorization: Bearer ${env:NAME}'"},
		{"an SSE server as http", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrHandshake, Detail: `if the server speaks the older SSE transport, set "type": "sse"`, Err: mcpconn.ErrWrongTransport}, "next: for an SSE-transport server: agt mcp update notes --sse;"},
		{"a streamable server as sse", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrHandshake, Detail: `if the server speaks streamable HTTP, set "type": "http"`, Err: mcpconn.ErrWrongTransport}, "next: for a streamable HTTP server: agt mcp update notes --sse=false;"},
		{"a web page", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrHandshake, Detail: "a web page", Err: mcpconn.ErrWrongTransport}, "next: give the MCP endpoint's url: agt mcp update notes --url URL"},
		{"agent disabled", about(fmt.Errorf("x: %w", run.ErrAgentDisabled), resource.KindAgent, "helper"), "next: agt agent update helper --enabled=true"},
		{"document without absolute cwd", about(&resource.DocumentError{Code: findcode.NoAbsoluteCwd}, resource.KindMCP, "notes"), "next: agt mcp update notes --cwd /abs/dir"},
		{"document with two servers", &resource.DocumentError{Code: findcode.ServerCount}, "next: register each server as its own resource: 'agt mcp import FILE' splits a file"},
		{"other document error", &resource.DocumentError{Code: findcode.URL}, ""},
		{"mcp not found", about(resource.ErrNotFound, resource.KindMCP, "notes"), "(see 'agt mcp list'; register it with 'agt mcp add' or 'agt mcp create')"},
		{"agent not found", about(resource.ErrNotFound, resource.KindAgent, "helper"), "(see 'agt agent list'; create it with 'agt agent create')"},
		{"exists", resource.ErrExists, "(change it with 'update', or 'delete' it first)"},
		{"conflict", &resource.ConflictError{Key: resource.Key{Kind: resource.KindAgent, Ref: "helper"}, Expected: 1, Current: 2}, "next: 'agt agent get helper' shows the stored revision"},
		{"no hint", errors.New("disk full"), ""},
	}
	for _, tt := range tests {
		got := commandHint(tt.err, tt.err.Error())
		if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: commandHint = %q, want it to start with %q", tt.name, got, tt.want)
		}
	}
}
