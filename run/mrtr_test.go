//lint:file-ignore SA1019 sampling and roots are current in 2025-11-25 and asked inside input_required results in 2026-07-28

package run_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// Issue 25 item 4 (SEP-2322): a modern server asks for input inside its
// tools/call results (input_required); a Run answers those requests with
// the same handlers, bounds and audit as a legacy server's requests, so
// the tests below run over both eras.

var runEras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern, mcptest.EraDual}

// eraRun is a Run of an agent that mounts the fake server of era e with
// the client-features tools over stdio.
func eraRun(t *testing.T, e mcptest.Era, copts *mcpconn.ConnectorOptions, opts *run.Options) *run.Run {
	t.Helper()
	repo := newRepo(t)
	putMCP(t, repo, featRef, stdioServer(t, "-fault", string(mcptest.FaultClientFeatures), "-era", string(e)))
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{featRef}})
	opts.Repository = repo
	o := mcpconn.ConnectorOptions{}
	if copts != nil {
		o = *copts
	}
	var lim mcpconn.Limits
	if o.Limits != nil {
		lim = *o.Limits
	}
	lim.TerminateGrace = 300 * time.Millisecond
	o.Limits = &lim
	opts.Connector = mcpconn.NewConnector(&o)
	return newRun(t, opts)
}

// origins records the Origins the handlers get.
type origins struct {
	mu  sync.Mutex
	got []run.Origin
}

func (o *origins) add(from run.Origin) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, from)
}

// Every request of every round reaches the Run's handlers with the call
// alone, and is audited once with that call, the kind and the outcome,
// never a value; the model gets the server's result.
func TestInputRoundsReachHandlersAndAudit(t *testing.T) {
	t.Parallel()
	for _, e := range runEras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			audit, seen := &auditLog{}, &origins{}
			r := eraRun(t, e, nil, &run.Options{
				Auditor: audit,
				ClientFeatures: &run.ClientFeatures{Roots: []*mcp.Root{{URI: "file:///work"}}, Elicit: func(_ context.Context, from run.Origin, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					seen.add(from)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "secret-name"}}, nil
				}, Sample: func(_ context.Context, from run.Origin, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					seen.add(from)
					return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "model-words"}}, nil
				}},
			})
			out := execute(t, r, featCall("c1", mcptest.ToolRounds, mustJSON(t, mcptest.RoundsIn{Label: "A", Asks: []string{"elicit", "sample+roots"}})))
			res := out.Results[0]
			if res.Failed() {
				t.Fatalf("%s: %s", res.Code, res.Message)
			}
			var got mcptest.RoundsOut
			if err := json.Unmarshal([]byte(text(t, res)), &got); err != nil || got.Rounds != 2 || len(got.Answers) != 3 {
				t.Fatalf("the server's result: %s (%v)", text(t, res), err)
			}
			cc := run.Request{Agent: testAgent, BatchID: "b1", CallID: "c1", Alias: run.Alias(featRef, mcptest.ToolRounds),
				Source: run.Source{Kind: run.SourceMCP, Ref: featRef, Tool: mcptest.ToolRounds}}
			seen.mu.Lock()
			if diff := cmp.Diff([]run.Origin{{Mount: featRef, Calls: []run.Request{cc}}, {Mount: featRef, Calls: []run.Request{cc}}}, seen.got, ignoreCallView); diff != "" {
				t.Errorf("origins (-want +got):\n%s", diff)
			}
			seen.mu.Unlock()
			var recs []string
			for _, rec := range audit.records("server_request") {
				recs = append(recs, string(rec.Request)+" "+string(rec.Outcome)+" "+rec.CallID)
				raw, _ := json.Marshal(rec)
				for _, v := range []string{"secret-name", "model-words", "[A]", mcptest.StateMarker, "file:///work"} {
					if strings.Contains(string(raw), v) {
						t.Errorf("the audit record holds %q: %s", v, raw)
					}
				}
			}
			slices.Sort(recs)
			if diff := cmp.Diff([]string{"elicitation/create accepted c1", "roots/list accepted c1", "sampling/createMessage accepted c1"}, recs); diff != "" {
				t.Errorf("audit (-want +got):\n%s", diff)
			}
		})
	}
}

// What the model sees. A declined elicitation goes back to the server in
// every era, which says what became of the call (a result). A request
// the Run refuses (here the second sampling of a call past
// MaxSamplingPerCall 1) goes back to a legacy server as an error, which
// the server reports in its result; a modern server cannot be told, so
// the call ends there, unsent, with tool_error in agt's words. Both are
// audited as refused with the call.
func TestInputDeclineAndRefusalForTheModel(t *testing.T) {
	t.Parallel()
	for _, e := range runEras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			audit := &auditLog{}
			r := eraRun(t, e, nil, &run.Options{
				Auditor: audit,
				Limits:  &run.Limits{MaxSamplingPerCall: 1},
				ClientFeatures: &run.ClientFeatures{Elicit: func(context.Context, run.Origin, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				}, Sample: func(context.Context, run.Origin, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hi"}}, nil
				}},
			})
			// One call a batch: a legacy server's requests name no call, so
			// with two in flight they would name both.
			declined := execute(t, r, featCall("d", mcptest.ToolRounds, mustJSON(t, mcptest.RoundsIn{Label: "D"}))).Results[0]
			refused := execute(t, r, featCall("s", mcptest.ToolRounds, mustJSON(t, mcptest.RoundsIn{Label: "S", Asks: []string{"sample", "sample"}}))).Results[0]
			if declined.Failed() || !strings.Contains(text(t, declined), `"action":"decline"`) {
				t.Errorf("declined: %s %s %s; want the server's result, which got the decline", declined.Code, declined.Message, declined.Content)
			}
			if refused.Code != run.CodeToolError {
				t.Fatalf("refused: %s %s; want tool_error", refused.Code, refused.Message)
			}
			if e == mcptest.EraLegacy {
				if !strings.Contains(refused.Message, "sample failed") {
					t.Errorf("refused (legacy): %s; want the server's words", refused.Message)
				}
			} else if !strings.Contains(refused.Message, "MaxSamplingPerCall") || !strings.Contains(refused.Message, "was not sent again") {
				t.Errorf("refused (modern): %s; want agt's words", refused.Message)
			}
			var recs []string
			for _, rec := range audit.records("server_request") {
				recs = append(recs, string(rec.Request)+" "+string(rec.Outcome)+" "+rec.CallID)
			}
			slices.Sort(recs)
			if diff := cmp.Diff([]string{"elicitation/create declined d", "sampling/createMessage accepted s", "sampling/createMessage refused s"}, recs); diff != "" {
				t.Errorf("audit (-want +got):\n%s", diff)
			}
		})
	}
}

// A server that never stops asking: the call fails with tool_error once
// ConnectorOptions.Limits.MaxInputRounds rounds were answered, and the Run goes
// on (the next call works).
func TestInputRoundsBoundForTheModel(t *testing.T) {
	t.Parallel()
	for _, e := range []mcptest.Era{mcptest.EraModern, mcptest.EraDual} {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			audit := &auditLog{}
			r := eraRun(t, e, &mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxInputRounds: 2}}, &run.Options{
				Auditor: audit,
				ClientFeatures: &run.ClientFeatures{Elicit: func(context.Context, run.Origin, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "x"}}, nil
				}},
			})
			res := execute(t, r, featCall("f", mcptest.ToolRounds, mustJSON(t, mcptest.RoundsIn{Label: "F", Forever: true}))).Results[0]
			if res.Code != run.CodeToolError || !strings.Contains(res.Message, "after 2 rounds (ConnectorOptions.Limits.MaxInputRounds)") {
				t.Errorf("%s %s; want tool_error over MaxInputRounds", res.Code, res.Message)
			}
			if n := len(audit.records("server_request")); n != 2 {
				t.Errorf("%d requests audited; want 2", n)
			}
			if res := execute(t, r, featCall("e", mcptest.ToolEcho, `{"text":"on"}`)).Results[0]; res.Failed() {
				t.Errorf("next call: %s %s", res.Code, res.Message)
			}
		})
	}
}
