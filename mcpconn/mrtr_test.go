//lint:file-ignore SA1019 sampling and roots are current in 2025-11-25 and asked inside input_required results in 2026-07-28

package mcpconn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

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
	Outcome mcpconn.Outcome
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
