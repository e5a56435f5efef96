package resource_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/resource"
)

// allowFixture is a host with an allowlisted program in its PATH, a
// program of the same name elsewhere, an admitted work directory and a
// directory outside it (reachable through a symbolic link inside).
type allowFixture struct {
	bin, evil, work, outside string
	env                      *resource.LaunchEnv
}

func newAllowFixture(t *testing.T) allowFixture {
	t.Helper()
	root := t.TempDir()
	f := allowFixture{bin: filepath.Join(root, "bin"), evil: filepath.Join(root, "evil"), work: filepath.Join(root, "work"), outside: t.TempDir()}
	for _, d := range []string{f.bin, f.evil, filepath.Join(f.work, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeExecutable(t, filepath.Join(f.bin, "srv"), 0o755)
	writeExecutable(t, filepath.Join(f.bin, "other"), 0o755)
	writeExecutable(t, filepath.Join(f.bin, "unlisted"), 0o755)
	writeExecutable(t, filepath.Join(f.evil, "srv"), 0o755)
	if err := os.Symlink(f.outside, filepath.Join(f.work, "escape")); err != nil {
		t.Fatal(err)
	}
	host := func() []string { return []string{"PATH=relative:" + f.bin, "HOME=/h"} }
	f.env = &resource.LaunchEnv{Environ: host, Allow: &resource.LaunchAllowlist{
		Commands: []string{"srv", filepath.Join(f.bin, "other"), "relative/x", ""},
		Dirs:     []string{f.work},
		Origins:  []string{"https://mcp.example.com", "http://127.0.0.1:8080", "https://with.path.example/mcp"},
	}}
	return f
}

// The allowlist admits a command by absolute path or by a bare name as the
// host's PATH resolves it, a cwd inside a listed directory after symbolic
// links, and a url by origin; everything else is refused with the field,
// before anything starts, and the message holds no value.
func TestLaunchAllowlist(t *testing.T) {
	t.Parallel()
	f := newAllowFixture(t)
	stdio := []struct {
		name  string
		srv   resource.MCPServer
		field string // "" admitted
	}{
		{"bare name in the host PATH", resource.MCPServer{Command: "srv", Cwd: f.work}, ""},
		{"absolute path of a bare entry", resource.MCPServer{Command: filepath.Join(f.bin, "srv"), Cwd: f.work}, ""},
		{"absolute entry", resource.MCPServer{Command: filepath.Join(f.bin, "other"), Cwd: filepath.Join(f.work, "sub")}, ""},
		{"bare name of an absolute entry", resource.MCPServer{Command: "other", Cwd: f.work}, ""},
		{"unlisted program", resource.MCPServer{Command: "unlisted", Cwd: f.work}, "/command"},
		{"same name elsewhere", resource.MCPServer{Command: filepath.Join(f.evil, "srv"), Cwd: f.work}, "/command"},
		{"same name through the document's PATH", resource.MCPServer{Command: "srv", Cwd: f.work, Env: map[string]string{"PATH": f.evil}}, "/command"},
		{"unclean path", resource.MCPServer{Command: f.bin + "/../evil/srv", Cwd: f.work}, "/command"},
		{"cwd outside", resource.MCPServer{Command: "srv", Cwd: f.outside}, "/cwd"},
		{"cwd through a link inside", resource.MCPServer{Command: "srv", Cwd: filepath.Join(f.work, "escape")}, "/cwd"},
		{"cwd a prefix sibling", resource.MCPServer{Command: "srv", Cwd: f.bin}, "/cwd"},
	}
	for _, tc := range stdio {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resource.ResolveLaunch(tc.srv, f.env, nil)
			checkAllowed(t, err, tc.field, f.evil, f.outside)
			// Without an allowlist every one of them launches.
			open := *f.env
			open.Allow = nil
			if _, err := resource.ResolveLaunch(tc.srv, &open, nil); err != nil {
				t.Fatalf("without an allowlist: %v", err)
			}
		})
	}
	remote := []struct {
		url   string
		field string
	}{
		{"https://mcp.example.com/mcp", ""},
		{"https://MCP.Example.com:443/other?q=1", ""},
		{"http://127.0.0.1:8080/mcp", ""},
		{"http://mcp.example.com/mcp", "/url"},
		{"https://mcp.example.com:8443/mcp", "/url"},
		{"https://evil.example.com/mcp", "/url"},
		{"https://mcp.example.com.evil.example/mcp", "/url"},
		{"http://127.0.0.1:8081/mcp", "/url"},
		{"https://with.path.example/mcp", "/url"}, // an entry with a path admits nothing
	}
	for _, tc := range remote {
		t.Run(tc.url, func(t *testing.T) {
			_, err := resource.ResolveRemote(resource.MCPServer{URL: tc.url}, f.env)
			checkAllowed(t, err, tc.field, "evil", "8081")
		})
	}
	// An empty non-nil list admits nothing.
	none := *f.env
	none.Allow = &resource.LaunchAllowlist{Commands: []string{}}
	_, err := resource.ResolveLaunch(resource.MCPServer{Command: "srv", Cwd: f.work}, &none, nil)
	checkAllowed(t, err, "/command")
}

func checkAllowed(t *testing.T, err error, field string, secrets ...string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var le *resource.LaunchError
	if !errors.As(err, &le) || le.Code != findcode.NotAllowed || le.Field != field {
		t.Fatalf("err = %v, want a LaunchError %s on %s", err, findcode.NotAllowed, field)
	}
	if !strings.Contains(le.Fix, "LaunchAllowlist.") {
		t.Errorf("fix %q does not name the allowlist field to set", le.Fix)
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q repeats a value (%q)", err, s)
		}
	}
}

// An agent caller cannot store a server the allowlist refuses, whether it
// registers one or edits a stored (mounted) one, whichever launch field it
// uses; Test reports the same refusal. A direct caller may store it (its
// start is still refused), and an agent may edit what does not change the
// launch.
func TestAgentWritesJudgedByTheAllowlist(t *testing.T) {
	t.Parallel()
	f := newAllowFixture(t)
	svc, repo := newServiceWith(t, &resource.ServiceOptions{LaunchEnv: f.env})
	server := func(entry map[string]any) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": entry}})
		return b
	}
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "ok", Create: true, Data: server(map[string]any{"command": "srv", "cwd": f.work})})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "direct-unlisted", Create: true, Data: server(map[string]any{"command": "/bin/sh", "args": []string{"-c", "true"}, "cwd": f.work})})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager": true, "mcps": ["ok"]}`)})
	boss := resource.AgentCaller("boss")

	refused := []struct {
		name  string
		req   resource.WriteRequest
		field string
	}{
		{"register a shell", resource.WriteRequest{Kind: resource.KindMCP, Ref: "sh", Create: true, Data: server(map[string]any{"command": "/bin/sh", "args": []string{"-c", "id"}, "cwd": f.work})}, "/data/mcpServers/s/command"},
		{"register a missing program", resource.WriteRequest{Kind: resource.KindMCP, Ref: "ghost", Create: true, Data: server(map[string]any{"command": "no-such-program", "cwd": f.work})}, "/data/mcpServers/s/command"},
		{"register outside the dirs", resource.WriteRequest{Kind: resource.KindMCP, Ref: "out", Create: true, Data: server(map[string]any{"command": "srv", "cwd": f.outside})}, "/data/mcpServers/s/cwd"},
		{"register an unlisted origin", resource.WriteRequest{Kind: resource.KindMCP, Ref: "web", Create: true, Data: server(map[string]any{"url": "https://evil.example.com/mcp"})}, "/data/mcpServers/s/url"},
		{"edit the mounted command", resource.WriteRequest{Kind: resource.KindMCP, Ref: "ok", Data: server(map[string]any{"command": filepath.Join(f.evil, "srv"), "cwd": f.work})}, "/data/mcpServers/s/command"},
		{"edit the mounted env PATH", resource.WriteRequest{Kind: resource.KindMCP, Ref: "ok", Data: server(map[string]any{"command": "srv", "cwd": f.work, "env": map[string]string{"PATH": f.evil}})}, "/data/mcpServers/s/command"},
		{"edit the mounted cwd", resource.WriteRequest{Kind: resource.KindMCP, Ref: "ok", Data: server(map[string]any{"command": "srv", "cwd": filepath.Join(f.work, "escape")})}, "/data/mcpServers/s/cwd"},
		{"edit the mounted server into a remote one", resource.WriteRequest{Kind: resource.KindMCP, Ref: "ok", Data: server(map[string]any{"url": "http://127.0.0.1:9/mcp"})}, "/data/mcpServers/s/url"},
	}
	for _, tc := range refused {
		before := snapshotAll(t, repo)
		_, err := svc.Write(bg, boss, tc.req)
		if !errors.Is(err, resource.ErrPermission) {
			t.Fatalf("%s: err = %v, want ErrPermission", tc.name, err)
		}
		for _, want := range []string{tc.field, "(fix: "} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: refusal %q does not name %s", tc.name, err, want)
			}
		}
		if strings.Contains(err.Error(), f.evil) || strings.Contains(err.Error(), "evil.example") {
			t.Errorf("%s: refusal %q repeats a value", tc.name, err)
		}
		if diff := cmp.Diff(before, snapshotAll(t, repo)); diff != "" {
			t.Fatalf("%s: a refused write changed the store (-before +after):\n%s", tc.name, diff)
		}
		// A direct caller may store it; the start stays refused.
		if _, err := svc.Write(bg, resource.Direct(), tc.req); err != nil && !errors.Is(err, resource.ErrExists) {
			t.Fatalf("%s: direct caller: %v", tc.name, err)
		}
		mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "ok", Data: server(map[string]any{"command": "srv", "cwd": f.work})})
	}

	// Admitted registrations and edits that keep the launch go through.
	for _, req := range []resource.WriteRequest{
		{Kind: resource.KindMCP, Ref: "mine", Create: true, Data: server(map[string]any{"command": "other", "args": []string{"--any"}, "cwd": f.work})},
		{Kind: resource.KindMCP, Ref: "remote", Create: true, Data: server(map[string]any{"url": "https://mcp.example.com/mcp"})},
		{Kind: resource.KindMCP, Ref: "ok", Data: server(map[string]any{"command": "srv", "cwd": filepath.Join(f.work, "sub"), "args": []string{"x"}})},
		{Kind: resource.KindMCP, Ref: "direct-unlisted", Data: server(map[string]any{"command": "/bin/sh", "args": []string{"-c", "true"}, "cwd": f.work, "description": "kept"})},
	} {
		if _, err := svc.Write(bg, boss, req); err != nil {
			t.Fatalf("admitted write %s: %v", req.Ref, err)
		}
	}

	// The static test refuses what the start would refuse.
	rep, err := svc.Test(bg, resource.Direct(), mcpKey("direct-unlisted"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || !strings.Contains(strings.Join(codes(rep.Findings), ","), findcode.NotAllowed) {
		t.Fatalf("Test of an unlisted command: %+v", rep)
	}
	rep, err = svc.Test(bg, resource.Direct(), mcpKey("web"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || !strings.Contains(strings.Join(codes(rep.Findings), ","), findcode.NotAllowed) {
		t.Fatalf("Test of an unlisted origin: %+v", rep)
	}
}

// issue 23 item 1: env names that change how a program starts (the
// dynamic loader's, an interpreter's, a shell's, PATH) are code. An agent
// caller may set only the env names LaunchAllowlist.Env lists (none when
// it is nil), and without an allowlist none of the start-altering ones;
// under an allowlist no registration starts with a start-altering name
// the allowlist does not list, whoever wrote it. A direct caller stores
// any env.
func TestAgentEnvJudgedByTheAllowlist(t *testing.T) {
	t.Parallel()
	f := newAllowFixture(t)
	server := func(env map[string]string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": "srv", "cwd": f.work, "env": env}}})
		return b
	}
	withEnv := func(names ...string) *resource.LaunchEnv {
		e := *f.env
		e.Allow = f.env.Allow.Clone()
		e.Allow.Env = names
		return &e
	}
	open := *f.env
	open.Allow = nil
	for _, tc := range []struct {
		name    string
		launch  *resource.LaunchEnv
		env     map[string]string
		refused string // the refused env name, "" stored
	}{
		{"allowlist, no Env: a plain name", f.env, map[string]string{"API_KEY": "plainV4lue"}, "API_KEY"},
		{"allowlist, no Env: a loader name", f.env, map[string]string{"LD_PRELOAD": "/x.so"}, "LD_PRELOAD"},
		{"listed by prefix", withEnv("API_*"), map[string]string{"API_KEY": "plainV4lue", "API_URL": "urlV4lue"}, ""},
		{"not listed", withEnv("API_*"), map[string]string{"API_KEY": "plainV4lue", "BASH_ENV": "$(id)"}, "BASH_ENV"},
		{"a start-altering name the host lists", withEnv("NODE_OPTIONS"), map[string]string{"NODE_OPTIONS": "--max-old-space-size=64"}, ""},
		{"no allowlist: a plain name", &open, map[string]string{"API_KEY": "plainV4lue"}, ""},
		{"no allowlist: BASH_ENV", &open, map[string]string{"BASH_ENV": "$(id)"}, "BASH_ENV"},
		{"no allowlist: python", &open, map[string]string{"PYTHONWARNINGS": "all:0:antigravity.x:0:0"}, "PYTHONWARNINGS"},
		{"no allowlist: BROWSER", &open, map[string]string{"BROWSER": "perlthanks"}, "BROWSER"},
		{"no allowlist: perl", &open, map[string]string{"PERL5OPT": "-Mbase;system(q(id))"}, "PERL5OPT"},
		{"no allowlist: PATH in another case", &open, map[string]string{"Path": "/evil"}, "Path"},
		{"no allowlist: a bash function", &open, map[string]string{"BASH_FUNC_ls%%": "() { id; }"}, "BASH_FUNC_ls%%"},
		{"no allowlist: git", &open, map[string]string{"GIT_SSH_COMMAND": "id"}, "GIT_SSH_COMMAND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, repo := newServiceWith(t, &resource.ServiceOptions{LaunchEnv: tc.launch})
			mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "ok", Create: true, Data: server(nil)})
			mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager": true}`)})
			boss := resource.AgentCaller("boss")
			for _, req := range []resource.WriteRequest{
				{Kind: resource.KindMCP, Ref: "ok", Data: server(tc.env)},
				{Kind: resource.KindMCP, Ref: "new", Create: true, Data: server(tc.env)},
			} {
				before := snapshotAll(t, repo)
				_, err := svc.Write(bg, boss, req)
				if tc.refused == "" {
					if err != nil {
						t.Fatalf("create=%v: %v", req.Create, err)
					}
					continue
				}
				if !errors.Is(err, resource.ErrPermission) {
					t.Fatalf("create=%v: err = %v, want ErrPermission", req.Create, err)
				}
				for _, want := range []string{"/data/mcpServers/s/env/" + tc.refused, "LaunchAllowlist.Env"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q does not name %s", err, want)
					}
				}
				for _, v := range tc.env {
					if strings.Contains(err.Error(), v) {
						t.Errorf("refusal %q repeats a value", err)
					}
				}
				if diff := cmp.Diff(before, snapshotAll(t, repo)); diff != "" {
					t.Fatalf("a refused write changed the store (-before +after):\n%s", diff)
				}
			}
		})
	}

	// What the host stored stays: an agent's edit that keeps the stored
	// env is not judged for it, and a direct caller stores any env.
	svc, _ := newServiceWith(t, &resource.ServiceOptions{LaunchEnv: withEnv()})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager": true}`)})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "hosted", Create: true, Data: server(map[string]string{"API_KEY": "plainV4lue", "LD_PRELOAD": "/x.so"})})
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": "srv", "cwd": f.work, "args": []string{"--more"}, "env": map[string]string{"API_KEY": "plainV4lue"}}}})
	if _, err := svc.Write(bg, resource.AgentCaller("boss"), resource.WriteRequest{Kind: resource.KindMCP, Ref: "hosted", Data: b}); err != nil {
		t.Fatalf("an agent edit that keeps (or drops) the host's env: %v", err)
	}
}

// Under an allowlist, no registration starts with a start-altering env
// name the allowlist does not list, since a start cannot tell who wrote
// it; other names, and any name without an allowlist, start.
func TestLaunchRefusesStartAlteringEnv(t *testing.T) {
	t.Parallel()
	f := newAllowFixture(t)
	listed := *f.env
	listed.Allow = f.env.Allow.Clone()
	listed.Allow.Env = []string{"LD_LIBRARY_PATH", "PYTHON*"}
	open := *f.env
	open.Allow = nil
	for _, tc := range []struct {
		name  string
		env   *resource.LaunchEnv
		vars  map[string]string
		field string
	}{
		{"a plain name", f.env, map[string]string{"API_KEY": "plainV4lue"}, ""},
		{"the loader", f.env, map[string]string{"LD_PRELOAD": "/x.so"}, "/env/LD_PRELOAD"},
		{"bash", f.env, map[string]string{"API_KEY": "plainV4lue", "BASH_ENV": "$(id)"}, "/env/BASH_ENV"},
		{"node", f.env, map[string]string{"NODE_OPTIONS": "--require /x.js"}, "/env/NODE_OPTIONS"},
		{"listed names", &listed, map[string]string{"LD_LIBRARY_PATH": "/opt/lib", "PYTHONPATH": "/opt/py"}, ""},
		{"listed and not", &listed, map[string]string{"PYTHONPATH": "/opt/py", "PERL5LIB": "/opt/pl"}, "/env/PERL5LIB"},
		{"no allowlist", &open, map[string]string{"LD_PRELOAD": "/x.so"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resource.ResolveLaunch(resource.MCPServer{Command: "srv", Cwd: f.work, Env: tc.vars}, tc.env, nil)
			checkAllowed(t, err, tc.field, "/x.so", "$(id)", "/opt")
		})
	}
}
