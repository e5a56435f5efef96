//lint:file-ignore SA1019 logging is current in protocol 2025-11-25

package mcpconn_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// resumableServer serves the fake server over streamable HTTP with an
// event store, so its event streams can be resumed with Last-Event-ID.
func resumableServer(t *testing.T) string {
	t.Helper()
	server := mcptest.NewServer(nil)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
		ts.Close()
	})
	return ts.URL
}

// cutProxy forwards to target and ends the event stream of every POST
// answer after its first event (the server's priming event), adding a
// retry field to that event: the server closing a call's stream early, as
// SEP-1699 lets it.
type cutProxy struct {
	target  string
	retry   string
	resumed atomic.Int64 // GETs with a Last-Event-ID
}

func (p *cutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		p.resumed.Add(1)
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, p.target, bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	// The go-sdk's server forgets a session whose initialize stream is
	// cut: only calls and listings are.
	if (msg.Method != "tools/call" && msg.Method != "tools/list") || mt != "text/event-stream" {
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		streamBack(w, resp.Body)
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if strings.TrimRight(line, "\r\n") == "" {
			if p.retry != "" {
				_, _ = io.WriteString(w, "retry: "+p.retry+"\n")
			}
			_, _ = io.WriteString(w, "\n")
			return // cut: the rest waits in the server's event store
		}
		_, _ = io.WriteString(w, line)
	}
}

func streamBack(w http.ResponseWriter, body io.Reader) {
	buf := make([]byte, 4096)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

// SEP-1699 (conformance sse-retry): a server that ends a call's event
// stream early has the call resumed with a GET carrying Last-Event-ID,
// after the server's retry delay; the result that arrives on the resumed
// stream answers the call. tools/list resumed the same way keeps its exact
// schema bytes (the capture sees the resumed stream), and the replies on
// resumed streams are not counted as messages the server started: a rate
// of 1 per second (a burst of 10) is far below the 25 calls.
func TestCallResumedAfterTheServerEndsItsStream(t *testing.T) {
	t.Parallel()
	target := resumableServer(t)
	proxy := &cutProxy{target: target, retry: "50"}
	ts := httptest.NewServer(proxy)
	defer ts.Close()
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxServerMessageRate: 1}})

	direct, err := c.Connect(context.Background(), "direct", resource.MCPServer{Type: resource.TransportHTTP, URL: target}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := direct.Tools(context.Background())
	direct.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := c.Connect(context.Background(), "cut", resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL, ToolTimeoutMS: 20_000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Tools(context.Background())
	if err != nil {
		t.Fatalf("Tools over a cut stream: %v", err)
	}
	if diff := cmp.Diff(schemasOf(want), schemasOf(got)); diff != "" {
		t.Errorf("schemas over a resumed stream differ from the wire's (-direct +resumed):\n%s", diff)
	}
	start := time.Now()
	const calls = 25
	for i := range calls {
		res, err := s.CallTool(context.Background(), mcptest.ToolEcho, []byte(fmt.Sprintf(`{"text":"resumed %d"}`, i)))
		if err != nil || resultText(res) != fmt.Sprintf("resumed %d", i) {
			t.Fatalf("call %d over a cut stream = %v, %v", i, res, err)
		}
	}
	if n := proxy.resumed.Load(); n < calls+1 {
		t.Errorf("%d resumed GETs; want one per call and listing (%d)", n, calls+1)
	}
	t.Logf("%d calls, each resumed after a retry of 50 ms: %s", calls, time.Since(start))
}

func schemasOf(tools []mcpconn.Tool) map[string]string {
	out := map[string]string{}
	for _, t := range tools {
		out[t.Name] = string(t.InputSchema)
	}
	return out
}

// hostileStreams is a streamable HTTP server that ends every event stream
// of a call right after a priming event with a fresh id and the retry it
// asks for; answerAfter > 0: the resumed stream number answerAfter carries
// the result (as conformance sse-retry does), else never.
type hostileStreams struct {
	retry       string
	answerAfter int64

	gets    atomic.Int64
	pending atomic.Value // the tools/call request id, json.RawMessage
	ids     atomic.Int64
}

func (h *hostileStreams) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "hostile")
	if r.Method == http.MethodDelete {
		return
	}
	if r.Method == http.MethodGet {
		n := h.gets.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e%d\nretry: %s\ndata: \n\n", h.ids.Add(1), h.retry)
		if id, ok := h.pending.Load().(json.RawMessage); ok && h.answerAfter > 0 && n >= h.answerAfter {
			fmt.Fprintf(w, "id: e%d\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"late\"}]}}\n\n", h.ids.Add(1), id)
		}
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&msg)
	switch msg.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}`, msg.ID)
	case "tools/call":
		h.pending.Store(msg.ID)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e%d\nretry: %s\ndata: \n\n", h.ids.Add(1), h.retry)
	case "":
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
	}
}

// A server that asks for a retry of 10 hours waits MaxReconnectDelay, not
// 10 hours, nor the tool timeout.
// In a synctest bubble over in-memory HTTP: the delay is virtual time.
func TestRetryDelayIsBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testRetryDelayIsBounded)
}

func testRetryDelayIsBounded(t *testing.T) {
	h := &hostileStreams{retry: "36000000", answerAfter: 1}
	url, rt := memHTTP(t, h)
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{HTTPTransport: rt, Limits: &mcpconn.Limits{MaxReconnectDelay: 200 * time.Millisecond}})
	s, err := c.Connect(context.Background(), "slow", resource.MCPServer{Type: resource.TransportHTTP, URL: url, ToolTimeoutMS: 60_000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	res, err := s.CallTool(context.Background(), "any", nil)
	took := time.Since(start)
	if err != nil || resultText(res) != "late" {
		t.Fatalf("call = %v, %v; want the result of the resumed stream", res, err)
	}
	if took < 200*time.Millisecond || took > time.Second {
		t.Errorf("the call took %s; want about MaxReconnectDelay (200ms)", took)
	}
	t.Logf("retry: 10 h, MaxReconnectDelay 200 ms: answered after %s", took)
}

// A server that ends every stream of a call at once, forever, each time
// with a new event id (the go-sdk's own count resets on a new id) and a
// retry of 1 ms: the call's stream reconnects at most ReconnectBurst
// times at once, then once per MinReconnectInterval, until the tool
// timeout ends the call; then no further request reaches the server.
// In a synctest bubble over in-memory HTTP: the intervals and the window
// after the call are virtual time.
func TestEndlessStreamEndsAreRateBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testEndlessStreamEndsAreRateBounded)
}

func testEndlessStreamEndsAreRateBounded(t *testing.T) {
	h := &hostileStreams{retry: "1"}
	url, rt := memHTTP(t, h)
	const burst, interval = 4, 500 * time.Millisecond
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{HTTPTransport: rt, Limits: &mcpconn.Limits{ReconnectBurst: burst, MinReconnectInterval: interval}})
	s, err := c.Connect(context.Background(), "loop", resource.MCPServer{Type: resource.TransportHTTP, URL: url, ToolTimeoutMS: 3000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	_, err = s.CallTool(context.Background(), "any", nil)
	took := time.Since(start)
	if err == nil {
		t.Fatal("a call whose stream never answers succeeded")
	}
	gets := h.gets.Load()
	if bound := burst + int64(took/interval) + 1; gets > bound {
		t.Errorf("the server saw %d GETs in %s; want at most %d (burst %d, then one per %s)", gets, took, bound, burst, interval)
	}
	if gets < burst {
		t.Errorf("the server saw %d GETs; want at least the burst (%d): the stream was not resumed", gets, burst)
	}
	// Reconnections stop with the call. One GET the limiter granted just
	// before the call ended may still arrive; reconnections that went on
	// would bring one per interval, so over six intervals more than one
	// is the failure.
	time.Sleep(6 * interval) // virtual: the window is exact and costs nothing
	if n := h.gets.Load(); n > gets+1 {
		t.Errorf("the server saw %d more GETs after the call ended; want at most 1 already granted", n-gets)
	}
	t.Logf("endless stream ends, retry 1 ms: %d GETs in %s, then the call ended: %v", gets, took, err)
}

// pollingServer is a streamable HTTP server that ends every GET (the
// standalone stream) after one event with no data, an id or none, and
// asks for a retry: the polling the protocol allows an idle server.
type pollingServer struct {
	getBody func(n int64) string // the GET's whole event stream

	gets atomic.Int64
}

func (p *pollingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "poll")
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, p.getBody(p.gets.Add(1)))
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&msg)
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := `{}`
	switch msg.Method {
	case "initialize":
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"poll","version":"1"}}`
	case "tools/call":
		result = `{"content":[{"type":"text","text":"still here"}]}`
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
}

// An idle server that polls its standalone stream (it ends it after a
// priming event and asks for a retry of 10 ms, again and again) keeps its
// session: past the burst and past the go-sdk's own count of
// reconnections without a new event id (50), with fresh ids and with
// none (a proxy that cuts an idle stream of a server without ids looks
// the same, only slower).
func TestStandalonePollingKeepsTheSession(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		getBody func(n int64) string
	}{
		{"fresh ids", func(n int64) string { return fmt.Sprintf("id: p%d\nretry: 10\ndata:\n\n", n) }},
		{"no ids", func(int64) string { return "retry: 10\ndata:\n\n" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// In a synctest bubble over in-memory HTTP: the polls' pauses
			// are virtual time.
			synctest.Test(t, func(t *testing.T) {
				p := &pollingServer{getBody: tt.getBody}
				url, rt := memHTTP(t, p)
				c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{HTTPTransport: rt, Limits: &mcpconn.Limits{MinReconnectInterval: 10 * time.Millisecond}})
				s, err := c.Connect(context.Background(), "poll", resource.MCPServer{Type: resource.TransportHTTP, URL: url}, handlersWithLog)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				const polls = 70 // past the burst (10) and the go-sdk's count (50)
				start := time.Now()
				poll.Until(t, fmt.Sprintf("%d polls or the session's loss", polls), func() bool { return p.gets.Load() >= polls || s.Lost() })
				if s.Lost() {
					t.Fatalf("the session was lost after %d polls", p.gets.Load())
				}
				res, err := s.CallTool(context.Background(), "any", nil)
				if err != nil || resultText(res) != "still here" {
					t.Fatalf("a call after %d polls = %v, %v", p.gets.Load(), res, err)
				}
				t.Logf("%d polls of the standalone stream in %s, the session goes on", p.gets.Load(), time.Since(start))
			})
		})
	}
}

// A server that ends its standalone stream at once, again and again, and
// asks for a retry of 1 ms is bounded by the defaults: the burst (10),
// then one GET a second; the session goes on.
// In a synctest bubble over in-memory HTTP: the 2.5 s it watches are
// virtual time.
func TestStandaloneStreamLoopIsRateBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testStandaloneStreamLoopIsRateBounded)
}

func testStandaloneStreamLoopIsRateBounded(t *testing.T) {
	p := &pollingServer{getBody: func(n int64) string { return fmt.Sprintf("id: p%d\nretry: 1\ndata:\n\n", n) }}
	url, rt := memHTTP(t, p)
	s, err := mcpconn.NewConnector(&mcpconn.ConnectorOptions{HTTPTransport: rt}).Connect(context.Background(), "loop", resource.MCPServer{Type: resource.TransportHTTP, URL: url}, handlersWithLog)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	time.Sleep(2500 * time.Millisecond) // virtual: the window is exact and costs nothing
	gets, took := p.gets.Load(), time.Since(start)
	if bound := int64(mcpconn.DefaultLimits().ReconnectBurst) + 1 + int64(took/mcpconn.DefaultLimits().MinReconnectInterval) + 1; gets > bound {
		t.Errorf("the server saw %d GETs in %s; want at most %d", gets, took, bound)
	}
	if gets < 2 {
		t.Errorf("the server saw %d GETs; want the standalone stream reconnected", gets)
	}
	if s.Lost() {
		t.Error("the session was lost")
	}
	t.Logf("standalone stream ended at once with retry 1 ms: %d GETs in %s", gets, took)
}

// handlersWithLog is a session that wants what a server sends on its own:
// its standalone stream is opened.
var handlersWithLog = &mcpconn.ConnectOptions{Handlers: &mcpconn.Handlers{
	Log: func(context.Context, mcpconn.Incoming, *mcp.LoggingMessageParams) {},
}}

// A proxy (or server) that holds the response headers of the standalone
// GET stream does not hold up the handshake: a session without handlers
// opens no such stream, and one with handlers opens it after the
// handshake, on its own time; Close ends the held request.
func TestHandshakeDoesNotWaitForAGetStream(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		opts     *mcpconn.ConnectOptions
		wantGets bool
	}{
		{name: "no handlers, no stream", opts: nil, wantGets: false},
		{name: "handlers, stream after the handshake", opts: handlersWithLog, wantGets: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			target := mcptest.StartHTTP(t, "-era", string(mcptest.EraLegacy)) // sessions and the GET stream are legacy-only
			var gets atomic.Int64
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
					<-r.Context().Done() // holds the headers until the client goes
					return
				}
				forward(w, r, target)
			}))
			defer proxy.Close()
			start := time.Now()
			s, err := quickConnector(nil).Connect(context.Background(), "proxied",
				resource.MCPServer{Type: resource.TransportHTTP, URL: proxy.URL, StartupTimeoutMS: 20_000}, tt.opts)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Connect through the proxy: %v", err)
			}
			if took > 5*time.Second {
				t.Errorf("Connect took %s; want no wait for the GET stream", took)
			}
			if _, err := s.Tools(context.Background()); err != nil {
				t.Errorf("Tools through the proxy: %v", err)
			}
			if tt.wantGets {
				poll.Until(t, "the GET stream", func() bool { return gets.Load() > 0 })
			}
			if got := gets.Load() > 0; got != tt.wantGets {
				t.Errorf("GET sent = %v; want %v", got, tt.wantGets)
			}
			closeStart := time.Now()
			s.Close()
			if d := time.Since(closeStart); d > 5*time.Second {
				t.Errorf("Close with the GET held took %s", d)
			}
			t.Logf("handshake through a header-holding proxy: %s (%d GET)", took, gets.Load())
		})
	}
}

// A server that answers the standalone GET with 405 (it offers no such
// stream, as the spec allows) keeps a working session: no error, no
// reconnection loop. The server is a legacy one with a session (the GET
// stream is legacy-only), in a synctest bubble over in-memory HTTP: the
// window for a reconnection that must not come is virtual time.
func TestStandaloneStreamRefusedWith405(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testStandaloneStreamRefusedWith405)
}

func testStandaloneStreamRefusedWith405(t *testing.T) {
	p := &pollingServer{}
	var gets atomic.Int64
	url, rt := memHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			http.Error(w, "no stream here", http.StatusMethodNotAllowed)
			return
		}
		p.ServeHTTP(w, r)
	}))
	s, err := mcpconn.NewConnector(&mcpconn.ConnectorOptions{HTTPTransport: rt}).Connect(context.Background(), "no-get",
		resource.MCPServer{Type: resource.TransportHTTP, URL: url}, handlersWithLog)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	synctest.Wait() // the GET is sent and refused
	if gets.Load() == 0 {
		t.Fatal("no standalone GET")
	}
	// Room for a reconnection that must not come: ten times the default
	// reconnect interval, virtual.
	time.Sleep(10 * mcpconn.DefaultLimits().MinReconnectInterval)
	res, err := s.CallTool(context.Background(), mcptest.ToolEcho, []byte(`{"text":"still here"}`))
	if err != nil || resultText(res) != "still here" {
		t.Errorf("call after a 405 GET = %v, %v", res, err)
	}
	if s.Lost() {
		t.Error("the session is lost after a 405 GET")
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("%d GETs; want 1 (a 405 is not retried)", n)
	}
}

// A url that is not the document's transport, or that wants credentials,
// says what to set, in the document's words, with the server's message
// (issue 24 item 4), and never shows the header's value or the url's
// secrets, not even where the server's message echoes them, nor a header
// of the answer.
func TestRemoteRefusalSaysWhatToTry(t *testing.T) {
	t.Parallel()
	serve := func(h http.Handler) *httptest.Server {
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close) // after the parallel subtests
		return ts
	}
	fake := mcptest.NewServer(nil)
	streamable := serve(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fake }, nil))
	sse := serve(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return fake }, nil))
	page := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<html><body>welcome</body></html>")
	}))
	notFound := serve(http.NotFoundHandler())
	status := func(code int) *httptest.Server {
		return serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="s3cret-realm"`)
			http.Error(w, "go away, "+r.Header.Get("Authorization")+" "+r.URL.RawQuery+" "+r.URL.Path+"\nsecond line", code)
		}))
	}
	unauthorized, forbidden := status(http.StatusUnauthorized), status(http.StatusForbidden)
	const query = "/mcp?key=s3cret-query"
	for _, tt := range []struct {
		name string
		typ  string
		url  string
		kind error
		want string
	}{
		{"SSE server registered as http", resource.TransportHTTP, sse.URL + "?key=s3cret-query", mcpconn.ErrWrongTransport, `set "type": "sse"`},
		{"streamable server registered as sse", resource.TransportSSE, streamable.URL + query, mcpconn.ErrWrongTransport, `set "type": "http"`},
		{"web page as http", resource.TransportHTTP, page.URL + query, mcpconn.ErrWrongTransport, "web page"},
		{"web page as sse", resource.TransportSSE, page.URL + query, mcpconn.ErrWrongTransport, "web page"},
		{"404 as http", resource.TransportHTTP, notFound.URL + query, mcpconn.ErrWrongTransport, `check the url's path`},
		{"404 as sse", resource.TransportSSE, notFound.URL + query, mcpconn.ErrWrongTransport, `set "type": "http"`},
		{"401 as http", resource.TransportHTTP, unauthorized.URL + query, mcpconn.ErrUnauthorized, `the server requires authorization (HTTP 401 Unauthorized: "go away, [redacted] [redacted] /mcp"): set headers (e.g. an Authorization header with a ${secret:...} reference)`},
		{"401 as sse", resource.TransportSSE, unauthorized.URL + query, mcpconn.ErrUnauthorized, "requires authorization"},
		{"403 as http", resource.TransportHTTP, forbidden.URL + query, mcpconn.ErrUnauthorized, "HTTP 403 Forbidden"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := resource.MCPServer{Type: tt.typ, URL: tt.url, StartupTimeoutMS: 10_000,
				Headers: map[string]string{"Authorization": "Bearer s3cret-token"}}
			s, err := mcpconn.NewConnector(nil).Connect(context.Background(), "wrong", srv, nil)
			if err == nil {
				s.Close()
				t.Fatal("Connect succeeded")
			}
			msg := err.Error()
			if !errors.Is(err, mcpconn.ErrHandshake) || !errors.Is(err, tt.kind) || !strings.Contains(msg, tt.want) {
				t.Errorf("Connect = %v; want ErrHandshake and %v saying %q", err, tt.kind, tt.want)
			}
			if strings.Contains(msg, "s3cret") || strings.Contains(msg, "second line") {
				t.Errorf("error %q shows a secret, or more than the message's first line", msg)
			}
		})
	}
}
