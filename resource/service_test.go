package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newService(t *testing.T) (*resource.Service, resource.Repository) {
	t.Helper()
	repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), &boltrepo.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return resource.NewService(repo, nil), repo
}

var bg = context.Background()

func mcpKey(ref string) resource.Key {
	return resource.Key{Kind: resource.KindMCP, Ref: resource.Ref(ref)}
}
func agentKey(ref string) resource.Key {
	return resource.Key{Kind: resource.KindAgent, Ref: resource.Ref(ref)}
}

// stdioDoc is a valid stdio MCP document running in dir.
func stdioDoc(dir string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"files": map[string]any{"command": "node", "args": []string{"${cwd}/dist/index.js"}, "cwd": dir},
	}})
	return b
}

func mustWrite(t *testing.T, svc *resource.Service, req resource.WriteRequest) resource.WriteResult {
	t.Helper()
	res, err := svc.Write(bg, resource.Direct(), req)
	if err != nil {
		t.Fatalf("Write(%s %s): %v", req.Kind, req.Ref, err)
	}
	return res
}

func registerMCP(t *testing.T, svc *resource.Service, ref string) resource.Resource {
	t.Helper()
	return mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: resource.Ref(ref), Create: true, Data: stdioDoc(t.TempDir())}).Resource
}

func mounts(t *testing.T, repo resource.Repository, agent string) []resource.Ref {
	t.Helper()
	res, err := repo.Get(bg, agentKey(agent))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := resource.DecodeAgent(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	return doc.MCPs
}

func docError(t *testing.T, err error) *resource.DocumentError {
	t.Helper()
	var de *resource.DocumentError
	if !errors.As(err, &de) || !errors.Is(err, resource.ErrInvalid) {
		t.Fatalf("err = %v, want a *DocumentError (ErrInvalid)", err)
	}
	return de
}

// SPEC R3.6: a direct caller may manage; an agent caller only if it is a
// manager or has resource_management; otherwise ErrPermission and nothing
// changes. Reading and listing follow the same rule.
func TestCallerChecks(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	registerMCP(t, svc, "tools/files")
	for _, a := range []struct{ ref, data string }{
		{"boss", `{"manager": true}`},
		{"ops", `{"capabilities": ["resource_management"]}`},
		{"worker", `{"capabilities": ["search"], "mcps": ["tools/files"]}`},
		{"retired", `{"manager": true, "capabilities": ["resource_management"], "enabled": false}`},
	} {
		mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: resource.Ref(a.ref), Create: true, Data: json.RawMessage(a.data)})
	}
	victims := 0
	victim := func() string { return "victim-" + strconv.Itoa(victims) }
	entryPoints := []struct {
		name   string
		setup  func() error
		call   func(c resource.Caller) error
		writes bool
	}{
		{"Write", nil, func(c resource.Caller) error {
			_, err := svc.Write(bg, c, resource.WriteRequest{Kind: resource.KindAgent, Ref: "worker", Data: json.RawMessage(`{"name": "by-` + string(c.Agent) + `"}`)})
			return err
		}, true},
		{"Read", nil, func(c resource.Caller) error { _, err := svc.Read(bg, c, mcpKey("tools/files")); return err }, false},
		{"Delete", func() error {
			victims++
			_, err := repo.Create(bg, mcpKey(victim()), stdioDoc("/srv/victim"))
			return err
		}, func(c resource.Caller) error {
			return svc.Delete(bg, c, mcpKey(victim()), resource.AnyRevision)
		}, true},
		{"List", nil, func(c resource.Caller) error { _, err := svc.List(bg, c, resource.KindMCP, ""); return err }, false},
		{"Test", nil, func(c resource.Caller) error { _, err := svc.Test(bg, c, mcpKey("tools/files")); return err }, false},
		{"AgentMCPList", nil, func(c resource.Caller) error { _, err := svc.AgentMCPList(bg, c, "worker"); return err }, false},
		{"CheckAgent", nil, func(c resource.Caller) error { _, err := svc.CheckAgent(bg, c, "worker"); return err }, false},
	}
	callers := []struct {
		name    string
		caller  resource.Caller
		allowed bool
	}{
		{"direct", resource.Direct(), true},
		{"manager", resource.AgentCaller("boss"), true},
		{"capability", resource.AgentCaller("ops"), true},
		{"plain agent", resource.AgentCaller("worker"), false},
		// A disabled manager manages nothing: issue 23 item 7.
		{"disabled manager", resource.AgentCaller("retired"), false},
		{"unregistered agent", resource.AgentCaller("ghost"), false},
		{"invalid agent ref", resource.AgentCaller("Not/A/Ref"), false},
		{"zero Caller", resource.Caller{}, false},
	}
	for _, ep := range entryPoints {
		for _, c := range callers {
			t.Run(ep.name+"/"+c.name, func(t *testing.T) {
				if ep.setup != nil {
					if err := ep.setup(); err != nil {
						t.Fatal(err)
					}
				}
				before := snapshotAll(t, repo)
				err := ep.call(c.caller)
				if c.allowed {
					if err != nil {
						t.Fatalf("allowed caller got %v", err)
					}
					return
				}
				if !errors.Is(err, resource.ErrPermission) {
					t.Fatalf("err = %v, want ErrPermission", err)
				}
				if !strings.Contains(err.Error(), "(fix: ") {
					t.Fatalf("refusal %q does not say how to fix it", err)
				}
				if ep.writes {
					after := snapshotAll(t, repo)
					if diff := cmp.Diff(before, after); diff != "" {
						t.Fatalf("a refused call changed the store (-before +after):\n%s", diff)
					}
				}
			})
		}
	}
}

// SPEC R2.1, R2.2, R2.5: the rules of an MCP registration.
func TestWriteMCPRules(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	dir := t.TempDir()
	server := func(entry string) string { return `{"mcpServers": {"s": ` + entry + `}}` }
	tests := []struct {
		name      string
		data      string
		wantField string // empty: accepted
		wantCode  string
		wantText  string
	}{
		{name: "stdio bare command", data: server(`{"command": "npx", "args": ["-y", "x"], "cwd": "` + dir + `"}`)},
		{name: "stdio absolute command", data: server(`{"type": "stdio", "command": "/usr/bin/env", "cwd": "` + dir + `", "env": {"K": "${workspace}/v"}}`)},
		{name: "stdio placeholders", data: server(`{"command": "python3", "args": ["${cwd}/main.py", "--root=${workspace}"], "cwd": "` + dir + `"}`)},
		{name: "http", data: server(`{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}}`)},
		{name: "url implies http", data: server(`{"url": "http://127.0.0.1:8080/mcp", "tool_timeout_ms": 1000}`)},
		{name: "secret references", data: server(`{"command": "npx", "args": ["--token=${secret:gh/token}", "$${literal}"], "env": {"K": "${env:API_KEY}"}, "cwd": "` + dir + `"}`)},
		{name: "secret reference in a header", data: server(`{"url": "https://x.example", "headers": {"Authorization": "Bearer ${secret:api}", "X": "$${x}"}}`)},
		{name: "sse", data: server(`{"type": "sse", "url": "https://mcp.example.com/sse", "description": "old server"}`)},
		{name: "shared stdio", data: server(`{"command": "npx", "cwd": "` + dir + `", "shared": true}`)},
		{name: "shared remote", data: server(`{"url": "https://x.example", "shared": false}`)},
		// Issue 25 item 1: a registration may pin a version or an era.
		{name: "pinned version", data: server(`{"url": "https://x.example", "protocol_version": "2025-11-25"}`)},
		{name: "pinned era", data: server(`{"command": "npx", "cwd": "` + dir + `", "protocol_version": "modern"}`)},

		{"zero servers", `{"mcpServers": {}}`, "/data/mcpServers", findcode.ServerCount, "exactly one"},
		{"two servers", `{"mcpServers": {"a": {"url": "https://a.example"}, "b": {"url": "https://b.example"}}}`, "/data/mcpServers", findcode.ServerCount, "exactly one"},
		{"no mcpServers", `{"servers": {}}`, "/data/servers", findcode.UnknownField, "mcpServers"},
		{"dot-slash command", server(`{"command": "./server", "cwd": "` + dir + `"}`), "/data/mcpServers/s/command", findcode.Command, "relative path"},
		{"relative dir command", server(`{"command": "bin/server", "cwd": "` + dir + `"}`), "/data/mcpServers/s/command", findcode.Command, "absolute path"},
		{"tilde command", server(`{"command": "~/bin/server", "cwd": "` + dir + `"}`), "/data/mcpServers/s/command", findcode.Command, "absolute path"},
		{"command with arguments", server(`{"command": "npx -y server", "cwd": "` + dir + `"}`), "/data/mcpServers/s/command", findcode.Command, "args"},
		{"placeholder in command", server(`{"command": "${cwd}/server", "cwd": "` + dir + `"}`), "/data/mcpServers/s/command", findcode.Placeholder, "args, env values and (references only) header values"},
		{"no command", server(`{"type": "stdio", "cwd": "` + dir + `"}`), "/data/mcpServers/s/command", findcode.Command, "needs a command"},
		{"missing cwd", server(`{"command": "npx"}`), "/data/mcpServers/s/cwd", findcode.NoAbsoluteCwd, "absolute"},
		{"relative cwd", server(`{"command": "npx", "cwd": "srv/files"}`), "/data/mcpServers/s/cwd", findcode.NoAbsoluteCwd, "absolute"},
		{"tilde cwd", server(`{"command": "npx", "cwd": "~/srv"}`), "/data/mcpServers/s/cwd", findcode.NoAbsoluteCwd, "~"},
		{"unknown placeholder", server(`{"command": "npx", "args": ["${HOME}/x"], "cwd": "` + dir + `"}`), "/data/mcpServers/s/args/0", findcode.Placeholder, "only ${cwd}, ${workspace}, ${env:NAME} and ${secret:NAME}"},
		{"malformed env reference", server(`{"command": "npx", "args": ["--k=${env:1X}"], "cwd": "` + dir + `"}`), "/data/mcpServers/s/args/0", findcode.Placeholder, "malformed reference name"},
		{"cwd in a header", server(`{"url": "https://x.example", "headers": {"X": "${cwd}"}}`), "/data/mcpServers/s/headers/X", findcode.Placeholder, "only ${env:NAME} and ${secret:NAME}"},
		{"unclosed placeholder", server(`{"command": "npx", "env": {"A": "${cwd"}, "cwd": "` + dir + `"}`), "/data/mcpServers/s/env/A", findcode.Placeholder, "unclosed"},
		{"unknown field", server(`{"command": "npx", "cwd": "` + dir + `", "autoApprove": []}`), "/data/mcpServers/s/autoApprove", findcode.UnknownField, "allowed fields are type, command, args, env, cwd"},
		{"url on stdio", server(`{"command": "npx", "cwd": "` + dir + `", "type": "stdio", "url": "https://x.example"}`), "/data/mcpServers/s/url", findcode.UnknownField, "remote servers"},
		{"cwd on remote", server(`{"type": "http", "url": "https://x.example", "cwd": "` + dir + `"}`), "/data/mcpServers/s/cwd", findcode.UnknownField, "stdio servers"},
		{"both command and url", server(`{"command": "npx", "url": "https://x.example", "cwd": "` + dir + `"}`), "/data/mcpServers/s", findcode.Transport, "both"},
		{"ftp url", server(`{"type": "http", "url": "ftp://x.example/mcp"}`), "/data/mcpServers/s/url", findcode.URL, "http or https"},
		{"url without host", server(`{"type": "sse", "url": "https:///mcp"}`), "/data/mcpServers/s/url", findcode.URL, "no host"},
		{"unknown type", server(`{"type": "websocket", "url": "https://x.example"}`), "/data/mcpServers/s/type", findcode.Transport, "stdio"},
		{"streamable-http type", server(`{"type": "streamable-http", "url": "https://x.example"}`), "/data/mcpServers/s/type", findcode.Transport, `"http"`},
		{"shared not a boolean", server(`{"command": "npx", "cwd": "` + dir + `", "shared": "yes"}`), "/data/mcpServers/s/shared", findcode.WrongType, "a boolean"},
		{"args not strings", server(`{"command": "npx", "args": [1], "cwd": "` + dir + `"}`), "/data/mcpServers/s/args", findcode.WrongType, "array of strings"},
		{"unknown protocol version", server(`{"url": "https://x.example", "protocol_version": "2099-01-01"}`), "/data/mcpServers/s/protocol_version", findcode.WrongType, "2025-11-25"},
		{"protocol version not a string", server(`{"url": "https://x.example", "protocol_version": 2025}`), "/data/mcpServers/s/protocol_version", findcode.WrongType, "a string"},
		{"negative timeout", server(`{"url": "https://x.example", "startup_timeout_ms": -1}`), "/data/mcpServers/s/startup_timeout_ms", findcode.Limit, "between 0"},
		{"placeholder in a header", server(`{"url": "https://x.example", "headers": {"Authorization": "Bearer ${API_KEY}"}}`), "/data/mcpServers/s/headers/Authorization", findcode.Placeholder, "written ${env:NAME}"},
		{"header with newline", server(`{"url": "https://x.example", "headers": {"X": "a\r\nB: c"}}`), "/data/mcpServers/s/headers/X", findcode.WrongType, "line break"},
		{"bad server name", `{"mcpServers": {"a b": {"url": "https://x.example"}}}`, "/data/mcpServers", findcode.ServerName, "letters"},
		{"not an object", `[1]`, "/data", findcode.NotObject, "object"},
		{"allow_mcp in data", `{"allow_mcp": true, "mcpServers": {}}`, "/data/allow_mcp", findcode.AllowMCP, "removed"},
		{"allow_mcp in server", server(`{"url": "https://x.example", "allow_mcp": true}`), "/data/mcpServers/s/allow_mcp", findcode.AllowMCP, "mounted"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := resource.Ref("case-" + strconv.Itoa(i))
			_, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: ref, Create: true, Data: json.RawMessage(tc.data)})
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("valid document refused: %v", err)
				}
				if _, _, err := resource.ValidateMCP(json.RawMessage(tc.data)); err != nil {
					t.Fatalf("ValidateMCP refused a document Write accepted: %v", err)
				}
				return
			}
			de := docError(t, err)
			if de.Field != tc.wantField || de.Code != tc.wantCode || !strings.Contains(de.Message+de.Fix, tc.wantText) {
				t.Fatalf("got field=%q code=%q %q, want field=%q code=%q containing %q", de.Field, de.Code, de.Error(), tc.wantField, tc.wantCode, tc.wantText)
			}
			if de.Fix == "" {
				t.Fatalf("error has no fix: %v", de)
			}
			if _, err := svc.Read(bg, resource.Direct(), mcpKey(string(ref))); !errors.Is(err, resource.ErrNotFound) {
				t.Fatalf("a refused create stored something (Read err = %v)", err)
			}
		})
	}
}

// Error messages judge values without repeating them (hostile input).
func TestErrorsDoNotEchoValues(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	secret := "s3cr3t-token-value"
	for _, data := range []string{
		`{"mcpServers": {"s": {"command": "./` + secret + `", "cwd": "/x"}}}`,
		`{"mcpServers": {"s": {"command": "npx", "cwd": "` + secret + `"}}}`,
		`{"mcpServers": {"s": {"command": "npx", "cwd": "/x", "args": ["${` + secret + `}"]}}}`,
		`{"mcpServers": {"s": {"url": "ftp://` + secret + `"}}}`,
		`{"mcpServers": {"s": {"url": "https://x.example", "headers": {"A": "` + secret + `\n"}}}}`,
		`{"mcpServers": {"s": {"url": "https://x.example", "headers": {"Authorization": "Bearer ${` + secret + `}"}}}}`,
		`{"mcpServers": {"s": {"command": "npx", "cwd": "/x", "env": {"TOKEN": "${` + secret + `"}}}}`,
		`{"mcpServers": {"s": {"command": "npx", "cwd": "/x", "env": {"TOKEN": "` + secret + `\u0000"}}}}`,
		`{"mcpServers": {"s": {"url": "https://x.example", "headers": {"A": "` + strings.Repeat(secret, 2000) + `"}}}}`,
		`{"mcpServers": {"s": {"url": "https://` + secret + `.example", "startup_timeout_ms": "` + secret + `"}}}`,
	} {
		_, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "x", Create: true, Data: json.RawMessage(data)})
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("err = %v: want an error that does not repeat the value", err)
		}
	}
}

// SPEC R2.1: registration stores the configuration only; nothing starts,
// not even during Test (SPEC R3.1).
func TestRegistrationStartsNothing(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": script, "cwd": dir}}})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "starter", Create: true, Data: doc})
	rep, err := svc.Test(bg, resource.Direct(), mcpKey("starter"))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("Test findings %v, want none", rep.Findings)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the server was started (marker stat err = %v)", err)
	}
}

// SPEC R2.4: a record saved before cwd was required can be read and
// modified (with a warning); Test says how to fix it.
func TestLegacyMCP(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	legacy := json.RawMessage(`{"mcpServers": {"old": {"command": "npx", "args": ["server"]}}}`)
	if _, err := repo.Create(bg, mcpKey("old"), legacy); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Read(bg, resource.Direct(), mcpKey("old"))
	if err != nil || res.Revision != 1 {
		t.Fatalf("Read legacy = %v, %v", res, err)
	}

	rep, err := svc.Test(bg, resource.Direct(), mcpKey("old"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || len(rep.Findings) == 0 || rep.Findings[0].Code != findcode.NoAbsoluteCwd {
		t.Fatalf("Test of a legacy record = %+v, want a no_absolute_cwd error first", rep)
	}
	if f := rep.Findings[0]; f.Field != "/mcpServers/old/cwd" || !strings.Contains(f.Fix, `"cwd": "/abs/dir"`) {
		t.Fatalf("legacy finding %+v: want the cwd field and a fix naming the field to set", f)
	}

	// Modifying it without adding cwd is accepted with a warning.
	upd, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "old",
		Data: json.RawMessage(`{"mcpServers": {"old": {"command": "npx", "args": ["server", "--v2"]}}}`), ExpectedRevision: 1})
	if err != nil {
		t.Fatalf("update of a legacy record: %v", err)
	}
	if upd.Resource.Revision != 2 || len(upd.Warnings) != 1 || !strings.Contains(upd.Warnings[0], "cwd") {
		t.Fatalf("update result %+v, want revision 2 with one cwd warning", upd)
	}
	// An update may keep the legacy cwd, but not set a new relative one:
	// that would be a new break of SPEC R2.2, not an old record.
	_, err = svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "old",
		Data: json.RawMessage(`{"mcpServers": {"old": {"command": "npx", "cwd": "srv/old"}}}`)})
	if de := docError(t, err); de.Code != findcode.NoAbsoluteCwd {
		t.Fatalf("legacy update to a relative cwd: code = %q, want %q", de.Code, findcode.NoAbsoluteCwd)
	}
	// Other rules still hold for a legacy record.
	_, err = svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "old",
		Data: json.RawMessage(`{"mcpServers": {"old": {"command": "./npx"}}}`)})
	if de := docError(t, err); de.Code != findcode.Command {
		t.Fatalf("code = %q, want %q", de.Code, findcode.Command)
	}
	// Setting cwd fixes it: no warning, Test passes the cwd rule.
	fixed, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "old", Data: stdioDoc(t.TempDir())})
	if err != nil || len(fixed.Warnings) != 0 {
		t.Fatalf("fixing update = %+v, %v", fixed, err)
	}
	// A record that has a cwd cannot lose it.
	_, err = svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "old", Data: legacy})
	if de := docError(t, err); de.Code != findcode.NoAbsoluteCwd {
		t.Fatalf("code = %q, want %q", de.Code, findcode.NoAbsoluteCwd)
	}
}

// SPEC R3.3: data.mcps replaces, absent keeps, [] clears; add/remove change
// single items; no-ops are reported.
func TestAgentMounts(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	for _, r := range []string{"a", "tools/b", "tools/c"} {
		registerMCP(t, svc, r)
	}
	agent := resource.Ref("team/helper")
	write := func(req resource.WriteRequest) (resource.WriteResult, error) {
		req.Kind, req.Ref = resource.KindAgent, agent
		return svc.Write(bg, resource.Direct(), req)
	}
	res, err := write(resource.WriteRequest{Create: true, Data: json.RawMessage(`{"name": "helper", "mcps": ["a"], "persona": {"tone": "dry", "n": [1, 2]}}`)})
	if err != nil || !res.Created || res.Resource.Revision != 1 {
		t.Fatalf("create = %+v, %v", res, err)
	}
	steps := []struct {
		name      string
		req       resource.WriteRequest
		want      []resource.Ref
		wantNoops int
		changed   bool
	}{
		{"absent mcps keeps", resource.WriteRequest{Data: json.RawMessage(`{"name": "helper2"}`)}, []resource.Ref{"a"}, 0, true},
		{"mcps replaces", resource.WriteRequest{Data: json.RawMessage(`{"mcps": ["tools/b", "tools/c"]}`)}, []resource.Ref{"tools/b", "tools/c"}, 0, true},
		{"add", resource.WriteRequest{Add: map[string][]string{"mcps": {"a"}}}, []resource.Ref{"tools/b", "tools/c", "a"}, 0, true},
		{"add present is a no-op", resource.WriteRequest{Add: map[string][]string{"mcps": {"a"}}}, []resource.Ref{"tools/b", "tools/c", "a"}, 1, false},
		{"remove", resource.WriteRequest{Remove: map[string][]string{"mcps": {"tools/b"}}}, []resource.Ref{"tools/c", "a"}, 0, true},
		{"remove absent is a no-op", resource.WriteRequest{Remove: map[string][]string{"mcps": {"tools/b"}}}, []resource.Ref{"tools/c", "a"}, 1, false},
		{"add and remove together", resource.WriteRequest{Add: map[string][]string{"mcps": {"tools/b"}}, Remove: map[string][]string{"mcps": {"a"}}}, []resource.Ref{"tools/c", "tools/b"}, 0, true},
		{"empty list clears", resource.WriteRequest{Data: json.RawMessage(`{"mcps": []}`)}, []resource.Ref{}, 0, true},
	}
	for _, st := range steps {
		before, _ := repo.Get(bg, agentKey(string(agent)))
		res, err := write(st.req)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, mounts(t, repo, string(agent))); diff != "" {
			t.Fatalf("%s: mounts (-want +got):\n%s", st.name, diff)
		}
		if len(res.Noops) != st.wantNoops || res.Changed != st.changed {
			t.Fatalf("%s: noops %q changed %v, want %d noops changed %v", st.name, res.Noops, res.Changed, st.wantNoops, st.changed)
		}
		wantRev := before.Revision
		if st.changed {
			wantRev++
		}
		if res.Resource.Revision != wantRev {
			t.Fatalf("%s: revision %d, want %d", st.name, res.Resource.Revision, wantRev)
		}
	}
	// Unknown agent fields are kept untouched through every write.
	got, _ := repo.Get(bg, agentKey(string(agent)))
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(got.Data, &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc["persona"]) != `{"tone":"dry","n":[1,2]}` || string(doc["name"]) != `"helper2"` {
		t.Fatalf("agent document %s lost or changed fields", got.Data)
	}
}

// SPEC R3.3: a mounted reference must be valid and registered at write time;
// otherwise nothing changes.
func TestAgentMountRefused(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	registerMCP(t, svc, "a")
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true, Data: json.RawMessage(`{"mcps": ["a"]}`)})
	tests := []struct {
		name     string
		req      resource.WriteRequest
		sentinel error
	}{
		{"add unregistered", resource.WriteRequest{Add: map[string][]string{"mcps": {"missing"}}}, resource.ErrNotFound},
		{"replace with unregistered", resource.WriteRequest{Data: json.RawMessage(`{"mcps": ["a", "nope/x"]}`)}, resource.ErrNotFound},
		{"invalid reference", resource.WriteRequest{Add: map[string][]string{"mcps": {"../etc"}}}, resource.ErrInvalid},
		{"mcps not a list", resource.WriteRequest{Data: json.RawMessage(`{"mcps": "a"}`)}, resource.ErrInvalid},
		{"mcps null", resource.WriteRequest{Data: json.RawMessage(`{"mcps": null}`)}, resource.ErrInvalid},
		{"duplicate mounts", resource.WriteRequest{Data: json.RawMessage(`{"mcps": ["a", "a"]}`)}, resource.ErrInvalid},
		{"same item added and removed", resource.WriteRequest{Add: map[string][]string{"mcps": {"a"}}, Remove: map[string][]string{"mcps": {"a"}}}, resource.ErrInvalid},
		{"add to a non-list field", resource.WriteRequest{Add: map[string][]string{"manager": {"x"}}}, resource.ErrInvalid},
		{"enabled not a bool", resource.WriteRequest{Data: json.RawMessage(`{"enabled": "yes"}`)}, resource.ErrInvalid},
		{"nothing to write", resource.WriteRequest{}, resource.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Kind, tc.req.Ref = resource.KindAgent, "bot"
			_, err := svc.Write(bg, resource.Direct(), tc.req)
			if !errors.Is(err, tc.sentinel) {
				t.Fatalf("err = %v, want %v", err, tc.sentinel)
			}
			if got, _ := repo.Get(bg, agentKey("bot")); got.Revision != 1 {
				t.Fatalf("a refused write changed the agent to revision %d", got.Revision)
			}
		})
	}
	if _, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot2", Create: true, Data: json.RawMessage(`{"mcps": ["ghost"]}`)}); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("create with an unregistered mount err = %v, want ErrNotFound", err)
	}
}

// SPEC R2.6: a stale expected_revision is a conflict carrying the current
// revision, and nothing changes.
func TestExpectedRevision(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	registerMCP(t, svc, "a")
	registerMCP(t, svc, "b")
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Add: map[string][]string{"mcps": {"a"}}})
	for _, req := range []resource.WriteRequest{
		{Kind: resource.KindAgent, Ref: "bot", Add: map[string][]string{"mcps": {"b"}}, ExpectedRevision: 1},
		{Kind: resource.KindAgent, Ref: "bot", Data: json.RawMessage(`{"mcps": []}`), ExpectedRevision: 3},
		{Kind: resource.KindMCP, Ref: "a", Data: stdioDoc("/srv"), ExpectedRevision: 2},
	} {
		before, _ := repo.Get(bg, resource.Key{Kind: req.Kind, Ref: req.Ref})
		_, err := svc.Write(bg, resource.Direct(), req)
		var ce *resource.ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, resource.ErrConflict) || ce.Current != before.Revision {
			t.Fatalf("err = %v, want a ConflictError with current revision %d", err, before.Revision)
		}
		after, _ := repo.Get(bg, resource.Key{Kind: req.Kind, Ref: req.Ref})
		if diff := cmp.Diff(before, after); diff != "" {
			t.Fatalf("a conflicting write changed the resource:\n%s", diff)
		}
	}
	res, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Add: map[string][]string{"mcps": {"b"}}, ExpectedRevision: 2})
	if err != nil || res.Resource.Revision != 3 {
		t.Fatalf("write with the current revision = %+v, %v", res, err)
	}
	if err := svc.Delete(bg, resource.Direct(), agentKey("bot"), 2); !errors.Is(err, resource.ErrConflict) {
		t.Fatalf("Delete with a stale revision err = %v, want ErrConflict", err)
	}
	if err := svc.Delete(bg, resource.Direct(), agentKey("bot"), 3); err != nil {
		t.Fatal(err)
	}
}

// SPEC R2.6: 16 writers racing with the same expected revision: exactly one
// wins, the others get ErrConflict with the winner's revision.
func TestConcurrentSameRevision(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	for i := 0; i < 16; i++ {
		registerMCP(t, svc, "m"+strconv.Itoa(i))
	}
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true})
	var wg sync.WaitGroup
	errs := make([]error, 16)
	start := make(chan struct{})
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot",
				Data: json.RawMessage(`{"mcps": ["m` + strconv.Itoa(i) + `"]}`), ExpectedRevision: 1})
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		var ce *resource.ConflictError
		switch {
		case err == nil:
			wins++
		case errors.As(err, &ce) && ce.Current == 2:
		default:
			t.Fatalf("err = %v, want nil or a ConflictError at revision 2", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d writers won, want 1", wins)
	}
}

// SPEC R3.3: 16 writers adding distinct mounts at once: all are present.
func TestConcurrentAdds(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	var want []resource.Ref
	for i := 0; i < 16; i++ {
		registerMCP(t, svc, "pool/m"+strconv.Itoa(i))
		want = append(want, resource.Ref("pool/m"+strconv.Itoa(i)))
	}
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for _, ref := range want {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Add: map[string][]string{"mcps": {string(ref)}}})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := mounts(t, repo, "bot")
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("mounts after concurrent adds (-want +got):\n%s", diff)
	}
}

// SPEC R3.7: allow_mcp is refused wherever it appears, saying why.
func TestAllowMCPRefused(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	registerMCP(t, svc, "a")
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true})

	var req resource.WriteRequest
	err := json.Unmarshal([]byte(`{"kind": "agent", "reference": "bot", "allow_mcp": true}`), &req)
	if de := docError(t, err); de.Code != findcode.AllowMCP || !strings.Contains(de.Message, "removed") || !strings.Contains(de.Fix, `add={"mcps":["REF"]}`) || strings.Contains(de.Fix, "agt ") {
		t.Fatalf("request with allow_mcp: %v", de)
	}
	for _, r := range []resource.WriteRequest{
		{Kind: resource.KindAgent, Ref: "bot", Data: json.RawMessage(`{"allow_mcp": true}`)},
		{Kind: resource.KindAgent, Ref: "bot", Add: map[string][]string{"allow_mcp": {"a"}}},
	} {
		_, err := svc.Write(bg, resource.Direct(), r)
		if de := docError(t, err); de.Code != findcode.AllowMCP {
			t.Fatalf("code = %q, want %q", de.Code, findcode.AllowMCP)
		}
	}
}

func TestWriteRequestJSON(t *testing.T) {
	t.Parallel()
	var req resource.WriteRequest
	in := `{"kind": "agent", "reference": "team/bot", "create": false, "data": {"enabled": false},
		"add": {"mcps": ["a"]}, "remove": {"mcps": ["b"]}, "expected_revision": 7}`
	if err := json.Unmarshal([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	want := resource.WriteRequest{Kind: resource.KindAgent, Ref: "team/bot", Data: json.RawMessage(`{"enabled": false}`),
		Add: map[string][]string{"mcps": {"a"}}, Remove: map[string][]string{"mcps": {"b"}}, ExpectedRevision: 7}
	if diff := cmp.Diff(want, req); diff != "" {
		t.Fatalf("decoded request (-want +got):\n%s", diff)
	}
	for _, bad := range []struct{ in, field string }{
		{`{"kind": "agent", "ref": "x"}`, "/ref"},
		{`{"kind": 3}`, "/kind"},
		{`[]`, ""},
	} {
		err := json.Unmarshal([]byte(bad.in), &req)
		if de := docError(t, err); de.Field != bad.field {
			t.Errorf("%s: field %q, want %q (%v)", bad.in, de.Field, bad.field, de)
		}
	}
	// A wrong type says what to write and never repeats the value.
	for _, bad := range []struct{ in, field, want string }{
		{`{"expected_revision": 123456789012345678901234567890}`, "/expected_revision", "whole number"},
		{`{"expected_revision": 1.5}`, "/expected_revision", "whole number"},
		{`{"create": "s3cr3t"}`, "/create", "true or false"},
		{`{"add": {"mcps": [12345678]}}`, "/add", `{"mcps": ["REF"]}`},
	} {
		err := json.Unmarshal([]byte(bad.in), &req)
		de := docError(t, err)
		if de.Field != bad.field || !strings.Contains(de.Fix, bad.want) {
			t.Errorf("%s: field %q fix %q, want %q and a fix with %q", bad.in, de.Field, de.Fix, bad.field, bad.want)
		}
		for _, v := range []string{"1234567890", "1.5", "s3cr3t", "12345678"} {
			if strings.Contains(de.Error(), v) {
				t.Errorf("%s: error %q repeats the value", bad.in, de.Error())
			}
		}
	}
	err := json.Unmarshal([]byte(`{"kind": "agent", "ref": "x"}`), &req)
	if !strings.Contains(err.Error(), "kind, reference, create, data, add, remove, expected_revision") {
		t.Fatalf("unknown-field error %v does not list the allowed fields", err)
	}
}

func TestRequestChecks(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	registerMCP(t, svc, "a")
	tests := []struct {
		name  string
		req   resource.WriteRequest
		field string
	}{
		{"unknown kind", resource.WriteRequest{Kind: "tool", Ref: "a", Create: true, Data: json.RawMessage(`{}`)}, "/kind"},
		{"bad reference", resource.WriteRequest{Kind: resource.KindMCP, Ref: "A/B", Create: true, Data: stdioDoc("/x")}, "/reference"},
		{"expected revision on create", resource.WriteRequest{Kind: resource.KindMCP, Ref: "b", Create: true, Data: stdioDoc("/x"), ExpectedRevision: 1}, "/expected_revision"},
		{"add on mcp", resource.WriteRequest{Kind: resource.KindMCP, Ref: "a", Add: map[string][]string{"args": {"x"}}}, "/add"},
		{"mcp update without data", resource.WriteRequest{Kind: resource.KindMCP, Ref: "a"}, ""},
		{"data not an object", resource.WriteRequest{Kind: resource.KindAgent, Ref: "a", Create: true, Data: json.RawMessage(`"x"`)}, "/data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Write(bg, resource.Direct(), tc.req)
			if de := docError(t, err); de.Field != tc.field {
				t.Fatalf("field %q, want %q (%v)", de.Field, tc.field, de)
			}
		})
	}
	small := resource.NewService(svc.Repository(), &resource.ServiceOptions{MaxDocumentBytes: 64})
	_, err := small.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "big", Create: true, Data: stdioDoc(strings.Repeat("/d", 40))})
	if de := docError(t, err); de.Code != findcode.Limit {
		t.Fatalf("oversized data code %q, want %q", de.Code, findcode.Limit)
	}
	if _, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "a", Create: true, Data: stdioDoc("/x")}); !errors.Is(err, resource.ErrExists) {
		t.Fatalf("create of a taken reference err = %v, want ErrExists", err)
	}
	if _, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "zz", Data: stdioDoc("/x")}); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("update of a missing resource err = %v, want ErrNotFound", err)
	}
}

func TestReadListDelete(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	for _, r := range []string{"x", "tools/b", "tools/a", "other/c"} {
		registerMCP(t, svc, r)
	}
	res, err := svc.Read(bg, resource.Direct(), mcpKey("tools/a"))
	if err != nil || res.Revision != 1 || res.Key() != mcpKey("tools/a") {
		t.Fatalf("Read = %+v, %v", res, err)
	}
	list, err := svc.List(bg, resource.Direct(), resource.KindMCP, "tools")
	if err != nil {
		t.Fatal(err)
	}
	var refs []resource.Ref
	for _, r := range list {
		refs = append(refs, r.Ref)
	}
	if diff := cmp.Diff([]resource.Ref{"tools/a", "tools/b"}, refs); diff != "" {
		t.Fatalf("List(tools) (-want +got):\n%s", diff)
	}
	if _, err := svc.List(bg, resource.Direct(), resource.KindMCP, "a/b"); !errors.Is(err, resource.ErrInvalid) {
		t.Fatalf("List with a bad category err = %v, want ErrInvalid", err)
	}
	if err := svc.Delete(bg, resource.Direct(), mcpKey("x"), resource.AnyRevision); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Read(bg, resource.Direct(), mcpKey("x")); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Read after Delete err = %v, want ErrNotFound", err)
	}
	if err := svc.Delete(bg, resource.Direct(), mcpKey("x"), resource.AnyRevision); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("second Delete err = %v, want ErrNotFound", err)
	}
}

// Hostile keys appear in error fields cut short and printable.
func TestErrorFieldsBounded(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	long := strings.Repeat("k", 5000) + "\n"
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"url": "https://x.example", long: 1}}})
	_, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "x", Create: true, Data: data})
	de := docError(t, err)
	if len(de.Field) > 120 || strings.ContainsAny(de.Field, "\n") || de.Code != findcode.UnknownField {
		t.Fatalf("field %q (%d bytes), code %q: want a short printable pointer to the unknown field", de.Field, len(de.Field), de.Code)
	}
	// Every character internal/text.Unsafe calls unsafe becomes '?' in a
	// pointer (the one rule); other characters stay.
	for key, want := range map[string]string{
		"a\nb": "a?b", "a\u0085b": "a?b", "a\u2028b": "a?b", "a\u202eb": "a?b", "a\u200bb": "a?b", "\ufeffa": "?a",
		"é~/x": "é~0~1x",
	} {
		data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"url": "https://x.example", key: 1}}})
		_, err := svc.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindMCP, Ref: "x", Create: true, Data: data})
		if de := docError(t, err); de.Field != "/data/mcpServers/s/"+want {
			t.Errorf("key %q: field %q, want /data/mcpServers/s/%s", key, de.Field, want)
		}
	}
}

// Typos are not stored in silence: a field agt does not read and a
// capability it does not know are kept as written but reported as
// warnings (by Write, Test and CheckAgent), a near miss naming what was
// probably meant; known fields give none, and the warnings are bounded.
func TestAgentTypoWarnings(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	registerMCP(t, svc, "notes")
	tests := []struct {
		name string
		req  resource.WriteRequest
		want []string // substrings, one per warning, in order
	}{
		{name: "mpcs", req: resource.WriteRequest{Data: json.RawMessage(`{"mpcs": ["notes"]}`)},
			want: []string{`/data/mpcs: agt does not read this agent field; it is stored as written (fix: did you mean "mcps"? rename it)`}},
		{name: "capability", req: resource.WriteRequest{Data: json.RawMessage(`{"capabilities": ["resource_managment"]}`)},
			want: []string{`/data/capabilities/0: unknown capability; it is stored but grants nothing (fix: did you mean "resource_management"?`}},
		{name: "add to a misspelled list", req: resource.WriteRequest{Add: map[string][]string{"mcsp": {"notes"}, "capabilities": {"resource_management", "admin"}}},
			want: []string{`/add/capabilities/1: unknown capability`, `/add/mcsp: agt does not read this agent field; it is stored as written (fix: did you mean "mcps"?`}},
		{name: "a field far from any", req: resource.WriteRequest{Data: json.RawMessage(`{"team": "ops"}`)},
			want: []string{`/data/team: agt does not read this agent field; it is stored as written (fix: remove it if it is a typo; the fields agt reads are name, enabled, manager, capabilities, mcps)`}},
		{name: "known fields", req: resource.WriteRequest{Data: json.RawMessage(`{"name": "n", "enabled": true, "manager": false, "capabilities": ["resource_management"], "mcps": ["notes"]}`)},
			want: nil},
	}
	for i, tc := range tests {
		ref := resource.Ref(fmt.Sprintf("a%d", i))
		for _, create := range []bool{true, false} {
			req := tc.req
			req.Kind, req.Ref, req.Create = resource.KindAgent, ref, create
			if !create {
				// An update that changes nothing still warns about what it names.
				mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: ref, Data: json.RawMessage(`{"name": "changed"}`)})
			}
			res := mustWrite(t, svc, req)
			if len(res.Warnings) != len(tc.want) {
				t.Fatalf("%s (create %v): warnings %q; want %d", tc.name, create, res.Warnings, len(tc.want))
			}
			for j, w := range tc.want {
				if !strings.Contains(res.Warnings[j], w) {
					t.Errorf("%s (create %v): warning %q; want it to hold %q", tc.name, create, res.Warnings[j], w)
				}
			}
		}
	}

	// The stored document keeps the typo; Test and CheckAgent warn about it
	// and still call the agent ok.
	rep, err := svc.Test(bg, resource.Direct(), agentKey("a0"))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || len(rep.Findings) != 1 || rep.Findings[0].Severity != findcode.Warning || rep.Findings[0].Field != "/mpcs" {
		t.Errorf("Test of an agent with mpcs: %+v; want ok with one warning at /mpcs", rep)
	}
	check, err := svc.CheckAgent(bg, resource.Direct(), "a1")
	if err != nil {
		t.Fatal(err)
	}
	if !check.OK || len(check.Problems) != 1 || check.Problems[0].Code != findcode.UnknownCapability || !strings.Contains(check.Problems[0].Fix, `"resource_management"`) {
		t.Errorf("CheckAgent of an agent with a misspelled capability: %+v; want ok with the warning", check)
	}

	// Bounded: a document of many unknown fields gets maxWarnings and one
	// that counts the rest.
	many := map[string]int{}
	for i := range 500 {
		many[fmt.Sprintf("field%03d", i)] = i
	}
	data, _ := json.Marshal(many)
	res := mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "many", Create: true, Data: data})
	if n := len(res.Warnings); n != 17 || !strings.Contains(res.Warnings[16], "484 more warnings") {
		t.Errorf("%d warnings, the last %q; want 16 and one counting 484 more", n, res.Warnings[len(res.Warnings)-1])
	}
}
