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
	"github.com/agtsdk/agt/resource/boltrepo"
)

// ResolveLaunch gives the start what Test checks: the executable found in
// the PATH the server gets (relative entries against cwd), argv with the
// placeholders expanded, cwd, and the inherited environment with the
// document's on top.
func TestResolveLaunch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, filepath.Join(bin, "srv"), 0o755)
	writeExecutable(t, filepath.Join(bin, "plain"), 0o644)
	host := func() []string { return []string{"PATH=/nonexistent:bin", "HOME=/h", "SECRET=s", "PWD=/host"} }

	l, err := resource.ResolveLaunch(resource.MCPServer{Command: "srv", Args: []string{"${cwd}/x", "y"}, Cwd: dir + "/", Env: map[string]string{"WS": "${workspace}"}},
		&resource.LaunchEnv{Inherit: []string{"PATH", "HOME", "PWD"}, Environ: host}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := resource.Launch{
		Path: filepath.Join(bin, "srv"),
		Args: []string{"srv", dir + "/x", "y"},
		Dir:  dir,
		Env:  []string{"PATH=/nonexistent:bin", "HOME=/h", "PWD=" + dir, "WS=" + dir},
	}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("launch (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name     string
		srv      resource.MCPServer
		env      *resource.LaunchEnv
		code     string
		inMsg    string
		inFixOpt bool
	}{
		{name: "not executable", srv: resource.MCPServer{Command: "plain", Cwd: dir}, env: &resource.LaunchEnv{Environ: host}, code: findcode.CommandMissing, inMsg: "the PATH the server gets"},
		{name: "PATH not inherited", srv: resource.MCPServer{Command: "srv", Cwd: dir}, env: &resource.LaunchEnv{Inherit: []string{"HOME"}, Environ: host}, code: findcode.CommandMissing, inMsg: "gets no PATH", inFixOpt: true},
		{name: "nothing inherited", srv: resource.MCPServer{Command: "srv", Cwd: dir}, env: &resource.LaunchEnv{Inherit: []string{}, Environ: host}, code: findcode.CommandMissing, inMsg: "gets no PATH", inFixOpt: true},
		{name: "PATH in env", srv: resource.MCPServer{Command: "srv", Cwd: dir, Env: map[string]string{"PATH": "/nonexistent"}}, env: nil, code: findcode.CommandMissing, inMsg: "PATH set in env"},
		{name: "relative command", srv: resource.MCPServer{Command: "bin/srv", Cwd: dir}, env: nil, code: findcode.Command, inMsg: "relative path"},
		{name: "no cwd", srv: resource.MCPServer{Command: "srv"}, env: nil, code: findcode.NoAbsoluteCwd, inMsg: "no absolute cwd"},
		{name: "cwd missing", srv: resource.MCPServer{Command: "srv", Cwd: filepath.Join(dir, "gone")}, env: nil, code: findcode.CwdMissing, inMsg: "cwd does not exist"},
		{name: "remote", srv: resource.MCPServer{URL: "https://example.com/mcp"}, env: nil, code: findcode.Transport, inMsg: "remote"},
	} {
		_, err := resource.ResolveLaunch(tc.srv, tc.env, nil)
		var le *resource.LaunchError
		if !errors.As(err, &le) || le.Code != tc.code || !strings.Contains(le.Message, tc.inMsg) || le.Fix == "" {
			t.Errorf("%s: err = %v; want code %s, message with %q and a fix", tc.name, err, tc.code, tc.inMsg)
			continue
		}
		if tc.inFixOpt && !strings.Contains(le.Fix, "ConnectorOptions.LaunchEnv.Inherit") {
			t.Errorf("%s: fix %q does not name the option that passes PATH", tc.name, le.Fix)
		}
	}
}

// A Service checks with the environment its servers get
// (ServiceOptions.LaunchEnv): a command on the host's PATH is not found
// when PATH is not inherited.
func TestStaticTestUsesTheLaunchEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "srv"), 0o755)
	host := func() []string { return []string{"PATH=" + dir, "HOME=/h"} }
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": "srv", "cwd": dir}}})
	for _, tc := range []struct {
		inherit []string
		want    []string
	}{
		{inherit: []string{"HOME"}, want: []string{findcode.CommandMissing}},
		{inherit: nil, want: []string{}},
	} {
		repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), &boltrepo.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		inherit := tc.inherit
		svc := resource.NewService(repo, &resource.ServiceOptions{LaunchEnv: &resource.LaunchEnv{Inherit: inherit, Environ: host}})
		if inherit != nil {
			inherit[0] = "PATH" // the Service keeps its own copy
		}
		if _, err := repo.Create(bg, mcpKey("s"), data); err != nil {
			t.Fatal(err)
		}
		rep, err := svc.Test(bg, resource.Direct(), mcpKey("s"))
		repo.Close()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, codes(rep.Findings)); diff != "" {
			t.Errorf("inherit %q: finding codes (-want +got):\n%s", tc.inherit, diff)
		}
	}
}

// DefaultInheritEnv returns a new slice each time: an importer that
// changes it changes no other server's environment.
func TestDefaultInheritEnvIsACopy(t *testing.T) {
	t.Parallel()
	a := resource.DefaultInheritEnv()
	a[0] = "SECRET_*"
	if b := resource.DefaultInheritEnv(); b[0] != "PATH" {
		t.Fatalf("DefaultInheritEnv()[0] = %q after a caller changed its copy", b[0])
	}
}

// A fix names the option that applies: the Service's own LaunchEnv when
// the host gave it one, and the Connector's otherwise (ResolveLaunch on a
// LaunchEnv of its own, as mcpconn starts servers).
func TestLaunchFixNamesTheOption(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := &resource.LaunchEnv{Inherit: []string{}}
	svc, _ := newService(t)
	svc = resource.NewService(svc.Repository(), &resource.ServiceOptions{LaunchEnv: env})
	data, _ := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"s": {Command: "srv", Cwd: dir}}})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "s", Create: true, Data: data})
	rep, err := svc.Test(bg, resource.Direct(), mcpKey("s"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].Fix, "(resource.ServiceOptions.LaunchEnv.Inherit)") {
		t.Errorf("Service findings %v: want a fix naming resource.ServiceOptions.LaunchEnv.Inherit", rep.Findings)
	}
	_, err = resource.ResolveLaunch(resource.MCPServer{Command: "srv", Cwd: dir}, env, nil)
	var le *resource.LaunchError
	if !errors.As(err, &le) || !strings.Contains(le.Fix, "(mcpconn.ConnectorOptions.LaunchEnv.Inherit)") {
		t.Errorf("ResolveLaunch: %v, want a fix naming mcpconn.ConnectorOptions.LaunchEnv.Inherit", err)
	}
}
