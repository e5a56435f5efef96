package mcpconn_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
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

// wireLog keeps every line the client wrote to a scripted server.
type wireLog struct {
	mu    sync.Mutex
	lines []string
}

func (w *wireLog) add(l string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, l)
}

// callParams returns the params of each tools/call request on the wire.
func (w *wireLog) callParams(t *testing.T) []json.RawMessage {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []json.RawMessage
	for _, l := range w.lines {
		var msg struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Fatalf("a line on the wire is not JSON: %v", err)
		}
		if msg.Method == "tools/call" {
			out = append(out, msg.Params)
		}
	}
	return out
}

// teeDial serves script over pipes and logs every line the client sends,
// exactly as written.
func teeDial(script *scriptedServer, log *wireLog) func(context.Context, resource.Ref, resource.MCPServer) (mcp.Transport, error) {
	return func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
		toServerR, toServerW := io.Pipe()
		toClientR, toClientW := io.Pipe()
		teeR, teeW := io.Pipe()
		go func() {
			defer teeW.Close()
			sc := bufio.NewScanner(toServerR)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				log.add(sc.Text())
				if _, err := io.WriteString(teeW, sc.Text()+"\n"); err != nil {
					_ = toServerR.CloseWithError(err)
					return
				}
			}
		}()
		go script.serve(teeR, toClientW)
		return &mcp.IOTransport{Reader: toClientR, Writer: toServerW}, nil
	}
}

// The fields of WithRequestMeta reach the server in params._meta of the
// tools/call request (the go-sdk's Meta is serialized as "_meta"), beside
// agt's own progressToken, which they never replace; invalid and reserved
// keys are dropped, and a later WithRequestMeta replaces a key's value.
func TestCallToolRequestMetaOnTheWire(t *testing.T) {
	t.Parallel()
	script := &scriptedServer{answer: func(method string, id json.RawMessage, n int) []string {
		return []string{result(id, `{"content":[{"type":"text","text":"ok"}]}`)}
	}}
	log := &wireLog{}
	s, err := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: teeDial(script, log)}).Connect(context.Background(), "meta", resource.MCPServer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	ctx := mcpconn.WithRequestMeta(context.Background(), map[string]string{
		"traceparent":               "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"tracestate":                "old=1",
		"com.example/tenant":        "t1",
		"progressToken":             "stolen",   // agt's own key
		"io.modelcontextprotocol/x": "reserved", // second label reserved for MCP
		"dev.mcp/y":                 "reserved", // likewise
		// Reserved by the 2025-06-18 rule (the label after any number of
		// labels, followed by one more), which servers of that revision
		// still apply: its own examples.
		"modelcontextprotocol.io/a":    "reserved",
		"mcp.dev/b":                    "reserved",
		"tools.mcp.com/c":              "reserved",
		"a.b.MCP.example/d":            "reserved",
		"com.example.mcp/not-reserved": "ok",         // mcp last: reserved by neither revision
		"bad key":                      "no spaces",  // not a valid name
		"-dash":                        "bad start",  // a name starts with a letter or digit
		"1abc/name":                    "bad label",  // a label starts with a letter
		"com.example/":                 "empty name", // refused: nothing to tell apart
	})
	ctx = mcpconn.WithRequestMeta(ctx, map[string]string{"tracestate": "rojo=00f067aa0ba902b7"})
	if _, err := s.CallTool(ctx, "t", json.RawMessage(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	// A call without the fields carries only its progress token.
	if _, err := s.CallTool(context.Background(), "t", nil); err != nil {
		t.Fatal(err)
	}

	params := log.callParams(t)
	if len(params) != 2 {
		t.Fatalf("%d tools/call requests on the wire, want 2", len(params))
	}
	var metas []map[string]any
	for _, p := range params {
		var got struct {
			Meta map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(p, &got); err != nil {
			t.Fatal(err)
		}
		metas = append(metas, got.Meta)
	}
	for i, m := range metas {
		tok, ok := m["progressToken"]
		if !ok || tok == "stolen" {
			t.Errorf("request %d: progressToken = %v, want agt's own", i, tok)
		}
		delete(m, "progressToken")
	}
	want := []map[string]any{{
		"traceparent":                  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"tracestate":                   "rojo=00f067aa0ba902b7",
		"com.example/tenant":           "t1",
		"com.example.mcp/not-reserved": "ok",
	}, {}}
	if diff := cmp.Diff(want, metas); diff != "" {
		t.Errorf("_meta on the wire (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(params[0]), `"_meta":{`) {
		t.Errorf("params do not name the field _meta: %s", params[0])
	}
}

// The fields are bounded: at most MaxRequestMetaKeys keys, in key order,
// and at most MaxRequestMetaBytes of keys and values; a field past the
// byte bound is dropped and a smaller one after it still fits.
func TestCallToolRequestMetaBounds(t *testing.T) {
	t.Parallel()
	script := &scriptedServer{answer: func(method string, id json.RawMessage, n int) []string {
		return []string{result(id, `{"content":[]}`)}
	}}
	log := &wireLog{}
	s, err := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: teeDial(script, log)}).Connect(context.Background(), "meta", resource.MCPServer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	many := map[string]string{}
	for i := range 40 {
		many["k"+string(rune('a'+i/26))+string(rune('a'+i%26))] = "v"
	}
	big := map[string]string{
		"a1": strings.Repeat("x", mcpconn.MaxRequestMetaBytes-100), // fits
		"a2": strings.Repeat("y", 200),                             // past the bound with a1: dropped
		"a3": strings.Repeat("z", 50),                              // still fits
	}
	for _, tc := range []struct {
		name string
		meta map[string]string
		want []string // the keys kept
	}{
		{"keys", many, []string{"kaa", "kab", "kac", "kad", "kae", "kaf", "kag", "kah", "kai", "kaj", "kak", "kal", "kam", "kan", "kao", "kap"}},
		{"bytes", big, []string{"a1", "a3"}},
	} {
		before := len(log.callParams(t))
		if _, err := s.CallTool(mcpconn.WithRequestMeta(context.Background(), tc.meta), "t", nil); err != nil {
			t.Fatal(err)
		}
		params := log.callParams(t)
		if len(params) != before+1 {
			t.Fatalf("%s: no new tools/call request", tc.name)
		}
		var got struct {
			Meta map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(params[before], &got); err != nil {
			t.Fatal(err)
		}
		var keys []string
		size := 0
		for k, v := range got.Meta {
			if k == "progressToken" {
				continue
			}
			keys = append(keys, k)
			size += len(k) + len(v.(string))
			if v != tc.meta[k] {
				t.Errorf("%s: %s changed on the way", tc.name, k)
			}
		}
		if len(keys) > mcpconn.MaxRequestMetaKeys || size > mcpconn.MaxRequestMetaBytes {
			t.Errorf("%s: %d keys of %d bytes, past the bounds", tc.name, len(keys), size)
		}
		slices.Sort(keys)
		if diff := cmp.Diff(tc.want, keys); diff != "" {
			t.Errorf("%s: keys kept (-want +got):\n%s", tc.name, diff)
		}
	}
}

// The fields change nothing else of a call on any transport: the result
// is still read from the wire bytes of the request's own answer (on
// streamable HTTP the capture reads the request's id at the head of the
// POST body, before the params with their _meta).
func TestCallToolRequestMetaEveryTransport(t *testing.T) {
	t.Parallel()
	stdio, _ := fakeStdio(t)
	for _, tc := range []struct {
		name string
		conn *mcpconn.Connector
		srv  resource.MCPServer
	}{
		{"stdio", quickConnector(nil), stdio},
		{"streamable HTTP", mcpconn.NewConnector(nil), resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t)}},
		{"SSE", mcpconn.NewConnector(nil), resource.MCPServer{Type: resource.TransportSSE, URL: mcptest.StartHTTP(t, "-sse")}},
	} {
		s, err := tc.conn.Connect(context.Background(), "meta", tc.srv, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ctx := mcpconn.WithRequestMeta(context.Background(), map[string]string{
			"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			"tracestate":  strings.Repeat("v", 2000),
		})
		res, err := s.CallTool(ctx, mcptest.ToolEcho, json.RawMessage(`{"text":"hi"}`))
		s.Close()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		} else if res.IsError || resultText(res) != "hi" {
			t.Errorf("%s: isError %v, text %q; want the echo", tc.name, res.IsError, resultText(res))
		}
	}
}
