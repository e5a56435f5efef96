package mcpconn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// SPEC R2.3: the same document started from three different working
// directories of the host reports the same cwd, the document's; relative
// args resolve against it, and ${cwd} / ${workspace} expand to it (R2.2).
func TestCwdIsTheDocumentsFromAnyHostDirectory(t *testing.T) {
	// t.Chdir changes the whole process's directory: not parallel.
	srv, tag := fakeStdio(t, "-call-log", "logs/calls.txt")
	if err := os.Mkdir(filepath.Join(srv.Cwd, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv.Args = append(srv.Args, "-page-size", "1000")
	srv.Env = map[string]string{"WHERE": "${cwd}/data", "WS": "${workspace}"}
	c := quickConnector(nil)
	for i, dir := range []string{t.TempDir(), t.TempDir(), "/"} {
		t.Chdir(dir)
		s, err := c.Connect(context.Background(), "cwd", srv, nil)
		if err != nil {
			t.Fatalf("from %d: %v", i, err)
		}
		got := environment(t, s, "WHERE", "WS")
		s.Close()
		want := map[string]string{"WHERE": srv.Cwd + "/data", "WS": srv.Cwd}
		if got.Cwd != srv.Cwd {
			t.Errorf("from host dir %d: server cwd = %q; want %q", i, got.Cwd, srv.Cwd)
		}
		if diff := cmp.Diff(want, got.Env); diff != "" {
			t.Errorf("placeholders in env (-want +got):\n%s", diff)
		}
	}
	// The relative -call-log path landed under cwd: three environment calls.
	log, err := os.ReadFile(filepath.Join(srv.Cwd, "logs", "calls.txt"))
	if err != nil {
		t.Fatalf("relative arg did not resolve against cwd: %v", err)
	}
	if got := strings.Count(string(log), mcptest.ToolEnvironment+"\n"); got != 3 {
		t.Errorf("call log has %d environment calls; want 3:\n%s", got, log)
	}
	assertNoLeftovers(t, tag)
}

// ${cwd} expands in args too.
func TestCwdPlaceholderInArgs(t *testing.T) {
	t.Parallel()
	srv, tag := fakeStdio(t, "-call-log", "${cwd}/x.log")
	s, err := quickConnector(nil).Connect(context.Background(), "args", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := environment(t, s)
	s.Close()
	if want := srv.Cwd + "/x.log"; !containsString(got.Args, want) {
		t.Errorf("args = %q; want one to be %q", got.Args, want)
	}
	assertNoLeftovers(t, tag)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The child's environment: the allowlist from the host plus the
// document's env by default; the whole host env or a host's own list on
// request.
func TestEnvironmentPolicy(t *testing.T) {
	t.Parallel()
	host := []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/h", "LC_ALL=C", "SECRET_TOKEN=x", "GOFLAGS=-v"}
	tests := []struct {
		name string
		opts mcpconn.ConnectorOptions
		want []string // names; the document adds DOC_VAR and HOME
	}{
		{name: "default allowlist", opts: mcpconn.ConnectorOptions{},
			want: []string{"DOC_VAR", "HOME", "LC_ALL", "PATH"}},
		{name: "whole host env", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{InheritAll: true}},
			want: []string{"DOC_VAR", "GOFLAGS", "HOME", "LC_ALL", "PATH", "SECRET_TOKEN"}},
		{name: "own list with a prefix", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Inherit: []string{"PATH", "SECRET_*"}}},
			want: []string{"DOC_VAR", "HOME", "PATH", "SECRET_TOKEN"}},
		{name: "nothing inherited", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Inherit: []string{}}},
			want: []string{"DOC_VAR", "HOME"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, tag := fakeStdio(t)
			srv.Env = map[string]string{"DOC_VAR": "v", "HOME": "/doc/home"}
			opts := tt.opts
			opts.LaunchEnv = withEnviron(opts.LaunchEnv, func() []string { return host })
			s, err := quickConnector(&opts).Connect(context.Background(), "env", srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := environment(t, s, "HOME")
			s.Close()
			if diff := cmp.Diff(tt.want, got.EnvNames); diff != "" {
				t.Errorf("env names (-want +got):\n%s", diff)
			}
			if got.EnvDigests["HOME"] != mcptest.Digest("/doc/home") {
				t.Errorf("HOME = %q; the document's env must win", got.Env["HOME"])
			}
			assertNoLeftovers(t, tag)
		})
	}
}

// SPEC R2.3: a host PWD that reaches the child (whole environment, or a
// list naming it) is replaced by cwd; it would tell the server it runs in
// the host's directory.
func TestInheritedPWDIsCwd(t *testing.T) {
	t.Parallel()
	host := []string{"PATH=" + os.Getenv("PATH"), "PWD=/host/dir"}
	for _, opts := range []mcpconn.ConnectorOptions{
		{LaunchEnv: &resource.LaunchEnv{InheritAll: true}},
		{LaunchEnv: &resource.LaunchEnv{Inherit: []string{"PATH", "PWD"}}},
	} {
		srv, tag := fakeStdio(t)
		opts.LaunchEnv = withEnviron(opts.LaunchEnv, func() []string { return host })
		s, err := quickConnector(&opts).Connect(context.Background(), "pwd", srv, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := environment(t, s, "PWD")
		s.Close()
		if got.Env["PWD"] != srv.Cwd {
			t.Errorf("InheritAll %v, Inherit %q: PWD = %q; want cwd %q", opts.LaunchEnv.InheritAll, opts.LaunchEnv.Inherit, got.Env["PWD"], srv.Cwd)
		}
		assertNoLeftovers(t, tag)
	}
}

// A bare command is looked up in the PATH the child gets (the document's
// env may set it), not only in the host's.
func TestBareCommandUsesChildPATH(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	if err := os.Symlink(mcptest.Command(t), filepath.Join(bin, "fakemcp-on-path")); err != nil {
		t.Fatal(err)
	}
	srv, tag := fakeStdio(t)
	srv.Command = "fakemcp-on-path"
	srv.Env = map[string]string{"PATH": bin}
	s, err := quickConnector(nil).Connect(context.Background(), "path", srv, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	s.Close()
	assertNoLeftovers(t, tag)
}

// SPEC R2.2, R2.4: documents that break the launch rules fail before
// anything starts, with an error that says what to do.
func TestLaunchRules(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "started")
	touch := []string{"-c", "touch " + marker}
	tests := []struct {
		name    string
		srv     resource.MCPServer
		want    error
		wantMsg string
	}{
		{name: "legacy record without cwd", srv: resource.MCPServer{Command: "sh", Args: touch},
			want: mcpconn.ErrNoAbsoluteCwd, wantMsg: `set "cwd" to the absolute directory`},
		{name: "relative cwd", srv: resource.MCPServer{Command: "sh", Args: touch, Cwd: "work/dir"},
			want: mcpconn.ErrNoAbsoluteCwd, wantMsg: `set "cwd" to the absolute directory`},
		{name: "relative command", srv: resource.MCPServer{Command: "./server", Cwd: "/"},
			want: mcpconn.ErrInvalidServer, wantMsg: "a bare program name found in PATH"},
		{name: "command in a subdirectory", srv: resource.MCPServer{Command: "bin/server", Cwd: "/"},
			want: mcpconn.ErrInvalidServer, wantMsg: "relative path"},
		{name: "no command", srv: resource.MCPServer{Type: "stdio", Cwd: "/"},
			want: mcpconn.ErrInvalidServer, wantMsg: "no command"},
		{name: "cwd missing", srv: resource.MCPServer{Command: "sh", Args: touch, Cwd: "/no/such/agt/dir"},
			want: mcpconn.ErrStart, wantMsg: "cwd does not exist"},
		{name: "absolute command missing", srv: resource.MCPServer{Command: "/no/such/agt-server", Cwd: "/"},
			want: mcpconn.ErrStart, wantMsg: "command does not exist"},
		{name: "env name holding '='", srv: resource.MCPServer{Command: "sh", Args: touch, Cwd: "/", Env: map[string]string{"A=B": "v"}},
			want: mcpconn.ErrInvalidServer, wantMsg: "env name"},
		{name: "empty env name", srv: resource.MCPServer{Command: "sh", Args: touch, Cwd: "/", Env: map[string]string{"": "v"}},
			want: mcpconn.ErrInvalidServer, wantMsg: "env name"},
		{name: "unknown type", srv: resource.MCPServer{Type: "carrier-pigeon", Cwd: "/"},
			want: mcpconn.ErrInvalidServer, wantMsg: "unknown server type"},
		{name: "url not http", srv: resource.MCPServer{Type: "http", URL: "ftp://example.com/mcp"},
			want: mcpconn.ErrInvalidServer, wantMsg: "http:// or https://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := quickConnector(nil).Connect(context.Background(), "legacy", tt.srv, nil)
			if !errors.Is(err, tt.want) {
				if s != nil {
					s.Close()
				}
				t.Fatalf("Connect = %v; want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a refused document started its command")
	}
}

// Against a legacy server, the handshake settles on 2025-11-25 by
// default; an option changes it.
func TestProtocolVersion(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ asked, want string }{
		{"", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
	} {
		c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{ProtocolVersion: tt.asked, Dial: mcptest.Dial(&mcptest.ServerOptions{Era: mcptest.EraLegacy})})
		s, err := c.Connect(context.Background(), "pv", resource.MCPServer{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ProtocolVersion(); got != tt.want {
			t.Errorf("asked %q: protocol version %q; want %q", tt.asked, got, tt.want)
		}
		if got := s.ServerInfo(); got == nil || got.Name != mcptest.ServerName || got.Version != mcptest.ServerVersion {
			t.Errorf("server info = %+v", got)
		}
		if s.Capabilities() == nil || s.Capabilities().Tools == nil {
			t.Errorf("capabilities = %+v; want tools", s.Capabilities())
		}
		s.Close()
	}
}

// A caller that cancels during startup gets its own context error and no
// process is left.
func TestConnectCallerCancel(t *testing.T) {
	t.Parallel()
	srv, tag := fakeStdio(t, "-fault", "no-handshake")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := quickConnector(nil).Connect(ctx, "cancel", srv, nil)
		errc <- err
	}()
	// Cancel once the server is up and waiting.
	poll.Until(t, "the server process to start", func() bool { return len(processesWithTag(t, tag)) > 0 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Connect = %v; want context.Canceled", err)
	}
	assertNoLeftovers(t, tag)
}

// No shared mutable list: a Connector keeps its own copy of LaunchEnv.Inherit,
// so a caller changing its slice later changes no server's environment
// (resource.DefaultInheritEnv returns a copy: resource's own test).
func TestEnvAllowlistsAreCopies(t *testing.T) {
	t.Parallel()
	inherit := []string{"PATH"}
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Inherit: inherit}})
	inherit[0] = "SECRET_*"
	if diff := cmp.Diff([]string{"PATH"}, mcpconn.LaunchEnvOf(c).Inherit); diff != "" {
		t.Errorf("Connector's list after the caller changed its slice (-want +got):\n%s", diff)
	}
}
