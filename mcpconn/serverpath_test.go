//lint:file-ignore SA1019 roots is current in protocol 2025-11-25

package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// A tools/call result that asks for input (resultType input_required, the
// multi round-trip of protocol 2026-07-28; issue 25 item 4) is answered
// by the session's handlers alone (never from the go-sdk client's own
// root set, and every request reported to Served), then the call goes
// again as a new request (a new JSON-RPC id) with the answers and the
// requestState exactly as it came (escapes of the server's own kept as
// the value they write). A request no handler declared ends the call,
// nothing asked and nothing sent again, and the error holds nothing of
// the result. A legacy session takes part too: the rule is the same.
func TestInputRequiredResultAnsweredByHandlers(t *testing.T) {
	t.Parallel()
	const state = `st\u00e9<&>\"s3cret`
	asking := `{"resultType":"input_required","requestState":"` + state + `",` +
		`"inputRequests":{"r":{"method":"roots/list","params":{}},` +
		`"e":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}}}`
	var wantState string
	if err := json.Unmarshal([]byte(`"`+state+`"`), &wantState); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		handlers     *mcpconn.Handlers
		rootsChanged bool // NotifyRootsChanged before the call, as Run.SetRoots does
		answered     bool // the handlers answer it all
		served       int32
	}{
		{"no handlers", nil, false, false, 0},
		{"roots handler", &mcpconn.Handlers{Roots: rootsOK}, false, false, 1},
		{"roots handler after a roots change", &mcpconn.Handlers{Roots: rootsOK}, true, false, 1},
		{"every request handler", &mcpconn.Handlers{Roots: rootsOK, Elicit: elicitAccept(nil), CreateMessage: sampleOK}, false, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := &scriptedServer{answer: func(method string, id json.RawMessage, n int) []string {
				if method != "tools/call" {
					return nil
				}
				if n == 1 {
					return []string{result(id, asking)}
				}
				return []string{result(id, `{"content":[{"type":"text","text":"called again"}]}`)}
			}}
			var served atomic.Int32
			h := tt.handlers
			if h != nil {
				hh := *h
				hh.Served = func(mcpconn.Incoming, mcpconn.ServedRequest) { served.Add(1) }
				h = &hh
			}
			s := connectWith(t, mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: script.dial}), resource.MCPServer{}, h)
			if tt.rootsChanged {
				if err := s.NotifyRootsChanged(); err != nil {
					t.Fatal(err)
				}
			}
			res, err := s.CallTool(context.Background(), "t", nil)
			script.mu.Lock()
			calls, lines := script.calls["tools/call"], slices.Clone(script.lines)
			script.mu.Unlock()
			if served.Load() != tt.served {
				t.Errorf("%d requests were served; want %d", served.Load(), tt.served)
			}
			if !tt.answered {
				if !errors.Is(err, mcpconn.ErrInputRequired) {
					t.Fatalf("CallTool err = %v (a result: %v); want ErrInputRequired", err, res != nil)
				}
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "roots/list") {
					t.Errorf("the error holds the server's result: %v", err)
				}
				if calls != 1 {
					t.Errorf("the server got %d tools/call; want 1", calls)
				}
				// The session stays usable.
				if res := call(t, s, context.Background(), "t", nil); resultText(res) != "called again" {
					t.Errorf("next call: %s", resultText(res))
				}
				return
			}
			if err != nil || resultText(res) != "called again" {
				t.Fatalf("CallTool = %v, %v; want the result of the call sent again", res, err)
			}
			type callLine struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					InputResponses map[string]json.RawMessage `json:"inputResponses"`
					RequestState   *string                    `json:"requestState"`
				} `json:"params"`
			}
			var sent []callLine
			for _, l := range lines {
				var one callLine
				if json.Unmarshal([]byte(l), &one) == nil && one.Method == "tools/call" {
					sent = append(sent, one)
				}
			}
			if len(sent) != 2 {
				t.Fatalf("the server got %d tools/call; want 2", len(sent))
			}
			if string(sent[0].ID) == string(sent[1].ID) {
				t.Errorf("the call went again with the same id %s; want a new one", sent[0].ID)
			}
			if sent[0].Params.RequestState != nil || sent[0].Params.InputResponses != nil {
				t.Error("the first request carries input of its own")
			}
			if st := sent[1].Params.RequestState; st == nil || *st != wantState {
				t.Errorf("requestState sent again = %v; want %q", st, wantState)
			}
			var keys []string
			for k := range sent[1].Params.InputResponses {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if diff := cmp.Diff([]string{"e", "r"}, keys); diff != "" {
				t.Errorf("inputResponses keys (-want +got):\n%s", diff)
			}
		})
	}
}

// NotifyRootsChanged reaches the server, and the roots/list it sends then
// is answered by Handlers.Roots alone (and audited): the client puts no
// root of its own anywhere.
func TestRootsChangedAnsweredByHandler(t *testing.T) {
	t.Parallel()
	lists := make(chan []string, 4)
	server := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			res, err := req.Session.ListRoots(ctx, nil)
			var uris []string
			if err == nil {
				for _, r := range res.Roots {
					uris = append(uris, r.URI)
				}
			}
			lists <- uris
		},
	})
	var mu sync.Mutex
	var reps []mcpconn.ServedRequest
	dial := func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
		serverEnd, clientEnd := mcp.NewInMemoryTransports()
		if _, err := server.Connect(ctx, serverEnd, nil); err != nil {
			return nil, err
		}
		return clientEnd, nil
	}
	// The legacy era: a modern server asks for roots only inside a
	// result (input_required; TestInputRoundsEachHandler).
	s := connectWith(t, mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial}), resource.MCPServer{ProtocolVersion: mcpdoc.EraLegacy}, &mcpconn.Handlers{
		Roots: rootsOK,
		Served: func(_ mcpconn.Incoming, r mcpconn.ServedRequest) {
			mu.Lock()
			reps = append(reps, mcpconn.ServedRequest{Method: r.Method, Outcome: r.Outcome})
			mu.Unlock()
		},
	})
	for range 2 {
		if err := s.NotifyRootsChanged(); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-lists:
			if diff := cmp.Diff([]string{"file:///work"}, got); diff != "" {
				t.Errorf("roots the server got (-want +got):\n%s", diff)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the server never heard of the change")
		}
	}
	poll.Until(t, "two roots requests audited", func() bool { mu.Lock(); defer mu.Unlock(); return len(reps) == 2 })
	mu.Lock()
	defer mu.Unlock()
	want := mcpconn.ServedRequest{Method: mcpconn.MethodListRoots, Outcome: mcpconn.OutcomeAccepted}
	if diff := cmp.Diff([]mcpconn.ServedRequest{want, want}, reps); diff != "" {
		t.Errorf("served (-want +got):\n%s", diff)
	}
}

// heapAfterGC returns the bytes of live heap objects.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A session keeps nothing of the results of calls that returned: after
// 32 results of 1 MiB that the caller dropped, the live heap has not
// grown by anything near their size. Not parallel: it measures the heap.
func TestEndedCallsHoldNoResults(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	script := &scriptedServer{answer: func(method string, id json.RawMessage, n int) []string {
		return []string{result(id, `{"content":[{"type":"text","text":"`+big+`"}]}`)}
	}}
	s := connectWith(t, mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: script.dial}), resource.MCPServer{}, &mcpconn.Handlers{Roots: rootsOK})
	call(t, s, context.Background(), "t", nil) // warm up the buffers
	before := heapAfterGC()
	for range 32 {
		if res := call(t, s, context.Background(), "t", nil); len(res.Raw) < 1<<20 {
			t.Fatalf("result of %d bytes", len(res.Raw))
		}
	}
	after := heapAfterGC()
	grown := int64(after) - int64(before)
	t.Logf("live heap grew by %d bytes after 32 results of 1 MiB", grown)
	if grown > 8<<20 { // 16 results held would be 16 MiB and more
		t.Errorf("the session holds %d bytes more after its calls returned", grown)
	}
	runtime.KeepAlive(s)
}

// floodServer is a go-sdk server whose tool "flood" sends groups
// progress notifications of groupSize, each with a message of 8 KiB, a
// pause apart, then returns.
func floodServer(groups, groupSize int, pause time.Duration) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, nil)
	msg := strings.Repeat("m", 8<<10)
	server.AddTool(&mcp.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			n := 0
			for range groups {
				for range groupSize {
					n++
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg}); err != nil {
						return nil, err
					}
				}
				time.Sleep(pause)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "flooded"}}}, nil
		})
	return server
}

// A Progress handler stuck on its first notification while the server
// floods progress: the session holds at most the queue's worth of
// notifications (the rest dropped and counted), and the progress still
// restarts the call's idle timeout as it is read, so the call, three
// idle timeouts long, succeeds (its result then waits at most one more
// idle timeout for the stuck handler: see awaitNotes). Over Dial (the
// connection's reader) and streamable HTTP (the event stream's reader).
// Not parallel: it measures the heap.
func TestSlowProgressHandlerUnderFlood(t *testing.T) {
	const groups, groupSize = 30, 100 // 3000 notifications of 8 KiB over 3 s
	tests := []struct {
		name string
		srv  func(t *testing.T) (resource.MCPServer, *mcpconn.ConnectorOptions)
	}{
		{"dial", func(t *testing.T) (resource.MCPServer, *mcpconn.ConnectorOptions) {
			server := floodServer(groups, groupSize, 100*time.Millisecond)
			return resource.MCPServer{ToolTimeoutMS: 1000}, &mcpconn.ConnectorOptions{
				Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
					serverEnd, clientEnd := mcp.NewInMemoryTransports()
					if _, err := server.Connect(ctx, serverEnd, nil); err != nil {
						return nil, err
					}
					return clientEnd, nil
				}}
		}},
		{"streamable http", func(t *testing.T) (resource.MCPServer, *mcpconn.ConnectorOptions) {
			server := floodServer(groups, groupSize, 100*time.Millisecond)
			url, rt := memHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
			return resource.MCPServer{Type: resource.TransportHTTP, URL: url, ToolTimeoutMS: 1000}, &mcpconn.ConnectorOptions{HTTPTransport: rt}
		}},
	}
	for _, tt := range tests {
		// In a synctest bubble (in memory, and HTTP over memHTTP): the
		// server's pauses and the timeouts are virtual time.
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, opts := tt.srv(t)
				release := make(chan struct{})
				var handled atomic.Int64
				s := connectWith(t, quickConnector(opts), srv, &mcpconn.Handlers{
					Progress: func(ctx context.Context, _ mcpconn.Incoming, _ *mcp.ProgressNotificationParams) {
						handled.Add(1)
						select { // an observer far slower than the server
						case <-release:
						case <-ctx.Done():
						}
					},
				})
				before := heapAfterGC()
				start := time.Now()
				res, err := s.CallTool(context.Background(), "flood", nil)
				took := time.Since(start)
				grown := int64(heapAfterGC()) - int64(before)
				close(release)
				if err != nil {
					t.Fatalf("the call failed after %v: %v", took, err)
				}
				if resultText(res) != "flooded" {
					t.Errorf("result %s", resultText(res))
				}
				const sent = groups * groupSize
				poll.Until(t, "every notification handled or dropped", func() bool {
					return handled.Load()+int64(s.NotificationsDropped()) == sent
				})
				t.Logf("call took %v; %d handled, %d dropped; live heap grew by %d bytes with the handler stuck",
					took, handled.Load(), s.NotificationsDropped(), grown)
				if h := handled.Load(); h > 300 {
					t.Errorf("%d notifications were handled: more than the queue holds", h)
				}
				if grown > 16<<20 { // 3000 queued would be 24 MiB of messages and more
					t.Errorf("the session held %d bytes more with its handler stuck", grown)
				}
			})
		})
	}
}
