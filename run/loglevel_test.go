//lint:file-ignore SA1019 logging is current in protocol 2025-11-25

package run_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 24 item 7: Options.ClientFeatures.LogLevel is the level every mount's
// server is asked for (logging/setLevel after the handshake, the legacy
// era's way), over stdio, streamable HTTP and SSE: the fake server sends a
// line only at or above it. "" is info. Before, every Run asked for info.
func TestServerLogLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level string
		want  []string // the levels of the lines Observe got, of debug, info, warning, emergency sent
	}{
		{"", []string{"info", "warning", "emergency"}},
		{"debug", []string{"debug", "info", "warning", "emergency"}},
		{"warning", []string{"warning", "emergency"}},
		{"emergency", []string{"emergency"}},
	}
	for _, tr := range featTransports {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%q", tr.name, tt.level), func(t *testing.T) {
				t.Parallel()
				repo := newRepo(t)
				putMCP(t, repo, featRef, tr.srv(t))
				putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{featRef}})
				var mu sync.Mutex
				var got []string
				r := newRun(t, &run.Options{
					Repository: repo,
					ClientFeatures: &run.ClientFeatures{LogLevel: mcpLevel(tt.level), Observe: func(_ context.Context, n run.Notification) {
						if n.Log != nil {
							mu.Lock()
							got = append(got, string(n.Log.Level))
							mu.Unlock()
						}
					}},
				})
				var calls []run.Call
				for _, l := range []string{"debug", "info", "warning", "emergency"} {
					calls = append(calls, featCall(l, mcptest.ToolLog, `{"count":1,"level":"`+l+`"}`))
				}
				// One at a time: each call's lines reach Observe before
				// its result (item 5), so the order is the calls'.
				for _, c := range calls {
					if out := execute(t, r, c); out.Results[0].Failed() {
						t.Fatalf("%s: %+v", c.ID, out.Results[0])
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("levels observed (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// A level that is not one of MCP's fails New, naming the field.
func TestServerLogLevelChecked(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"Info", "warn", "trace", "info "} {
		_, err := run.New(context.Background(), &run.Options{
			Agent:          testAgent,
			Repository:     newRepo(t),
			Permission:     policy.AutoAllow(),
			ClientFeatures: &run.ClientFeatures{LogLevel: mcpLevel(level)},
		})
		if err == nil || !strings.Contains(err.Error(), "Options.ClientFeatures.LogLevel") || !strings.Contains(err.Error(), "debug, info, notice") {
			t.Errorf("level %q: err = %v", level, err)
		}
		if strings.Contains(err.Error(), "no Permission") {
			t.Errorf("level %q: %v", level, err)
		}
	}
}

// Runs that ask for the same level share a shared server, "" and "info"
// alike; a Run asking for another level gets a connection of its own (a
// server has one level per connection).
func TestServerLogLevelSharing(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		srv := stdioServerEra(t, e, "-fault", string(mcptest.FaultClientFeatures))
		srv.Shared = true
		putMCP(t, repo, featRef, srv)
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{featRef}})
		c := mcpconn.NewConnector(nil)
		t.Cleanup(func() { _ = c.Close() })
		for i, level := range []string{"", "info", "debug"} {
			newRun(t, &run.Options{Repository: repo, Connector: c, ClientFeatures: &run.ClientFeatures{LogLevel: mcpLevel(level)}})
			want := []int{1, 1, 2}[i]
			if n := c.SharedConnections(); n != want {
				t.Errorf("after a Run asking %q: %d shared connections; want %d", level, n, want)
			}
		}
	})
}

func mcpLevel(s string) mcp.LoggingLevel { return mcp.LoggingLevel(s) }
