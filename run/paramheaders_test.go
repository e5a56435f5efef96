//go:build unix

package run_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// Issue 25 item 3: Runs of a modern streamable HTTP server, on a
// connection of their own or on leases of a shared one, call a tool with
// x-mcp-header parameters (the go-sdk's stateless server refuses a call
// whose Mcp-Param-* headers are missing or differ from its arguments),
// and report each tool with invalid annotations as a SkippedTool with the
// reason.
func TestParamHeadersRuns(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "own connection", true: "shared"}[shared], func(t *testing.T) {
			t.Parallel()
			url := mcptest.StartHTTP(t, "-era", string(mcptest.EraModern), "-fault", string(mcptest.FaultParamHeaders))
			repo := newRepo(t)
			const ref = resource.Ref("headers")
			putMCP(t, repo, ref, resource.MCPServer{Type: resource.TransportHTTP, URL: url, Shared: shared})
			putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{ref}})
			c := sharingConnector(t)
			for i := range 2 {
				r := newRun(t, &run.Options{Repository: repo, Connector: c})
				skipped := map[string]string{}
				for _, st := range r.SkippedTools() {
					skipped[st.Source.Tool] = st.Err.Error()
				}
				for name := range mcptest.BadParamHeaderTools {
					if !strings.Contains(skipped[name], "x-mcp-header") {
						t.Errorf("run %d: %s skipped with %q, want its x-mcp-header annotations named", i, name, skipped[name])
					}
				}
				out, err := r.Execute(context.Background(), batch(call("c1", run.Alias(ref, mcptest.ToolParamHeaders),
					`{"region":"eu-north1","priority":7,"target":{"tenant":"acme"}}`)))
				if err != nil {
					t.Fatalf("run %d: Execute: %v", i, err)
				}
				res := out.Results[0]
				if res.Failed() {
					t.Fatalf("run %d: %s %s", i, res.Code, res.Message)
				}
				want := `{"mcp-param-priority":"7","mcp-param-region":"eu-north1","mcp-param-tenant":"acme"}`
				if diff := cmp.Diff(want, echoText(t, res)); diff != "" {
					t.Errorf("run %d: headers the server got (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}
