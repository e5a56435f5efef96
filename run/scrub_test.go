//lint:file-ignore SA1019 sampling and logging are current in protocol 2025-11-25

package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runToken is the secret the echo-secret server is given.
const runToken = "ghp_R7x2Kq9Lm4Vt8Wz1Ys6Np3Hb5Jc0Df7Ga2Qe"

// tokenResolver resolves ${secret:tok} to its value, for any registration.
type tokenResolver string

func (v tokenResolver) Resolve(_ context.Context, _ resource.Ref, name string) (string, error) {
	return string(v), nil
}

// Issue 23 item 4, through a Run: a mounted server that echoes its token
// in every channel it has gets it to no one: not to the model (the tools'
// descriptions and schemas, the instructions, each result's ForModel,
// ToolError, Content, Structured and Blocks), not to the audit, Observe,
// the host's Elicit and Sample, nor the Run's Logger (which gets the log
// lines and progress when there is no Observe). Over stdio and
// streamable HTTP, in both eras. Before the fix each of them held it.
func TestRunHandsOnNoSecretAServerEchoes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		transport string
		era       mcptest.Era // the echo-secret peer speaks legacy or modern
		observe   bool
	}{
		{"stdio, legacy", resource.TransportStdio, mcptest.EraLegacy, true},
		{"stdio, modern", resource.TransportStdio, mcptest.EraModern, true},
		{"http, legacy", resource.TransportHTTP, mcptest.EraLegacy, true},
		{"http, modern", resource.TransportHTTP, mcptest.EraModern, true},
		{"stdio, logger, legacy", resource.TransportStdio, mcptest.EraLegacy, false},
		{"stdio, logger, modern", resource.TransportStdio, mcptest.EraModern, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := resource.MCPServer{Type: resource.TransportHTTP, Headers: map[string]string{"Authorization": "Bearer ${secret:tok}"}}
			if tc.transport == resource.TransportHTTP {
				srv.URL = mcptest.StartHTTP(t, "-era", string(tc.era), "-fault", string(mcptest.FaultEchoSecret))
			} else {
				srv = stdioServerEra(t, tc.era, "-fault", string(mcptest.FaultEchoSecret))
				srv.Env = map[string]string{mcptest.EchoSecretEnv: "${secret:tok}"}
			}
			repo := newRepo(t)
			const echo = resource.Ref("echo")
			putMCP(t, repo, echo, srv)
			putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{echo}})

			var mu sync.Mutex
			seen := map[string]any{}
			arrived := make(chan string, 64)
			deliver := func(what string, v any) {
				mu.Lock()
				defer mu.Unlock()
				seen[what] = v
				arrived <- what
			}
			logs := &lockedWriter{w: &bytes.Buffer{}}
			audit := &auditLog{}
			opts := &run.Options{
				Repository: repo,
				Auditor:    audit,
				Connector:  mcpconn.NewConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{TerminateGrace: 300 * time.Millisecond}, LaunchEnv: &resource.LaunchEnv{Secrets: tokenResolver(runToken)}}),
				Logger:     slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				ClientFeatures: &run.ClientFeatures{Elicit: func(_ context.Context, _ run.Origin, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					deliver("Elicit", p)
					return &mcp.ElicitResult{Action: "decline"}, nil
				}, Sample: func(_ context.Context, _ run.Origin, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					deliver("Sample", p)
					return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "no"}}, nil
				}},
			}
			if tc.observe {
				opts.ClientFeatures.Observe = func(_ context.Context, n run.Notification) { deliver("Observe "+run.NoteKind(n), n) }
			}
			r := newRun(t, opts)
			if len(r.MountErrors()) > 0 {
				t.Fatalf("mount errors: %v", r.MountErrors())
			}
			out := execute(t, r,
				call("c1", run.Alias(echo, mcptest.ToolEchoSecret), `{}`),
				call("c2", run.Alias(echo, mcptest.ToolFailSecret), `{}`),
				call("c3", run.Alias(echo, mcptest.ToolErrorSecret), `{}`))
			want := map[string]bool{"Elicit": true, "Sample": true}
			if tc.observe {
				want["Observe log"], want["Observe progress"] = true, true
			}
			for deadline := time.After(30 * time.Second); len(want) > 0; {
				select {
				case w := <-arrived:
					delete(want, w)
				case <-deadline:
					t.Fatalf("never delivered: %v", want)
				}
			}
			if !tc.observe {
				// The Logger's lines of the log notification and the
				// progress are written before the call's answer is read.
				seen["Logger"] = logs.String()
			}

			channels := map[string]any{"tools": r.Tools(), "instructions": r.Instructions()}
			for _, res := range out.Results {
				blocks, _ := res.Blocks()
				channels["result "+res.CallID] = map[string]any{"for_model": res.ForModel(), "tool_error": res.ToolError(),
					"message": res.Message, "content": res.Content, "structured": res.Structured, "blocks": blocks}
			}
			audit.mu.Lock()
			channels["audit"] = audit.recs
			audit.mu.Unlock()
			mu.Lock()
			for k, v := range seen {
				channels[k] = v
			}
			mu.Unlock()
			for name, v := range channels {
				if leaks := mcptest.SecretLeaks(v, runToken); len(leaks) > 0 {
					t.Errorf("%s holds the secret (%s)", name, strings.Join(leaks, ", "))
				}
				// The audit holds no server text to mask, only outcomes.
				if b, _ := json.Marshal(v); name != "audit" && !strings.Contains(string(b), resource.Mask) {
					t.Errorf("%s holds no mask: the server's secret did not reach it: %s", name, b)
				}
			}
		})
	}
}
