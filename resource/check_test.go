package resource_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/resource"
)

func writeExecutable(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), mode); err != nil {
		t.Fatal(err)
	}
}

func codes(fs []resource.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

// SPEC R3.1: resource_test checks statically (cwd, command resolution, URL)
// and never starts anything; each finding carries a fix.
func TestStaticTest(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, filepath.Join(bin, "my-server"), 0o755)
	writeExecutable(t, filepath.Join(bin, "not-exec"), 0o644)
	file := filepath.Join(dir, "plain-file")
	writeExecutable(t, file, 0o644)

	stdio := func(command, cwd string, env map[string]string) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": command, "cwd": cwd, "env": env}}})
		return string(b)
	}
	pathEnv := map[string]string{"PATH": bin}
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"bare name on the server's PATH", stdio("my-server", dir, pathEnv), []string{}},
		{"absolute executable", stdio(filepath.Join(bin, "my-server"), dir, nil), []string{}},
		{"remote", `{"mcpServers": {"r": {"url": "https://mcp.example.com/mcp"}}}`, []string{}},
		{"bare name not on PATH", stdio("no-such-program-agt", dir, pathEnv), []string{findcode.CommandMissing}},
		// The child runs in cwd, so mcpconn resolves relative PATH entries
		// there and expands ${cwd} in env: Test must agree with what starts.
		{"relative PATH entry resolves against cwd", stdio("my-server", dir, map[string]string{"PATH": "bin"}), []string{}},
		{"${cwd} in the server's PATH", stdio("my-server", dir, map[string]string{"PATH": "/nonexistent:${cwd}/bin"}), []string{}},
		{"relative PATH entry elsewhere", stdio("my-server", bin, map[string]string{"PATH": "bin"}), []string{findcode.CommandMissing}},
		{"absolute path missing", stdio(filepath.Join(dir, "missing"), dir, nil), []string{findcode.CommandMissing}},
		{"absolute path not executable", stdio(filepath.Join(bin, "not-exec"), dir, nil), []string{findcode.CommandMissing}},
		{"absolute path is a directory", stdio(bin, dir, nil), []string{findcode.CommandMissing}},
		{"cwd missing", stdio(filepath.Join(bin, "my-server"), filepath.Join(dir, "gone"), nil), []string{findcode.CwdMissing}},
		{"cwd is a file", stdio(filepath.Join(bin, "my-server"), file, nil), []string{findcode.CwdMissing}},
		{"stored with a bad url", `{"mcpServers": {"r": {"type": "http", "url": "gopher://x"}}}`, []string{findcode.URL}},
		{"stored with a relative command", stdio("./my-server", dir, nil), []string{findcode.Command}},
		{"legacy: no cwd", `{"mcpServers": {"s": {"command": "my-server", "env": {"PATH": "` + bin + `"}}}}`, []string{findcode.NoAbsoluteCwd}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := mcpKey("t" + string(rune('a'+i)))
			// Written through the Repository so stored documents that break
			// the write rules can be tested too.
			if _, err := repo.Create(bg, key, json.RawMessage(tc.data)); err != nil {
				t.Fatal(err)
			}
			rep, err := svc.Test(bg, resource.Direct(), key)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, codes(rep.Findings)); diff != "" {
				t.Fatalf("finding codes (-want +got):\n%s\nfindings: %v", diff, rep.Findings)
			}
			if rep.OK != (len(tc.want) == 0) || rep.Revision != 1 || rep.Key != key {
				t.Fatalf("report = %+v", rep)
			}
			for _, f := range rep.Findings {
				if f.Fix == "" || f.Field == "" || f.Severity != findcode.Error {
					t.Fatalf("finding without field, fix or severity: %+v", f)
				}
			}
		})
	}
	if _, err := svc.Test(bg, resource.Direct(), mcpKey("missing")); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Test of a missing resource err = %v, want ErrNotFound", err)
	}
}

func TestStaticTestAgent(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	registerMCP(t, svc, "a")
	if _, err := repo.Create(bg, agentKey("bot"), json.RawMessage(`{"mcps": ["a", "gone"]}`)); err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Test(bg, resource.Direct(), agentKey("bot"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || len(rep.Findings) != 1 || rep.Findings[0].Code != findcode.MountMissing || rep.Findings[0].Field != "/mcps/1" {
		t.Fatalf("report = %+v, want one mount_not_found at /mcps/1", rep)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	if wire["kind"] != "agent" || wire["reference"] != "bot" || wire["ok"] != false {
		t.Fatalf("report JSON %s lacks kind, reference or ok", b)
	}
	var back resource.TestReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep, back); diff != "" {
		t.Fatalf("report JSON round trip (-want +got):\n%s", diff)
	}
}

// SPEC R3.4: an agent's assembly, each mount with whether it resolves and
// its revision.
func TestAgentMCPList(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	registerMCP(t, svc, "a")
	registerMCP(t, svc, "tools/b")
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "a", Data: stdioDoc(t.TempDir())})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true, Data: json.RawMessage(`{"mcps": ["tools/b", "a"]}`)})
	if err := svc.Delete(bg, resource.Direct(), mcpKey("tools/b"), resource.AnyRevision); err != nil {
		t.Fatal(err)
	}
	got, err := svc.AgentMCPList(bg, resource.Direct(), "bot")
	if err != nil {
		t.Fatal(err)
	}
	want := []resource.Mount{
		{Ref: "tools/b", Problem: "no MCP resource is registered under this reference"},
		{Ref: "a", Resolves: true, Revision: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("AgentMCPList (-want +got):\n%s", diff)
	}
	if _, err := svc.AgentMCPList(bg, resource.Direct(), "nobody"); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("AgentMCPList of a missing agent err = %v, want ErrNotFound", err)
	}
}

// SPEC R3.5: identity, enabled, and the assembly as one report.
func TestCheckAgent(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	registerMCP(t, svc, "good")
	// registerMCP's command is "node"; give "good" a command that resolves
	// everywhere: an executable in its own cwd.
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "srv"), 0o755)
	good, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"g": map[string]any{"command": filepath.Join(dir, "srv"), "cwd": dir}}})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "good", Data: good})
	legacy, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"l": map[string]any{"command": filepath.Join(dir, "srv")}}})
	if _, err := repo.Create(bg, mcpKey("legacy"), legacy); err != nil {
		t.Fatal(err)
	}

	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "ready", Create: true, Data: json.RawMessage(`{"mcps": ["good"]}`)})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "off", Create: true, Data: json.RawMessage(`{"enabled": false, "manager": true, "mcps": ["good"]}`)})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "broken", Create: true, Data: json.RawMessage(`{"mcps": ["good", "legacy"]}`)})

	tests := []struct {
		agent        resource.Ref
		ok, exists   bool
		enabled      bool
		canManage    bool
		problems     []string
		mountsOK     []bool
		mountFinding map[resource.Ref][]string
	}{
		{agent: "ready", ok: true, exists: true, enabled: true, problems: []string{}, mountsOK: []bool{true}},
		{agent: "off", exists: true, canManage: true, problems: []string{findcode.AgentDisabled}, mountsOK: []bool{true}},
		{agent: "broken", exists: true, enabled: true, problems: []string{}, mountsOK: []bool{true, false},
			mountFinding: map[resource.Ref][]string{"legacy": {findcode.NoAbsoluteCwd}}},
		{agent: "ghost", problems: []string{findcode.AgentMissing}, mountsOK: []bool{}},
	}
	for _, tc := range tests {
		t.Run(string(tc.agent), func(t *testing.T) {
			rep, err := svc.CheckAgent(bg, resource.Direct(), tc.agent)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK != tc.ok || rep.Exists != tc.exists || rep.Enabled != tc.enabled || rep.CanManage != tc.canManage {
				t.Fatalf("report = %+v", rep)
			}
			if diff := cmp.Diff(tc.problems, codes(rep.Problems)); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			gotOK := []bool{}
			for _, m := range rep.Mounts {
				gotOK = append(gotOK, m.OK)
				if want, ok := tc.mountFinding[m.Ref]; ok {
					if diff := cmp.Diff(want, codes(m.Findings)); diff != "" {
						t.Fatalf("mount %s findings (-want +got):\n%s", m.Ref, diff)
					}
				}
			}
			if diff := cmp.Diff(tc.mountsOK, gotOK); diff != "" {
				t.Fatalf("mounts OK (-want +got):\n%s", diff)
			}
		})
	}
}
