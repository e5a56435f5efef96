package resource_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/resource"
)

// decodeAny decodes JSON for a comparison that ignores key order.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// Issue 29 item 7: every combination of Kind, Data, Server, Agent, Add
// and Remove, accepted or refused with ErrInvalid naming the fields.
func TestTypedWriteRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := &resource.MCPServer{Command: "npx", Args: []string{"-y", "server"}, Cwd: dir}
	agent := &resource.AgentDocument{Name: "helper", MCPs: []resource.Ref{"files"}}
	data := stdioDoc(dir)
	add := map[string][]string{"capabilities": {"search"}}
	tests := []struct {
		name string
		req  resource.WriteRequest
		// wantKind is the kind stored; "" means refused with wantField
		// and a message holding every one of wantText.
		wantKind  resource.Kind
		wantField string
		wantText  []string
	}{
		{name: "server, kind implied", req: resource.WriteRequest{Server: srv}, wantKind: resource.KindMCP},
		{name: "server, kind mcp", req: resource.WriteRequest{Kind: resource.KindMCP, Server: srv}, wantKind: resource.KindMCP},
		{name: "agent, kind implied", req: resource.WriteRequest{Agent: agent}, wantKind: resource.KindAgent},
		{name: "agent, kind agent", req: resource.WriteRequest{Kind: resource.KindAgent, Agent: agent}, wantKind: resource.KindAgent},
		{name: "agent with add", req: resource.WriteRequest{Agent: agent, Add: add}, wantKind: resource.KindAgent},
		{name: "data, as before", req: resource.WriteRequest{Kind: resource.KindMCP, Data: data}, wantKind: resource.KindMCP},

		{name: "server, kind agent", req: resource.WriteRequest{Kind: resource.KindAgent, Server: srv},
			wantField: "/kind", wantText: []string{"WriteRequest.Server", `"mcp"`}},
		{name: "agent, kind mcp", req: resource.WriteRequest{Kind: resource.KindMCP, Agent: agent},
			wantField: "/kind", wantText: []string{"WriteRequest.Agent", `"agent"`}},
		{name: "server, unknown kind", req: resource.WriteRequest{Kind: "tool", Server: srv},
			wantField: "/kind", wantText: []string{"WriteRequest.Server"}},
		{name: "data and server", req: resource.WriteRequest{Kind: resource.KindMCP, Data: data, Server: srv},
			wantText: []string{"WriteRequest.Data and WriteRequest.Server", "set one"}},
		{name: "data and agent", req: resource.WriteRequest{Kind: resource.KindAgent, Data: json.RawMessage(`{}`), Agent: agent},
			wantText: []string{"WriteRequest.Data and WriteRequest.Agent"}},
		{name: "server and agent", req: resource.WriteRequest{Server: srv, Agent: agent},
			wantText: []string{"WriteRequest.Server and WriteRequest.Agent"}},
		{name: "all three", req: resource.WriteRequest{Kind: resource.KindMCP, Data: data, Server: srv, Agent: agent},
			wantText: []string{"WriteRequest.Data and WriteRequest.Server and WriteRequest.Agent"}},
		{name: "server with add", req: resource.WriteRequest{Server: srv, Add: add},
			wantField: "/add", wantText: []string{"agent documents"}},
		{name: "server breaks a rule", req: resource.WriteRequest{Server: &resource.MCPServer{Command: "npx"}},
			wantField: "/data/mcpServers/files/cwd", wantText: []string{"absolute"}},
		{name: "agent breaks a rule", req: resource.WriteRequest{Agent: &resource.AgentDocument{MCPs: []resource.Ref{"Not A Ref"}}},
			wantField: "/data/mcps/0"},
		{name: "no kind, no document", req: resource.WriteRequest{},
			wantField: "/kind"},
	}
	for _, create := range []bool{true, false} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				svc, repo := newService(t)
				registerMCP(t, svc, "files")
				req := tc.req
				// A create names a new reference whose name part, files, is
				// the server's name; an update the registered ones.
				req.Ref, req.Create = "other/files", create
				if !create {
					req.Ref = "files"
					mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "files", Create: true})
				}
				before, _ := repo.Get(bg, mcpKey("files"))
				res, err := svc.Write(bg, resource.Direct(), req)
				if tc.wantKind == "" {
					de := docError(t, err)
					if de.Field != tc.wantField {
						t.Errorf("field %q, want %q (%v)", de.Field, tc.wantField, de)
					}
					for _, w := range tc.wantText {
						if !strings.Contains(de.Error(), w) {
							t.Errorf("error %q does not say %q", de, w)
						}
					}
					if after, _ := repo.Get(bg, mcpKey("files")); after.Revision != before.Revision {
						t.Errorf("a refused write changed the stored mcp resource")
					}
					return
				}
				if err != nil {
					t.Fatalf("Write: %v", err)
				}
				if res.Resource.Kind != tc.wantKind || res.Resource.Ref != req.Ref || res.Created != create {
					t.Fatalf("wrote %s %s (created %v), want %s %s (created %v)", res.Resource.Kind, res.Resource.Ref, res.Created, tc.wantKind, req.Ref, create)
				}
			})
		}
	}
}

// A typed document is stored, warned about and refused exactly as the Data
// it stands for, on a create and on an update.
func TestTypedSameAsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	enabled := false
	tests := []struct {
		name string
		typ  resource.WriteRequest
		data string // the same document as JSON
	}{
		{"stdio server", resource.WriteRequest{Server: &resource.MCPServer{Command: "npx", Args: []string{"-y", "${cwd}/x"},
			Env: map[string]string{"TOKEN": "${env:GH_TOKEN}"}, Cwd: dir, EnabledTools: []string{}, ToolTimeoutMS: 5000}},
			`{"mcpServers": {"files": {"command": "npx", "args": ["-y", "${cwd}/x"], "env": {"TOKEN": "${env:GH_TOKEN}"}, "cwd": "` + dir + `", "enabled_tools": [], "tool_timeout_ms": 5000}}}`},
		{"remote server", resource.WriteRequest{Server: &resource.MCPServer{Type: "http", URL: "https://mcp.example.com/mcp?a=1&b=2",
			Headers: map[string]string{"Authorization": "Bearer ${secret:api}"}, Shared: true}},
			`{"mcpServers": {"files": {"type": "http", "url": "https://mcp.example.com/mcp?a=1&b=2", "headers": {"Authorization": "Bearer ${secret:api}"}, "shared": true}}}`},
		{"server breaking rules", resource.WriteRequest{Server: &resource.MCPServer{Command: "./x", Args: []string{"${HOME}"}}},
			`{"mcpServers": {"files": {"command": "./x", "args": ["${HOME}"]}}}`},
		{"agent", resource.WriteRequest{Agent: &resource.AgentDocument{Name: "helper", Enabled: &enabled, Capabilities: []string{"serch"},
			MCPs: []resource.Ref{"files"}, Extra: map[string]json.RawMessage{"persona": json.RawMessage(`{"tone":"dry"}`)}}},
			`{"name": "helper", "enabled": false, "capabilities": ["serch"], "mcps": ["files"], "persona": {"tone": "dry"}}`},
		{"empty agent", resource.WriteRequest{Agent: &resource.AgentDocument{}}, `{"mcps": []}`},
		{"agent mounting a missing server", resource.WriteRequest{Agent: &resource.AgentDocument{MCPs: []resource.Ref{"nothere"}}},
			`{"mcps": ["nothere"]}`},
	}
	for _, create := range []bool{true, false} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				kind := resource.KindMCP
				if tc.typ.Agent != nil {
					kind = resource.KindAgent
				}
				write := func(req resource.WriteRequest) (resource.WriteResult, error) {
					svc, _ := newService(t)
					registerMCP(t, svc, "files")
					if !create {
						mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "files", Create: true,
							Data: json.RawMessage(`{"mcps": ["files"]}`)}) // a patch of it is the whole document

					}
					req.Ref, req.Create = "files", create
					if create && kind == resource.KindMCP {
						req.Ref = "other/files" // the name part, files, is the server's name
					}
					return svc.Write(bg, resource.Direct(), req)
				}
				typed, terr := write(tc.typ)
				byData, derr := write(resource.WriteRequest{Kind: kind, Data: json.RawMessage(tc.data)})
				if (terr == nil) != (derr == nil) || terr != nil && terr.Error() != derr.Error() {
					t.Fatalf("typed err = %v, data err = %v", terr, derr)
				}
				if terr != nil {
					return
				}
				if diff := cmp.Diff(decodeAny(t, byData.Resource.Data), decodeAny(t, typed.Resource.Data)); diff != "" {
					t.Errorf("stored document (-data +typed):\n%s", diff)
				}
				if diff := cmp.Diff(byData, typed, cmpopts.IgnoreFields(resource.Resource{}, "Data", "CreatedAt", "UpdatedAt")); diff != "" {
					t.Errorf("write result (-data +typed):\n%s", diff)
				}
			})
		}
	}
}

// An update by Server keeps the name the stored entry has (an imported
// "GitHub" stays "GitHub"), and a create names it by the reference.
func TestTypedServerName(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "tools/gh", Create: true,
		Data: json.RawMessage(`{"mcpServers": {"GitHub": {"url": "https://a.example/mcp"}}}`)})
	mustWrite(t, svc, resource.WriteRequest{Ref: "tools/gh", Server: &resource.MCPServer{URL: "https://b.example/mcp"}})
	mustWrite(t, svc, resource.WriteRequest{Ref: "tools/new", Create: true, Server: &resource.MCPServer{URL: "https://c.example/mcp"}})
	for ref, want := range map[string]string{
		"tools/gh":  `{"mcpServers":{"GitHub":{"url":"https://b.example/mcp"}}}`,
		"tools/new": `{"mcpServers":{"new":{"url":"https://c.example/mcp"}}}`,
	} {
		res, err := repo.Get(bg, mcpKey(ref))
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Data) != want {
			t.Errorf("%s stored %s, want %s", ref, res.Data, want)
		}
	}
	// The unchanged server is recognised as unchanged.
	res := mustWrite(t, svc, resource.WriteRequest{Ref: "tools/gh", Server: &resource.MCPServer{URL: "https://b.example/mcp"}})
	if res.Changed {
		t.Errorf("rewriting the same server wrote a new revision")
	}
	// So is an agent written as Data and rewritten typed, '&' and '<'
	// included (no HTML escaping on either path).
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "a", Create: true, Data: json.RawMessage(`{"name": "R&D <team>", "mcps": []}`)})
	res = mustWrite(t, svc, resource.WriteRequest{Ref: "a", Agent: &resource.AgentDocument{Name: "R&D <team>"}})
	if res.Changed {
		t.Errorf("rewriting the same agent typed wrote a new revision: %s", res.Resource.Data)
	}
}

// An update by Agent replaces the document (a field left zero is not
// kept), then applies Add and Remove; an agent caller cannot use it to
// drop its manager flag unless the host lets agents change privileges.
func TestTypedAgentReplaces(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	registerMCP(t, svc, "a")
	registerMCP(t, svc, "b")
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "helper", Create: true,
		Data: json.RawMessage(`{"name": "helper", "manager": true, "mcps": ["a"], "persona": "dry"}`)})
	res := mustWrite(t, svc, resource.WriteRequest{Ref: "helper", Agent: &resource.AgentDocument{MCPs: []resource.Ref{"a"}},
		Add: map[string][]string{"mcps": {"b"}}, Remove: map[string][]string{"mcps": {"a"}}})
	if want := `{"mcps":["b"]}`; string(res.Resource.Data) != want {
		t.Fatalf("stored %s, want %s", res.Resource.Data, want)
	}
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true,
		Data: json.RawMessage(`{"manager": true, "mcps": []}`)})
	before, _ := repo.Get(bg, agentKey("boss"))
	_, err := svc.Write(bg, resource.AgentCaller("boss"), resource.WriteRequest{Ref: "boss", Agent: &resource.AgentDocument{MCPs: []resource.Ref{"a"}}})
	if !errors.Is(err, resource.ErrPermission) {
		t.Fatalf("an agent caller dropping its manager flag: %v, want ErrPermission", err)
	}
	if after, _ := repo.Get(bg, agentKey("boss")); after.Revision != before.Revision {
		t.Fatalf("a refused write changed the document")
	}
}

// Server and Agent have no JSON form: a model, whose resource_write
// arguments decode into a WriteRequest, can never set them, in any
// spelling.
func TestTypedNotFromJSON(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"server", "Server", "agent", "Agent", "mcpServer"} {
		in := `{"kind": "mcp", "reference": "x", "create": true, "` + field + `": {"command": "sh", "cwd": "/"}}`
		var req resource.WriteRequest
		de := docError(t, json.Unmarshal([]byte(in), &req))
		if de.Field != "/"+field || de.Code != findcode.UnknownField {
			t.Errorf("%s: field %q code %q, want /%s %s", field, de.Field, de.Code, field, findcode.UnknownField)
		}
	}
	var req resource.WriteRequest
	if err := json.Unmarshal([]byte(`{"kind": "mcp", "reference": "x", "data": {"mcpServers": {}}}`), &req); err != nil {
		t.Fatal(err)
	}
	if req.Server != nil || req.Agent != nil {
		t.Fatalf("decoded a typed document from JSON: %+v", req)
	}
	b, err := json.Marshal(resource.WriteRequest{Kind: resource.KindMCP, Ref: "x", Server: &resource.MCPServer{Command: "sh"},
		Agent: &resource.AgentDocument{Manager: true}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sh") || strings.Contains(string(b), "manager") {
		t.Fatalf("a typed document shows in the JSON form: %s", b)
	}
}
