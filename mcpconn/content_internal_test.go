package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/content"
)

// FuzzDecodeCallResult: any bytes never panic; a decoded result of valid
// JSON says what encoding/json says of the same bytes (exact keys, last
// duplicate wins), its spans are the exact bytes, and its text is valid
// UTF-8.
func FuzzDecodeCallResult(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"a\"b"},{"type":"image","data":"AA==","mimeType":"image/png"}],"structuredContent":{"b":1e-400,"a":12345678901234567890}}`))
	f.Add([]byte(`{"content":[{"type":"hologram","x":[1,{"y":"}"}]},{"type":"resource","resource":{"uri":"u","blob":"AAEC"}}],"isError":true,"_meta":{}}`))
	f.Add([]byte(`{"content":[{"type":"resource_link","uri":"u","name":"n","size":12}],"Content":5,"content":[]}`))
	f.Add([]byte("{\"content\":[{\"type\":\"text\",\"text\":\"\xff\\ud800\\udc00\\udc00\"}]}"))
	f.Add([]byte(`{"content":null,"structuredContent":null,"isError":null}`))
	f.Add([]byte(`{"cont\u0065nt":[{"t\u0079pe":"text"}]} `))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v := validText(b); !utf8.Valid(v) {
			t.Fatalf("validText left invalid UTF-8: %q", v)
		} else if json.Valid(b) {
			x, errX := decodeNumbers(b)
			y, errY := decodeNumbers(v)
			if errX != nil || errY != nil || !reflect.DeepEqual(x, y) {
				t.Fatalf("validText changed what %q reads as: %q (%v, %v)", b, v, errX, errY)
			}
		}
		r, err := decodeCallResult(b)
		if err != nil || !json.Valid(b) {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(validText(b), &top); err != nil {
			t.Fatalf("decoded %q, which is not an object: %v", b, err)
		}
		if s := top["structuredContent"]; string(s) != "null" && !bytes.Equal(s, r.Structured) {
			t.Errorf("Structured = %q; want %q", r.Structured, s)
		}
		var isError *bool
		_ = json.Unmarshal(top["isError"], &isError)
		if (isError != nil && *isError) != r.IsError {
			t.Errorf("IsError = %v; encoding/json reads %s", r.IsError, top["isError"])
		}
		var blocks []json.RawMessage
		if c := top["content"]; c != nil && string(c) != "null" {
			if !bytes.Equal(c, r.ContentJSON) {
				t.Errorf("ContentJSON = %q; want %q", r.ContentJSON, c)
			}
			if err := json.Unmarshal(c, &blocks); err != nil {
				t.Fatalf("content %q decoded though not an array: %v", c, err)
			}
		}
		if len(blocks) != len(r.Content) {
			t.Fatalf("%d blocks; encoding/json reads %d", len(r.Content), len(blocks))
		}
		for i, blk := range r.Content {
			if !bytes.Equal(blk.JSON(), blocks[i]) {
				t.Errorf("block %d = %q; want %q", i, blk.JSON(), blocks[i])
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(blocks[i], &fields); err != nil {
				t.Fatalf("block %d %q decoded though not an object", i, blocks[i])
			}
			var typ string
			if json.Unmarshal(fields["type"], &typ) != nil || typ != blk.Type() {
				t.Errorf("block %d has type %q; encoding/json reads %s", i, blk.Type(), fields["type"])
			}
			str := func(key, got string) {
				var want string
				_ = json.Unmarshal(fields[key], &want)
				if got != want || !utf8.ValidString(got) {
					t.Errorf("block %d %s = %q; want %q", i, key, got, want)
				}
			}
			switch c := blk.(type) {
			case *content.Text:
				str("text", c.Text)
			case *content.Image:
				str("data", c.Data)
				str("mimeType", c.MIMEType)
			case *content.Audio:
				str("data", c.Data)
			case *content.ResourceLink:
				str("uri", c.URI)
				str("name", c.Name)
			case *content.EmbeddedResource:
				var res struct{ URI, Text, Blob string }
				_ = json.Unmarshal(fields["resource"], &res)
				if c.Resource.Text != res.Text || c.Resource.Blob != res.Blob {
					t.Errorf("block %d resource = %+v; want %+v", i, c.Resource, res)
				}
			}
		}
	})
}

func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	return v, dec.Decode(&v)
}

// validText replaces what a JSON decoder would replace, and nothing else.
func TestValidText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`"plain ✓"`, `"plain ✓"`},
		{"\"bad \xff byte\"", "\"bad \uFFFD byte\""},
		{"\"cut \xe2\x9c\"", "\"cut \uFFFD\uFFFD\""},
		{`"lone \ud800 high"`, `"lone \ufffd high"`},
		{`"lone \uDC00 low"`, `"lone \ufffd low"`},
		{`"pair \ud83d\ude00 ok"`, `"pair \ud83d\ude00 ok"`},
		{`"high then high \ud83d\ud83d\ude00"`, `"high then high \ufffd\ud83d\ude00"`},
		{`"escaped backslash \\ud800"`, `"escaped backslash \\ud800"`},
		{`"end \ud8"`, `"end \ud8"`},
	} {
		if got := string(validText([]byte(tt.in))); got != tt.want {
			t.Errorf("validText(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// DecodeContent bounds the blocks it builds.
func TestDecodeContentBound(t *testing.T) {
	t.Parallel()
	block := `{"type":"text","text":""}`
	at := "[" + strings.TrimSuffix(strings.Repeat(block+",", maxContentBlocks), ",") + "]"
	if blocks, err := DecodeContent(json.RawMessage(at)); err != nil || len(blocks) != maxContentBlocks {
		t.Errorf("%d blocks: %d, %v", maxContentBlocks, len(blocks), err)
	}
	over := at[:len(at)-1] + "," + block + "]"
	if _, err := DecodeContent(json.RawMessage(over)); err == nil || !strings.Contains(err.Error(), "MaxContentBlocks") {
		t.Errorf("%d blocks: %v; want the bound", maxContentBlocks+1, err)
	}
}

// A call's answer is the first answer to its current request: a second
// answer with the same id, and a late answer to an earlier request of the
// call, are not the call's.
func TestCallAnswer(t *testing.T) {
	t.Parallel()
	var calls inflightCalls
	c := &toolsListCapture{calls: &calls}
	ctx, call := calls.begin(context.Background(), nil)
	defer calls.end(call)

	c.callWritten(ctx, "n1")
	c.callAnswered("n1", nil) // an error answer
	c.callAnswered("n1", json.RawMessage(`{"content":[]}`))
	if got := call.answer(); got != nil {
		t.Errorf("after an error answer, a later result was taken: %s", got)
	}

	c.callWritten(ctx, "n2") // the go-sdk asks again (an input-required result)
	c.callAnswered("n2", json.RawMessage(`{"content":[{"type":"text","text":"first"}]}`))
	c.callAnswered("n2", json.RawMessage(`{"content":[{"type":"text","text":"second"}]}`))
	c.callAnswered("n1", json.RawMessage(`{"content":[{"type":"text","text":"late"}]}`))
	if got := string(call.answer()); !strings.Contains(got, "first") {
		t.Errorf("answer = %s; want the first answer to n2", got)
	}
	// Answers to requests of no call in flight are dropped.
	c.callAnswered("n9", json.RawMessage(`{}`))
	(&toolsListCapture{}).callAnswered("n2", json.RawMessage(`{}`)) // no registry: no capture
}

// Streamable HTTP: the round tripper ties a tools/call POST to its call
// without reading the arguments, and records the answer from an event
// stream, from a JSON body, and from a GET stream (a resumed one).
func TestHeaderRoundTripperCapturesCallResults(t *testing.T) {
	t.Parallel()
	result := `{"content":[{"type":"hologram","z":1}],"structuredContent":{"b":1,"a":12345678901234567890}}`
	for _, tt := range []struct {
		name, contentType, body string
		get                     bool
	}{
		{"event stream", "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" + result + "}\n\n", false},
		{"JSON", "application/json", `{"jsonrpc":"2.0","id":7,"result":` + result + `}`, false},
		{"resumed GET stream", "text/event-stream", "id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" + result + "}\n\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var sentLen int
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				body := tt.body
				if r.Body != nil {
					b, _ := io.ReadAll(r.Body)
					sentLen = len(b)
				}
				if r.Method == http.MethodPost && tt.get {
					body = ""
				}
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {tt.contentType}},
					Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			})
			var calls inflightCalls
			c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
			c.calls = &calls
			guard := testGuard()
			rt := &headerRoundTripper{base: base, capture: c, guard: guard, origin: "http://127.0.0.1:80", streamable: true,
				streams: newEventStreams(5, time.Second)}
			ctx, call := calls.begin(context.Background(), nil)
			defer calls.end(call)

			// Arguments past the body peek bound: the id comes first.
			args := `{"x":"` + strings.Repeat("a", 1<<20) + `"}`
			post := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":` + args + `}}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(post))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			if sentLen != len(post) {
				t.Errorf("the server got %d bytes of %d", sentLen, len(post))
			}
			if tt.get {
				// The go-sdk resumes the call's stream on the call's context.
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/mcp", nil)
				req.Header.Set(lastEventIDHeader, "2")
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
			}
			if diff := cmp.Diff(result, string(call.answer())); diff != "" {
				t.Errorf("captured result (-want +got):\n%s", diff)
			}
		})
	}
}

// peekRequestID finds the id of a request, and whether it is a
// tools/call. It reads the id and method where the go-sdk writes them,
// before the arguments, without reading those; in any other order it
// still finds them (issue 25 item 8: no reliance on the go-sdk's field
// order).
func TestPeekRequestID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body, want string
		call, ok   bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`, "n7", true, true},
		{`{"method":"tools/call","jsonrpc":"2.0","id":"x"}`, "sx", true, true},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, "", false, false},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, "n7", false, true},
		{`{"jsonrpc":"2.0","params":{"x":"` + strings.Repeat("a", 2*maxPeekBytes) + `"},"id":7,"method":"tools/call"}`, "n7", true, true},
		{`{"jsonrpc":"2.0","params":{"x":"` + strings.Repeat("a", 2*maxPeekBytes) + `"},"id":7,"method":"tools/list"}`, "n7", false, true},
		{`{"jsonrpc":"2.0","params":{"x":"` + strings.Repeat("a", 2*maxPeekBytes) + `"},"id":{},"method":"tools/call"}`, "", false, false},
		{`[{"jsonrpc":"2.0","id":7,"method":"tools/call"}]`, "", false, false},
		{`{"id":null,"method":"tools/call"}`, "", false, false},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, "", false, false},
		{`not json`, "", false, false},
	} {
		id, call, ok := peekRequestID(strings.NewReader(tt.body))
		if id != tt.want || call != tt.call || ok != tt.ok {
			t.Errorf("peekRequestID(%.60s) = %q, %v, %v; want %q, %v, %v", tt.body, id, call, ok, tt.want, tt.call, tt.ok)
		}
	}
}

// callResult takes the captured result even when the go-sdk failed to
// decode it, and falls back to the go-sdk's decoding, re-encoded, when
// there is no capture.
func TestCallResultSources(t *testing.T) {
	t.Parallel()
	s := &Session{ref: "x", guard: testGuard()}
	var calls inflightCalls
	ctx, call := calls.begin(context.Background(), nil)
	defer calls.end(call)

	decoded := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}, &mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}},
		StructuredContent: map[string]any{"a": 1}, IsError: true}
	cr, _, _, err := s.callResult(ctx, ctx, "t", call, decoded, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &CallResult{
		Content: []content.Block{&content.Text{Text: "hi", Raw: json.RawMessage(`{"type":"text","text":"hi"}`)},
			&content.Image{Data: "AQI=", MIMEType: "image/png", Raw: json.RawMessage(`{"type":"image","mimeType":"image/png","data":"AQI="}`)}},
		ContentJSON: json.RawMessage(`[{"type":"text","text":"hi"},{"type":"image","mimeType":"image/png","data":"AQI="}]`),
		Structured:  json.RawMessage(`{"a":1}`), IsError: true,
		Raw: json.RawMessage(`{"content":[{"type":"text","text":"hi"},{"type":"image","mimeType":"image/png","data":"AQI="}],"structuredContent":{"a":1},"isError":true}`),
	}
	if diff := cmp.Diff(want, cr); diff != "" {
		t.Errorf("without a capture (-want +got):\n%s", diff)
	}

	calls.written(ctx, "n1")
	call.setAnswer("n1", json.RawMessage(`{"content":[{"type":"hologram"}]}`), 0)
	cr, _, _, err = s.callResult(ctx, ctx, "t", call, nil, errors.New(`calling "tools/call": unrecognized content type "hologram"`))
	if err != nil || len(cr.Content) != 1 || cr.Content[0].Type() != "hologram" {
		t.Errorf("a decode failure of the go-sdk's with a capture = %+v, %v; want the captured result", cr, err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, _, err := s.callResult(cancelled, cancelled, "t", call, nil, context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call with a capture = %v; want the cancellation", err)
	}
}
