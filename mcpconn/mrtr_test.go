//lint:file-ignore SA1019 sampling and roots are current in 2025-11-25 and asked inside input_required results in 2026-07-28

package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// Issue 25 item 4 (SEP-2322): the fake server's client-features tools
// ask for input by multi round-trip (input_required) in a modern
// session and by server requests in a legacy one; the same tests run
// over every era, and what a host sees is the same.

// The eras the input tests run over.
var inputEras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern, mcptest.EraDual}

// served records what Handlers.Served reports, with the tags of the calls.
type served struct {
	mu   sync.Mutex
	reps []servedRep
}

type servedRep struct {
	Method  string
	Outcome mcpconn.RequestOutcome
	Reason  string
	Calls   []any
}

func (s *served) served(in mcpconn.Incoming, r mcpconn.ServedRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reps = append(s.reps, servedRep{Method: r.Method, Outcome: r.Outcome, Reason: r.Reason, Calls: in.Calls})
}

func (s *served) get() []servedRep {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reps)
}

// labelAnswers answers every request: an elicitation with the label of
// its message as the name ("[A] round 1" gives "A"), sampling with
// "hello", roots with file:///work; each is counted.
type labelAnswers struct {
	mu     sync.Mutex
	counts map[string]int
}

func (a *labelAnswers) count(method string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts == nil {
		a.counts = map[string]int{}
	}
	a.counts[method]++
}

func (a *labelAnswers) asked(method string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[method]
}

func labelOf(msg string) string {
	l, _, _ := strings.Cut(strings.TrimPrefix(msg, "["), "]")
	return l
}

func (a *labelAnswers) handlers(rec *served) *mcpconn.Handlers {
	return &mcpconn.Handlers{
		Elicit: func(_ context.Context, _ mcpconn.Incoming, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			a.count(mcpconn.MethodElicit)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": labelOf(p.Message)}}, nil
		},
		CreateMessage: func(_ context.Context, _ mcpconn.Incoming, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			a.count(mcpconn.MethodCreateMessage)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hello " + labelOf(p.Messages[0].Content.(*mcp.TextContent).Text)}}, nil
		},
		Roots: func(context.Context, mcpconn.Incoming) ([]*mcp.Root, error) {
			a.count(mcpconn.MethodListRoots)
			return []*mcp.Root{{URI: "file:///work"}}, nil
		},
		Served: rec.served,
	}
}

// inputServer is the fake server with the client-features tools, of
// era e, reached over transport: "dial" (in process, counted), "stdio"
// or "http" (the binary).
func inputServer(t *testing.T, transport string, e mcptest.Era, counters *mcptest.Counters) (resource.MCPServer, func(context.Context, resource.Ref, resource.MCPServer) (mcp.Transport, error)) {
	t.Helper()
	if transport == "dial" {
		return resource.MCPServer{}, mcptest.Dial(&mcptest.ServerOptions{Era: e, Faults: []mcptest.Fault{mcptest.FaultClientFeatures}, Counters: counters})
	}
	return eraServer(t, transport, e, "-fault", string(mcptest.FaultClientFeatures)), nil
}

func roundsCall(t *testing.T, s *mcpconn.Session, ctx context.Context, in mcptest.RoundsIn) (mcptest.RoundsOut, error) {
	t.Helper()
	args, _ := json.Marshal(in)
	res, err := s.CallTool(mcpconn.WithCallTag(ctx, in.Label), mcptest.ToolRounds, args)
	if err != nil {
		return mcptest.RoundsOut{}, err
	}
	var out mcptest.RoundsOut
	if res.IsError || json.Unmarshal([]byte(resultText(res)), &out) != nil {
		return out, fmt.Errorf("rounds answered %s", resultText(res))
	}
	return out, nil
}

func answer(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each handler answers a round of its own and all three at once in a
// later round; the server gets the same answers in every era, on every
// transport; every request is reported to Served with its call alone.
func TestInputRoundsEachHandler(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"dial", resource.TransportStdio, resource.TransportHTTP} {
		for _, e := range inputEras {
			t.Run(transport+"/"+string(e), func(t *testing.T) {
				t.Parallel()
				srv, dial := inputServer(t, transport, e, nil)
				c := quickConnector(&mcpconn.ConnectorOptions{Dial: dial})
				defer c.Close()
				rec, ans := &served{}, &labelAnswers{}
				s := connectWith(t, c, srv, ans.handlers(rec))
				out, err := roundsCall(t, s, context.Background(), mcptest.RoundsIn{Label: "A",
					Asks: []string{mcptest.AskElicit, mcptest.AskSample, mcptest.AskRoots, "elicit+sample+roots"}})
				if err != nil {
					t.Fatal(err)
				}
				elicited := answer(t, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "A"}})
				want := mcptest.RoundsOut{Label: "A", Rounds: 4, Answers: []mcptest.RoundAnswer{
					{Round: 1, Kind: mcptest.AskElicit, Answer: elicited},
					{Round: 2, Kind: mcptest.AskSample, Answer: answer(t, "hello A")},
					{Round: 3, Kind: mcptest.AskRoots, Answer: answer(t, []string{"file:///work"})},
					{Round: 4, Kind: mcptest.AskElicit, Answer: elicited},
					{Round: 4, Kind: mcptest.AskSample, Answer: answer(t, "hello A")},
					{Round: 4, Kind: mcptest.AskRoots, Answer: answer(t, []string{"file:///work"})},
				}}
				if diff := cmp.Diff(want, out); diff != "" {
					t.Errorf("the server's answers (-want +got):\n%s", diff)
				}
				reps := rec.get()
				var methods []string
				for _, r := range reps {
					methods = append(methods, r.Method)
					if r.Outcome != mcpconn.OutcomeAccepted || !cmp.Equal(r.Calls, []any{"A"}) {
						t.Errorf("served %+v; want accepted, with the call alone", r)
					}
				}
				slices.Sort(methods)
				wantMethods := []string{mcpconn.MethodElicit, mcpconn.MethodElicit, mcpconn.MethodListRoots, mcpconn.MethodListRoots,
					mcpconn.MethodCreateMessage, mcpconn.MethodCreateMessage}
				if diff := cmp.Diff(wantMethods, methods); diff != "" {
					t.Errorf("served (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// A declined elicitation is an answer: it goes back to the server, which
// decides what the call returns, in every era (the fake server reports
// it in its result).
func TestInputDeclinedGoesToServer(t *testing.T) {
	t.Parallel()
	for _, e := range inputEras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			srv, dial := inputServer(t, "dial", e, nil)
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial})
			rec := &served{}
			s := connectWith(t, c, srv, &mcpconn.Handlers{Served: rec.served,
				Elicit: func(context.Context, mcpconn.Incoming, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				}})
			out, err := roundsCall(t, s, context.Background(), mcptest.RoundsIn{Label: "D"})
			if err != nil {
				t.Fatal(err)
			}
			want := []mcptest.RoundAnswer{{Round: 1, Kind: mcptest.AskElicit, Answer: answer(t, &mcp.ElicitResult{Action: "decline"})}}
			if diff := cmp.Diff(want, out.Answers); diff != "" {
				t.Errorf("the server's answers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]servedRep{{Method: mcpconn.MethodElicit, Outcome: mcpconn.OutcomeDeclined, Calls: []any{"D"}}}, rec.get()); diff != "" {
				t.Errorf("served (-want +got):\n%s", diff)
			}
		})
	}
}

// A request for input the session cannot answer ends the call with
// ErrInputRequired and is never sent again (SEP-2322: the server does not
// wait for a client that does not retry): a capability no handler
// declared is refused without asking any handler, even for the other
// requests of the round; a handler's refusal stops the rounds there. The
// error holds agt's words only.
func TestInputRefusedEndsTheCall(t *testing.T) {
	t.Parallel()
	refuse := func(context.Context, mcpconn.Incoming, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		return nil, &mcpconn.RefusedError{Reason: "no model for this"}
	}
	tests := []struct {
		name   string
		h      func(a *labelAnswers, rec *served) *mcpconn.Handlers
		asks   []string
		calls  int64 // tools/call the server gets
		asked  int   // requests handed to a handler
		served []servedRep
		detail string
	}{
		{"no handlers", func(*labelAnswers, *served) *mcpconn.Handlers { return nil }, []string{"elicit"}, 1, 0, nil,
			"(an elicitation) before it can complete the call, and it was refused (the capability was not declared)"},
		{"roots not declared", func(a *labelAnswers, rec *served) *mcpconn.Handlers {
			h := a.handlers(rec)
			h.Roots = nil
			return h
		}, []string{"elicit+roots"}, 1, 0,
			[]servedRep{{Method: mcpconn.MethodListRoots, Outcome: mcpconn.OutcomeRefused, Reason: "the capability was not declared", Calls: []any{"R"}}},
			"(roots) before it can complete the call, and it was refused (the capability was not declared)"},
		{"sampling refused in round 2", func(a *labelAnswers, rec *served) *mcpconn.Handlers {
			h := a.handlers(rec)
			h.CreateMessage = refuse
			return h
		}, []string{"elicit", "sample", "elicit"}, 2, 1,
			[]servedRep{{Method: mcpconn.MethodElicit, Outcome: mcpconn.OutcomeAccepted, Calls: []any{"R"}},
				{Method: mcpconn.MethodCreateMessage, Outcome: mcpconn.OutcomeRefused, Reason: "no model for this", Calls: []any{"R"}}},
			"(a sampling request) before it can complete the call, and it was refused (no model for this)"},
		{"more at once than MaxServerRequests", func(a *labelAnswers, rec *served) *mcpconn.Handlers { return a.handlers(rec) },
			[]string{"elicit+sample+roots+elicit+sample"}, 1, 0, nil, ""}, // the fake keys by kind: 3 requests, answered
	}
	for _, tt := range tests {
		for _, e := range []mcptest.Era{mcptest.EraModern, mcptest.EraDual} {
			t.Run(tt.name+"/"+string(e), func(t *testing.T) {
				t.Parallel()
				counters := &mcptest.Counters{}
				srv, dial := inputServer(t, "dial", e, counters)
				c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial, Limits: &mcpconn.Limits{MaxServerRequests: 2}})
				rec, ans := &served{}, &labelAnswers{}
				s := connectWith(t, c, srv, tt.h(ans, rec))
				_, err := roundsCall(t, s, context.Background(), mcptest.RoundsIn{Label: "R", Asks: tt.asks})
				if tt.detail == "" {
					// Three kinds, over MaxServerRequests 2: refused.
					if !errors.Is(err, mcpconn.ErrInputRequired) || !strings.Contains(err.Error(), "more than 2 inputs at once (ConnectorOptions.Limits.MaxServerRequests)") {
						t.Fatalf("err = %v; want ErrInputRequired over MaxServerRequests", err)
					}
					return
				}
				if !errors.Is(err, mcpconn.ErrInputRequired) || !strings.Contains(err.Error(), tt.detail) {
					t.Fatalf("err = %v; want ErrInputRequired saying %q", err, tt.detail)
				}
				if strings.Contains(err.Error(), "[R]") || strings.Contains(err.Error(), mcptest.StateMarker) {
					t.Errorf("the error holds the server's text: %v", err)
				}
				if got := counters.CallsOf(mcptest.ToolRounds); got != tt.calls {
					t.Errorf("the server got %d tools/call; want %d (never sent again after a refusal)", got, tt.calls)
				}
				if got := ans.asked(mcpconn.MethodElicit) + ans.asked(mcpconn.MethodCreateMessage) + ans.asked(mcpconn.MethodListRoots); got != tt.asked {
					t.Errorf("%d requests reached a handler; want %d", got, tt.asked)
				}
				if diff := cmp.Diff(tt.served, rec.get()); diff != "" {
					t.Errorf("served (-want +got):\n%s", diff)
				}
				// The session stays usable.
				if res := call(t, s, context.Background(), mcptest.ToolEcho, map[string]any{"text": "ok"}); resultText(res) != "ok" {
					t.Errorf("next call: %s", resultText(res))
				}
			})
		}
	}
}

// A server that never stops asking gets at most MaxInputRounds rounds
// answered (default 10), then the call fails with ErrInputRequired; the
// server got one request more than the rounds answered.
func TestInputRoundsBound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		max, want int
	}{{0, mcpconn.DefaultLimits().MaxInputRounds}, {3, 3}, {1, 1}} {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			t.Parallel()
			counters := &mcptest.Counters{}
			srv, dial := inputServer(t, "dial", mcptest.EraModern, counters)
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial, Limits: &mcpconn.Limits{MaxInputRounds: tt.max}})
			rec, ans := &served{}, &labelAnswers{}
			s := connectWith(t, c, srv, ans.handlers(rec))
			_, err := roundsCall(t, s, context.Background(), mcptest.RoundsIn{Label: "F", Forever: true})
			want := fmt.Sprintf("still asked for input after %d rounds (ConnectorOptions.Limits.MaxInputRounds)", tt.want)
			if !errors.Is(err, mcpconn.ErrInputRequired) || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v; want ErrInputRequired saying %q", err, want)
			}
			if got := ans.asked(mcpconn.MethodElicit); got != tt.want {
				t.Errorf("the handler was asked %d times; want %d", got, tt.want)
			}
			if got := counters.CallsOf(mcptest.ToolRounds); got != int64(tt.want+1) {
				t.Errorf("the server got %d tools/call; want %d", got, tt.want+1)
			}
		})
	}
}

// The requestState comes back exactly as it came (the fake server signs
// it, and it starts with characters an encoder may write otherwise),
// however large up to MaxRequestStateBytes; a larger one fails the call
// with ErrBadResult (a *LimitError) before any handler is asked, and
// neither the error nor anything else shows it. Load shedding (a state
// and no request) is answered by sending the call again at once.
func TestRequestStateExactAndBounded(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"dial", resource.TransportStdio} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			counters := &mcptest.Counters{}
			srv, dial := inputServer(t, transport, mcptest.EraModern, counters)
			c := quickConnector(&mcpconn.ConnectorOptions{Dial: dial})
			defer c.Close()
			rec, ans := &served{}, &labelAnswers{}
			s := connectWith(t, c, srv, ans.handlers(rec))
			ctx := context.Background()
			out, err := roundsCall(t, s, ctx, mcptest.RoundsIn{Label: "S", Asks: []string{"elicit", "roots"}, StateBytes: mcpconn.MaxRequestStateBytes - 4096, Busy: true})
			if err != nil || out.Rounds != 2 {
				t.Fatalf("a state just within the bound: %+v, %v", out, err)
			}
			before := ans.asked(mcpconn.MethodElicit)
			_, err = roundsCall(t, s, ctx, mcptest.RoundsIn{Label: "S", StateBytes: mcpconn.MaxRequestStateBytes + 1})
			var le *mcpconn.LimitError
			if !errors.Is(err, mcpconn.ErrBadResult) || !errors.As(err, &le) || le.Option != "MaxRequestStateBytes (fixed)" {
				t.Fatalf("err = %v; want ErrBadResult with the LimitError of MaxRequestStateBytes", err)
			}
			if strings.Contains(err.Error(), "ppp") || strings.Contains(err.Error(), "\u2028") {
				t.Errorf("the error shows the state: %.200s", err)
			}
			if ans.asked(mcpconn.MethodElicit) != before {
				t.Error("a handler was asked for a round whose state is past the bound")
			}
			if transport == "dial" {
				if got := counters.CallsOf(mcptest.ToolRounds); got != 4+1 {
					t.Errorf("the server got %d tools/call; want 5 (busy, 2 rounds, the result, and the one past the bound)", got)
				}
			}
		})
	}
}

// Parallel calls of one session each carry their own answers and state
// (the fake server refuses a state of another call's label), in every
// era: a modern server's requests belong to their call exactly.
func TestInputParallelCallsIsolated(t *testing.T) {
	t.Parallel()
	for _, e := range inputEras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			srv, dial := inputServer(t, "dial", e, nil)
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial})
			rec, ans := &served{}, &labelAnswers{}
			s := connectWith(t, c, srv, ans.handlers(rec))
			labels := []string{"P1", "P2", "P3", "P4"}
			outs := make([]mcptest.RoundsOut, len(labels))
			errs := make([]error, len(labels))
			var wg sync.WaitGroup
			for i, l := range labels {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i], errs[i] = roundsCall(t, s, context.Background(), mcptest.RoundsIn{Label: l, Asks: []string{"elicit", "sample", "elicit"}})
				}()
			}
			wg.Wait()
			for i, l := range labels {
				if errs[i] != nil {
					t.Fatalf("%s: %v", l, errs[i])
				}
				el := answer(t, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": l}})
				want := []mcptest.RoundAnswer{{Round: 1, Kind: "elicit", Answer: el}, {Round: 2, Kind: "sample", Answer: answer(t, "hello "+l)},
					{Round: 3, Kind: "elicit", Answer: el}}
				if diff := cmp.Diff(want, outs[i].Answers); diff != "" {
					t.Errorf("%s (-want +got):\n%s", l, diff)
				}
			}
			if e == mcptest.EraLegacy {
				return // a legacy request names no call: Calls lists those in flight
			}
			for _, r := range rec.get() {
				if len(r.Calls) != 1 {
					t.Errorf("served %+v; want the call alone", r)
				}
			}
		})
	}
}

// A requestState that no client could send back exactly (an escaped lone
// surrogate, which every JSON decoder turns into U+FFFD), one that is not
// a string, and an input_required result that asks nothing and carries
// no state fail the call with ErrBadResult: nothing is asked, nothing is
// sent again.
func TestInputRequiredMalformed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, result string }{
		{"lone surrogate", `{"resultType":"input_required","requestState":"ab\ud800cd","inputRequests":{"r":{"method":"roots/list"}}}`},
		{"state not a string", `{"resultType":"input_required","requestState":{"a":1},"inputRequests":{"r":{"method":"roots/list"}}}`},
		{"nothing", `{"resultType":"input_required"}`},
		{"unknown method", `{"resultType":"input_required","inputRequests":{"x":{"method":"tasks/get","params":{}}}}`},
		{"unknown result type", `{"resultType":"task","content":[]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := &scriptedServer{answer: func(method string, id json.RawMessage, n int) []string {
				return []string{result(id, tt.result)}
			}}
			rec := &served{}
			s := connectWith(t, mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: script.dial}), resource.MCPServer{},
				&mcpconn.Handlers{Roots: rootsOK, Served: rec.served})
			_, err := s.CallTool(context.Background(), "t", nil)
			if !errors.Is(err, mcpconn.ErrBadResult) {
				t.Fatalf("err = %v; want ErrBadResult", err)
			}
			script.mu.Lock()
			calls := script.calls["tools/call"]
			script.mu.Unlock()
			if calls != 1 || len(rec.get()) != 0 {
				t.Errorf("%d tools/call, %d requests served; want 1 and none", calls, len(rec.get()))
			}
		})
	}
}

// The call's deadline holds across all its rounds: the time a handler
// takes is not the server's (the tool timeout is held, as for a legacy
// server's request, and each input_required answer restarts it like
// progress), but the whole call, every round included, ends at
// MaxCallDuration.
func TestInputRoundsKeepTheCallDeadline(t *testing.T) {
	t.Parallel()
	counters := &mcptest.Counters{}
	_, dial := inputServer(t, "dial", mcptest.EraModern, counters)
	const idle, total = time.Second, 4 * time.Second
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial, Limits: &mcpconn.Limits{MaxInputRounds: 1000, MaxCallDuration: total}})
	var asked atomic.Int32
	s := connectWith(t, c, resource.MCPServer{ToolTimeoutMS: int64(idle / time.Millisecond)}, &mcpconn.Handlers{
		Elicit: func(ctx context.Context, _ mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked.Add(1)
			// A user who takes longer than the tool timeout to answer:
			// the wait is the host's, not the server's.
			select {
			case <-time.After(idle + 200*time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "x"}}, nil
		}})
	start := time.Now()
	_, err := roundsCall(t, s, context.Background(), mcptest.RoundsIn{Label: "T", Forever: true})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "MaxCallDuration") {
		t.Fatalf("err = %v; want the longest call time (MaxCallDuration)", err)
	}
	if n := asked.Load(); n < 2 {
		t.Errorf("the handler was asked %d times; want several rounds before the deadline", n)
	}
	if d := time.Since(start); d < total {
		t.Errorf("the call ended after %v, before MaxCallDuration %v", d, total)
	}
}

// On a shared connection (one process for several sessions), a modern
// server's requests belong to their call exactly: each reaches the lease
// whose call it is, with that call, although it names no call and calls
// of both leases are in flight (the legacy era needs the call's own
// stream or a _meta naming it for that; see TestSharedRequestGoesToTheCallItNames).
func TestInputSharedConnectionRouting(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{resource.TransportStdio, resource.TransportHTTP} {
		for _, e := range []mcptest.Era{mcptest.EraModern, mcptest.EraDual} {
			t.Run(transport+"/"+string(e), func(t *testing.T) {
				t.Parallel()
				srv, _ := inputServer(t, transport, e, nil)
				srv.Shared = true
				c := sharedConnector(t, time.Minute)
				type seen struct{ label, tag string }
				leases := map[string]*mcpconn.Session{}
				got := map[string]*[]seen{}
				var mu sync.Mutex
				for _, user := range []string{"u1", "u2"} {
					list := &[]seen{}
					got[user] = list
					leases[user] = lease(t, c, "tools/fake", srv, 1, &mcpconn.Handlers{
						Elicit: func(_ context.Context, in mcpconn.Incoming, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
							mu.Lock()
							for _, tag := range in.Calls {
								*list = append(*list, seen{labelOf(p.Message), fmt.Sprint(tag)})
							}
							mu.Unlock()
							return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": user}}, nil
						}})
				}
				var wg sync.WaitGroup
				errs := make(chan error, 4)
				for _, user := range []string{"u1", "u2"} {
					for i := range 2 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							label := fmt.Sprintf("%s-%d", user, i)
							out, err := roundsCall(t, leases[user], context.Background(), mcptest.RoundsIn{Label: label, Asks: []string{"elicit", "elicit"}})
							if err == nil && (out.Rounds != 2 || !strings.Contains(string(out.Answers[1].Answer), user)) {
								err = fmt.Errorf("%s: %+v", label, out)
							}
							errs <- err
						}()
					}
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Error(err)
					}
				}
				for user, list := range got {
					if len(*list) != 4 {
						t.Errorf("%s's handler saw %d requests; want 4", user, len(*list))
					}
					for _, s := range *list {
						if !strings.HasPrefix(s.label, user) || s.tag != s.label {
							t.Errorf("%s's handler got the request of %s with the call %s", user, s.label, s.tag)
						}
					}
				}
			})
		}
	}
}
