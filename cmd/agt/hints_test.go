package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
		{"handshake failed", connErr(mcpconn.ErrHandshake, "exited"), "next: the message says why the server did not answer (a stdio server's stderr is shown with it); 'agt mcp test notes' checks the configuration"},
		{"login required", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrLoginRequired}, "next: agt mcp login notes"},
		{"login required, named already", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrLoginRequired, Detail: "run agt mcp login notes"}, ""},
		{"unauthorized", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrHandshake, Err: mcpconn.ErrUnauthorized}, "next: agt mcp update notes --oauth, then 'agt mcp login notes', for a server that uses OAuth; else a header: --header 'Authorization: Bearer ${env:NAME}'"},
		{"wrong transport, whatever the message says", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrHandshake, Detail: "words the hint does not read", Err: mcpconn.ErrWrongTransport}, "next: give the MCP endpoint's url: agt mcp update notes --url URL; or, as the message says, switch the transport: --sse for an SSE-transport server, --sse=false"},
		{"a DNS failure is about the url, not the command", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrStart, Detail: "the command and cwd", Err: &url.Error{Op: "Post", URL: "https://x.invalid/mcp", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}}}, "next: the url's host name does not resolve: check the url ('agt mcp get notes') and this machine's DNS"},
		{"a refused connection is about the url", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrStart, Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}, "next: nothing answered at the url: check that the server runs and the url ('agt mcp get notes')"},
		{"a reset connection is about the url", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrStart, Err: &url.Error{Op: "Post", URL: "https://h/mcp", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}}, "next: nothing answered at the url"},
		{"an untrusted certificate is about TLS", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrStart, Err: &url.Error{Op: "Post", URL: "https://h/mcp", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}}, "next: the TLS handshake with the url failed"},
		{"a TLS alert is about TLS", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrStart, Err: &url.Error{Op: "Post", URL: "https://h/mcp", Err: &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}}}, "next: the TLS handshake with the url failed"},
		{"TLS to a plain server is about TLS", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrStart, Err: &url.Error{Op: "Post", URL: "https://h/mcp", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}}, "next: the TLS handshake with the url failed"},
		{"another failed request is not a dead server", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrStart, Err: &url.Error{Op: "Post", URL: "https://h/mcp", Err: errors.New("stopped after 10 redirects")}}, "next: the url was reached, but the request failed"},
		{"an HTTP error status names no stderr alone", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrHandshake, Detail: "the server refused the handshake (HTTP 500 Internal Server Error)"}, "next: the message says why the server did not answer (a stdio server's stderr is shown with it)"},
		{"a stdio start is about the command and cwd", &mcpconn.Error{Ref: "notes", Op: "connect", Kind: mcpconn.ErrStart, Detail: "the url", Err: &exec.Error{Name: "srv", Err: exec.ErrNotFound}}, "next: 'agt mcp test notes' checks the command and cwd"},
		{"agent disabled", about(fmt.Errorf("x: %w", run.ErrAgentDisabled), resource.KindAgent, "helper"), "next: agt agent update helper --enabled=true"},
		{"document without absolute cwd", about(&resource.DocumentError{Code: findcode.NoAbsoluteCwd}, resource.KindMCP, "notes"), "next: agt mcp update notes --cwd /abs/dir"},
		{"a refused create names no update", aboutCreate(&resource.DocumentError{Code: findcode.NoAbsoluteCwd}, resource.KindMCP, "notes"), "next: give the directory it runs in: --cwd /abs/dir (\"cwd\" in --data)"},
		{"a missing mount, by its kind", about(fmt.Errorf("words the hint does not read: %w", resource.ErrNotFound), resource.KindMCP, ""), "(see 'agt mcp list'; register it with 'agt mcp add' or 'agt mcp create')"},
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
		if strings.HasPrefix(tt.name, "a refused create") && strings.Contains(got, "update") {
			t.Errorf("%s: the hint names update for a reference that does not exist: %q", tt.name, got)
		}
	}
}

// A create refused for its document says what to give on the create,
// never to update the reference it did not create; a probe of a url whose
// host does not resolve is told about the url, not the command and cwd.
func TestHintsAfterRefusals(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	r := mustRun(t, db, 1, "mcp", "create", "x", "--data", `{"mcpServers":{"x":{"command":"srv"}}}`)
	if strings.Contains(r.stderr, "update") || !strings.Contains(r.stderr, "next: give the directory it runs in: --cwd /abs/dir") {
		t.Errorf("create refused for no cwd:\n%s", r.stderr)
	}
	mustRun(t, db, 0, "mcp", "add", "far", "https://agt-no-such-host.invalid/mcp")
	r = mustRun(t, db, 1, "mcp", "probe", "far", "--timeout", "30s")
	if strings.Contains(r.stdout, "command and cwd") || !strings.Contains(r.stdout, "next: the url's host name does not resolve") {
		t.Errorf("probe of a url whose host does not resolve:\n%s", r.stdout)
	}
}
