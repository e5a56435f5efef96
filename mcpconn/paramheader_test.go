package mcpconn_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
)

// paramHeaderArgs are arguments of mcptest.ToolParamHeaders with a value
// for every annotated parameter (one nested, one not plain ASCII) and
// one that is not annotated.
const paramHeaderArgs = `{"region":"us-west1","priority":42,"verbose":false,"target":{"tenant":"Grüße"},"note":"not mirrored"}`

// wantParamHeaders are the headers of paramHeaderArgs (MCP 2026-07-28,
// transports: Value Encoding).
var wantParamHeaders = `{"mcp-param-priority":"42","mcp-param-region":"us-west1","mcp-param-tenant":"=?base64?` +
	base64.StdEncoding.EncodeToString([]byte("Grüße")) + `?=","mcp-param-verbose":"false"}`

// Issue 25 item 3: over streamable HTTP in the modern era a call carries
// the Mcp-Param-* headers of its tool's x-mcp-header annotations, and the
// go-sdk's stateless server, which refuses a call whose headers are
// missing or differ, runs it; in the legacy era, and on stdio, no such
// header is sent and the tool works all the same. In every era the tools
// whose annotations break the spec's constraints are left out with the
// reason, like a tool with a bad schema.
func TestParamHeadersEras(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		era       mcptest.Era
		want      string
	}{
		{resource.TransportHTTP, mcptest.EraModern, wantParamHeaders},
		{resource.TransportHTTP, mcptest.EraDual, wantParamHeaders},
		{resource.TransportHTTP, mcptest.EraLegacy, `{}`},
		{resource.TransportStdio, mcptest.EraModern, `{}`},
		{resource.TransportStdio, mcptest.EraLegacy, `{}`},
	} {
		t.Run(tc.transport+"/"+string(tc.era), func(t *testing.T) {
			t.Parallel()
			srv := eraServer(t, tc.transport, tc.era, "-fault", string(mcptest.FaultParamHeaders))
			s := connectFake(t, srv)
			ctx := context.Background()
			tools, err := s.Tools(ctx)
			if err != nil {
				t.Fatalf("Tools: %v", err)
			}
			loaded, _ := mcpconn.NewConnector(nil).LoadTools(tools, srv, nil)
			reasons := map[string]string{}
			usable := false
			for _, lt := range loaded {
				switch {
				case lt.Name == mcptest.ToolParamHeaders:
					usable = lt.Err == nil
				case lt.Err != nil:
					reasons[lt.Name] = lt.Err.Error()
				}
			}
			if !usable {
				t.Errorf("%s is not usable", mcptest.ToolParamHeaders)
			}
			for name := range mcptest.BadParamHeaderTools {
				if !strings.Contains(reasons[name], "x-mcp-header") {
					t.Errorf("%s: reason %q, want it left out for its x-mcp-header annotations", name, reasons[name])
				}
			}
			res, err := s.CallTool(ctx, mcptest.ToolParamHeaders, json.RawMessage(paramHeaderArgs))
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if diff := cmp.Diff(tc.want, resultText(res)); diff != "" {
				t.Errorf("headers the server got (-want +got):\n%s", diff)
			}
		})
	}
}

// recording is one request a recordingServer got.
type recording struct {
	method string // the HTTP method
	rpc    string // the JSON-RPC method of a POST's body
	header http.Header
}

// recordingServer serves server over streamable HTTP on loopback,
// statelessly, as a modern server does, and records every request; with
// mint, every answer carries an Mcp-Session-Id, as a careless modern
// server's might.
type recordingServer struct {
	URL  string
	mu   sync.Mutex
	reqs []recording
}

func newRecordingServer(t *testing.T, server *mcp.Server, mint bool) *recordingServer {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	rs := &recordingServer{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := recording{method: r.Method, header: r.Header.Clone()}
		if r.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			rec.rpc = m.Method
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rs.mu.Lock()
		rs.reqs = append(rs.reqs, rec)
		rs.mu.Unlock()
		if mint {
			w.Header().Set("Mcp-Session-Id", "minted-by-a-careless-server")
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	rs.URL = ts.URL
	return rs
}

// calls returns the recorded tools/call requests.
func (rs *recordingServer) calls() []recording {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []recording
	for _, r := range rs.reqs {
		if r.rpc == "tools/call" {
			out = append(out, r)
		}
	}
	return out
}

func (rs *recordingServer) all() []recording {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.reqs)
}

// modernFake is the fake server of the modern era with the param-headers
// tools.
func modernFake() *mcp.Server {
	return mcptest.NewServer(&mcptest.ServerOptions{Era: mcptest.EraModern, Faults: []mcptest.Fault{mcptest.FaultParamHeaders}})
}

// connectListed connects to url with the registration's headers, and lists.
func connectListed(t *testing.T, url string, headers map[string]string) (*mcpconn.Session, resource.MCPServer) {
	t.Helper()
	srv := resource.MCPServer{Type: resource.TransportHTTP, URL: url + "/mcp", Headers: headers, StartupTimeoutMS: 20000}
	s := connectFake(t, srv)
	if s.ProtocolVersion() != mcpconn.ModernProtocolVersion {
		t.Fatalf("ProtocolVersion = %q, want the modern one", s.ProtocolVersion())
	}
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatalf("Tools: %v", err)
	}
	return s, srv
}

// Issue 25 item 3: argument values in Mcp-Param-* headers are bounded,
// never carry CR or LF, never replace a header of the registration, and
// never appear in an error.
func TestParamHeadersHostileValues(t *testing.T) {
	t.Parallel()
	const marker = "MARKER-of-the-argument"
	t.Run("CR and LF are Base64-encoded, no header is injected", func(t *testing.T) {
		t.Parallel()
		rs := newRecordingServer(t, modernFake(), false)
		s, _ := connectListed(t, rs.URL, nil)
		value := "us-west1\r\nX-Injected: " + marker
		args, _ := json.Marshal(map[string]string{"region": value})
		res, err := s.CallTool(context.Background(), mcptest.ToolParamHeaders, args)
		if err != nil {
			t.Fatalf("CallTool: %v (the server checks the header against the body)", err)
		}
		want := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(value)) + "?="
		if got := resultText(res); !strings.Contains(got, want) {
			t.Errorf("headers = %s, want Mcp-Param-Region %s", got, want)
		}
		for _, r := range rs.all() {
			if r.header.Get("X-Injected") != "" {
				t.Errorf("a request carries the injected header: %v", r.header)
			}
		}
	})
	t.Run("a value past the bound is refused before sending, without the value", func(t *testing.T) {
		t.Parallel()
		rs := newRecordingServer(t, modernFake(), false)
		s, _ := connectListed(t, rs.URL, nil)
		args, _ := json.Marshal(map[string]string{"region": marker + strings.Repeat("a", 8<<10)})
		_, err := s.CallTool(context.Background(), mcptest.ToolParamHeaders, args)
		var ae *toolschema.ArgumentError
		if !errors.As(err, &ae) || len(ae.Violations) != 1 || ae.Violations[0].Path != "/region" {
			t.Fatalf("error = %v, want an ArgumentError on /region", err)
		}
		if strings.Contains(err.Error(), marker) {
			t.Errorf("the error carries the value: %v", err)
		}
		if n := len(rs.calls()); n != 0 {
			t.Errorf("the server got %d tools/call requests, want none", n)
		}
		// Just under the bound it is sent (8 KiB for the names and
		// values of all the call's Mcp-Param-* headers).
		args, _ = json.Marshal(map[string]string{"region": strings.Repeat("a", 8<<10-len("Mcp-Param-Region"))})
		if _, err := s.CallTool(context.Background(), mcptest.ToolParamHeaders, args); err != nil {
			t.Errorf("CallTool at the bound: %v", err)
		}
	})
	t.Run("an integer outside the safe range is refused before sending", func(t *testing.T) {
		t.Parallel()
		rs := newRecordingServer(t, modernFake(), false)
		s, _ := connectListed(t, rs.URL, nil)
		_, err := s.CallTool(context.Background(), mcptest.ToolParamHeaders, json.RawMessage(`{"region":"r","priority":9007199254740993}`))
		var ae *toolschema.ArgumentError
		if !errors.As(err, &ae) || ae.Violations[0].Path != "/priority" {
			t.Fatalf("error = %v, want an ArgumentError on /priority", err)
		}
		if strings.Contains(err.Error(), "9007199254740993") {
			t.Errorf("the error carries the value: %v", err)
		}
		if n := len(rs.calls()); n != 0 {
			t.Errorf("the server got %d tools/call requests, want none", n)
		}
	})
	t.Run("a header the registration sets is never replaced", func(t *testing.T) {
		t.Parallel()
		rs := newRecordingServer(t, modernFake(), false)
		s, srv := connectListed(t, rs.URL, map[string]string{"mcp-param-region": "from-the-registration"})
		tools, err := s.Tools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		loaded, _ := mcpconn.NewConnector(nil).LoadTools(tools, srv, nil)
		for _, lt := range loaded {
			if lt.Name == mcptest.ToolParamHeaders && (lt.Err == nil || !strings.Contains(lt.Err.Error(), "registration")) {
				t.Errorf("%s: Err = %v, want it left out: the registration sets its header", lt.Name, lt.Err)
			}
		}
		// A host that calls it anyway: the registration's value goes, the
		// server refuses the mismatch, and no error shows the argument.
		args, _ := json.Marshal(map[string]string{"region": marker})
		_, err = s.CallTool(context.Background(), mcptest.ToolParamHeaders, args)
		if err == nil || strings.Contains(err.Error(), marker) {
			t.Errorf("error = %v, want the server's refusal without the argument", err)
		}
		calls := rs.calls()
		if len(calls) == 0 {
			t.Fatal("no tools/call request was sent")
		}
		for _, r := range calls {
			if got := r.header.Values("Mcp-Param-Region"); !slices.Equal(got, []string{"from-the-registration"}) {
				t.Errorf("Mcp-Param-Region = %q, want only the registration's value", got)
			}
		}
	})
	t.Run("an annotation named Authorization never replaces Authorization", func(t *testing.T) {
		t.Parallel()
		server := mcp.NewServer(&mcp.Implementation{Name: "authz", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{mcpconn.ModernProtocolVersion}})
		server.AddTool(&mcp.Tool{Name: "authz", InputSchema: json.RawMessage(`{"type":"object","properties":{"auth":{"type":"string","x-mcp-header":"Authorization"}}}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		rs := newRecordingServer(t, server, false)
		s, _ := connectListed(t, rs.URL, map[string]string{"Authorization": "Bearer registration-token"})
		args, _ := json.Marshal(map[string]string{"auth": "Bearer " + marker})
		if _, err := s.CallTool(context.Background(), "authz", args); err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		calls := rs.calls()
		if len(calls) != 1 {
			t.Fatalf("%d tools/call requests, want 1", len(calls))
		}
		h := calls[0].header
		if got := h.Values("Authorization"); !slices.Equal(got, []string{"Bearer registration-token"}) {
			t.Errorf("Authorization = %q, want the registration's only", got)
		}
		if got := h.Get("Mcp-Param-Authorization"); got != "Bearer "+marker {
			t.Errorf("Mcp-Param-Authorization = %q, want the argument", got)
		}
	})
}

// Issue 25 item 3: the modern era has no sessions and no resumable
// streams: agt sends no Mcp-Session-Id (not even one a server mints), no
// GET or DELETE, no Last-Event-ID; every POST carries the protocol
// version, Mcp-Method, and for a call Mcp-Name, Base64-encoded when the
// name is not plain ASCII.
func TestModernHTTPNoSession(t *testing.T) {
	t.Parallel()
	const name = "grüße"
	server := mcptest.NewServer(&mcptest.ServerOptions{Era: mcptest.EraModern, Faults: []mcptest.Fault{mcptest.FaultParamHeaders}})
	server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	rs := newRecordingServer(t, server, true)
	s, _ := connectListed(t, rs.URL, nil)
	ctx := context.Background()
	for range 2 {
		if _, err := s.CallTool(ctx, mcptest.ToolParamHeaders, json.RawMessage(paramHeaderArgs)); err != nil {
			t.Fatalf("CallTool: %v", err)
		}
	}
	// The go-sdk's server compares Mcp-Name with the body without decoding
	// it (the spec says servers must decode): only the header is checked.
	_, _ = s.CallTool(ctx, name, nil)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	reqs := rs.all()
	sawName := false
	for _, r := range reqs {
		if r.method != http.MethodPost {
			t.Errorf("a %s request was sent", r.method)
			continue
		}
		for _, h := range []string{"Mcp-Session-Id", "Last-Event-Id"} {
			if v := r.header.Get(h); v != "" {
				t.Errorf("%s request carries %s %q", r.rpc, h, v)
			}
		}
		if r.rpc == "" {
			continue // a notification's own header rules are not defined
		}
		if got := r.header.Get("Mcp-Protocol-Version"); got != mcpconn.ModernProtocolVersion {
			t.Errorf("%s: MCP-Protocol-Version = %q", r.rpc, got)
		}
		if got := r.header.Get("Mcp-Method"); got != r.rpc {
			t.Errorf("%s: Mcp-Method = %q", r.rpc, got)
		}
		if r.rpc == "tools/call" {
			switch got := r.header.Get("Mcp-Name"); got {
			case mcptest.ToolParamHeaders:
			case "=?base64?" + base64.StdEncoding.EncodeToString([]byte(name)) + "?=":
				sawName = true
			default:
				t.Errorf("tools/call: Mcp-Name = %q", got)
			}
		}
	}
	if !sawName {
		t.Errorf("no call of %q was sent with its Base64-encoded Mcp-Name", name)
	}
}

// Issue 25 item 3: the headers are right on a session that never listed
// (a host that calls straight away) and after the tool changed: the
// server refuses with HeaderMismatch, agt lists again and sends the call
// once more with the headers of the new listing.
func TestParamHeadersNeverListed(t *testing.T) {
	t.Parallel()
	rs := newRecordingServer(t, modernFake(), false)
	srv := resource.MCPServer{Type: resource.TransportHTTP, URL: rs.URL + "/mcp", StartupTimeoutMS: 20000}
	s := connectFake(t, srv)
	ctx := context.Background()
	res, err := s.CallTool(ctx, mcptest.ToolParamHeaders, json.RawMessage(paramHeaderArgs))
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if diff := cmp.Diff(wantParamHeaders, resultText(res)); diff != "" {
		t.Errorf("headers the server got (-want +got):\n%s", diff)
	}
	var rpcs []string
	for _, r := range rs.all() {
		rpcs = append(rpcs, r.rpc)
	}
	if diff := cmp.Diff([]string{"server/discover", "tools/call", "tools/list", "tools/call"}, rpcs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
