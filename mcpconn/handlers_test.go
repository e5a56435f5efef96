//lint:file-ignore SA1019 sampling, roots and logging are current in protocol 2025-11-25

package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientFeatures is the fake server over stdio with the tools that use
// what a client offers.
func clientFeatures(t *testing.T, extra ...string) (resource.MCPServer, string) {
	t.Helper()
	srv, tag := fakeStdio(t, append([]string{"-fault", string(mcptest.FaultClientFeatures)}, extra...)...)
	t.Cleanup(func() { assertNoLeftovers(t, tag) })
	return srv, tag
}

// eraServers starts the client-features fake server in each of
// inputEras.
func eraServers(t *testing.T) map[mcptest.Era]resource.MCPServer {
	t.Helper()
	out := map[mcptest.Era]resource.MCPServer{}
	for _, e := range inputEras {
		out[e], _ = clientFeatures(t, "-era", string(e))
	}
	return out
}

func connectWith(t *testing.T, c *mcpconn.Connector, srv resource.MCPServer, h *mcpconn.Handlers) *mcpconn.Session {
	t.Helper()
	s, err := c.Connect(context.Background(), "tools/fake", srv, &mcpconn.ConnectOptions{Handlers: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func call(t *testing.T, s *mcpconn.Session, ctx context.Context, tool string, args any) *mcpconn.CallResult {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := s.CallTool(ctx, tool, raw)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func elicitAccept(content map[string]any) func(context.Context, mcpconn.Incoming, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(context.Context, mcpconn.Incoming, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
}

func sampleOK(context.Context, mcpconn.Incoming, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hello"}}, nil
}

func rootsOK(context.Context, mcpconn.Incoming) ([]*mcp.Root, error) {
	return []*mcp.Root{{URI: "file:///work"}}, nil
}

// The server sees exactly the capabilities whose handlers are set; the
// capabilities are read on the server's side of a real stdio session.
func TestCapabilitiesFollowHandlers(t *testing.T) {
	t.Parallel()
	srv, _ := clientFeatures(t)
	c := quickConnector(nil)
	tests := []struct {
		name string
		h    *mcpconn.Handlers
		want string
	}{
		{"nil", nil, `{}`},
		{"notifications only", &mcpconn.Handlers{Log: func(context.Context, mcpconn.Incoming, *mcp.LoggingMessageParams) {}}, `{}`},
		{"elicit", &mcpconn.Handlers{Elicit: elicitAccept(nil)}, `{"elicitation":{"form":{},"url":{}}}`},
		{"sampling", &mcpconn.Handlers{CreateMessage: sampleOK}, `{"sampling":{}}`},
		{"roots", &mcpconn.Handlers{Roots: rootsOK}, `{"roots":{"listChanged":true}}`},
		{"all", &mcpconn.Handlers{Elicit: elicitAccept(nil), CreateMessage: sampleOK, Roots: rootsOK},
			`{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := connectWith(t, c, srv, tt.h)
			got := resultText(call(t, s, context.Background(), mcptest.ToolClientCaps, struct{}{}))
			if diff := cmp.Diff(normJSON(t, tt.want), normJSON(t, got)); diff != "" {
				t.Errorf("capabilities the server saw (-want +got):\n%s", diff)
			}
		})
	}
}

func normJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// Without a Roots handler, roots/list is refused (the go-sdk alone
// answers it with an empty list), in every era as failedAnswer says: a
// legacy server gets "method not found"; with one, it gets the handler's
// roots.
func TestRootsListRefusedWithoutHandler(t *testing.T) {
	t.Parallel()
	for _, e := range inputEras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			srv, _ := clientFeatures(t, "-era", string(e))
			c := quickConnector(nil)
			for _, h := range []*mcpconn.Handlers{nil, {Elicit: elicitAccept(nil)}} {
				s := connectWith(t, c, srv, h)
				got := failedAnswer(t, s, e, mcptest.ToolListRoots, struct{}{})
				if want := fmt.Sprintf("code %d", jsonrpc.CodeMethodNotFound); e == mcptest.EraLegacy && !strings.Contains(got, want) {
					t.Errorf("handlers %v: roots/list answered: %s", h != nil, got)
				}
			}
			var served []mcpconn.ServedRequest
			var mu sync.Mutex
			s := connectWith(t, c, srv, &mcpconn.Handlers{Roots: rootsOK, Served: func(_ mcpconn.Incoming, rep mcpconn.ServedRequest) {
				mu.Lock()
				served = append(served, rep)
				mu.Unlock()
			}})
			if got := resultText(call(t, s, context.Background(), mcptest.ToolListRoots, struct{}{})); got != `["file:///work"]` {
				t.Errorf("roots = %s", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(served) != 1 || served[0].Method != mcpconn.MethodListRoots || served[0].Outcome != mcpconn.OutcomeAccepted {
				t.Errorf("served = %+v", served)
			}
		})
	}
}

// An in-process go-sdk server that keeps its session, so a test can send
// requests outside any call.
func sessionServer(t *testing.T, opts *mcp.ServerOptions) (*mcpconn.Connector, <-chan *mcp.ServerSession) {
	t.Helper()
	sessions := make(chan *mcp.ServerSession, 1)
	o := mcp.ServerOptions{}
	if opts != nil {
		o = *opts
	}
	o.InitializedHandler = func(_ context.Context, req *mcp.InitializedRequest) { sessions <- req.Session }
	// A legacy server (its session exists from initialize on): it answers
	// the era probe with UnsupportedProtocolVersion naming legacy versions,
	// and the client asks again with one of them, in initialize.
	o.SupportedProtocolVersions = []string{mcpconn.LegacyProtocolVersion}
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &o)
	c := quickConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
		serverEnd, clientEnd := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.WithoutCancel(ctx), serverEnd, nil); err != nil {
			return nil, err
		}
		return clientEnd, nil
	}})
	return c, sessions
}

// A request with no call in flight reaches the handler with no calls;
// ping is answered; the roots change is sent.
func TestRequestOutsideCalls(t *testing.T) {
	t.Parallel()
	var changed atomic.Int32
	c, sessions := sessionServer(t, &mcp.ServerOptions{RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { changed.Add(1) }})
	var got []mcpconn.Incoming
	var mu sync.Mutex
	s := connectWith(t, c, resource.MCPServer{Type: resource.TransportStdio}, &mcpconn.Handlers{Roots: func(_ context.Context, in mcpconn.Incoming) ([]*mcp.Root, error) {
		mu.Lock()
		got = append(got, in)
		mu.Unlock()
		return []*mcp.Root{{URI: "file:///a"}}, nil
	}})
	ss := <-sessions
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil || len(res.Roots) != 1 || res.Roots[0].URI != "file:///a" {
		t.Fatalf("ListRoots = %v, %v", res, err)
	}
	if err := ss.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	mu.Lock()
	if diff := cmp.Diff([]mcpconn.Incoming{{Ref: "tools/fake"}}, got); diff != "" {
		t.Errorf("incoming (-want +got):\n%s", diff)
	}
	mu.Unlock()
	if err := s.NotifyRootsChanged(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "notifications/roots/list_changed", func() bool { return changed.Load() == 1 })

	// A session without roots cannot announce a change.
	c2, _ := sessionServer(t, nil)
	s2 := connectWith(t, c2, resource.MCPServer{Type: resource.TransportStdio}, &mcpconn.Handlers{Elicit: elicitAccept(nil)})
	if err := s2.NotifyRootsChanged(); err == nil || !strings.Contains(err.Error(), "Handlers.Roots") {
		t.Errorf("NotifyRootsChanged without roots = %v", err)
	}
}

// The handler is told the calls in flight: the one call, or both of two
// (in start order); progress names exactly its own call.
// Legacy era: attributing a server request to the calls in flight is
// the legacy routing rule; a modern request belongs to its call exactly
// (issue 25 item 4).
func TestIncomingNamesCallsInFlight(t *testing.T) {
	t.Parallel()
	srv, _ := clientFeatures(t, "-era", string(mcptest.EraLegacy))
	c := quickConnector(nil)
	var (
		mu       sync.Mutex
		elicited [][]any
		progress = map[any]int{}
	)
	firstProgress := make(chan struct{})
	var once sync.Once
	s := connectWith(t, c, srv, &mcpconn.Handlers{
		Elicit: func(_ context.Context, in mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			mu.Lock()
			elicited = append(elicited, in.Calls)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		Progress: func(_ context.Context, in mcpconn.Incoming, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			if len(in.Calls) == 1 {
				progress[in.Calls[0]]++
			} else {
				progress[fmt.Sprint(in.Calls)]++
			}
			mu.Unlock()
			once.Do(func() { close(firstProgress) })
		},
	})
	call(t, s, mcpconn.WithCallTag(context.Background(), "A"), mcptest.ToolAsk, mcptest.AskIn{})

	// B reports progress until cancelled: it is in flight once its first
	// progress arrives.
	bctx, stopB := context.WithCancel(mcpconn.WithCallTag(context.Background(), "B"))
	bDone := make(chan error, 1)
	go func() {
		_, err := s.CallTool(bctx, mcptest.ToolProgress, json.RawMessage(`{"steps":100000,"ms":20}`))
		bDone <- err
	}()
	<-firstProgress
	call(t, s, mcpconn.WithCallTag(context.Background(), "C"), mcptest.ToolAsk, mcptest.AskIn{})
	stopB()
	if err := <-bDone; err == nil {
		t.Error("B was not cancelled")
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([][]any{{"A"}, {"B", "C"}}, elicited); diff != "" {
		t.Errorf("calls told to Elicit (-want +got):\n%s", diff)
	}
	for k := range progress {
		if k != "B" {
			t.Errorf("progress attributed to %v", k)
		}
	}
}

// An accepted form gets the defaults of the properties it leaves out
// (SEP-1034), keeps what the user gave, and must match the schema.
// In every era; a form that does not match fails as failedAnswer says.
func TestElicitFormDefaults(t *testing.T) {
	t.Parallel()
	c := quickConnector(nil)
	tests := []struct {
		name    string
		content map[string]any
		want    map[string]any
		outcome mcpconn.RequestOutcome
	}{
		{"nil content", nil, map[string]any{"name": "Ann", "age": 30.0, "score": 95.5, "status": "active", "verified": true}, mcpconn.OutcomeAccepted},
		{"some given", map[string]any{"name": "Bob", "note": "hi", "status": "pending"},
			map[string]any{"name": "Bob", "age": 30.0, "score": 95.5, "status": "pending", "verified": true, "note": "hi"}, mcpconn.OutcomeAccepted},
		{"not in the enum", map[string]any{"status": "gone"}, nil, mcpconn.OutcomeError},
		{"not the schema", map[string]any{"age": "old"}, nil, mcpconn.OutcomeError},
	}
	for e, srv := range eraServers(t) {
		for _, tt := range tests {
			t.Run(string(e)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var rep mcpconn.ServedRequest
				given := maps.Clone(tt.content)
				s := connectWith(t, c, srv, &mcpconn.Handlers{Elicit: elicitAccept(tt.content),
					Served: func(_ mcpconn.Incoming, r mcpconn.ServedRequest) { rep = r }})
				if tt.want == nil {
					// agt's error holds no value; a legacy server's text is its
					// own (the go-sdk's error answer names the values to it, the
					// server the answer was for).
					got := failedAnswer(t, s, e, mcptest.ToolAsk, mcptest.AskIn{})
					if e != mcptest.EraLegacy && (strings.Contains(got, "old") || strings.Contains(got, "gone")) {
						t.Errorf("the failure shows a value: %s", got)
					}
				} else {
					res := call(t, s, context.Background(), mcptest.ToolAsk, mcptest.AskIn{})
					var got mcp.ElicitResult
					if err := json.Unmarshal([]byte(resultText(res)), &got); err != nil {
						t.Fatalf("%s: %v", resultText(res), err)
					}
					if diff := cmp.Diff(tt.want, got.Content); got.Action != "accept" || diff != "" {
						t.Errorf("action %q, content (-want +got):\n%s", got.Action, diff)
					}
				}
				// The defaults go into the answer, not into the host's map.
				if diff := cmp.Diff(given, tt.content); diff != "" {
					t.Errorf("the handler's map was changed (-before +after):\n%s", diff)
				}
				if rep.Outcome != tt.outcome || rep.Mode != "form" {
					t.Errorf("served = %+v", rep)
				}
				if strings.Contains(rep.Reason, "old") {
					t.Errorf("the reason holds a value: %q", rep.Reason)
				}
			})
		}
	}
}

// URL mode reaches the handler with its URL; a URL that is not http(s)
// is refused before any handler runs.
func TestElicitURL(t *testing.T) {
	t.Parallel()
	srv, _ := clientFeatures(t)
	var gotURL string
	s := connectWith(t, quickConnector(nil), srv, &mcpconn.Handlers{Elicit: func(_ context.Context, _ mcpconn.Incoming, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		gotURL = p.Mode + " " + p.URL
		return &mcp.ElicitResult{Action: "accept"}, nil
	}})
	res := call(t, s, context.Background(), mcptest.ToolAsk, mcptest.AskIn{Mode: "url"})
	if !strings.Contains(resultText(res), `"action":"accept"`) || gotURL != "url "+mcptest.AskURL {
		t.Errorf("result %s, handler saw %q", resultText(res), gotURL)
	}

	c, sessions := sessionServer(t, nil)
	called := false
	var rep mcpconn.ServedRequest
	connectWith(t, c, resource.MCPServer{Type: resource.TransportStdio}, &mcpconn.Handlers{
		Elicit: func(context.Context, mcpconn.Incoming, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			called = true
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		Served: func(_ mcpconn.Incoming, r mcpconn.ServedRequest) { rep = r },
	})
	ss := <-sessions
	_, err := ss.Elicit(context.Background(), &mcp.ElicitParams{Mode: "url", Message: "m", URL: "javascript:alert(1)", ElicitationID: "x"})
	if err == nil || called || rep.Outcome != mcpconn.OutcomeRefused || rep.Mode != "url" {
		t.Errorf("err %v, handler called %v, served %+v", err, called, rep)
	}
}

// A server that floods elicitation requests gets at most
// MaxServerRequests answered at once; the rest are refused at once.
// Legacy era: a flood of concurrent server requests needs a server that
// sends requests (a modern server asks once per round of its call).
func TestElicitFloodBounded(t *testing.T) {
	t.Parallel()
	srv, _ := clientFeatures(t, "-era", string(mcptest.EraLegacy))
	const limit = 2
	var cur, peak atomic.Int32
	release := make(chan struct{})
	var refused atomic.Int32
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxServerRequests: limit}}), srv, &mcpconn.Handlers{
		Elicit: func(ctx context.Context, _ mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			n := cur.Add(1)
			defer cur.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			<-release
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		Served: func(_ mcpconn.Incoming, r mcpconn.ServedRequest) {
			if r.Outcome == mcpconn.OutcomeRefused {
				if refused.Add(1) == 200-limit {
					close(release) // every other request was refused while two held
				}
			}
		},
	})
	start := time.Now()
	res := call(t, s, context.Background(), mcptest.ToolAskMany, mcptest.AskManyIn{Count: 200})
	t.Logf("200 elicitations, %d at once: %v (%s)", limit, time.Since(start), resultText(res))
	if got := resultText(res); got != fmt.Sprintf("answered=%d refused=%d", limit, 200-limit) {
		t.Errorf("result %s", got)
	}
	if peak.Load() > limit {
		t.Errorf("%d handlers ran at once; the limit is %d", peak.Load(), limit)
	}
}

// Sampling requests over the message count or byte bounds are refused
// before the handler runs; the session stays usable.
// In every era: the refusal fails as failedAnswer says.
func TestSamplingBounded(t *testing.T) {
	t.Parallel()
	for _, e := range inputEras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			srv, _ := clientFeatures(t, "-era", string(e))
			var calls atomic.Int32
			var reasons []string
			var mu sync.Mutex
			s := connectWith(t, quickConnector(nil), srv, &mcpconn.Handlers{
				CreateMessage: func(ctx context.Context, in mcpconn.Incoming, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					calls.Add(1)
					return sampleOK(ctx, in, p)
				},
				Served: func(_ mcpconn.Incoming, r mcpconn.ServedRequest) {
					mu.Lock()
					reasons = append(reasons, string(r.Outcome)+": "+r.Reason)
					mu.Unlock()
				},
			})
			for _, in := range []mcptest.SampleIn{
				{Messages: mcpconn.DefaultLimits().MaxSamplingMessages + 1},
				{Bytes: mcpconn.DefaultLimits().MaxSamplingBytes + 1},
			} {
				start := time.Now()
				got := failedAnswer(t, s, e, mcptest.ToolSample, in)
				t.Logf("sampling %d messages of %d bytes refused in %v", in.Messages, in.Bytes, time.Since(start))
				if e == mcptest.EraLegacy && !strings.Contains(got, fmt.Sprintf("code %d", jsonrpc.CodeInvalidParams)) {
					t.Errorf("%+v: %s", in, got)
				}
			}
			if got := resultText(call(t, s, context.Background(), mcptest.ToolSample, mcptest.SampleIn{})); got != "model said: hello" {
				t.Errorf("a small request: %s", got)
			}
			mu.Lock()
			defer mu.Unlock()
			want := []string{
				"refused: the sampling request has more than 100 messages (ConnectorOptions.Limits.MaxSamplingMessages)",
				"refused: the sampling request is larger than 1048576 bytes (ConnectorOptions.Limits.MaxSamplingBytes)",
				"accepted: ",
			}
			if diff := cmp.Diff(want, reasons); diff != "" || calls.Load() != 1 {
				t.Errorf("handler ran %d times; served (-want +got):\n%s", calls.Load(), diff)
			}
		})
	}
}

// A handler error or panic fails the request without its text reaching
// the server; a RefusedError refuses it with its reason.
// In every era: in the legacy one the server gets the error answer, in
// the modern one the call fails with its round (failedAnswer).
func TestHandlerFailures(t *testing.T) {
	t.Parallel()
	c := quickConnector(nil)
	tests := []struct {
		name    string
		f       func() (*mcp.CreateMessageResult, error)
		outcome mcpconn.RequestOutcome
		reason  string
	}{
		{"error", func() (*mcp.CreateMessageResult, error) { return nil, errors.New("secret-token-123") }, mcpconn.OutcomeError, "the handler failed"},
		{"panic", func() (*mcp.CreateMessageResult, error) { panic("secret-token-123") }, mcpconn.OutcomeError, "the handler panicked"},
		{"nil", func() (*mcp.CreateMessageResult, error) { return nil, nil }, mcpconn.OutcomeError, "the handler returned no answer"},
		{"refused", func() (*mcp.CreateMessageResult, error) { return nil, &mcpconn.RefusedError{Reason: "budget spent"} }, mcpconn.OutcomeRefused, "budget spent"},
	}
	for e, srv := range eraServers(t) {
		for _, tt := range tests {
			t.Run(string(e)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var rep mcpconn.ServedRequest
				s := connectWith(t, c, srv, &mcpconn.Handlers{
					CreateMessage: func(context.Context, mcpconn.Incoming, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
						return tt.f()
					},
					Served: func(_ mcpconn.Incoming, r mcpconn.ServedRequest) { rep = r },
				})
				if got := failedAnswer(t, s, e, mcptest.ToolSample, mcptest.SampleIn{}); strings.Contains(got, "secret-token") {
					t.Errorf("the failure shows the handler's error: %s", got)
				}
				if rep.Outcome != tt.outcome || rep.Reason != tt.reason {
					t.Errorf("served = %+v", rep)
				}
			})
		}
	}
}

// failedAnswer calls tool where the client's answer to the server's
// request fails, and returns what shows of the failure: in the legacy era
// the server gets an error answer and its tool reports it in an error
// result; in the modern one the call fails with its round and has no
// result (issue 25 item 4).
func failedAnswer(t *testing.T, s *mcpconn.Session, e mcptest.Era, tool string, args any) string {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := s.CallTool(context.Background(), tool, raw)
	if e == mcptest.EraLegacy {
		if err != nil || !res.IsError {
			t.Fatalf("%s: %v, %+v; want an error result (the server got an error answer)", tool, err, res)
		}
		return resultText(res)
	}
	if err == nil {
		t.Fatalf("%s: %s; want the call failed with its round", tool, resultText(res))
	}
	return err.Error()
}

// Progress restarts the idle timeout (tool_timeout_ms), up to
// MaxCallDuration; a host handler's wait holds it. The server runs in
// process in a synctest bubble: the timeouts are virtual time, so each
// bound holds to the step and the test waits for none of them.
func TestProgressExtendsTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testProgressExtendsTimeout)
}

func testProgressExtendsTimeout(t *testing.T) {
	srv := resource.MCPServer{ToolTimeoutMS: 2000}
	dial := mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultClientFeatures}})
	var mu sync.Mutex
	var seen []string
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Dial: dial, Limits: &mcpconn.Limits{MaxCallDuration: 6 * time.Second}}), srv, &mcpconn.Handlers{
		Progress: func(_ context.Context, in mcpconn.Incoming, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%v %v/%v %s", in.Calls, p.Progress, p.Total, p.Message))
			mu.Unlock()
		},
		Elicit: func(ctx context.Context, _ mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			select { // a user who takes longer than the tool timeout
			case <-time.After(3 * time.Second):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	// 40 steps 100 ms apart: 4 s in all, twice the idle timeout of 2 s.
	res := call(t, s, mcpconn.WithCallTag(context.Background(), "P"), mcptest.ToolProgress, mcptest.ProgressIn{Steps: 40, MS: 100})
	if !strings.HasPrefix(resultText(res), "token=agt-") {
		t.Errorf("result %s: no progress token reached the server", resultText(res))
	}
	poll.Until(t, "40 progress notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 40 })
	mu.Lock()
	if seen[0] != "[P] 1/40 step 1" {
		t.Errorf("first progress %q", seen[0])
	}
	mu.Unlock()

	// The elicitation's 3 s wait is the host's: the call still succeeds.
	if res := call(t, s, context.Background(), mcptest.ToolAsk, mcptest.AskIn{}); !strings.Contains(resultText(res), "decline") {
		t.Errorf("held call: %s", resultText(res))
	}

	// Progress every 100 ms forever: the call ends at MaxCallDuration.
	start := time.Now()
	_, err := s.CallTool(context.Background(), mcptest.ToolProgress, json.RawMessage(`{"steps":100000,"ms":100}`))
	took := time.Since(start)
	t.Logf("endless progress ended after %v (MaxCallDuration 6s)", took)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "MaxCallDuration") {
		t.Fatalf("err = %v", err)
	}
	if took != 6*time.Second {
		t.Errorf("took %v; want MaxCallDuration, 6s", took)
	}
	// Without progress, the idle timeout still ends a call.
	start = time.Now()
	_, err = s.CallTool(context.Background(), mcptest.ToolSleep, json.RawMessage(`{"ms":30000}`))
	if err == nil || !strings.Contains(err.Error(), "tool_timeout_ms") {
		t.Errorf("sleep err = %v", err)
	}
	if took := time.Since(start); took != 2*time.Second {
		t.Errorf("the idle call took %v; want tool_timeout_ms, 2s", took)
	}
}

// The handler's context ends when the call that caused the request ends.
func TestRequestEndsWithItsCall(t *testing.T) {
	t.Parallel()
	srv, _ := clientFeatures(t)
	entered := make(chan struct{})
	ended := make(chan error, 1)
	var rep atomic.Pointer[mcpconn.ServedRequest]
	s := connectWith(t, quickConnector(nil), srv, &mcpconn.Handlers{
		Elicit: func(ctx context.Context, _ mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			close(entered)
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		},
		Served: func(_ mcpconn.Incoming, r mcpconn.ServedRequest) { rep.Store(&r) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	if _, err := s.CallTool(ctx, mcptest.ToolAsk, json.RawMessage(`{}`)); err == nil {
		t.Error("the cancelled call succeeded")
	}
	select {
	case <-ended:
	case <-time.After(15 * time.Second):
		t.Fatal("the handler outlived its call")
	}
	poll.Until(t, "the served report", func() bool { return rep.Load() != nil })
	if r := rep.Load(); r.Outcome != mcpconn.OutcomeCancelled {
		t.Errorf("served = %+v", r)
	}
}

// Log lines reach the handler with the call in flight, their data bounded.
func TestLogMessages(t *testing.T) {
	t.Parallel()
	srv, _ := clientFeatures(t)
	var mu sync.Mutex
	var got []string
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxNotificationBytes: 100}}), srv, &mcpconn.Handlers{
		Log: func(_ context.Context, in mcpconn.Incoming, p *mcp.LoggingMessageParams) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%v %s %s %d", in.Calls, p.Level, p.Logger, len(fmt.Sprint(p.Data))))
			mu.Unlock()
		},
	})
	call(t, s, mcpconn.WithCallTag(context.Background(), "L"), mcptest.ToolLog, mcptest.LogIn{Count: 2, Bytes: 10})
	call(t, s, mcpconn.WithCallTag(context.Background(), "M"), mcptest.ToolLog, mcptest.LogIn{Count: 1, Bytes: 100000})
	poll.Until(t, "3 log lines", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 })
	mu.Lock()
	defer mu.Unlock()
	want := []string{"[L] info fake 10", "[L] info fake 10", "[M] info fake 103"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}

// notifications/tools/list_changed is counted as it is read: before the
// result of the call during which the server sent it, in every era (on
// stdio).
func TestToolsChangedCounted(t *testing.T) {
	t.Parallel()
	for e, srv := range eraServers(t) {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			var told atomic.Int32
			s := connectWith(t, quickConnector(nil), srv, &mcpconn.Handlers{ToolsChanged: func(context.Context, mcpconn.Incoming) { told.Add(1) }})
			if n := s.ToolsChanged(); n != 0 {
				t.Fatalf("ToolsChanged = %d before any change", n)
			}
			if e != mcptest.EraLegacy {
				// A modern server tells only a listen it has acknowledged,
				// which Connect does not wait for.
				poll.Until(t, "the listen is open", func() bool { return listens(t, s).Open == 1 })
			}
			call(t, s, context.Background(), mcptest.ToolAddTool, mcptest.AddToolIn{Name: "late"})
			if n := s.ToolsChanged(); n != 1 {
				t.Errorf("ToolsChanged = %d right after the call", n)
			}
			poll.Until(t, "the ToolsChanged handler", func() bool { return told.Load() == 1 })
			tools, err := s.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tl := range tools {
				found = found || tl.Name == "late"
			}
			if !found {
				t.Error("the added tool is not listed")
			}
		})
	}
}

// recordingTransport keeps the raw messages the client writes.
type recordingTransport struct {
	mcp.Transport
	mu    *sync.Mutex
	wrote *[]string
}

func (r recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return recordingConn{c, r}, err
}

type recordingConn struct {
	mcp.Connection
	r recordingTransport
}

func (c recordingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	b, _ := jsonrpc.EncodeMessage(m)
	c.r.mu.Lock()
	*c.r.wrote = append(*c.r.wrote, string(b))
	c.r.mu.Unlock()
	return c.Connection.Write(ctx, m)
}

// On the wire, a session without request handlers declares no capability
// (no "roots" either) but the tasks extension, which CallTool always
// follows (issue 26 item 1), in the era probe (Issue 25) and in
// initialize.
// A legacy server, so that the wire shows both the probe and the
// initialize the client falls back to.
func TestNoCapabilitiesOnTheWire(t *testing.T) {
	t.Parallel()
	for _, h := range []*mcpconn.Handlers{nil, {Progress: func(context.Context, mcpconn.Incoming, *mcp.ProgressNotificationParams) {}}} {
		var mu sync.Mutex
		var wrote []string
		dial := mcptest.Dial(&mcptest.ServerOptions{Era: mcptest.EraLegacy})
		c := quickConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
			t, err := dial(ctx, ref, srv)
			return recordingTransport{t, &mu, &wrote}, err
		}})
		connectWith(t, c, resource.MCPServer{Type: resource.TransportStdio}, h)
		mu.Lock()
		if len(wrote) < 2 || !strings.Contains(wrote[0], `"method":"server/discover"`) || !strings.Contains(wrote[0], `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) ||
			!strings.Contains(wrote[1], `"method":"initialize"`) || !strings.Contains(wrote[1], `"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
			t.Errorf("handlers %v: the handshake on the wire: %v", h != nil, wrote)
		}
		mu.Unlock()
	}
}

// Over streamable HTTP the handlers work the same: a request on the
// call's event stream, progress for its call, a tools change sent
// outside any call (on the standalone stream).
func TestHandlersOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	url := mcptest.StartHTTP(t, "-fault", string(mcptest.FaultClientFeatures))
	var mu sync.Mutex
	var got []string
	var changed atomic.Int32
	s := connectWith(t, quickConnector(nil), resource.MCPServer{Type: resource.TransportHTTP, URL: url}, &mcpconn.Handlers{
		Elicit: func(_ context.Context, in mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			mu.Lock()
			got = append(got, fmt.Sprintf("elicit %v", in.Calls))
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		Progress: func(_ context.Context, in mcpconn.Incoming, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			got = append(got, fmt.Sprintf("progress %v %v", in.Calls, p.Progress))
			mu.Unlock()
		},
		ToolsChanged: func(context.Context, mcpconn.Incoming) { changed.Add(1) },
	})
	res := call(t, s, mcpconn.WithCallTag(context.Background(), "E"), mcptest.ToolAsk, mcptest.AskIn{})
	if !strings.Contains(resultText(res), `"name":"Ann"`) {
		t.Errorf("ask: %s", resultText(res))
	}
	call(t, s, mcpconn.WithCallTag(context.Background(), "P"), mcptest.ToolProgress, mcptest.ProgressIn{Steps: 2, MS: 1})
	poll.Until(t, "two progress notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 })
	mu.Lock()
	if diff := cmp.Diff([]string{"elicit [E]", "progress [P] 1", "progress [P] 2"}, got); diff != "" {
		t.Errorf("handled (-want +got):\n%s", diff)
	}
	mu.Unlock()
	call(t, s, context.Background(), mcptest.ToolAddTool, mcptest.AddToolIn{Name: "late"})
	poll.Until(t, "the tools change", func() bool { return changed.Load() >= 1 && s.ToolsChanged() >= 1 })
}
