package resource_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/glob"
	"github.com/agtsdk/agt/resource"
)

// ValidateMCP takes hostile documents: it never panics, every refusal is a
// *DocumentError, and an accepted document has exactly the one server it
// returns with an absolute cwd or a URL.
func FuzzValidateMCP(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"s": {"command": "npx", "args": ["${cwd}/x"], "cwd": "/srv/s"}}}`,
		`{"mcpServers": {"s": {"type": "sse", "url": "https://x.example/sse", "headers": {"A": "b"}}}}`,
		`{"mcpServers": {"s": {"command": "./x", "cwd": "rel"}}}`,
		`{"mcpServers": {"s": {"command": "x", "cwd": "/a", "env": {"K": "${cwd"}}}}`,
		`{"mcpServers": {"s": {"command": "x", "cwd": "/a", "enabled_tools": ["a*", "b?"], "disabled_tools": []}}}`,
		`{"mcpServers": {"s": {"url": "https://x.example", "enabled_tools": null, "disabled_tools": ["[a]"]}}}`,
		`{"mcpServers": {}}`, `[]`, `null`, `{"mcpServers": {"s": null}}`, `{"mcpServers": {"~/": {"url": 1}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		name, srv, err := resource.ValidateMCP(data)
		if err != nil {
			var de *resource.DocumentError
			if !errors.As(err, &de) || !errors.Is(err, resource.ErrInvalid) || de.Code == "" || de.Message == "" {
				t.Fatalf("refusal %v is not a complete DocumentError", err)
			}
			return
		}
		if name == "" {
			t.Fatal("accepted a document without a server name")
		}
		switch srv.Transport() {
		case resource.TransportStdio:
			if !filepath.IsAbs(srv.Cwd) || srv.Command == "" {
				t.Fatalf("accepted a stdio server without an absolute cwd or a command: %+v", srv)
			}
		case resource.TransportHTTP, resource.TransportSSE:
			if srv.URL == "" {
				t.Fatalf("accepted a remote server without a url: %+v", srv)
			}
		default:
			t.Fatalf("accepted transport %q", srv.Transport())
		}
		for _, p := range append(append([]string(nil), srv.EnabledTools...), srv.DisabledTools...) {
			if msg := glob.Check(p); msg != "" {
				t.Fatalf("accepted a tool pattern that glob.Check refuses: %s", msg)
			}
		}
		// What was validated is what starts: DecodeMCP (used to start the
		// server) must read the same server.
		dname, dsrv, err := resource.DecodeMCP(json.RawMessage(data))
		if err != nil {
			t.Fatalf("DecodeMCP refuses what ValidateMCP accepts: %v", err)
		}
		if diff := cmp.Diff(srv, dsrv); diff != "" || dname != name {
			t.Fatalf("DecodeMCP reads %q, ValidateMCP %q; server (-validated +decoded):\n%s", dname, name, diff)
		}
	})
}
