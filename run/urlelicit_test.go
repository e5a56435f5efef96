package run_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 24 item 3: a server's URL elicitation required answer (-32042)
// reaches Options.ClientFeatures.Elicit with the call that got it, is audited as any
// elicitation, and gives the model tool_error in agt's words: retry once
// the user has finished, or why not; never the URL, which is the user's.
// Without Elicit the model gets the same failure as before, in agt's
// words instead of the server's.
func TestURLElicitationRequiredReachesHost(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		tests := []struct {
			name    string
			elicit  string // the handler's action; "": no Elicit
			asked   int
			outcome mcpconn.RequestOutcome
			message string
		}{
			{"accepted", "accept", 1, mcpconn.OutcomeAccepted, "the user was shown it and accepted: the call may succeed if made again once the user has finished"},
			{"declined", "decline", 1, mcpconn.OutcomeDeclined, "the user declined it: the call cannot succeed without it"},
			{"no Elicit", "", 0, mcpconn.OutcomeRefused, "the client has no elicitation handler to show it to the user, so the call cannot succeed here"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				audit := &auditLog{}
				var mu sync.Mutex
				var froms []run.Origin
				var urls []string
				opts := &run.Options{Auditor: audit}
				if tt.elicit != "" {
					opts.ClientFeatures = &run.ClientFeatures{}
					opts.ClientFeatures.Elicit = func(_ context.Context, from run.Origin, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
						mu.Lock()
						defer mu.Unlock()
						froms = append(froms, from)
						urls = append(urls, p.Mode+" "+p.URL+" "+p.ElicitationID)
						return &mcp.ElicitResult{Action: tt.elicit}, nil
					}
				}
				r := featuresRun(t, e, opts)
				res := execute(t, r, featCall("c1", mcptest.ToolURLNeeded, `{}`)).Results[0]
				if res.Code != run.CodeToolError || !strings.Contains(res.Message, tt.message) {
					t.Errorf("result %s %q; want tool_error saying %q", res.Code, res.Message, tt.message)
				}
				for _, leak := range []string{"example.com", "need-1", "Connect your account", "requires more information"} {
					if strings.Contains(string(res.ForModel()), leak) {
						t.Errorf("the model reads the server's %q: %s", leak, res.ForModel())
					}
				}
				mu.Lock()
				if len(froms) != tt.asked {
					t.Fatalf("Elicit asked %d times; want %d", len(froms), tt.asked)
				}
				if tt.asked > 0 {
					if c, ok := froms[0].Call(); !ok || c.CallID != "c1" || c.Source.Tool != mcptest.ToolURLNeeded {
						t.Errorf("origin %+v", froms[0])
					}
					if diff := cmp.Diff([]string{"url " + mcptest.AskURL + " need-1"}, urls); diff != "" {
						t.Errorf("the elicitation (-want +got):\n%s", diff)
					}
				}
				mu.Unlock()
				recs := audit.records("server_request")
				if len(recs) != 1 || recs[0].Request != mcpconn.MethodElicit || recs[0].Outcome != tt.outcome || recs[0].CallID != "c1" {
					t.Errorf("server request records %+v", recs)
				}
				if calls := audit.records("call"); len(calls) != 1 || calls[0].Code != run.CodeToolError {
					t.Errorf("call records %+v", calls)
				}
			})
		}
	})
}
