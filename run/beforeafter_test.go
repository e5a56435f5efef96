package run_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
)

// stateKey is the context key of the per-call state a Before hands on.
type stateKey struct{}

// outerKey is the key of a value an interceptor outside the Before puts.
type outerKey struct{}

// A Before hands per-call state to an After placed later in
// Options.Interceptors, and to the tool: the context it returns is the
// one the rest of the chain and the call get. A nil context leaves ctx
// unchanged; an After placed before it does not see it; its error stops
// the call before the tool, and no After inside it runs.
func TestBeforeHandsStateToAfter(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		// stamp is a Before that puts the call's ID in the context.
		stamp := run.Before(func(ctx context.Context, req run.Request) (context.Context, error) {
			return context.WithValue(ctx, stateKey{}, "state of "+req.CallID), nil
		})
		keep := run.Before(func(context.Context, run.Request) (context.Context, error) { return nil, nil })
		refuse := run.Before(func(context.Context, run.Request) (context.Context, error) {
			return context.WithValue(context.Background(), stateKey{}, "lost"), errorf(run.CodeUnauthorized, "quota used up")
		})
		outer := run.Before(func(ctx context.Context, _ run.Request) (context.Context, error) {
			return context.WithValue(ctx, outerKey{}, "outer"), nil
		})
		tests := []struct {
			name string
			// chain gets the After that records what it saw.
			chain func(after run.Interceptor) []run.Interceptor
			// wantSeen is what the After and the host tool saw, per call
			// (mcp, host); wantCode the calls' code.
			wantAfter, wantHost []string
			wantCode            run.Code
			wantServerCalls     int64
		}{
			{name: "before then after",
				chain:     func(after run.Interceptor) []run.Interceptor { return []run.Interceptor{stamp, after} },
				wantAfter: []string{"state of mcp / <nil>", "state of host / <nil>"}, wantHost: []string{"state of host"}, wantServerCalls: 1},
			{name: "after then before: the outer context",
				chain:     func(after run.Interceptor) []run.Interceptor { return []run.Interceptor{after, stamp} },
				wantAfter: []string{"<nil> / <nil>", "<nil> / <nil>"}, wantHost: []string{"state of host"}, wantServerCalls: 1},
			{name: "nil context: unchanged",
				chain:     func(after run.Interceptor) []run.Interceptor { return []run.Interceptor{outer, keep, after} },
				wantAfter: []string{"<nil> / outer", "<nil> / outer"}, wantHost: []string{"<nil>"}, wantServerCalls: 1},
			{name: "error: the call stops",
				chain:    func(after run.Interceptor) []run.Interceptor { return []run.Interceptor{refuse, after} },
				wantCode: run.CodeUnauthorized},
		}
		for _, tt := range tests {
			rec := &recorder{}
			after := run.After(func(ctx context.Context, req run.Request, res run.Result) run.Result {
				rec.add("after " + req.CallID + ": " + str(ctx.Value(stateKey{})) + " / " + str(ctx.Value(outerKey{})))
				return res
			})
			hostRec := &recorder{}
			host := run.HostTool{Name: "host", Schema: json.RawMessage(`{"type":"object"}`),
				Handler: func(ctx context.Context, req run.Request) (run.Result, error) {
					hostRec.add(str(ctx.Value(stateKey{})))
					return run.Result{}, nil
				}}
			repo, mem := setupEra(t, e, notes)
			r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{host},
				Interceptors: tt.chain(after), Limits: &run.Limits{MaxConcurrency: 1}})
			out := execute(t, r, call("mcp", echo, `{"text":"hi"}`), call("host", "host", `{}`))
			if diff := cmp.Diff([]run.Code{tt.wantCode, tt.wantCode}, codes(out)); diff != "" {
				t.Errorf("%s: codes (-want +got):\n%s", tt.name, diff)
			}
			var wantAfter []string
			for i, id := range []string{"mcp", "host"} {
				if i < len(tt.wantAfter) {
					wantAfter = append(wantAfter, "after "+id+": "+tt.wantAfter[i])
				}
			}
			if diff := cmp.Diff(wantAfter, rec.get()); diff != "" {
				t.Errorf("%s: what the After saw (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.wantHost, hostRec.get()); diff != "" {
				t.Errorf("%s: what the host tool saw (-want +got):\n%s", tt.name, diff)
			}
			if n := mem.counters.Calls(); n != tt.wantServerCalls {
				t.Errorf("%s: the server got %d calls; want %d", tt.name, n, tt.wantServerCalls)
			}
		}
	})
}

// str renders a context value for a comparison.
func str(v any) string {
	if v == nil {
		return "<nil>"
	}
	return v.(string)
}
