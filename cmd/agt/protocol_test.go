package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// Issue 25 item 1: --protocol-version pins a registration's version or
// era (the document's protocol_version) on add, create and update, checked
// by the resource service as the field is in any document; get shows the
// pin, "" negotiates again.
func TestMCPProtocolVersionFlag(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	pinned := func(ref string) any {
		t.Helper()
		_, data := getJSON(t, db, "mcp", ref)
		for _, srv := range data["mcpServers"].(map[string]any) {
			return srv.(map[string]any)["protocol_version"]
		}
		return nil
	}
	mustRun(t, db, 0, "mcp", "add", "old", "--protocol-version", "legacy", "--transport", "http", "https://mcp.example.com/mcp")
	if got := pinned("old"); got != "legacy" {
		t.Errorf("mcp add --protocol-version legacy stored %v", got)
	}
	mustRun(t, db, 0, "mcp", "create", "new", "--url", "https://mcp.example.com/mcp", "--protocol-version", "2026-07-28")
	if got := pinned("new"); got != "2026-07-28" {
		t.Errorf("mcp create --protocol-version 2026-07-28 stored %v", got)
	}
	r := mustRun(t, db, 0, "mcp", "get", "new")
	assertContains(t, "mcp get", r.stdout, "pinned to 2026-07-28")

	r = mustRun(t, db, 1, "mcp", "update", "new", "--protocol-version", "2099-01-01")
	assertContains(t, "mcp update --protocol-version 2099-01-01", r.stderr,
		"protocol_version is not an MCP protocol version this client speaks", `write "modern", "legacy" or one of 2026-07-28`)
	if got := pinned("new"); got != "2026-07-28" {
		t.Errorf("a refused update changed the pin to %v", got)
	}
	mustRun(t, db, 1, "mcp", "add", "bad", "--protocol-version", "2099-01-01", "--transport", "http", "https://mcp.example.com/mcp")

	mustRun(t, db, 0, "mcp", "update", "new", "--protocol-version", "")
	if got := pinned("new"); got != nil {
		t.Errorf("--protocol-version \"\" left %v", got)
	}
	if r := mustRun(t, db, 0, "mcp", "get", "new"); strings.Contains(r.stdout, "pinned") {
		t.Errorf("mcp get shows a pin after it was removed:\n%s", r.stdout)
	}
}

// Issue 25 item 1: probe and agent tools show the negotiated protocol
// version: the modern one with a modern server, the legacy one with a
// legacy server or a registration pinned to the legacy era.
func TestShowsNegotiatedVersion(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "modern", "-era", "modern")
	registerFake(t, db, "pinned", "-era", "dual")
	mustRun(t, db, 0, "mcp", "update", "pinned", "--protocol-version", "legacy")
	mustRun(t, db, 0, "agent", "create", "a", "--mcp", "modern", "--mcp", "pinned")
	r := mustRun(t, db, 0, "mcp", "probe", "modern")
	assertContains(t, "mcp probe", r.stdout, "protocol "+mcpconn.ModernProtocolVersion)
	r = mustRun(t, db, 0, "mcp", "probe", "pinned", "--json")
	assertContains(t, "mcp probe --json", r.stdout, `"protocol_version": "`+mcpconn.LegacyProtocolVersion+`"`)
	r = mustRun(t, db, 0, "agent", "tools", "a")
	assertContains(t, "agent tools", r.stdout, "PROTOCOL", "mcp__modern__"+mcptest.ToolEcho, mcpconn.ModernProtocolVersion, mcpconn.LegacyProtocolVersion)
	r = mustRun(t, db, 0, "agent", "tools", "a", "--json")
	assertContains(t, "agent tools --json", r.stdout, `"protocol_version": "`+mcpconn.ModernProtocolVersion+`"`, `"protocol_version": "`+mcpconn.LegacyProtocolVersion+`"`)
}
