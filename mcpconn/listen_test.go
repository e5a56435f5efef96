package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listens asks the fake server how many subscriptions/listen requests it
// received and how many are open for tools changes.
func listens(t *testing.T, s *mcpconn.Session) mcptest.ListensOut {
	t.Helper()
	var out mcptest.ListensOut
	if err := json.Unmarshal([]byte(resultText(call(t, s, context.Background(), mcptest.ToolListens, struct{}{}))), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Issue 25 item 5: a session that wants tool-change notifications
// (Handlers.ToolsChanged) gets them in both eras on stdio and streamable
// HTTP: in the modern era on the subscriptions/listen stream it opens
// (one, with toolsListChanged), in the legacy era as before (stdio, the
// standalone GET stream) with no listen at all. A session without the
// handler opens none. The listen ends with the session (Close): the
// server sees it end, and the package's goleak check finds no goroutine
// of it.
func TestListenForToolsChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		era       mcptest.Era
		listen    bool
	}{
		{resource.TransportStdio, mcptest.EraModern, true},
		{resource.TransportStdio, mcptest.EraDual, true},
		{resource.TransportStdio, mcptest.EraLegacy, false},
		{resource.TransportHTTP, mcptest.EraModern, true},
		{resource.TransportHTTP, mcptest.EraDual, true},
		{resource.TransportHTTP, mcptest.EraLegacy, false},
	} {
		t.Run(tc.transport+"/"+string(tc.era), func(t *testing.T) {
			t.Parallel()
			srv := eraServer(t, tc.transport, tc.era, "-fault", string(mcptest.FaultClientFeatures))
			c := quickConnector(nil)
			defer c.Close()

			// No handler, no listen.
			plain := connectWith(t, c, srv, &mcpconn.Handlers{Progress: func(context.Context, mcpconn.Incoming, *mcp.ProgressNotificationParams) {}})
			if got := listens(t, plain); got.Received != 0 {
				t.Fatalf("a session without ToolsChanged: the server received %d listens", got.Received)
			}

			var told atomic.Int32
			var progressOf atomic.Value
			s := connectWith(t, c, srv, &mcpconn.Handlers{ToolsChanged: func(context.Context, mcpconn.Incoming) { told.Add(1) },
				Progress: func(_ context.Context, in mcpconn.Incoming, _ *mcp.ProgressNotificationParams) {
					progressOf.Store(fmt.Sprint(in.Calls))
				}})
			if tc.listen {
				// The go-sdk opens the listen after server/discover, apart
				// from Connect: wait for the server's acknowledgement
				// before changing the tools.
				poll.Until(t, "the listen to be acknowledged", func() bool { return listens(t, s).Open == 1 })
			}
			got := listens(t, s)
			if want := map[bool]int{true: 1, false: 0}[tc.listen]; got.Received != want {
				t.Fatalf("the server received %d listens, want %d", got.Received, want)
			}
			// Progress stays on its call's own stream, named by it.
			call(t, s, mcpconn.WithCallTag(context.Background(), "P"), mcptest.ToolProgress, mcptest.ProgressIn{Steps: 1, MS: 1})
			poll.Until(t, "the progress", func() bool { return progressOf.Load() == "[P]" })
			call(t, s, context.Background(), mcptest.ToolAddTool, mcptest.AddToolIn{Name: "late"})
			poll.Until(t, "the tools change", func() bool { return told.Load() == 1 && s.ToolsChanged() == 1 })
			tools, err := s.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(tools, func(tl mcpconn.Tool) bool { return tl.Name == "late" }) {
				t.Error("the added tool is not listed")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.transport == resource.TransportHTTP {
				// The process serves on: the listen's end is seen there.
				poll.Until(t, "the listen to end with the session", func() bool { return listens(t, plain).Open == 0 })
			}
			if plain.ToolsChanged() != 0 && tc.listen {
				t.Errorf("a session without a listen read %d tools changes", plain.ToolsChanged())
			}
		})
	}
}

// hostileListen is a modern stateless fake server over streamable HTTP
// on 127.0.0.1 whose answer to subscriptions/listen is listen's; the
// other requests are served as usual.
func hostileListen(t *testing.T, listen http.HandlerFunc) string {
	t.Helper()
	server := mcptest.NewServer(&mcptest.ServerOptions{Era: mcptest.EraModern})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			// Read first: net/http sees the client go only then.
			_, _ = io.Copy(io.Discard, r.Body)
			listen(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// Issue 25 item 5: a server that floods the listen stream, holds its
// response headers, refuses it or ends it at once cannot hurt the
// session: Connect never waits for the listen, a flood goes past the
// message rate (MaxServerMessageRate) and ends the session with a
// *LimitError as on the legacy GET stream, and a session whose listen
// opened nothing keeps working. None is acknowledged, so the first Tools
// waits for the acknowledgement no longer than the listen's end (a
// refusal, a stream that ends: the bound is an hour here and the test
// would time out) or, for a server that holds the listen, the bound
// ConnectorOptions.Limits.EraProbeTimeout.
func TestListenHostile(t *testing.T) {
	t.Parallel()
	changed := `data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n\n"
	for _, tc := range []struct {
		name   string
		listen http.HandlerFunc
		flood  bool
		holds  bool // the listen never ends: the bound ends the wait
	}{
		{"flood", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, strings.Repeat(changed, 64)); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}, true, false},
		{"holds headers", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, false, true},
		{"method not found", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no listen here"}}`)
		}, false, false},
		{"plain 400", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusBadRequest) }, false, false},
		{"ends at once", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := resource.MCPServer{Type: resource.TransportHTTP, URL: hostileListen(t, tc.listen), StartupTimeoutMS: 20000}
			bound := time.Hour
			if tc.holds {
				bound = 50 * time.Millisecond
			}
			c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxServerMessageRate: 10, EraProbeTimeout: bound}})
			defer c.Close()
			var told atomic.Int32
			s := connectWith(t, c, srv, &mcpconn.Handlers{ToolsChanged: func(context.Context, mcpconn.Incoming) { told.Add(1) }})
			if s.ProtocolVersion() != mcpconn.ModernProtocolVersion {
				t.Fatalf("ProtocolVersion = %q", s.ProtocolVersion())
			}
			if tc.flood {
				poll.Until(t, "the flood to end the session", s.Lost)
				_, err := s.CallTool(context.Background(), mcptest.ToolEcho, json.RawMessage(`{"text":"x"}`))
				var le *mcpconn.LimitError
				if !errors.As(err, &le) || le.Option != "ConnectorOptions.Limits.MaxServerMessageRate" || !errors.Is(err, mcpconn.ErrUnavailable) {
					t.Fatalf("a call after the flood: %v; want unavailable past MaxServerMessageRate", err)
				}
				return
			}
			if got := resultText(call(t, s, context.Background(), mcptest.ToolEcho, map[string]string{"text": "still here"})); got != "still here" {
				t.Errorf("echo = %q", got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if tools, err := s.Tools(ctx); err != nil || !slices.ContainsFunc(tools, func(tl mcpconn.Tool) bool { return tl.Name == mcptest.ToolEcho }) {
				t.Errorf("Tools: %v; want a listing with %s", err, mcptest.ToolEcho)
			}
			if s.Lost() || s.ToolsChanged() != 0 {
				t.Errorf("Lost %v, ToolsChanged %d: the listen that opened nothing hurt the session", s.Lost(), s.ToolsChanged())
			}
		})
	}
}
