package mcpconn

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// taken is the captured listing result, without the tools cut from it.
func taken(c *toolsListCapture) json.RawMessage {
	raw, _ := c.take()
	return raw
}

// chunkReader returns its data n bytes at a time, as a network body might.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

func (c *chunkReader) Close() error { return nil }

const listResult = `{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"z":{"maximum":12345678901234567890}}}}]}`

// The event-stream capture finds the tools/list result however the body is
// split, with CRLF line ends and with other events around it.
func TestSSECaptureChunking(t *testing.T) {
	t.Parallel()
	stream := "event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\r\n\r\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" + listResult + "}\n\n" +
		": a comment\n\n"
	for _, n := range []int{1, 2, 3, 7, 64, len(stream)} {
		c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
		c.request("n7")
		body := &eventBody{ReadCloser: &chunkReader{data: []byte(stream), n: n}, capture: c, guard: testGuard()}
		if _, err := io.Copy(io.Discard, body); err != nil {
			t.Fatal(err)
		}
		if got := string(taken(c)); got != listResult {
			t.Errorf("chunks of %d: captured %q; want the exact result", n, got)
		}
	}
}

// A multi-line data field is joined with newlines, as SSE says; an event
// cut off by EOF is still read; an id that was not asked for is ignored.
func TestSSECaptureEdges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stream string
		want   string
	}{
		{name: "multi-line data", stream: "data: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\ndata: \"result\":{\"tools\":[]}}\n\n", want: `{"tools":[]}`},
		{name: "no final blank line", stream: "data: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"tools\":[]}}", want: `{"tools":[]}`},
		{name: "other id", stream: "data: {\"jsonrpc\":\"2.0\",\"id\":\"y\",\"result\":{\"tools\":[]}}\n\n", want: ""},
		{name: "error response", stream: "data: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":1,\"message\":\"m\"}}\n\n", want: ""},
		{name: "not JSON", stream: "data: hello\n\n", want: ""},
		// Read as the go-sdk reads it: a line of only \r ends the event, and
		// a key in another case is not the result.
		{name: "CR CR LF ends the event", stream: "data: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"tools\":[]}}\r\r\n", want: `{"tools":[]}`},
		{name: "Result is not result", stream: "data: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"tools\":[1]},\"Result\":{\"tools\":[]}}\n\n", want: `{"tools":[1]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
			c.request("sx")
			body := &eventBody{ReadCloser: &chunkReader{data: []byte(tt.stream), n: 5}, capture: c, guard: testGuard()}
			_, _ = io.Copy(io.Discard, body)
			if got := string(taken(c)); got != tt.want {
				t.Errorf("captured %q; want %q", got, tt.want)
			}
		})
	}
}

// A JSON body and a batch are captured at EOF.
func TestJSONBodyCapture(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":3,"result":` + listResult + `}`,
		`[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"result":` + listResult + `}]`,
	} {
		c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
		c.request("n3")
		r := &screenedJSONBody{ReadCloser: &chunkReader{data: []byte(body), n: 4}, capture: c, guard: testGuard()}
		_, _ = io.Copy(io.Discard, r)
		if got := string(taken(c)); got != listResult {
			t.Errorf("body %.40s...: captured %q", body, got)
		}
	}
}

func TestListRequestIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "n1"},
		{`{"jsonrpc":"2.0","id":"abc","method":"tools/list","params":{"cursor":"c"}}`, "sabc"},
		{`[{"id":1,"method":"ping"},{"id":2,"method":"tools/list"}]`, "n2"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, ""},
		{`{"jsonrpc":"2.0","method":"tools/list"}`, ""},
		{`not json`, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(listRequestIDs([]byte(tt.body)), ","); got != tt.want {
			t.Errorf("listRequestIDs(%s) = %q; want %q", tt.body, got, tt.want)
		}
	}
}

// The ring keeps the last bytes and marks the cut at a line boundary.
func TestRing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		size   int
		writes []string
		want   string
	}{
		{size: 16, writes: []string{"hello\n"}, want: "hello\n"},
		{size: 16, writes: []string{"line one\n", "line two\n"}, want: "[...]\nline two\n"},
		{size: 8, writes: []string{"0123456789abcdef"}, want: "[...]\n89abcdef"},
		{size: 8, writes: []string{"ab", "cd", "ef", "gh", "ij"}, want: "[...]\ncdefghij"},
	}
	for _, tt := range tests {
		r := newRing(tt.size, nil)
		for _, w := range tt.writes {
			_, _ = r.Write([]byte(w))
		}
		if got := r.String(); got != tt.want {
			t.Errorf("ring(%d) after %q = %q; want %q", tt.size, tt.writes, got, tt.want)
		}
	}
}

// FuzzSSECapture: hostile event streams never panic, and a captured result
// is always valid JSON.
func FuzzSSECapture(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), 3)
	f.Add([]byte("data:\r\n\r\ndata: [\n\n"), 1)
	f.Fuzz(func(t *testing.T, stream []byte, n int) {
		if n <= 0 {
			n = 1
		}
		c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
		c.request("n1")
		body := &eventBody{ReadCloser: &chunkReader{data: stream, n: n}, capture: c, guard: testGuard()}
		_, _ = io.Copy(io.Discard, body)
		if got := taken(c); got != nil && !json.Valid(got) {
			t.Errorf("captured invalid JSON %q", got)
		}
	})
}

// roundTripFunc is a base http.RoundTripper that answers from a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The header round tripper adds the document's headers, passes large
// bodies through untouched, and captures a tools/list result.
func TestHeaderRoundTripper(t *testing.T) {
	t.Parallel()
	var gotHeader string
	var gotLen int
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		gotHeader = r.Header.Get("X-Token")
		b, _ := io.ReadAll(r.Body)
		gotLen = len(b)
		body := `{"jsonrpc":"2.0","id":5,"result":` + listResult + `}`
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
	rt := &headerRoundTripper{base: base, headers: map[string]string{"X-Token": "t"}, capture: c, guard: testGuard(), origin: "http://127.0.0.1:80"}

	big := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{"x":"` + strings.Repeat("a", 20<<20) + `"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(big))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if gotHeader != "t" || gotLen != len(big) {
		t.Errorf("big request: header %q, body %d bytes; want the header and all %d bytes", gotHeader, gotLen, len(big))
	}
	if taken(c) != nil {
		t.Errorf("captured a result for a tools/call request")
	}

	req, _ = http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`))
	resp, err = rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if got := string(taken(c)); got != listResult {
		t.Errorf("captured %q; want the tools/list result", got)
	}
}

// A late answer to an abandoned tools/list (timed out or cancelled) never
// passes for the current request's, whichever order the answers arrive in.
func TestCaptureIgnoresLateAnswers(t *testing.T) {
	t.Parallel()
	const fresh, stale = `{"tools":[{"name":"fresh"}]}`, `{"tools":[{"name":"stale"}]}`
	c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
	c.request("n1") // abandoned
	c.request("n2")
	c.response("n2", json.RawMessage(fresh))
	c.response("n1", json.RawMessage(stale))
	if got := string(taken(c)); got != fresh {
		t.Errorf("stale after fresh: captured %s; want %s", got, fresh)
	}
	c.request("n3") // abandoned
	c.request("n4")
	c.response("n3", json.RawMessage(stale))
	if got := taken(c); got != nil {
		t.Errorf("stale before fresh: captured %s; want nothing yet", got)
	}
	c.response("n4", json.RawMessage(fresh))
	if got := string(taken(c)); got != fresh {
		t.Errorf("stale before fresh: captured %s; want %s", got, fresh)
	}
}

// hideURLs cuts every http(s) URL in a message to scheme and host, keeps
// the rest of the message and the error chain.
func TestHideURLs(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`Post "http://127.0.0.1:1/mcp?token=t0k": refused`, `Post "http://127.0.0.1:1/[redacted]": refused`},
		{`Get "https://user:***@example.com/s/t0k/mcp": 404`, `Get "https://example.com/[redacted]": 404`},
		{`a http://h/x b HTTPS://H/y`, `a http://h/[redacted] b HTTPS://H/[redacted]`},
		{`Post "http://example.com/": refused`, `Post "http://example.com/": refused`},
		{`dial http://example.com: refused`, `dial http://example.com: refused`},
		{`file:///etc/x and no url`, `file:///etc/x and no url`},
		{`plain message`, `plain message`},
		// Punctuation after a URL is the message's, not the URL's (issue 23 item 12b).
		{`another origin (http://127.0.0.1:8081); the registered headers`, `another origin (http://127.0.0.1:8081); the registered headers`},
		{`moved (http://h:1/x?t=1), then`, `moved (http://h:1/[redacted]), then`},
		{`see http://h/a.`, `see http://h/[redacted].`},
	}
	for _, tt := range tests {
		base := errors.New(tt.in)
		got := hideURLs(base)
		if got.Error() != tt.want {
			t.Errorf("hideURLs(%q) = %q; want %q", tt.in, got.Error(), tt.want)
		}
		if !errors.Is(got, base) {
			t.Errorf("hideURLs(%q) lost the error chain", tt.in)
		}
	}
	if hideURLs(nil) != nil {
		t.Errorf("hideURLs(nil) != nil")
	}
}

func testGuard() *peerGuard {
	return newPeerGuard(defaultMaxMessageBytes, defaultMaxServerMessageRate)
}

// With no oauth.authorization_server pin, a secret goes only to the MCP
// server's origin: scheme, host and port, default ports included.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://mcp.example.com", "https://mcp.example.com/mcp", true},
		{"https://MCP.example.com:443/tenant", "https://mcp.example.com/mcp", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/mcp", true},
		{"http://127.0.0.1:8081", "http://127.0.0.1:8080/mcp", false},
		{"http://mcp.example.com", "https://mcp.example.com/mcp", false},
		{"https://auth.example.com", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com.evil", "https://mcp.example.com/mcp", false},
		{"", "https://mcp.example.com/mcp", false},
	} {
		if got := sameOrigin(tc.a, tc.b); got != tc.want {
			t.Errorf("sameOrigin(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// The OAuth dial check: which addresses reach no public host.
func TestNonPublic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.1.2.3", true}, {"172.16.0.1", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"fc00::1", true}, {"0.0.0.0", true}, {"100.64.0.1", true},
		{"::ffff:127.0.0.1", true}, {"198.18.0.1", true},
		{"8.8.8.8", false}, {"93.184.216.34", false}, {"2606:4700::1111", false},
	} {
		if got := nonPublic(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("nonPublic(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}

// Server text in an error loses what a terminal would act on.
func TestBoundServerTextStripsControls(t *testing.T) {
	t.Parallel()
	in := "bad\x1b[2J\x1b]0;owned\x07 \u202eexe.txt\r\nnext\u0085" + strings.Repeat("x", 600)
	got := boundServerText(in)
	for _, bad := range []string{"\x1b", "\x07", "\r", "\n", "\u202e", "\u0085"} {
		if strings.Contains(got, bad) {
			t.Errorf("boundServerText kept %q: %q", bad, got)
		}
	}
	if !strings.HasPrefix(got, "bad\uFFFD[2J") || !strings.HasSuffix(got, "...") {
		t.Errorf("boundServerText = %q", got)
	}
}
