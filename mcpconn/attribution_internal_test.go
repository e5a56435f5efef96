package mcpconn

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oneByte reads its bytes one at a time: every split of a line or an
// event the go-sdk's reader could see.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// marks returns the agt/stream mark of each event's message in an event
// stream, "" for an event without one, and the events' data as the
// go-sdk joins it.
func marks(t *testing.T, stream string) (marks, data []string) {
	t.Helper()
	for _, ev := range strings.Split(strings.ReplaceAll(stream, "\r\n", "\n"), "\n\n") {
		var d []string
		for _, line := range strings.Split(ev, "\n") {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				d = append(d, strings.TrimSpace(v))
			}
		}
		if len(d) == 0 {
			continue
		}
		joined := strings.Join(d, "\n")
		data = append(data, joined)
		var m struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		mark := ""
		if json.Unmarshal([]byte(joined), &m) == nil {
			mark, _ = m.Params.Meta[metaStream].(string)
		}
		marks = append(marks, mark)
	}
	return marks, data
}

// Issue 23 item 9 (a): on the event stream of a call's own POST, each
// request the server sends gets the session's mark for the call;
// everything else passes byte for byte, however the body is split
// (notifications are read on the stream itself since issue 24 item 5:
// readNotification).
func TestStreamMarker(t *testing.T) {
	t.Parallel()
	const mark = "secret:agt-7"
	tests := []struct {
		name      string
		stream    string
		wantMarks []string
		same      bool // the stream passes unchanged
	}{
		{"elicitation", "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"elicitation/create\",\"params\":{\"message\":\"<who>\"}}\n\n",
			[]string{mark}, false},
		{"request, params with a _meta", "data: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"roots/list\",\"params\":{\"_meta\":{\"k\":1}}}\n\n",
			[]string{mark}, false},
		{"log line", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"_meta\":{\"k\":1},\"level\":\"info\",\"data\":\"x\"}}\n\n",
			[]string{""}, true},
		{"id null", "data: {\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"roots/list\"}\n\n", []string{""}, true},
		{"no params", "data: {\"method\":\"roots/list\",\"id\":\"r\",\"jsonrpc\":\"2.0\"}\n\n", []string{mark}, false},
		{"data on two lines, CRLF", "data: {\"jsonrpc\":\"2.0\",\"id\":5,\r\ndata: \"method\":\"sampling/createMessage\",\"params\":{}}\r\n\r\n", []string{mark}, false},
		{"ends without a blank line", "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"roots/list\",\"params\":{}}", []string{mark}, false},
		{"result", "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"method\\\"\"}]}}\n\n", []string{""}, true},
		{"error", "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":1,\"message\":\"m\"}}\n\n", []string{""}, true},
		{"progress", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"agt-7\",\"progress\":1}}\n\n", []string{""}, true},
		{"not JSON", "data: hello\n\n", []string{""}, true},
		{"not an object", "data: [1,2]\n\n", []string{""}, true},
		{"_meta not an object", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\",\"params\":{\"_meta\":3}}\n\n", []string{""}, true},
		{"priming event, comment, then a request", ": hi\nid: 9\nretry: 10\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}\n\n", []string{mark}, false},
		{"a response, then a request", "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}\n\n", []string{"", mark}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, split := range []bool{false, true} {
				var r io.Reader = strings.NewReader(tt.stream)
				if split {
					r = oneByte{r}
				}
				got, err := io.ReadAll(&eventBody{ReadCloser: io.NopCloser(r), guard: testGuard(), mark: mark})
				if err != nil {
					t.Fatal(err)
				}
				if tt.same && string(got) != tt.stream {
					t.Errorf("split %v: changed:\n%q\nwant\n%q", split, got, tt.stream)
				}
				gotMarks, gotData := marks(t, string(got))
				if diff := cmp.Diff(tt.wantMarks, gotMarks); diff != "" {
					t.Errorf("split %v: marks (-want +got):\n%s\n%q", split, diff, got)
				}
				// The message is the same but for the mark.
				_, wantData := marks(t, tt.stream)
				for i := range min(len(gotData), len(wantData)) {
					var a, b map[string]any
					if json.Unmarshal([]byte(gotData[i]), &a) != nil || json.Unmarshal([]byte(wantData[i]), &b) != nil {
						continue
					}
					if p, ok := a["params"].(map[string]any); ok {
						if m, ok := p["_meta"].(map[string]any); ok {
							delete(m, metaStream)
							if len(m) == 0 {
								delete(p, "_meta")
							}
						}
						if _, had := b["params"]; !had && len(p) == 0 {
							delete(a, "params")
						}
					}
					if diff := cmp.Diff(b, a); diff != "" {
						t.Errorf("split %v: event %d changed beyond its mark (-want +got):\n%s", split, i, diff)
					}
				}
			}
		})
	}
}

// Issue 23 item 9 (a): a server's own mark names no call: only the
// session's secret does; attribute removes the mark either way, and
// reads relatedRequestId and progressToken.
func TestAttributeNeedsTheSessionSecret(t *testing.T) {
	t.Parallel()
	s := &Session{streamMark: newStreamMark()}
	_, call := s.calls.begin(t.Context(), nil)
	s.calls.written(call.ctx, "n5")
	tests := []struct {
		name string
		meta map[string]any
		want attribution
	}{
		{"the session's mark", map[string]any{metaStream: s.streamMark + call.token}, attrLive},
		{"a forged mark", map[string]any{metaStream: "0123:" + call.token}, attrNone},
		{"a bare token as mark", map[string]any{metaStream: call.token}, attrNone},
		{"progressToken", map[string]any{metaProgressToken: call.token}, attrLive},
		{"relatedRequestId", map[string]any{metaRelatedRequest: float64(5)}, attrLive},
		{"relatedRequestId of another type", map[string]any{metaRelatedRequest: "5"}, attrNone},
		{"another call's token", map[string]any{metaProgressToken: "agt-999"}, attrNone},
		{"a forged mark hides no token", map[string]any{metaStream: "x:agt-1", metaProgressToken: call.token}, attrLive},
		{"nothing", map[string]any{}, attrNone},
	}
	for _, tt := range tests {
		live, _, got := s.attribute(tt.meta)
		if got != tt.want || (got == attrLive && live != call) {
			t.Errorf("%s: attribution %d (call %v); want %d", tt.name, got, live, tt.want)
		}
		if _, ok := tt.meta[metaStream]; ok {
			t.Errorf("%s: the mark is still in _meta", tt.name)
		}
	}
	s.calls.end(call)
	if _, tag, got := s.attribute(map[string]any{metaProgressToken: call.token}); got != attrEnded || tag != call.tag {
		t.Errorf("a returned call's token: attribution %d; want attrEnded", got)
	}
}
