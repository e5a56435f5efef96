package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// --oauth, --oauth-client-id and --oauth-scopes write the oauth field of a
// remote server on add, create and update; --oauth=false removes it, and
// a stdio server refuses them.
func TestMCPOAuthFlags(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	oauthOf := func(ref string) any {
		t.Helper()
		_, data := getJSON(t, db, "mcp", ref)
		for _, srv := range data["mcpServers"].(map[string]any) {
			return srv.(map[string]any)["oauth"]
		}
		return nil
	}

	mustRun(t, db, 0, "mcp", "add", "docs", "--transport", "http", "--oauth", "https://mcp.example.com/mcp")
	if diff := cmp.Diff(map[string]any{}, oauthOf("docs")); diff != "" {
		t.Errorf("add --oauth stored (-want +got):\n%s", diff)
	}
	mustRun(t, db, 0, "mcp", "create", "linear", "--url", "https://mcp.example.com/mcp", "--oauth-client-id", "agt-cli", "--oauth-scopes", "read,write")
	if diff := cmp.Diff(map[string]any{"client_id": "agt-cli", "scopes": []any{"read", "write"}}, oauthOf("linear")); diff != "" {
		t.Errorf("create --oauth-client-id --oauth-scopes stored (-want +got):\n%s", diff)
	}
	mustRun(t, db, 0, "mcp", "update", "linear", "--oauth-scopes", "read")
	if diff := cmp.Diff(map[string]any{"client_id": "agt-cli", "scopes": []any{"read"}}, oauthOf("linear")); diff != "" {
		t.Errorf("update --oauth-scopes kept (-want +got):\n%s", diff)
	}
	mustRun(t, db, 0, "mcp", "update", "linear", "--oauth-client-secret", "${secret:linear}", "--oauth-authorization-server", "https://auth.example.com")
	if diff := cmp.Diff(map[string]any{"client_id": "agt-cli", "client_secret": "${secret:linear}", "authorization_server": "https://auth.example.com", "scopes": []any{"read"}}, oauthOf("linear")); diff != "" {
		t.Errorf("update --oauth-client-secret --oauth-authorization-server stored (-want +got):\n%s", diff)
	}
	// A secret itself is refused: only a reference goes into a document.
	if r := runAgt(t, db, "", "mcp", "update", "linear", "--oauth-client-secret", "hunter2-plain"); r.code == 0 || strings.Contains(r.stdout+r.stderr, "hunter2-plain") {
		t.Errorf("update with a plain secret: exit %d, output holds the value or it was accepted:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runAgt(t, db, "", "mcp", "update", "linear", "--oauth=false", "--oauth-authorization-server", "https://auth.example.com"); r.code != 2 {
		t.Errorf("--oauth=false with --oauth-authorization-server: exit %d, want 2", r.code)
	}
	mustRun(t, db, 0, "mcp", "update", "linear", "--oauth=false")
	if got := oauthOf("linear"); got != nil {
		t.Errorf("update --oauth=false left oauth %v", got)
	}

	r := runAgt(t, db, "", "mcp", "add", "local", "--oauth", "--", "notes-server")
	if r.code != 2 || !strings.Contains(r.stderr, "--oauth is for remote servers") {
		t.Errorf("add --oauth on a stdio server: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
