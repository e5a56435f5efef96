package resource_test

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/resource"
)

// Only the exact field names are the agent's fields. A key that differs in
// case ("Manager", "MCPS") is an unknown field: the write rules do not judge
// it, so DecodeAgent must not act on it either (SPEC R3.3, R3.6).
func TestDecodeAgentExactFieldNames(t *testing.T) {
	t.Parallel()
	doc, err := resource.DecodeAgent(json.RawMessage(`{"Manager": true, "MCPS": ["../x"], "Enabled": "no", "CAPABILITIES": ["resource_management"], "name": "bot"}`))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Manager || doc.CanManage() || len(doc.MCPs) != 0 || !doc.IsEnabled() || doc.Name != "bot" {
		t.Fatalf("DecodeAgent acted on case variants of known fields: %+v", doc)
	}
	if diff := cmp.Diff([]string{"CAPABILITIES", "Enabled", "MCPS", "Manager"}, slices.Sorted(maps.Keys(doc.Extra))); diff != "" {
		t.Fatalf("Extra keys (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"enabled": "yes"}`, `{"mcps": "a"}`, `{} {}`, `null`, `[]`} {
		if _, err := resource.DecodeAgent(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodeAgent(%s) succeeded, want an error", bad)
		}
	}
}

// SPEC R3.6: an agent whose document says "Manager": true (not the field
// manager) is not a manager.
func TestCaseVariantGrantsNothing(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "sneaky", Create: true,
		Data: json.RawMessage(`{"Manager": true, "Capabilities": ["resource_management"]}`)})
	if _, err := svc.List(bg, resource.AgentCaller("sneaky"), resource.KindAgent, ""); !errors.Is(err, resource.ErrPermission) {
		t.Fatalf("List by an agent with only case variants of manager err = %v, want ErrPermission", err)
	}
	// A mount smuggled in under "MCPS" bypasses the mount checks, so it must
	// not count as a mount.
	if _, err := repo.Update(bg, agentKey("sneaky"), json.RawMessage(`{"MCPS": ["ghost/x"]}`), resource.AnyRevision); err != nil {
		t.Fatal(err)
	}
	got, err := svc.AgentMCPList(bg, resource.Direct(), "sneaky")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("AgentMCPList = %+v, want no mounts", got)
	}
}

// DecodeMCP, like the write rules, knows the exact field names only: a
// stored record's "Cwd" is not its cwd.
func TestDecodeMCPExactFieldNames(t *testing.T) {
	t.Parallel()
	name, srv, err := resource.DecodeMCP(json.RawMessage(`{"mcpServers": {"s": {"command": "npx", "Command": "/bin/evil", "Cwd": "/tmp", "args": ["a"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := resource.MCPServer{Command: "npx", Args: []string{"a"}}
	if diff := cmp.Diff(want, srv); diff != "" || name != "s" {
		t.Fatalf("DecodeMCP = %q, (-want +got):\n%s", name, diff)
	}
	if _, _, err := resource.DecodeMCP(json.RawMessage(`{"MCPServers": {"s": {"command": "npx"}}}`)); err == nil {
		t.Fatal("DecodeMCP took MCPServers for mcpServers")
	}
	// shared round-trips, and is false when absent (never on by default).
	for _, tc := range []struct {
		doc  string
		want bool
	}{{`{"mcpServers": {"s": {"command": "npx", "shared": true}}}`, true}, {`{"mcpServers": {"s": {"command": "npx"}}}`, false}} {
		_, srv, err := resource.DecodeMCP(json.RawMessage(tc.doc))
		if err != nil || srv.Shared != tc.want {
			t.Errorf("DecodeMCP(%s).Shared = %v, %v; want %v", tc.doc, srv.Shared, err, tc.want)
		}
		data, _ := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"s": srv}})
		if _, back, _ := resource.DecodeMCP(data); back.Shared != tc.want || strings.Contains(string(data), "shared") != tc.want {
			t.Errorf("round trip of %s = %s", tc.doc, data)
		}
	}
	for _, bad := range []string{`{"mcpServers": {"s": {"shared": 1}}}`, `{"mcpServers": {"s": {"args": "x"}}}`, `{"mcpServers": {}}`, `{"mcpServers": 1}`, `[]`} {
		if _, _, err := resource.DecodeMCP(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodeMCP(%s) succeeded, want an error", bad)
		}
	}
}
