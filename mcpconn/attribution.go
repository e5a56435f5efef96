//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 only; agt speaks 2025-11-25, where they are current

package mcpconn

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What ties a message a server sends on its own (a request, a log line)
// to one call of the session, in the order it is looked at:
//
//   - streamable HTTP: the event stream it came on. A message on the
//     stream of a call's own POST (or of a GET that resumes it) is that
//     call's: the round tripper marks a request (streamMarker) with the
//     session's secret and the call's progress token, under metaStream
//     in its params' _meta, before the go-sdk reads it; a notification
//     is read on the stream itself (readNotification), which knows the
//     call (attributeStream).
//   - any transport: params._meta.relatedRequestId, the JSON-RPC id of
//     the call's tools/call request, or params._meta.progressToken, the
//     progress token the call carried. MCP 2025-11-25 gives a server no
//     field of its own to say which request a request of its is about;
//     these are the ones agt reads where a server sets them.
//
// Nothing else is: a message that names no call belongs to none, however
// many calls are in flight.
const (
	metaProgressToken  = "progressToken"
	metaRelatedRequest = "relatedRequestId"
	// metaStream is agt's own mark. It never leaves the process: the
	// round tripper adds it, and attribute removes it (a server's own is
	// removed too, and counts for nothing without the secret).
	metaStream = "agt/stream"
)

// attribution says how a message the server sent on its own is tied to
// a call of the session.
type attribution uint8

const (
	// attrNone: nothing names a call.
	attrNone attribution = iota
	// attrLive: it names a call in flight.
	attrLive
	// attrEnded: it names a call of the session that has returned.
	attrEnded
)

// newStreamMark returns the secret prefix of a session's stream marks:
// 128 random bits a server never sees, so it cannot claim a call's
// stream for a message it sends elsewhere.
func newStreamMark() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:]) + ":"
}

// attribute returns the call a server's message names (see metaStream):
// the call in flight (live), or the tag of one that returned; attrNone
// when none. It removes agt's mark from meta, so handlers never see it.
func (s *Session) attribute(meta map[string]any) (live *inflightCall, tag any, attr attribution) {
	return s.attributeStream(meta, nil)
}

// attributeStream is attribute for a message read on the event stream of
// the call stream (streamable HTTP, read before any mark is put on it):
// that call's, whatever its _meta says. With stream nil it is attribute.
func (s *Session) attributeStream(meta map[string]any, stream *inflightCall) (live *inflightCall, tag any, attr attribution) {
	var token, id string
	if v, ok := meta[metaStream]; ok {
		delete(meta, metaStream)
		if mark, ok := v.(string); ok && s.streamMark != "" && stream == nil {
			token, _ = strings.CutPrefix(mark, s.streamMark)
			if token == mark {
				token = ""
			}
		}
	}
	switch {
	case stream != nil:
		token = stream.token
	case token == "":
		// The server's word, where the transport has none.
		id = metaRequestID(meta[metaRelatedRequest])
		token, _ = meta[metaProgressToken].(string)
	}
	live, tag, ok := s.calls.named(token, id)
	switch {
	case !ok:
		return nil, nil, attrNone
	case live == nil:
		return nil, tag, attrEnded
	}
	return live, tag, attrLive
}

// metaRequestID is a relatedRequestId in idKey form, "" when it is not a
// JSON-RPC id (an integer or a string).
func metaRequestID(v any) string {
	switch v := v.(type) {
	case string:
		return "s" + v
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return "n" + strconv.FormatInt(int64(v), 10)
		}
	}
	return ""
}

// metaOf returns the _meta of a message's params (the map itself: a
// change to it is the params'), nil when none.
func metaOf(p mcp.Params) map[string]any {
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil // a request without params
	}
	return p.GetMeta()
}

// maxStreamMarkBytes bounds what the mark adds to one event: the go-sdk's
// own event bound is raised by it, so a message within MaxMessageBytes
// stays within it once marked.
const maxStreamMarkBytes = 256

// streamMarker is the body of the event stream of a call's own POST (or
// of a GET that resumes it): each request the server sends on it gets
// agt's mark in its params' _meta (metaStream), the session's secret and
// the call's progress token, before the go-sdk reads it. Responses pass
// as they come: an event is held only until its first top-level members
// show whether it is one (a call's result is never held whole).
type streamMarker struct {
	io.ReadCloser
	mark string // the session's secret and the call's token
	max  int    // the session's message bound

	out []byte // bytes ready to return
	err error  // the body's error, returned once out is drained
	// passing: the current event passes as it comes, to its end;
	// lineFull: the current line (passing) has content.
	passing, lineFull bool
	// Holding an event not decided yet: its bytes as they came, its
	// lines that are not data, the current line, and its data as the
	// go-sdk joins it.
	raw, other, line, data []byte
	inData                 bool // the current line is a data line
	keys                   topKeys
}

func newStreamMarker(body io.ReadCloser, mark string, max int) *streamMarker {
	return &streamMarker{ReadCloser: body, mark: mark, max: max}
}

func (m *streamMarker) Read(p []byte) (int, error) {
	for len(m.out) == 0 && m.err == nil {
		n, err := m.ReadCloser.Read(p)
		m.feed(p[:n])
		if err != nil {
			// The go-sdk takes an event cut off by the end of the body as
			// it is: so does the mark.
			if !m.passing && len(m.raw) > 0 {
				if !m.inData {
					m.other = append(m.other, m.line...)
				}
				m.end(nil)
			}
			m.err = err
		}
	}
	if len(m.out) == 0 {
		return 0, m.err
	}
	n := copy(p, m.out)
	m.out = m.out[n:]
	if len(m.out) == 0 {
		m.out = nil
	}
	return n, nil
}

func (m *streamMarker) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i+1]
		}
		b = b[len(chunk):]
		if !m.passing {
			m.hold(chunk, i >= 0)
			continue
		}
		m.out = append(m.out, chunk...)
		if len(bytes.TrimRight(chunk, "\r\n")) > 0 {
			m.lineFull = true
		}
		if i >= 0 {
			m.passing = m.lineFull // a blank line ends the event
			m.lineFull = false
		}
	}
}

// hold takes the next bytes of a line of an event not decided yet.
func (m *streamMarker) hold(chunk []byte, ends bool) {
	m.raw = append(m.raw, chunk...)
	start := len(m.line)
	m.line = append(m.line, chunk...)
	const field = "data:"
	if !m.inData && start < len(field) && len(m.line) >= len(field) && bytes.HasPrefix(m.line, []byte(field)) {
		m.inData, start = true, len(field)
		if len(m.data) > 0 {
			m.data = append(m.data, '\n')
			m.keys.feed([]byte{'\n'})
		}
	}
	if m.inData && start < len(m.line) {
		v := bytes.TrimRight(m.line[start:], "\r\n")
		m.data = append(m.data, v...)
		m.keys.feed(v)
	}
	if m.keys.verdict == verdictOther || len(m.raw) > m.max+maxStreamMarkBytes {
		// A response (or past any message): the event passes as it
		// came, its rest as it comes.
		m.out = append(m.out, m.raw...)
		m.passing, m.lineFull = !ends || len(bytes.TrimRight(m.line, "\r\n")) > 0, !ends
		m.reset()
		return
	}
	if !ends {
		return
	}
	if len(bytes.TrimRight(m.line, "\r\n")) > 0 {
		if !m.inData {
			m.other = append(m.other, m.line...)
		}
		m.line, m.inData = m.line[:0], false
		return
	}
	m.end(m.line)
}

// end ends the held event, whose last line (blank, or nil at the end of
// the body) is last: marked when it is a message to mark, else as it
// came.
func (m *streamMarker) end(last []byte) {
	if marked, ok := markMessage(m.data, m.mark); ok {
		m.out = append(m.out, m.other...)
		m.out = append(m.out, "data: "...)
		m.out = append(m.out, marked...)
		m.out = append(m.out, '\n')
		m.out = append(m.out, last...)
	} else {
		m.out = append(m.out, m.raw...)
	}
	m.reset()
}

func (m *streamMarker) reset() {
	m.raw, m.other, m.line, m.data, m.inData = m.raw[:0], m.other[:0], m.line[:0], m.data[:0], false
	m.keys = topKeys{}
}

// markMessage returns data, a JSON-RPC request, with mark put in its
// params' _meta; ok is false for anything else (it then passes as it
// came: a notification is read on the stream, readNotification).
func markMessage(data []byte, mark string) ([]byte, bool) {
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
	v, _ := json.Marshal(mark)
	meta[metaStream] = v
	var err error
	if params["_meta"], err = marshalRaw(meta); err != nil {
		return nil, false
	}
	if msg["params"], err = marshalRaw(params); err != nil {
		return nil, false
	}
	out, err := marshalRaw(msg)
	return out, err == nil
}

// marshalRaw encodes v without HTML escapes and without a line break.
func marshalRaw(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// The verdicts of topKeys.
const (
	verdictNone  = iota // not decided yet
	verdictOther        // a response, or not an object: not marked
)

// topKeys reads a JSON value as it arrives, far enough to see whether
// it is an object with a top-level "result" or "error" member (a
// response) or not an object at all: such a value needs no mark. An
// escaped key is not matched; the whole message decides then.
type topKeys struct {
	verdict  int
	started  bool
	depth    int
	inStr    bool
	esc      bool
	wantKey  bool
	inKey    bool
	keyOdd   bool // escaped or long: matches nothing
	key      [8]byte
	keyBytes int
}

func (k *topKeys) feed(b []byte) {
	for _, c := range b {
		if k.verdict != verdictNone {
			return
		}
		if !k.started {
			switch c {
			case ' ', '\t', '\r', '\n':
			case '{':
				k.started, k.depth, k.wantKey = true, 1, true
			default:
				k.verdict = verdictOther
			}
			continue
		}
		if k.inStr {
			switch {
			case k.esc:
				k.esc = false
			case c == '\\':
				k.esc, k.keyOdd = true, k.keyOdd || k.inKey
			case c == '"':
				k.inStr = false
				if k.inKey {
					k.inKey = false
					if !k.keyOdd {
						switch string(k.key[:k.keyBytes]) {
						case "result", "error":
							k.verdict = verdictOther
						}
					}
				}
			case k.inKey:
				if k.keyBytes < len(k.key) {
					k.key[k.keyBytes] = c
					k.keyBytes++
				} else {
					k.keyOdd = true
				}
			}
			continue
		}
		switch c {
		case '"':
			k.inStr = true
			if k.depth == 1 && k.wantKey {
				k.inKey, k.wantKey, k.keyOdd, k.keyBytes = true, false, false, 0
			}
		case '{', '[':
			k.depth++
		case '}', ']':
			k.depth--
		case ',':
			if k.depth == 1 {
				k.wantKey = true
			}
		}
	}
}
