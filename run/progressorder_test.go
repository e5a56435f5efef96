package run_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// featTransports serve the fake server with the client-features tools
// over each transport.
var featTransports = []struct {
	name string
	srv  func(t *testing.T) resource.MCPServer
}{
	{"stdio", func(t *testing.T) resource.MCPServer {
		return stdioServer(t, "-fault", string(mcptest.FaultClientFeatures))
	}},
	{"streamable HTTP", func(t *testing.T) resource.MCPServer {
		return resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, "-fault", string(mcptest.FaultClientFeatures))}
	}},
	{"SSE", func(t *testing.T) resource.MCPServer {
		return resource.MCPServer{Type: resource.TransportSSE, URL: mcptest.StartHTTP(t, "-fault", string(mcptest.FaultClientFeatures), "-sse")}
	}},
}

// Issue 24 item 5: every progress notification a server sent before a
// call's result reaches Options.ClientFeatures.Observe before Execute returns that
// result, on every transport: 50 calls each, no sleep.
func TestProgressBeforeResult(t *testing.T) {
	t.Parallel()
	const runs, steps = 50, 5
	for _, tt := range featTransports {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			putMCP(t, repo, featRef, tt.srv(t))
			putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{featRef}})
			var mu sync.Mutex
			seen := map[string]int{}
			r := newRun(t, &run.Options{
				Repository: repo,
				ClientFeatures: &run.ClientFeatures{Observe: func(_ context.Context, n run.Notification) {
					if c, ok := n.From.Call(); ok && n.Progress != nil {
						mu.Lock()
						seen[c.CallID]++
						mu.Unlock()
					}
				}},
			})
			late := 0
			for i := range runs {
				id := fmt.Sprintf("c%d", i)
				out, err := r.Execute(context.Background(), batch(featCall(id, mcptest.ToolProgress, fmt.Sprintf(`{"steps":%d,"ms":0}`, steps))))
				if err != nil || out.Results[0].Failed() {
					t.Fatalf("call %d: %v %+v", i, err, out.Results[0])
				}
				mu.Lock()
				if seen[id] != steps {
					late++
				}
				mu.Unlock()
			}
			if late > 0 {
				t.Errorf("%s: %d of %d calls returned before all their %d progress notifications reached Observe", tt.name, late, runs, steps)
			}
		})
	}
}
