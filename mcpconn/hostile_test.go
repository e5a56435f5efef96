//go:build unix

package mcpconn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// Issue 11 §7: a server that refuses the handshake, or offers a protocol
// version nobody speaks, exits once its stdin closes; the error keeps the
// refusal, not "exited during startup".
func TestHandshakeRefusalKeepsCause(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		fault mcptest.Fault
		want  []string
	}{
		{mcptest.FaultRefuseInitialize, []string{"refused the initialize handshake", fmt.Sprint(mcptest.RefuseInitializeCode), mcptest.RefuseInitializeMessage}},
		{mcptest.FaultOldProtocol, []string{`protocol version "` + mcptest.OldProtocolVersion + `"`, "ConnectorOptions.ProtocolVersion"}},
	} {
		t.Run(string(tt.fault), func(t *testing.T) {
			t.Parallel()
			srv, tag := fakeStdio(t, "-fault", string(tt.fault))
			_, err := quickConnector(nil).Connect(context.Background(), "hostile", srv, nil)
			if !errors.Is(err, mcpconn.ErrHandshake) {
				t.Fatalf("Connect = %v; want ErrHandshake", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Connect = %v; want it to say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "exited during startup") {
				t.Errorf("Connect = %v; the exit hides the cause", err)
			}
			assertNoLeftovers(t, tag)
		})
	}
}

// hostileHTTP serves a JSON-RPC peer over HTTP on 127.0.0.1: answer gets
// each POSTed request's method and id; other requests get 405.
func hostileHTTP(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage)) *httptest.Server {
	t.Helper()
	return rpcHTTP(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
		if method == "server/discover" {
			// A legacy server, as they answer the era probe.
			http.Error(w, "Bad Request: unsupported protocol version", http.StatusBadRequest)
			return
		}
		answer(w, r, method, id)
	})
}

// rpcHTTP serves a JSON-RPC peer over HTTP on 127.0.0.1: answer gets
// each POSTed request's method and id, server/discover included;
// notifications get 202, other requests 405.
func rpcHTTP(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage)) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer(w, r, req.Method, req.ID)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// endless writes chunk until the client goes away or limit bytes were
// sent (a bounded loop), and returns what it sent.
func endless(w http.ResponseWriter, r *http.Request, chunk []byte, limit int64) int64 {
	var sent int64
	fl, _ := w.(http.Flusher)
	for sent < limit && r.Context().Err() == nil {
		n, err := w.Write(chunk)
		sent += int64(n)
		if err != nil {
			break
		}
		if fl != nil {
			fl.Flush()
		}
	}
	return sent
}

const initResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"0"}}`

// attack is one way for a server to send a message that never ends; each
// returns the document that reaches it and the bytes it sent so far.
type attack struct {
	name  string
	start func(t *testing.T) (resource.MCPServer, *atomic.Int64)
}

var endlessAttacks = []attack{
	{"stdio line", func(t *testing.T) (resource.MCPServer, *atomic.Int64) {
		// The start of an answer, then one line that never ends.
		return resource.MCPServer{Type: resource.TransportStdio, Command: "/bin/sh", Cwd: t.TempDir(),
			Args: []string{"-c", `printf '{"jsonrpc":"2.0","id":1,"result":{"x":"'; tr '\000' a </dev/zero`}}, nil
	}},
	{"http json body", func(t *testing.T) (resource.MCPServer, *atomic.Int64) {
		var sent atomic.Int64
		ts := hostileHTTP(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"x":"`, id)
			sent.Add(endless(w, r, bytes.Repeat([]byte("a"), 1<<16), 8<<30))
		})
		return resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL}, &sent
	}},
	{"http error body", func(t *testing.T) (resource.MCPServer, *atomic.Int64) {
		var sent atomic.Int64
		ts := hostileHTTP(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			sent.Add(endless(w, r, bytes.Repeat([]byte(" "), 1<<16), 8<<30))
		})
		return resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL}, &sent
	}},
	{"http event", func(t *testing.T) (resource.MCPServer, *atomic.Int64) {
		var sent atomic.Int64
		ts := hostileHTTP(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message\ndata: ")
			sent.Add(endless(w, r, bytes.Repeat([]byte("a"), 1<<16), 8<<30))
		})
		return resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL}, &sent
	}},
	{"sse transport event", func(t *testing.T) (resource.MCPServer, *atomic.Int64) {
		var sent atomic.Int64
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: endpoint\ndata: ")
			sent.Add(endless(w, r, bytes.Repeat([]byte("a"), 1<<16), 8<<30))
		}))
		t.Cleanup(ts.Close)
		return resource.MCPServer{Type: resource.TransportSSE, URL: ts.URL}, &sent
	}},
}

// Issue 11 §1: a message that never ends, on every transport, is an
// error naming the bound soon after the bound is reached; the server had
// sent little more than the bound when the client stopped reading.
func TestEndlessMessageIsBounded(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for _, a := range endlessAttacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			srv, sent := a.start(t)
			srv.StartupTimeoutMS = 60_000
			start := time.Now()
			s, err := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxMessageBytes: limit}}).Connect(context.Background(), "endless", srv, nil)
			elapsed := time.Since(start)
			if err == nil {
				s.Close()
				t.Fatal("Connect succeeded")
			}
			if !errors.Is(err, mcpconn.ErrHandshake) || !errors.Is(err, mcpconn.ErrLimit) || !strings.Contains(err.Error(), "exceeds 1048576 bytes (ConnectorOptions.Limits.MaxMessageBytes)") {
				t.Errorf("Connect = %v; want ErrHandshake and ErrLimit naming MaxMessageBytes", err)
			}
			var le *mcpconn.LimitError
			if !errors.As(err, &le) || le.Limit != limit {
				t.Errorf("LimitError = %+v", le)
			}
			if elapsed > 15*time.Second {
				t.Errorf("the error came after %s", elapsed)
			}
			t.Logf("%s: error after %s", a.name, elapsed)
			if sent != nil {
				// The handler adds what it sent when it returns: once the
				// client has stopped reading.
				poll.Until(t, "the handler to see the close", func() bool { return sent.Load() > 0 })
				if n := sent.Load(); n > 64<<20 {
					t.Errorf("the server sent %d bytes before the client stopped reading", n)
				}
			}
		})
	}
}

// Issue 11 §1 and §3: with the default bounds, a host under each attack
// stays small. Each attack runs in a child process (this test binary
// again), whose peak RSS the kernel reports when it is reaped.
func TestHostileServersPeakRSS(t *testing.T) {
	if os.Getenv("AGT_MCPCONN_ATTACK") != "" {
		runAttackChild(t, os.Getenv("AGT_MCPCONN_ATTACK"))
		return
	}
	t.Parallel()
	names := []string{"endless listing"}
	for _, a := range endlessAttacks {
		names = append(names, a.name)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostileServersPeakRSS$", "-test.v")
			cmd.Env = append(os.Environ(), "AGT_MCPCONN_ATTACK="+name)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				t.Fatal("no rusage")
			}
			peak := ru.Maxrss << 10 // kB on Linux
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "ATTACK") {
					t.Log(strings.TrimSpace(line))
				}
			}
			t.Logf("%s: peak RSS %d MiB", name, peak>>20)
			// Unbounded, these took the host past 4 GB (a 610 MB peak for one
			// listing page); bounded, about 16 MiB is buffered at most twice.
			limit := int64(400 << 20)
			if raceBuild {
				limit = 1536 << 20
			}
			if peak > limit {
				t.Errorf("%s: peak RSS %d MiB; want under %d MiB", name, peak>>20, limit>>20)
			}
		})
	}
}

func runAttackChild(t *testing.T, name string) {
	var srv resource.MCPServer
	var listing bool
	if name == "endless listing" {
		srv, _ = fakeStdio(t, "-fault", string(mcptest.FaultEndlessListing))
		listing = true
	}
	for _, a := range endlessAttacks {
		if a.name == name {
			srv, _ = a.start(t)
		}
	}
	if srv.Type == "" {
		t.Fatalf("unknown attack %q", name)
	}
	srv.StartupTimeoutMS = 120_000
	srv.ToolTimeoutMS = 120_000
	start := time.Now()
	s, err := quickConnector(nil).Connect(context.Background(), "attack", srv, nil)
	if listing {
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Tools(context.Background())
		s.Close()
	} else if err == nil {
		s.Close()
	}
	if !errors.Is(err, mcpconn.ErrLimit) {
		t.Fatalf("ATTACK %s: %v; want ErrLimit", name, err)
	}
	var le *mcpconn.LimitError
	errors.As(err, &le)
	fmt.Printf("ATTACK %s: %s after %s\n", name, le.Error(), time.Since(start))
}

// Issue 11 §2: a server that redirects to another origin gets nothing
// there: not the registered headers, not even a request; the error names
// the origin and why. Within the origin, redirects are followed with the
// headers. An https server never continues over http.
func TestRedirectsStayOnOrigin(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer other.Close()
	redirector := func(to string) *httptest.Server {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to, http.StatusTemporaryRedirect)
		}))
		t.Cleanup(ts.Close)
		return ts
	}
	tlsRedirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer tlsRedirector.Close()
	headers := map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k3y"}

	for _, typ := range []string{resource.TransportHTTP, resource.TransportSSE} {
		for _, tt := range []struct {
			name string
			url  string
			opts *mcpconn.ConnectorOptions
			// origin is how the error names where the redirect led:
			// scheme://host:port, no path nor query (issue 23 item 12b).
			origin string
		}{
			{"another port", redirector(other.URL + "/mcp?k=v").URL, nil, other.URL},
			{"another host name", redirector(strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/mcp").URL, nil, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)},
			{"https to http", tlsRedirector.URL, &mcpconn.ConnectorOptions{HTTPTransport: tlsRedirector.Client().Transport}, other.URL},
		} {
			before := elsewhere.Load()
			_, err := quickConnector(tt.opts).Connect(context.Background(), "moved", resource.MCPServer{Type: typ, URL: tt.url, Headers: headers, StartupTimeoutMS: 20_000}, nil)
			if want := "another origin (" + tt.origin + "); the registered headers"; !errors.Is(err, mcpconn.ErrLimit) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, %s: Connect = %v; want the redirect refused with %q", typ, tt.name, err, want)
			}
			if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "k3y")) {
				t.Errorf("%s, %s: the error shows a header value: %v", typ, tt.name, err)
			}
			if n := elsewhere.Load() - before; n != 0 {
				t.Errorf("%s, %s: the other origin got %d requests", typ, tt.name, n)
			}
		}
	}

	// Within the origin: followed, headers included.
	for _, tt := range []struct {
		typ  string
		args []string
	}{{resource.TransportHTTP, nil}, {resource.TransportSSE, []string{"-sse"}}} {
		target := mcptest.StartHTTP(t, append([]string{"-require-header", "Authorization: Bearer s3cret"}, tt.args...)...)
		proxy := sameOriginRedirect(t, target)
		s, err := quickConnector(nil).Connect(context.Background(), "moved", resource.MCPServer{Type: tt.typ, URL: proxy + "/old", Headers: headers}, nil)
		if err != nil {
			t.Errorf("%s: a redirect within the origin: %v", tt.typ, err)
			continue
		}
		if _, err := s.Tools(context.Background()); err != nil {
			t.Errorf("%s: Tools after a redirect within the origin: %v", tt.typ, err)
		}
		s.Close()
	}
}

// sameOriginRedirect serves a proxy to target on its own origin that
// redirects /old to the target's path.
func sameOriginRedirect(t *testing.T, target string) string {
	t.Helper()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			return
		}
		to := target
		if r.URL.Path != "/new" {
			u, _ := url.Parse(target)
			to = u.Scheme + "://" + u.Host + r.URL.RequestURI()
		}
		forward(w, r, to)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// Issue 11 §2: an SSE server whose endpoint event names another origin
// gets no POST there.
func TestSSEEndpointOnAnotherOrigin(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer other.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprintf(w, "event: endpoint\ndata: %s/messages\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	_, err := quickConnector(nil).Connect(context.Background(), "sse", resource.MCPServer{Type: resource.TransportSSE, URL: ts.URL,
		Headers: map[string]string{"Authorization": "Bearer s3cret"}, StartupTimeoutMS: 20_000}, nil)
	if !errors.Is(err, mcpconn.ErrLimit) || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("Connect = %v; want the other origin refused", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
}

// Issue 11 §10: a server that floods notifications is closed as
// misbehaving with the bound named, soon, and costs the host little CPU
// afterwards. Not parallel: it measures this process's CPU.
func TestNotificationFloodClosesSession(t *testing.T) {
	streamable := hostileHTTP(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
		w.Header().Set("Content-Type", "text/event-stream")
		if method == "initialize" {
			_, _ = fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, initResult)
			return
		}
		note := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"flood\"}}\n\n")
		endless(w, r, bytes.Repeat(note, 64), 1<<30)
	})
	stdio, tag := fakeStdio(t, "-fault", string(mcptest.FaultNotificationFlood))
	for _, srv := range []resource.MCPServer{
		stdio,
		{Type: resource.TransportHTTP, URL: streamable.URL},
	} {
		t.Run(srv.Type, func(t *testing.T) {
			srv.ToolTimeoutMS = 60_000
			s, err := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxServerMessageRate: 100}}).Connect(context.Background(), "flood", srv, nil)
			if err != nil && !errors.Is(err, mcpconn.ErrLimit) {
				t.Fatal(err)
			}
			start := time.Now()
			if err == nil {
				_, err = s.CallTool(context.Background(), "anything", nil)
				defer s.Close()
			}
			if !errors.Is(err, mcpconn.ErrLimit) || !strings.Contains(err.Error(), "100 messages per second (ConnectorOptions.Limits.MaxServerMessageRate)") {
				t.Fatalf("call during a flood = %v; want ErrLimit naming MaxServerMessageRate", err)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("the flood was stopped after %s", d)
			}
			t.Logf("%s: flood stopped after %s", srv.Type, time.Since(start))
			cpu0, wall0 := selfNow(), time.Now()
			time.Sleep(time.Second)
			if used := selfNow() - cpu0; used > time.Since(wall0)/2 {
				t.Errorf("after the flood was stopped the host used %s CPU in %s", used, time.Since(wall0))
			}
			if err == nil || s == nil {
				return
			}
			if _, err := s.Tools(context.Background()); !errors.Is(err, mcpconn.ErrLimit) || !errors.Is(err, mcpconn.ErrUnavailable) {
				t.Errorf("Tools after the flood = %v; want the session ended", err)
			}
		})
	}
	assertNoLeftovers(t, tag)
}

// Issue 11 §3: a listing is bounded while it is read: a page of 140,000
// tiny tools fails on its count before it is decoded, and pages that never
// end fail on the listing's bytes.
func TestEndlessListingIsBounded(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts *mcpconn.ConnectorOptions
		want string
	}{
		{"tools", nil, "exceeds 10000 tools (ConnectorOptions.Limits.MaxTools)"},
		// Small pages (-page-size) that never end.
		{"bytes", &mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxTools: 10_000_000, MaxListBytes: 1 << 20}}, "exceeds 1048576 bytes (ConnectorOptions.Limits.MaxListBytes)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"-fault", string(mcptest.FaultEndlessListing)}
			if tt.name == "bytes" {
				args = append(args, "-page-size", "1000")
			}
			srv, tag := fakeStdio(t, args...)
			srv.ToolTimeoutMS = 120_000
			s, err := quickConnector(tt.opts).Connect(context.Background(), "listing", srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = s.Tools(context.Background())
			s.Close()
			if !errors.Is(err, mcpconn.ErrLimit) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Tools = %v; want %q", err, tt.want)
			}
			t.Logf("%s: error after %s", tt.name, time.Since(start))
			assertNoLeftovers(t, tag)
		})
	}
}

// forward passes r on to the URL to and streams the answer back, event by
// event: a proxy on an origin of its own.
func forward(w http.ResponseWriter, r *http.Request, to string) {
	resp := relay(w, r, to)
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

// relay passes r on to the URL to and writes the answer's status and
// headers to w, for the caller to stream its body back; nil when the
// request failed (w then has 502 Bad Gateway).
func relay(w http.ResponseWriter, r *http.Request, to string) *http.Response {
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, to, r.Body)
	req.Header, req.ContentLength = r.Header.Clone(), r.ContentLength
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return nil
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	return resp
}

// hostileContentServers are the fake server's hostile-content fault over
// stdio and over streamable HTTP, its answers as events or as JSON bodies.
var hostileContentServers = []struct {
	name string
	srv  func(t *testing.T) resource.MCPServer
}{
	{"stdio", func(t *testing.T) resource.MCPServer {
		srv, _ := fakeStdio(t, "-fault", string(mcptest.FaultHostileContent))
		return srv
	}},
	{"http events", func(t *testing.T) resource.MCPServer {
		return resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, "-fault", string(mcptest.FaultHostileContent))}
	}},
	{"http json", func(t *testing.T) resource.MCPServer {
		return resource.MCPServer{Type: resource.TransportHTTP,
			URL: mcptest.StartHTTP(t, "-fault", string(mcptest.FaultHostileContent), "-json-response")}
	}},
	// Issue 25: the same bounds in the modern era.
	{"stdio modern", func(t *testing.T) resource.MCPServer {
		srv, _ := fakeStdio(t, "-fault", string(mcptest.FaultHostileContent), "-era", string(mcptest.EraModern))
		return srv
	}},
	{"http events modern", func(t *testing.T) resource.MCPServer {
		return resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, "-fault", string(mcptest.FaultHostileContent), "-era", string(mcptest.EraModern))}
	}},
}

// Issue 23 item 10: hostile content costs the one tool or call it is in,
// never the listing or the session. A tool with an outputSchema 1001 deep
// is left out of its listing with the reason, the other 24 are offered
// (before: the listing failed, 0 of 25, and the session was lost); a
// result 100,000 deep fails its call with ErrBadResult and ErrLimit, and
// an error answer with a null id (it answers no request) is dropped and
// logged, or, as a JSON body, fails the request it answered (before:
// either ended the session, and every call after it failed). Each attack
// meets a session of its own; the next call on it works, and the session
// is not lost.
func TestHostileContentKeepsTheSession(t *testing.T) {
	t.Parallel()
	attacks := []struct {
		name string
		run  func(t *testing.T, s *mcpconn.Session, srv resource.MCPServer, transport string, logged *lockedBuffer)
	}{
		{"deep outputSchema", func(t *testing.T, s *mcpconn.Session, srv resource.MCPServer, _ string, _ *lockedBuffer) {
			tools, err := s.Tools(context.Background())
			if err != nil {
				t.Fatalf("Tools = %v; want the listing", err)
			}
			loaded, _ := mcpconn.NewConnector(nil).LoadTools(tools, srv, nil)
			var usable []string
			for _, lt := range loaded {
				switch {
				case lt.Err == nil:
					usable = append(usable, lt.Name)
				case lt.Name != mcptest.ToolDeepOutputSchema || !errors.Is(lt.Err, mcpconn.ErrLimit) || !strings.Contains(lt.Err.Error(), "MaxMessageDepth"):
					t.Errorf("tool %q left out: %v", lt.Name, lt.Err)
				}
			}
			if len(loaded) != mcptest.HostileContentTools || len(usable) != mcptest.HostileContentTools-1 || loaded[3].Name != mcptest.ToolDeepOutputSchema {
				t.Errorf("listed %d tools, %d usable; want %d listed in the server's order, all but %s usable",
					len(loaded), len(usable), mcptest.HostileContentTools, mcptest.ToolDeepOutputSchema)
			}
		}},
		{"deep result", func(t *testing.T, s *mcpconn.Session, _ resource.MCPServer, _ string, _ *lockedBuffer) {
			_, err := s.CallTool(context.Background(), mcptest.ToolDeepResult, nil)
			if !errors.Is(err, mcpconn.ErrBadResult) || !errors.Is(err, mcpconn.ErrLimit) || errors.Is(err, mcpconn.ErrUnavailable) ||
				!strings.Contains(err.Error(), "MaxMessageDepth") {
				t.Errorf("a result %d deep = %v; want ErrBadResult and ErrLimit naming MaxMessageDepth", mcptest.DeepResultLevels, err)
			}
		}},
		{"null id", func(t *testing.T, s *mcpconn.Session, _ resource.MCPServer, transport string, logged *lockedBuffer) {
			res, err := s.CallTool(context.Background(), mcptest.ToolNullIDError, nil)
			if transport == "http json" {
				// The body was the answer to the call: it fails, alone.
				if !errors.Is(err, mcpconn.ErrBadResult) || errors.Is(err, mcpconn.ErrUnavailable) {
					t.Errorf("a JSON body with a null id = %+v, %v; want ErrBadResult", res, err)
				}
				return
			}
			if err != nil || res.Text() != "ok" {
				t.Errorf("a call whose server sent an error with a null id first = %+v, %v; want its result", res, err)
			}
			// The drop is logged (read before the call's result), without
			// the server's data.
			if !strings.Contains(logged.String(), `"msg":"agt.server_message_dropped","mount":"hostile","reason":"a response that names no request`) ||
				strings.Contains(logged.String(), "Parse error") {
				t.Errorf("the log = %s; want the drop, without the server's data", logged.String())
			}
		}},
	}
	for _, tt := range hostileContentServers {
		for _, a := range attacks {
			t.Run(tt.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				var logged lockedBuffer
				srv := tt.srv(t)
				s, err := quickConnector(&mcpconn.ConnectorOptions{Logger: slog.New(slog.NewJSONHandler(&logged, nil))}).
					Connect(context.Background(), "hostile", srv, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				a.run(t, s, srv, tt.name, &logged)
				if res, err := s.CallTool(context.Background(), mcptest.ToolPlain, nil); err != nil || res.Text() != "ok" {
					t.Errorf("the next call = %+v, %v; want ok on the same session", res, err)
				}
				if s.Lost() {
					t.Error("the session is lost")
				}
			})
		}
	}
}
