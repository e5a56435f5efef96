package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// deepJSON is an array nested n levels deep.
func deepJSON(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// testScreen is a screen over a fresh capture with one call in flight
// whose request has the id 5, and a listing waiting for the page of
// request 9; logs holds what it logged.
func testScreen(t *testing.T) (s *messageScreen, call *inflightCall, logs *bytes.Buffer) {
	t.Helper()
	logs = &bytes.Buffer{}
	c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
	c.calls = &inflightCalls{}
	ctx, call := c.calls.begin(context.Background(), nil)
	t.Cleanup(func() { c.calls.end(call) })
	c.callWritten(ctx, "n5")
	c.request("n9")
	return &messageScreen{ref: "r", capture: c, guard: testGuard(), logger: slog.New(slog.NewTextHandler(logs, nil))}, call, logs
}

// Issue 23 item 10: what the screen hands the go-sdk for each kind of
// message. Whatever it changes, the go-sdk's decoder reads; what it drops
// is logged without the server's data.
func TestScreenDecides(t *testing.T) {
	t.Parallel()
	deepResult := `{"jsonrpc":"2.0","id":5,"result":{"structuredContent":` + deepJSON(maxMessageDepth) + `}}`
	atBound := `{"jsonrpc":"2.0","id":5,"result":{"a":` + deepJSON(maxMessageDepth-2) + `}}`
	for _, tt := range []struct {
		name, msg string
		want      string // "" passes msg unchanged; "drop" drops it
		refused   bool   // the call with id 5 fails (ErrBadResult)
	}{
		{name: "result", msg: `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`},
		{name: "notification", msg: `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`},
		{name: "request with a string id", msg: `{"jsonrpc":"2.0","id":"a","method":"ping"}`},
		{name: "error answer", msg: `{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"m"}}`},
		{name: "id with an escape, read by the decoder", msg: `{"jsonrpc":"2.0","id":"a\"b","result":{}}`},
		{name: "a request's float id, read by the decoder", msg: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`},
		{name: "not JSON", msg: `Server starting`},
		{name: "malformed", msg: `{"jsonrpc":"2.0","id":5,`},
		{name: "nested exactly to the bound", msg: atBound},
		{name: "batch", msg: `[{"jsonrpc":"2.0","id":5,"result":{}}]`},
		{name: "deep result of a call", msg: deepResult, want: `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`, refused: true},
		{name: "deep answer to no call", msg: `{"jsonrpc":"2.0","id":6,"result":` + deepJSON(maxMessageDepth) + `}`,
			want: `{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"mcpconn: the answer was not read: the nesting of the server's answer exceeds 1000 levels (MaxMessageDepth (fixed))"}}`},
		{name: "error that is not an object", msg: `{"jsonrpc":"2.0","id":5,"error":"boom"}`,
			want: `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`, refused: true},
		{name: "null id", msg: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, want: "drop"},
		{name: "no id", msg: `{"jsonrpc":"2.0","result":{}}`, want: "drop"},
		{name: "object id", msg: `{"jsonrpc":"2.0","id":{"a":1},"result":{}}`, want: "drop"},
		{name: "other version", msg: `{"jsonrpc":"1.0","method":"ping","id":1}`, want: "drop"},
		{name: "deep notification", msg: `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":` + deepJSON(maxMessageDepth) + `}}`, want: "drop"},
		{name: "deep batch", msg: `[` + deepResult + `]`, want: "drop"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, call, logs := testScreen(t)
			out, changed, err := s.screen([]byte(tt.msg), nil)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && (changed || string(out) != tt.msg):
				t.Errorf("screen = %.200s, %v; want the message unchanged", out, changed)
			case tt.want == "drop" && (out != nil || !changed || !strings.Contains(logs.String(), "agt.server_message_dropped")):
				t.Errorf("screen = %.200s, %v, log %q; want it dropped and logged", out, changed, logs.String())
			case tt.want != "" && tt.want != "drop" && string(out) != tt.want:
				t.Errorf("screen = %s\nwant     %s", out, tt.want)
			}
			if changed && out != nil {
				if _, err := jsonrpc.DecodeMessage(out); err != nil {
					t.Errorf("the go-sdk cannot read what the screen gives it: %v", err)
				}
			}
			if strings.Contains(logs.String(), "Parse error") {
				t.Errorf("the log holds the server's data: %s", logs.String())
			}
			rerr := call.refusal()
			if got := rerr != nil; got != tt.refused {
				t.Errorf("call refused: %v (%v), want %v", got, rerr, tt.refused)
			}
		})
	}
}

// A JSON body answers the request it was the response to: one that names
// no request fails that request, the call's with ErrBadResult.
func TestScreenAttributesAJSONBody(t *testing.T) {
	t.Parallel()
	s, call, logs := testScreen(t)
	out, changed, err := s.screen([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`),
		func() json.RawMessage { return json.RawMessage("5") })
	if err != nil || !changed || string(out) != `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}` {
		t.Errorf("screen = %s, %v, %v", out, changed, err)
	}
	if rerr := call.refusal(); rerr == nil || errors.Is(rerr, ErrLimit) {
		t.Errorf("call refused with %v; want a malformed answer", rerr)
	}
	if logs.Len() != 0 {
		t.Errorf("logged %q; an answer that fails its request is not a drop", logs.String())
	}
}

// A listing page too deep for the go-sdk loses only its tools too deep
// for it, each at its place, named, and counted for the walk; a page
// still too deep without them is refused with the bound.
func TestScreenCutsAListing(t *testing.T) {
	t.Parallel()
	tool := func(name string, levels int) string {
		return `{"name":"` + name + `","inputSchema":{"type":"object"},"outputSchema":{"a":` + deepJSON(levels) + `}}`
	}
	fits := maxMessageDepth - listingLevels - 2 // the tool object and outputSchema take two levels
	page := `{"jsonrpc":"2.0","id":9,"result":{"tools":[` + tool("a", 1) + `,` + tool("deep", fits+1) + `,` + tool("b", fits) +
		`,` + tool("deeper", 5000) + `],"nextCursor":"c"}}`
	s, _, _ := testScreen(t)
	out, changed, err := s.screen([]byte(page), nil)
	if err != nil || !changed {
		t.Fatalf("screen = %.100s, %v, %v", out, changed, err)
	}
	want := `{"jsonrpc":"2.0","id":9,"result":{"tools":[` + tool("a", 1) + `,null,` + tool("b", fits) + `,null],"nextCursor":"c"}}`
	if string(out) != want {
		t.Errorf("screen = %.300s...\nwant     %.300s...", out, want)
	}
	if _, err := jsonrpc.DecodeMessage(out); err != nil {
		t.Errorf("the go-sdk cannot read the page: %v", err)
	}
	if le := s.capture.response("n9", json.RawMessage(`{"tools":[1,null,3,null],"nextCursor":"c"}`)); le != nil {
		t.Fatal(le)
	}
	_, cuts := s.capture.take()
	if diff := cmp.Diff([]cutTool{{index: 1, name: "deep"}, {index: 3, name: "deeper"}}, cuts, cmp.AllowUnexported(cutTool{})); diff != "" {
		t.Errorf("cut tools (-want +got):\n%s", diff)
	}
	if n := s.capture.walkBytes; n < len(tool("deeper", 5000)) {
		t.Errorf("the walk counted %d bytes; want the cut tools' too", n)
	}

	tooDeepElsewhere := `{"jsonrpc":"2.0","id":9,"result":{"tools":[` + tool("deep", fits+1) + `],"_meta":` + deepJSON(maxMessageDepth) + `}}`
	s, _, _ = testScreen(t)
	out, _, _ = s.screen([]byte(tooDeepElsewhere), nil)
	if !strings.Contains(string(out), `"error"`) || s.capture.takeRefused() == nil {
		t.Errorf("a page too deep outside its tools = %.200s; want an error answer and the bound noted", out)
	}
}

// The stdio reader hands on every line screened, however the pipe splits
// them, and a dropped line leaves nothing.
func TestScreenedLinesChunking(t *testing.T) {
	t.Parallel()
	stream := "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1,\"message\":\"m\"}}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":" + deepJSON(maxMessageDepth+5) + "}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"
	want := "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":-32603,\"message\":\"mcpconn: the answer was not read: the nesting of the server's answer exceeds 1000 levels (MaxMessageDepth (fixed))\"}}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"
	for _, n := range []int{1, 2, 7, 64, len(stream)} {
		s, _, _ := testScreen(t)
		got, err := io.ReadAll(&screenedLines{lineReader: lineReader{ReadCloser: &chunkReader{data: []byte(stream), n: n}}, screen: s})
		if err != nil || string(got) != want {
			t.Errorf("chunks of %d: %v\n%s\nwant\n%s", n, err, got, want)
		}
	}
}

// An event whose data the screen drops keeps its other lines (its id
// counts for a resumption); one it rewrites gets the new data at the
// place of the old.
func TestScreenedEvents(t *testing.T) {
	t.Parallel()
	stream := "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":null,\ndata: \"error\":{\"code\":1,\"message\":\"m\"}}\n\n" +
		"event: message\r\nid: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":" + deepJSON(maxMessageDepth) + "}\r\nretry: 10\r\n\r\n" +
		"event: endpoint\ndata: " + deepJSON(maxMessageDepth+1) + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"
	want := "id: 1\nevent: message\n\n" +
		"event: message\r\nid: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":-32603,\"message\":\"mcpconn: the answer was not read: the nesting of the server's answer exceeds 1000 levels (MaxMessageDepth (fixed))\"}}\nretry: 10\r\n\r\n" +
		"event: endpoint\ndata: " + deepJSON(maxMessageDepth+1) + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"
	for _, n := range []int{1, 3, 64, len(stream)} {
		s, _, _ := testScreen(t)
		got, err := io.ReadAll(&eventBody{ReadCloser: &chunkReader{data: []byte(stream), n: n}, screen: s, guard: testGuard()})
		if err != nil || string(got) != want {
			t.Errorf("chunks of %d: %v\n%q\nwant\n%q", n, err, got, want)
		}
	}
}

// FuzzScreen: whatever the screen hands on of a JSON object, the go-sdk's
// decoder reads: it never ends a session.
func FuzzScreen(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"tools":[{"name":"a","outputSchema":` + deepJSON(maxMessageDepth) + `}]}}`,
		`{"jsonrpc":"2.0","method":"x","id":[1]}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":1.5,"message":2}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		s, _, _ := testScreen(t)
		out, changed, err := s.screen(msg, nil)
		if err != nil || (changed && out == nil) {
			return
		}
		b := bytes.TrimSpace(out)
		if !json.Valid(b) || len(b) == 0 || b[0] != '{' {
			return // not a JSON object: the go-sdk's to report, as always
		}
		if _, err := jsonrpc.DecodeMessage(out); err != nil {
			t.Errorf("screen(%.200q) = %.200q (changed %v): the go-sdk refuses it: %v", msg, out, changed, err)
		}
	})
}

// BenchmarkScreen: what the screen costs on a 1 MiB tools/call result,
// against the go-sdk's own decoding of the same message (which every
// message gets anyway):
//
//	go test -run '^$' -bench Screen ./mcpconn
func BenchmarkScreen(b *testing.B) {
	text := strings.Repeat(`a \"quoted\" word, `, (1<<20)/20)
	msg := []byte(`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"` + text + `"}],"structuredContent":{"rows":[` +
		strings.Repeat(`{"k":[1,2,{"v":"x"}]},`, 2000) + `{}]}}}`)
	b.Run("screen", func(b *testing.B) {
		s := &messageScreen{ref: "r", capture: newToolsListCapture(defaultMaxTools, defaultMaxListBytes), guard: testGuard()}
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if _, changed, _ := s.screen(msg, nil); changed {
				b.Fatal("changed")
			}
		}
	})
	b.Run("go-sdk decode", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
