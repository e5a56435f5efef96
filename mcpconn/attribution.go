//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; agt still answers them from legacy servers, and a modern server asks for them inside input_required results

package mcpconn

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
//     call's: the wire layer marks a request (eventBody.mark) with the
//     session's secret and the call's progress token, under metaStream
//     in its params' _meta, before the go-sdk reads it; a notification
//     is read on the stream itself (readNotification), which knows the
//     call (attributeStream).
//   - any transport: params._meta.relatedRequestId, the JSON-RPC id of
//     the call's tools/call request, params._meta.progressToken, the
//     progress token the call carried, or (2025-11-25 tasks)
//     params._meta["io.modelcontextprotocol/related-task"].taskId, the
//     id of the task the server runs for the call. MCP 2025-11-25 gives a server no
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
	var token, id, task string
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
		task = relatedTask(meta)
	}
	live, tag, ok := s.calls.named(token, id, task)
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

// markMessage returns data, a JSON-RPC request, with mark put in its
// params' _meta; ok is false for anything else (it then passes as it
// came: a notification is read on the stream, readNotification). It
// rewrites the request in one pass of the wire layer's JSON scanner:
// every other member keeps its bytes and its place; a mark the server
// put there is left out.
func markMessage(data []byte, mark string) ([]byte, bool) {
	b := bytes.TrimSpace(data)
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	markJSON, _ := json.Marshal(mark)
	var (
		out    bytes.Buffer
		method string
		hasID  bool
	)
	seen, err := markedObject(&out, b, "params", func(key, val []byte) error {
		switch string(key) {
		case "method":
			method, _ = jsonString(val, "method")
		case "id":
			hasID = !isNull(val)
		}
		return nil
	}, func(w *bytes.Buffer, params []byte) error {
		if isNull(params) {
			params = []byte("{}")
		}
		if params[0] != '{' {
			return errNotRequest
		}
		seen, err := markedObject(w, params, "_meta", nil, func(w *bytes.Buffer, meta []byte) error {
			if isNull(meta) {
				meta = []byte("{}")
			}
			if meta[0] != '{' {
				return errNotRequest
			}
			_, err := markedObject(w, meta, metaStream, nil, nil, markJSON)
			return err
		}, nil)
		if err == nil && !seen {
			closeWithMember(w, "_meta", []byte(`{"`+metaStream+`":`+string(markJSON)+`}`))
		}
		return err
	}, nil)
	if err != nil || method == "" || !hasID {
		return nil, false
	}
	if !seen {
		closeWithMember(&out, "params", []byte(`{"_meta":{"`+metaStream+`":`+string(markJSON)+`}}`))
	}
	return out.Bytes(), true
}

var errNotRequest = errMalformed("not a request")

// markedObject writes the JSON object b to w, each member as it came
// (watch sees it first, when set), but the members named key: edit writes
// their value, or, with edit nil, they are left out and, when last is set,
// key: last ends the object. seen reports a member named key.
func markedObject(w *bytes.Buffer, b []byte, key string, watch func(k, v []byte) error,
	edit func(w *bytes.Buffer, v []byte) error, last []byte) (seen bool, err error) {
	w.WriteByte('{')
	n := 0
	err = objectMembers(b, func(k, v []byte) error {
		if watch != nil {
			if err := watch(k, v); err != nil {
				return err
			}
		}
		if string(k) == key {
			seen = true
			if edit == nil {
				return nil
			}
		}
		if n > 0 {
			w.WriteByte(',')
		}
		n++
		writeKey(w, k)
		if string(k) == key {
			return edit(w, v)
		}
		w.Write(v)
		return nil
	})
	w.WriteByte('}')
	if err == nil && last != nil {
		closeWithMember(w, key, last)
	}
	return seen, err
}

// closeWithMember adds the member key: val at the end of the object w
// ends with.
func closeWithMember(w *bytes.Buffer, key string, val []byte) {
	w.Truncate(w.Len() - 1)
	if b := w.Bytes(); b[len(b)-1] != '{' {
		w.WriteByte(',')
	}
	writeKey(w, []byte(key))
	w.Write(val)
	w.WriteByte('}')
}

// writeKey writes key, decoded text, as a JSON string and a colon.
func writeKey(w *bytes.Buffer, key []byte) {
	k, _ := json.Marshal(string(key))
	w.Write(k)
	w.WriteByte(':')
}
