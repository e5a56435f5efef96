package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	agtrun "github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testServer is a go-sdk streamable HTTP server on 127.0.0.1 with the
// scenarios' tools: it records the methods it receives, the handshake, and
// the arguments of add_numbers, as the suite's servers check them.
type testServer struct {
	url string

	mu       sync.Mutex
	methods  []string
	init     *mcp.InitializeParams
	addCalls []addArgs
	elicited []*mcp.ElicitResult
}

// elicitationSchema is the form of the suite's SEP-1034 scenario: every
// field optional, every field with a default.
const elicitationSchema = `{"type": "object", "properties": {
	"name": {"type": "string", "default": "John Doe"},
	"age": {"type": "integer", "default": 30},
	"score": {"type": "number", "default": 95.5},
	"status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
	"verified": {"type": "boolean", "default": true}}}`

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addResult struct {
	Sum float64 `json:"sum"`
}

func startTestServer(t *testing.T) *testServer {
	t.Helper()
	ts := &testServer{}
	server := mcp.NewServer(&mcp.Implementation{Name: "conformance-test-server", Version: "1"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			ts.init = req.Session.InitializeParams()
		},
	})
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ts.mu.Lock()
			ts.methods = append(ts.methods, method)
			ts.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(server, &mcp.Tool{Name: "add_numbers", Description: "Add two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, addResult, error) {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			ts.addCalls = append(ts.addCalls, in)
			return nil, addResult{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "test_client_elicitation_defaults", Description: "Ask for a form whose fields all have defaults"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message:         "accept with the defaults",
				RequestedSchema: json.RawMessage(elicitationSchema),
			})
			if err != nil {
				return nil, nil, err
			}
			ts.mu.Lock()
			defer ts.mu.Unlock()
			ts.elicited = append(ts.elicited, res)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(hs.Close)
	ts.url = hs.URL + "/mcp"
	return ts
}

func (ts *testServer) seen() (methods []string, init *mcp.InitializeParams, adds []addArgs) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return slices.Clone(ts.methods), ts.init, slices.Clone(ts.addCalls)
}

// countOf counts each method.
func countOf(methods []string) map[string]int {
	n := map[string]int{}
	for _, m := range methods {
		n[m]++
	}
	return n
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// tools_call: the client connects with a protocol version the suite accepts
// and names itself, lists, and calls add_numbers with a=5 and b=3 through a
// Run.
func TestToolsCall(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t)
	var out bytes.Buffer
	if err := playScenario(testContext(t), "tools_call", ts.url, &out); err != nil {
		t.Fatalf("tools_call: %v\n%s", err, out.String())
	}
	methods, init, adds := ts.seen()
	if got := countOf(methods); got["initialize"] != 1 || got["tools/list"] != 1 || got["tools/call"] != 1 {
		t.Errorf("the server received %v, want one initialize, tools/list and tools/call", methods)
	}
	if init == nil || init.ProtocolVersion != "2025-11-25" || init.ClientInfo == nil || init.ClientInfo.Name == "" || init.ClientInfo.Version == "" {
		t.Errorf("initialize params = %+v, want protocol 2025-11-25 and a named, versioned client", init)
	}
	if diff := cmp.Diff([]addArgs{{A: 5, B: 3}}, adds); diff != "" {
		t.Errorf("add_numbers calls (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), `"sum":8`) {
		t.Errorf("output lacks the sum:\n%s", out.String())
	}
}

// elicitation-sep1034-client-defaults: the client offers elicitation only
// in this scenario, accepts the form without a field of its own, and the
// server gets every default of the schema it sent.
func TestElicitationDefaults(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t)
	var out bytes.Buffer
	if err := playScenario(testContext(t), "elicitation-sep1034-client-defaults", ts.url, &out); err != nil {
		t.Fatalf("elicitation: %v\n%s", err, out.String())
	}
	_, init, _ := ts.seen()
	if init == nil || init.Capabilities == nil || init.Capabilities.Elicitation == nil {
		t.Errorf("the client did not declare elicitation: %+v", init)
	}
	ts.mu.Lock()
	elicited := ts.elicited
	ts.mu.Unlock()
	want := []*mcp.ElicitResult{{Action: "accept", Content: map[string]any{
		"name": "John Doe", "age": float64(30), "score": 95.5, "status": "active", "verified": true,
	}}}
	if diff := cmp.Diff(want, elicited); diff != "" {
		t.Errorf("elicitation results the server got (-want +got):\n%s", diff)
	}
}

// A URL-mode elicitation asks for a visit nobody can make here: declined,
// where a form is accepted.
func TestElicitationModes(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]string{"": "accept", "form": "accept", "url": "decline"} {
		res, err := acceptElicitation(context.Background(), agtrun.Origin{}, &mcp.ElicitParams{Mode: mode})
		if err != nil || res.Action != want {
			t.Errorf("mode %q: %+v, %v; want %s", mode, res, err, want)
		}
	}
}

// Outside the elicitation scenario the client offers no elicitation: a
// server's request is refused and the capability is not declared.
func TestNoElicitationElsewhere(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t)
	if err := playScenario(testContext(t), "tools_call", ts.url, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if _, init, _ := ts.seen(); init == nil || init.Capabilities == nil || init.Capabilities.Elicitation != nil {
		t.Errorf("tools_call declared elicitation: %+v", init)
	}
}

// A scenario the client does not know connects and lists, and calls
// nothing: the suite then judges what agt does by default.
func TestUnknownScenarioOnlyLists(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t)
	var out bytes.Buffer
	for _, name := range []string{"initialize", "a-scenario-of-a-later-suite"} {
		if err := playScenario(testContext(t), name, ts.url, &out); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out.String())
		}
	}
	methods, _, _ := ts.seen()
	if got := countOf(methods); got["initialize"] != 2 || got["tools/list"] != 2 || got["tools/call"] != 0 {
		t.Errorf("the server received %v, want two initialize and tools/list, no tools/call", methods)
	}
	if !strings.Contains(out.String(), "scenario initialize: connected, 2 tools listed") {
		t.Errorf("output lacks the listing:\n%s", out.String())
	}
}

// A scenario whose tool the server does not list fails and names the tool.
func TestScenarioToolMissing(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t)
	err := playScenario(testContext(t), "sse-retry", ts.url, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `no tool "test_reconnection"`) {
		t.Fatalf("error = %v, want one naming test_reconnection", err)
	}
	if methods, _, _ := ts.seen(); countOf(methods)["tools/call"] != 0 {
		t.Errorf("the server received a tools/call: %v", methods)
	}
}

// A server that cannot be reached fails the scenario well before the
// suite's 30 s limit.
func TestServerUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	start := time.Now()
	err = playScenario(testContext(t), "initialize", url, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "starting the run") {
		t.Fatalf("error = %v, want the run to fail to start", err)
	}
	if d := time.Since(start); d > scenarioTimeout {
		t.Errorf("took %v, want under %v", d, scenarioTimeout)
	}
}

// run takes the scenario from MCP_CONFORMANCE_SCENARIO and the URL from the
// last argument, as the suite gives them.
func TestRunFromSuiteEnvironment(t *testing.T) {
	ts := startTestServer(t)
	t.Setenv(scenarioEnv, "tools_call")
	var out bytes.Buffer
	if err := run(testContext(t), []string{"--ignored", ts.url}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if _, _, adds := ts.seen(); len(adds) != 1 {
		t.Errorf("add_numbers was called %d times, want 1", len(adds))
	}
	if err := run(testContext(t), nil, &out); err == nil || !strings.Contains(err.Error(), "SERVER_URL") {
		t.Errorf("run without a URL: error = %v, want the usage", err)
	}
	t.Setenv(scenarioEnv, "")
	if err := run(testContext(t), []string{ts.url}, &out); err == nil || !strings.Contains(err.Error(), scenarioEnv) {
		t.Errorf("run without a scenario: error = %v, want one naming %s", err, scenarioEnv)
	}
}

// http-custom-headers: a null the schema neither requires nor allows is
// left out of the suite's arguments, as a host does for a model; anything
// else passes unchanged.
func TestOmitNullOptionals(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string"},"verbose":{"type":"boolean"},
		"maybe":{"type":["string","null"]},"nil":{"type":"null"}},"required":["region"]}`)
	tests := []struct{ args, want string }{
		{`{"region":"us-east1","verbose":null}`, `{"region":"us-east1"}`},
		{`{"region":null,"verbose":true}`, `{"region":null,"verbose":true}`},
		{`{"maybe":null,"nil":null}`, `{"maybe":null,"nil":null}`},
		{`[1]`, `[1]`},
	}
	for _, tt := range tests {
		got, err := omitNullOptionals(schema, json.RawMessage(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("omitNullOptionals(%s) = %s, want %s", tt.args, got, tt.want)
		}
	}
}

// The calls of a scenario: the context's toolCalls in order, or the echo
// of another tool's schema.
func TestScenarioCalls(t *testing.T) {
	t.Setenv(contextEnv, `{"name":"http-custom-headers","toolCalls":[{"name":"a","arguments":{"x":1}},{"name":"b","arguments":{}}]}`)
	sc, err := readContext()
	if err != nil {
		t.Fatal(err)
	}
	calls, err := scenarios["http-custom-headers"].calls(nil, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := []toolCall{{Name: "a", Arguments: json.RawMessage(`{"x":1}`)}, {Name: "b", Arguments: json.RawMessage(`{}`)}}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if _, err := scenarios["http-custom-headers"].calls(nil, scenarioContext{}); err == nil {
		t.Error("a context without toolCalls gave calls")
	}
}

// sep-2322-client-request-state: the client answers the input_required
// results of two tools (an elicitation each) and calls each again with
// the answers, the requestState exactly as it came where there was one
// and none where there was none; the tool called in the same batch gets
// neither.
func TestRequestStateScenario(t *testing.T) {
	t.Parallel()
	const state = `st<&>"é` + "\u2028"
	var mu sync.Mutex
	got := map[string][]string{} // tool -> "state=...;answers=N" per request
	server := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1"}, nil)
	ask := mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "confirm",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"confirmed": map[string]any{"type": "boolean"}}}}}
	for _, tool := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		mcp.AddTool(server, &mcp.Tool{Name: tool}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			got[tool] = append(got[tool], fmt.Sprintf("state=%q answers=%d", req.Params.RequestState, len(req.Params.InputResponses)))
			mu.Unlock()
			if len(req.Params.InputResponses) == 0 {
				switch tool {
				case "test_mrtr_echo_state":
					return &mcp.CallToolResult{InputRequests: ask, RequestState: state}, nil, nil
				case "test_mrtr_no_state":
					return &mcp.CallToolResult{InputRequests: ask}, nil, nil
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	var out bytes.Buffer
	if err := playScenario(testContext(t), "sep-2322-client-request-state", hs.URL+"/mcp", &out); err != nil {
		t.Fatalf("sep-2322: %v\n%s", err, out.String())
	}
	want := map[string][]string{
		"test_mrtr_echo_state":     {`state="" answers=0`, fmt.Sprintf("state=%q answers=1", state)},
		"test_mrtr_no_state":       {`state="" answers=0`, `state="" answers=1`},
		"test_mrtr_unrelated":      {`state="" answers=0`},
		"test_mrtr_no_result_type": {`state="" answers=0`},
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the requests the tools got (-want +got):\n%s", diff)
	}
}
