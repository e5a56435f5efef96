package mcpconn

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
)

// countListedTools never counts fewer tools than a decoder finds, whatever
// the keys' spelling, and counts only the top-level "tools".
func TestCountListedTools(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		result string
		want   int
	}{
		{`{"tools":[]}`, 0},
		{`{"tools":[{"name":"a"},{"name":"b","inputSchema":{"x":[1,2,{"y":"]"}]}}]}`, 2},
		{` { "nextCursor" : "c" , "tools" : [ {} , {} , {} ] } `, 3},
		{`{"meta":{"tools":[1,2,3]},"tools":[{}]}`, 1},
		{`{"tool\u0073":[{},{}]}`, 2},
		{`{"TOOLS":[{},{}]}`, 2},
		{`{"tools":[{}],"tools":[{},{}]}`, 3},
		{`{"x":"\"tools\":[1,2]","tools":[{"d":"a\\"}]}`, 1},
		{`{"tools":[{},{}`, 2},
		{`[]`, 0},
		{``, 0},
	} {
		if got := countListedTools([]byte(tt.result)); got != tt.want {
			t.Errorf("countListedTools(%s) = %d; want %d", tt.result, got, tt.want)
		}
	}
}

func FuzzCountListedTools(f *testing.F) {
	f.Add(`{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"x"}`)
	f.Add(`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}]}`)
	f.Add(`{"tool\u0073":[1,"]",{"a":[[]]}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal([]byte(s), &page) != nil {
			countListedTools([]byte(s)) // must not panic
			return
		}
		if got := countListedTools([]byte(s)); got < len(page.Tools) {
			t.Errorf("countListedTools(%q) = %d; a decoder finds %d", s, got, len(page.Tools))
		}
	})
}

// A stdio line is bounded across reads, also when it ends exactly at the
// bound or is cut into many small reads.
func TestLineGuard(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		chunks []string
		over   bool
	}{
		{"at the bound", []string{"12345678\n"}, false},
		{"one past", []string{"123456789\n"}, true},
		{"past without newline", []string{"123456789"}, true},
		{"split", []string{"1234", "5678", "\n1234", "5678\n"}, false},
		{"split past", []string{"1234", "5678", "9"}, true},
		{"many lines", []string{"1\n22\n333\n4444\n"}, false},
		{"long one among short", []string{"1\n123456789\n2\n"}, true},
	} {
		l := &lineGuard{guard: newPeerGuard(8, 1000)}
		var err error
		for _, c := range tt.chunks {
			if _, err = l.lineEnds([]byte(c), nil); err != nil {
				break
			}
		}
		if (err != nil) != tt.over || (err != nil && !errors.Is(err, ErrLimit)) {
			t.Errorf("%s: lineEnds = %v; want over=%v", tt.name, err, tt.over)
		}
	}
}

// An event stream is bounded event by event, and its data events count
// against the rate; a body that is not an event stream is bounded whole.
func TestBoundedBody(t *testing.T) {
	t.Parallel()
	read := func(b io.Reader) error {
		_, err := io.Copy(io.Discard, b)
		return err
	}
	event := "event: message\ndata: " + strings.Repeat("a", 40) + "\n\n"
	ok := &eventBody{ReadCloser: &chunkReader{data: []byte(strings.Repeat(event, 100)), n: 7}, guard: newPeerGuard(64, 1000)}
	if err := read(ok); err != nil {
		t.Errorf("100 events of 62 bytes under a 64-byte bound: %v", err)
	}
	crlf := strings.ReplaceAll(event, "\n", "\r\n")
	ok = &eventBody{ReadCloser: &chunkReader{data: []byte(strings.Repeat(crlf, 100)), n: 5}, guard: newPeerGuard(70, 1000)}
	if err := read(ok); err != nil {
		t.Errorf("CRLF events: %v", err)
	}
	big := &eventBody{ReadCloser: &chunkReader{data: []byte("data: " + strings.Repeat("a", 100) + "\n\n"), n: 9}, guard: newPeerGuard(64, 1000)}
	if err := read(big); !errors.Is(err, ErrLimit) {
		t.Errorf("one event of 108 bytes under a 64-byte bound: %v", err)
	}
	body := &boundedBody{ReadCloser: &chunkReader{data: []byte(strings.Repeat("a", 65)), n: 9}, guard: newPeerGuard(64, 1000)}
	if err := read(body); !errors.Is(err, ErrLimit) {
		t.Errorf("a body of 65 bytes under a 64-byte bound: %v", err)
	}
	// Rate: 1 per second, a burst of 10; the replies owed pass uncounted.
	g := newPeerGuard(1<<20, 1)
	g.owe()
	flood := &eventBody{ReadCloser: &chunkReader{data: []byte(strings.Repeat(event, 11)), n: 50}, guard: g, countRate: true, owed: true}
	if err := read(flood); err != nil {
		t.Errorf("11 events with one reply owed, burst 10: %v", err)
	}
	flood = &eventBody{ReadCloser: &chunkReader{data: []byte(event), n: 50}, guard: g, countRate: true}
	if err := read(flood); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "MaxServerMessageRate") {
		t.Errorf("the 12th event: %v; want the rate bound", err)
	}
	// Events that end with a line of only '\r' are events for the go-sdk:
	// they count, one by one, and their sizes do not add up.
	crcr := strings.ReplaceAll(event, "\n\n", "\n\r\r\n")
	flood = &eventBody{ReadCloser: &chunkReader{data: []byte(strings.Repeat(crcr, 11)), n: 7}, guard: newPeerGuard(64, 1), countRate: true}
	if err := read(flood); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "MaxServerMessageRate") {
		t.Errorf("11 events ended by \\r\\r\\n: %v; want the rate bound (burst 10)", err)
	}
}

// Content types are matched as the go-sdk matches them, in any letter
// case: an event stream in capitals is still bounded event by event.
func TestContentTypeAnyCase(t *testing.T) {
	t.Parallel()
	event := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"Text/Event-Stream; charset=utf-8"}},
			Body: io.NopCloser(strings.NewReader(strings.Repeat(event, 20))), Request: r}, nil
	})
	rt := &headerRoundTripper{base: base, guard: newPeerGuard(1<<20, 1), origin: "http://127.0.0.1:80", streamable: true}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, ErrLimit) {
		t.Errorf("20 events in Text/Event-Stream at 1 per second (burst 10): %v; want the rate bound", err)
	}
}

// Issue 27 (rate.Limiter in place of the hand-written bucket): a
// MaxServerMessageRate so high that its ten seconds' burst does not fit an
// int still means "at most that many", as the old float bucket read it; an
// overflowed burst would trip the session at the server's first message.
func TestPeerGuardHugeRate(t *testing.T) {
	t.Parallel()
	for _, perSecond := range []int{1, 1000, math.MaxInt / burstSeconds, math.MaxInt/burstSeconds + 1, math.MaxInt} {
		g := newPeerGuard(1<<20, perSecond)
		for i := range min(perSecond, 100) {
			if err := g.message(false); err != nil {
				t.Fatalf("rate %d: message %d: %v; want it within the burst", perSecond, i, err)
			}
		}
	}
}
