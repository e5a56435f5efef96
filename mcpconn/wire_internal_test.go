package mcpconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// refEvent is an event as the go-sdk's reader frames it.
type refEvent struct {
	Raw, Data, Name string
	Valued, Retry   bool
	Ended           bool
}

// refEvents frames stream whole, by the go-sdk's rules (scanEventsLimited,
// go-sdk v1.8.0), written as plainly as they read: lines end at '\n',
// trailing '\r' and '\n' are trimmed, a blank line ends the event, data
// values are trimmed and joined with '\n', a line cut off by the end
// counts. It also gives each event's peak: the most bytes of it held
// before a line end, which the bound is checked against.
func refEvents(stream string) (evs []refEvent, peaks []int) {
	var cur refEvent
	hasData := false
	flush := func(ended bool) {
		cur.Ended = ended
		peak := len(cur.Raw)
		if strings.HasSuffix(cur.Raw, "\n") {
			peak--
		}
		evs, peaks = append(evs, cur), append(peaks, peak)
		cur, hasData = refEvent{}, false
	}
	for stream != "" {
		line, rest, nl := strings.Cut(stream, "\n")
		stream = rest
		cur.Raw += line
		if nl {
			cur.Raw += "\n"
		}
		content := strings.TrimRight(line, "\r\n")
		if content == "" {
			if nl {
				flush(true)
			}
			continue
		}
		field, value, ok := strings.Cut(content, ":")
		if !ok {
			continue
		}
		switch field {
		case "data":
			if hasData {
				cur.Data += "\n"
			}
			hasData = true
			v := string(bytes.TrimSpace([]byte(value)))
			cur.Data += v
			cur.Valued = cur.Valued || v != ""
		case "event":
			cur.Name = string(bytes.TrimSpace([]byte(value)))
		case "retry":
			cur.Retry = true
		}
	}
	if cur.Raw != "" {
		flush(false)
	}
	return evs, peaks
}

// scanInPieces feeds stream to a scanner bounded to max, cut at the
// given offsets, and returns the events it framed (up to the bound's
// error, which it returns).
func scanInPieces(stream []byte, cuts []int, max int) ([]refEvent, error) {
	s := sseScanner{max: max}
	var got []refEvent
	take := func() {
		for _, ev := range s.done {
			got = append(got, refEvent{Raw: string(ev.raw), Data: string(ev.data), Name: string(ev.name),
				Valued: ev.valued, Retry: ev.retry, Ended: ev.ended})
		}
		s.spent()
	}
	errBound := errors.New("bound")
	prev := 0
	for _, c := range append(cuts, len(stream)) {
		err := s.feed(stream[prev:c], func() error { return errBound }, nil)
		if s.ev != nil && max > 0 && len(s.ev.raw) > max+1 { // its last line end aside
			return got, errors.New("holds more than the bound")
		}
		if err != nil {
			s.spent() // nothing of a read that broke the bound is used
			return got, err
		}
		take()
		prev = c
	}
	s.finish()
	take()
	return got, nil
}

// FuzzSSEScanner: the one SSE scanner frames any stream as the go-sdk
// does (refEvents), however the stream is split into reads (whole, at
// every single byte offset, a byte at a time), with LF, CRLF and lone CR
// in lines, comments, multi-line data, and lines far past the bound: the
// bound fails the read that carries the first event past it, never holds
// more than the bound, and leaves the events before it whole. Through
// eventBody with nothing to change, every byte passes as it came. Issue
// 25 item 8.
func FuzzSSEScanner(f *testing.F) {
	for _, seed := range []string{
		"data: {}\n\n",
		"event: message\r\nid: 1\r\ndata: {\"a\":1}\r\n\r\n",
		": comment\nretry: 10\nid: 9\n\n",
		"data: a\ndata:  b \ndata:\n\n",
		"data: a\rdata: b\r\r\n",
		"data: x\n\r\r\n\ndata: y",
		"no colon\n\ndata: " + strings.Repeat("z", 300) + "\n\n",
		"data: tail without end",
		"\n\n\r\n",
	} {
		f.Add([]byte(seed), 64)
	}
	f.Fuzz(func(t *testing.T, stream []byte, max int) {
		if len(stream) > 2048 {
			return
		}
		max = max%512 + 1
		if max < 1 {
			max += 512
		}
		want, peaks := refEvents(string(stream))
		limit := -1 // the first event past the bound
		for i, p := range peaks {
			if p > max {
				limit = i
				break
			}
		}
		if limit >= 0 {
			want = want[:limit]
		}
		check := func(how string, cuts []int) {
			got, err := scanInPieces(stream, cuts, max)
			if (err != nil) != (limit >= 0) {
				t.Fatalf("%s: error %v; want one: %v (peaks %v, bound %d)", how, err, limit >= 0, peaks, max)
			}
			if err != nil {
				// A read that broke the bound hands on nothing: what came
				// before it in earlier reads only.
				if len(got) > len(want) || cmp.Diff(want[:len(got)], got, cmpopts.EquateEmpty()) != "" {
					t.Fatalf("%s: before the bound (-want +got):\n%s", how, cmp.Diff(want, got))
				}
				return
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s: events (-want +got):\n%s", how, diff)
			}
		}
		check("whole", nil)
		for i := 1; i < len(stream) && len(stream) <= 256; i++ {
			check("split", []int{i})
		}
		var each []int
		for i := 1; i < len(stream); i++ {
			each = append(each, i)
		}
		check("one byte at a time", each)
		if limit < 0 {
			got, err := io.ReadAll(&eventBody{ReadCloser: io.NopCloser(&chunkReader{data: stream, n: 3}), guard: newPeerGuard(max, 1<<20)})
			if err != nil || !bytes.Equal(got, stream) {
				t.Fatalf("eventBody changed the stream: %q, %v; want %q", got, err, stream)
			}
		}
	})
}

// An event far past the bound fails at the bound, however long its line
// goes on: the scanner holds no more than the bound of it.
func TestSSEScannerHugeLine(t *testing.T) {
	t.Parallel()
	g := newPeerGuard(1<<10, 1000)
	huge := &chunkReader{data: []byte("data: " + strings.Repeat("x", 1<<20) + "\n\n"), n: 1 << 15}
	body := &eventBody{ReadCloser: io.NopCloser(huge), guard: g}
	if _, err := io.ReadAll(body); !errors.Is(err, ErrLimit) {
		t.Fatalf("a 1 MiB line under a 1 KiB bound: %v; want ErrLimit", err)
	}
	if n := len(body.scan.ev.raw); n > 1<<10 {
		t.Errorf("holds %d bytes of the event; want at most the bound", n)
	}
	if left := len(huge.data); left < 1<<20-2*(1<<15) {
		t.Errorf("read %d bytes past the bound; want one read at most", (1<<20)-left)
	}
}

// FuzzPlainAnswer: for an answer in a plain form (envelope.plain), the id
// and result the capture takes from the screen's envelope
// (toolsListCapture.noteMessage) are those the go-sdk's decoder reads,
// so the capture needs no decoding of its own. Issue 25 item 8.
func FuzzPlainAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[]} }`,
		`{"result":5 ,"id":-3,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"result":[1]}`,
		`{"jsonrpc":"2.0","id":1,"error":null}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":"a\u0062","result":{}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		b := bytes.TrimSpace([]byte(msg))
		if len(b) == 0 || b[0] != '{' {
			return
		}
		var env envelope
		if _, err := objectNesting(b, env.member); err != nil || !env.plain() || env.method != nil {
			return
		}
		m, err := jsonrpc.DecodeMessage(b)
		if valid := json.Valid(b); valid != (err == nil) {
			t.Fatalf("%s: json.Valid %v; the decoder: %v", msg, valid, err)
		}
		if err != nil {
			return // the go-sdk fails the connection on it; noteMessage notes nothing
		}
		resp, ok := m.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("%s: plain answer decodes as %T", msg, m)
		}
		id, ok := rawIDKey(env.id)
		if !ok {
			return // an id no request of ours has
		}
		if want := idKey(resp.ID); id != want {
			t.Errorf("%s: id %q; the decoder reads %q", msg, id, want)
		}
		result := bytes.TrimSpace(env.result)
		if env.result == nil {
			result = nil
		}
		if string(result) != string(resp.Result) || (result == nil) != (resp.Result == nil) || resp.Error != nil {
			t.Errorf("%s: result %q; the decoder reads %q (error %v)", msg, result, resp.Result, resp.Error)
		}
	})
}

// lineCollector is a lineHandler that keeps each line it is handed.
type lineCollector struct {
	lineReader
	lines []string
	ended bool
}

func (c *lineCollector) endLine() {
	c.lines = append(c.lines, string(c.line))
	c.line = c.line[:0]
}

func (c *lineCollector) endBody() { c.ended = true }

// FuzzStdioLines: the stdio wire layer frames lines once, the bound
// finding the line ends the reader splits on: read in chunks of any size,
// it hands on the lines strings.SplitAfter finds, or, when a line is past
// the bound, fails with ErrLimit. Issue 25 item 8.
func FuzzStdioLines(f *testing.F) {
	f.Add([]byte("{}\n{\"a\":1}\r\n\nlast"), 8, 3)
	f.Add([]byte(strings.Repeat("x", 100)+"\n"), 16, 7)
	f.Fuzz(func(t *testing.T, stream []byte, max, chunk int) {
		max, chunk = max%64+1, chunk%16+1
		if max < 1 {
			max += 64
		}
		if chunk < 1 {
			chunk += 16
		}
		var want []string
		over := false
		for _, l := range strings.SplitAfter(string(stream), "\n") {
			if l != "" {
				want = append(want, l)
			}
			if len(strings.TrimSuffix(l, "\n")) > max {
				over = true
			}
		}
		c := &lineCollector{}
		c.lineReader = lineReader{ReadCloser: &chunkReader{data: stream, n: chunk}, bound: &lineGuard{guard: newPeerGuard(max, 1<<20)}}
		var err error
		for err == nil {
			c.fill(c)
			err = c.err
		}
		if over {
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("a line past %d bytes: %v; want ErrLimit", max, err)
			}
			return
		}
		if !errors.Is(err, io.EOF) || !c.ended {
			t.Fatalf("err %v, ended %v; want the end of the body", err, c.ended)
		}
		if diff := cmp.Diff(want, c.lines, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("lines (-want +got):\n%s", diff)
		}
	})
}

// refMarkMessage is the stream mark as it was written before the wire
// layer (issue 23 item 9), on encoding/json maps: the reference the one
// pass of markMessage must agree with.
func refMarkMessage(data []byte, mark string) (map[string]any, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(data, &msg) != nil {
		return nil, false
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil || method == "" || msg["id"] == nil || isNull(msg["id"]) {
		return nil, false
	}
	params := map[string]json.RawMessage{}
	if raw, ok := msg["params"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &params) != nil || params == nil {
			return nil, false
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := params["_meta"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &meta) != nil || meta == nil {
			return nil, false
		}
	}
	meta[metaStream], _ = json.Marshal(mark)
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	b, _ := json.Marshal(msg)
	var v map[string]any
	return v, json.Unmarshal(b, &v) == nil
}

// FuzzMarkMessage: the stream mark, now one pass of the JSON scanner,
// marks exactly the requests the map-based mark did, and the go-sdk reads
// the same message from either. Only what the screen passes reaches it:
// JSON the go-sdk's decoder reads. Issue 25 item 8.
func FuzzMarkMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{"message":"<who>"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"roots/list","params":{"_meta":{"k":1,"agt/stream":"forged"}}}`,
		`{"method":"roots/list","id":"r","jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"_meta":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"_meta":3}}`,
		`{"jsonrpc":"2.0","id":null,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","params":{},"params":{"_meta":{}}}`,
	} {
		f.Add(seed)
	}
	const mark = "0123:agt-7"
	f.Fuzz(func(t *testing.T, msg string) {
		if !decodes([]byte(msg)) {
			return
		}
		want, wantOK := refMarkMessage([]byte(msg), mark)
		got, ok := markMessage([]byte(msg), mark)
		if ok != wantOK {
			t.Fatalf("%s: marked %v; the reference %v (%s)", msg, ok, wantOK, got)
		}
		if !ok {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("%s: marked %s does not decode: %v", msg, got, err)
		}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("%s: marked %s (-reference +got):\n%s", msg, got, diff)
		}
	})
}
