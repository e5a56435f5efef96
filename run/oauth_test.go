package run_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A mount whose server requires an OAuth login that was never done fails
// that mount with ErrLoginRequired and a value-free reason; the other
// mounts load.
func TestMountNeedsOAuthLogin(t *testing.T) {
	t.Parallel()
	locked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="token tok-secret-echo expired"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(locked.Close)
	repo, mem := setup(t, "open")
	putMCP(t, repo, "locked", resource.MCPServer{Type: resource.TransportHTTP, URL: locked.URL + "/mcp?key=tok-in-url", OAuth: &resource.MCPOAuth{}})
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{"open", "locked"}})
	dial := mcptest.Dial(&mem.opts)
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		Dial: func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
			if srv.Transport() != resource.TransportStdio {
				return nil, nil // reached by its url
			}
			return dial(ctx, ref, srv)
		},
	})
	r := newRun(t, &run.Options{Repository: repo, Connector: c})
	errs := r.MountErrors()
	if len(errs) != 1 || errs[0].Ref != "locked" || !errors.Is(errs[0], mcpconn.ErrLoginRequired) {
		t.Fatalf("mount errors = %v, want one ErrLoginRequired for locked", errs)
	}
	if msg := errs[0].Error(); strings.Contains(msg, "tok-") || !strings.Contains(msg, "OAuth login") {
		t.Errorf("mount error = %q: want a value-free reason that names the login", msg)
	}
}
