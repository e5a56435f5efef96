package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/agtsdk/agt/internal/serverlog"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxMessageDepth bounds the nesting of arrays and objects in one message
// from a server, fixed. It is the go-sdk's own: its JSON-RPC decoder
// refuses a deeper message, and a message it refuses ends the connection,
// so agt judges every message before the go-sdk reads it (see
// messageScreen).
const maxMessageDepth = 1000

// listingLevels are the levels of a tools/list answer around each of its
// tools: the message, its result and the tools array.
const listingLevels = 3

// tooDeep is why an answer deeper than maxMessageDepth was not read.
func tooDeep() *LimitError {
	return &LimitError{Option: "MaxMessageDepth (fixed)", What: "the nesting of the server's answer",
		Limit: maxMessageDepth, Unit: "levels"}
}

// toolTooDeep leaves out a listed tool that takes its listing past
// maxMessageDepth (LoadedTool.Err).
func toolTooDeep() *LimitError {
	return &LimitError{Option: "MaxMessageDepth (fixed)",
		What: "the nesting of the tool, with the 3 levels of its listing around it", Limit: maxMessageDepth, Unit: "levels"}
}

// errUndecodable is why an answer the JSON-RPC decoder refuses was not
// read.
var errUndecodable = errMalformed("the answer is not a JSON-RPC response the client can read")

// messageScreen judges every message of one session's server before the
// go-sdk decodes it: on stdio each line (screenedLines), on HTTP each
// event (eventBody, the wire layer) and each application/json body
// (screenedJSONBody). The go-sdk ends the connection at the first message
// its decoder refuses; the screen keeps the session:
//
//   - A message nested deeper than maxMessageDepth that answers a request
//     of ours: a tools/call fails with ErrBadResult and ErrLimit, a
//     tools/list page is read without its tools too deep for it (each
//     left out with toolTooDeep), any other request fails with a
//     JSON-RPC error naming the bound.
//   - An answer the decoder refuses for another reason (an error that is
//     not an object...) with a usable id fails its request the same way.
//   - Anything else the decoder would refuse (a response whose id is null
//     or missing: it answers no request; a request or notification of the
//     server's nested too deep; an over-deep batch) is dropped and logged
//     to ConnectorOptions.Logger, bounded as a shared server's lines are.
//     An application/json body answers the request it was the response
//     to, so a body that names no request is that request's error.
//
// Before any of that, the screen masks the connection's secrets in the
// message (scrub; see Secrets in what servers send in the package doc),
// so that neither its judgement nor anything above it sees them. Every
// other message goes on as the server sent it, byte for byte.
type messageScreen struct {
	ref     resource.Ref
	capture *toolsListCapture
	guard   *peerGuard
	// countDrops: a dropped message counts against the server's message
	// rate as one it started, where the reader below the screen does not
	// count it (stdio, SSE; a streamable HTTP body counts every event).
	countDrops bool
	logger     *slog.Logger
	gate       serverlog.Gate
	// scrub masks the values resolved for the connection, and its
	// literal credentials; nil: none.
	scrub *scrubber
}

// scrubs reports whether the screen masks any value.
func (s *messageScreen) scrubs() bool { return s != nil && s.scrub != nil }

// screen returns msg as the go-sdk is to read it: msg itself (changed
// false), a replacement, or nil for a message dropped. answers, when not
// nil, gives the exact id of the request the message answers as a whole
// (an application/json body), or nil. The error is the rate bound a
// dropped message broke. A nil screen passes everything.
func (s *messageScreen) screen(msg []byte, answers func() json.RawMessage) (out []byte, changed bool, err error) {
	out, changed, _, _, err = s.judge(msg, answers)
	return out, changed, err
}

// msgKind is what a message that passed the screen is, as its envelope
// says.
type msgKind uint8

const (
	kindOther   msgKind = iota // a response, a batch, not JSON-RPC, or dropped
	kindNote                   // a notification: a method and no id (or a null one)
	kindRequest                // a request: a method and an id
)

// judge is screen that also says what kind of message passes, from the
// envelope the screen reads anyway (the stream mark needs it), and gives
// that envelope when it is one of the plain forms the go-sdk always reads
// (the capture takes an answer from it, not from a second decoding); nil
// otherwise. A nil screen passes everything, and reads the envelope for
// the kind only.
func (s *messageScreen) judge(msg []byte, answers func() json.RawMessage) (out []byte, changed bool, kind msgKind, plain *envelope, err error) {
	if s == nil {
		var env envelope
		if b := bytes.TrimSpace(msg); len(b) > 0 && b[0] == '{' && objectMembers(b, env.member) == nil {
			kind = env.kind()
		}
		return msg, false, kind, nil, nil
	}
	b := bytes.TrimSpace(msg)
	// The secrets first: the rest of the screen, and the go-sdk, read the
	// message without them (one that had one goes on rewritten).
	scrubbed := false
	if sb, ok := s.scrub.jsonChanged(b); ok {
		msg, b, scrubbed = sb, sb, true
	}
	if len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		return msg, scrubbed, kindOther, nil, nil // not JSON-RPC: the go-sdk reports it, as always
	}
	if b[0] == '[' {
		if end, nesting := skipNested(b, 0); end < 0 || nesting <= maxMessageDepth {
			return msg, scrubbed, kindOther, nil, nil
		}
		return nil, true, kindOther, nil, s.drop("a batch nested deeper than MaxMessageDepth")
	}
	// One pass reads the members the decision needs and the nesting.
	var env envelope
	nesting, err := objectNesting(b, env.member)
	if err != nil {
		return msg, scrubbed, kindOther, nil, nil // malformed JSON: the go-sdk reports it, as always
	}
	deep := nesting > maxMessageDepth
	if !deep && env.plain() {
		return msg, scrubbed, env.kind(), &env, nil
	}
	if !deep && decodes(b) {
		return msg, scrubbed, env.kind(), nil, nil
	}
	cause := error(errUndecodable)
	if deep {
		cause = tooDeep()
	}
	if env.method == nil {
		if id, ok := rawIDKey(env.id); ok {
			return s.refuseAnswer(b, env.id, id, deep, cause), true, kindOther, nil, nil
		}
		if answers != nil {
			// The body answers the request it was the response to.
			if raw := answers(); raw != nil {
				id, _ := rawIDKey(raw)
				return s.refuseAnswer(b, raw, id, false, cause), true, kindOther, nil, nil
			}
		}
		if deep {
			return nil, true, kindOther, nil, s.drop("a response nested deeper than MaxMessageDepth that names no request (id)")
		}
		return nil, true, kindOther, nil, s.drop("a response that names no request (its id is null, missing or not a string or integer)")
	}
	if deep {
		return nil, true, kindOther, nil, s.drop("a request or notification nested deeper than MaxMessageDepth")
	}
	return nil, true, kindOther, nil, s.drop("a request or notification the JSON-RPC decoder refuses")
}

// refuseAnswer returns what the go-sdk reads in place of an answer (to the
// request id, idKey form; rawID as sent) that it cannot read: a tools/list
// page without its tools too deep for it, or the answer that fails the
// request with cause.
func (s *messageScreen) refuseAnswer(msg, rawID json.RawMessage, id string, deep bool, cause error) []byte {
	if deep && s.capture.listingPage(id) {
		if page, ok := s.cutListing(msg, id); ok {
			return page
		}
		s.capture.refusePage(id, tooDeep())
	}
	if s.capture.refuseCall(id, cause) {
		// The call reads its failure from the capture; the go-sdk only
		// needs an answer to end the request.
		return answer(rawID, "result", decodedElsewhere)
	}
	return errorAnswer(rawID, cause)
}

// cutListing returns the tools/list answer msg with each tool nested
// deeper than maxMessageDepth allows in a listing replaced by null (which
// the go-sdk leaves out), and notes those tools in the capture; false when
// no tool was cut or the go-sdk still cannot read the page without them.
func (s *messageScreen) cutListing(msg []byte, id string) ([]byte, bool) {
	var (
		cuts     []cutTool
		cutBytes int
		page     bytes.Buffer
	)
	err := rewriteObject(&page, msg, func(w *bytes.Buffer, key, val []byte) (bool, error) {
		if string(key) != "result" || val[0] != '{' {
			return false, nil
		}
		cuts, cutBytes = nil, 0 // the last result is the one decoders keep
		return true, rewriteObject(w, val, func(w *bytes.Buffer, key, val []byte) (bool, error) {
			if string(key) != "tools" || val[0] != '[' {
				return false, nil
			}
			cuts, cutBytes = nil, 0
			w.WriteByte('[')
			err := arrayElements(val, func(i int, tool []byte) error {
				if i > 0 {
					w.WriteByte(',')
				}
				if _, nesting := skipNested(tool, 0); nesting <= maxMessageDepth-listingLevels {
					w.Write(tool)
					return nil
				}
				cuts = append(cuts, cutTool{index: i, name: wireToolName(tool)})
				cutBytes += len(tool)
				w.WriteString("null")
				return nil
			})
			w.WriteByte(']')
			return true, err
		})
	})
	if err != nil || len(cuts) == 0 || !decodes(page.Bytes()) {
		return nil, false
	}
	s.capture.cutTools(id, cuts, cutBytes)
	return page.Bytes(), true
}

// drop logs a message the screen keeps from the go-sdk, never its data,
// and counts it against the rate where nothing else does.
func (s *messageScreen) drop(reason string) error {
	if s.gate.Pass() && s.logger != nil {
		attrs := []slog.Attr{slog.String("mount", string(s.ref)), slog.String("reason", reason)}
		if n := s.gate.TakeDropped(); n > 0 {
			attrs = append(attrs, slog.Int64("dropped_before", n))
		}
		s.logger.LogAttrs(context.Background(), slog.LevelWarn, "agt.server_message_dropped", attrs...)
	}
	if s.countDrops {
		return s.guard.message(false)
	}
	return nil
}

// cutTool is a tool left out of a listing page because it nests too deep
// for it (messageScreen.cutListing): its place in the page's tools array
// and its name, as far as the wire says.
type cutTool struct {
	index int
	name  string
}

// tool is the Tool a listing gives for t: left out by LoadTools with the
// reason.
func (t cutTool) tool() Tool { return Tool{Name: t.name, unreadable: toolTooDeep()} }

// wireToolName is the name member of a listed tool's wire form, "" when
// it has none that is a string.
func wireToolName(tool []byte) string {
	name := ""
	if tool[0] == '{' {
		_ = objectMembers(tool, func(key, val []byte) error {
			if string(key) == "name" {
				name, _ = jsonString(val, "name")
			}
			return nil
		})
	}
	return strings.ToValidUTF8(name, "\uFFFD")
}

// envelope holds the members of a message the decision needs, exactly as
// sent (the last of a key, as decoders keep it); nil when absent.
type envelope struct {
	jsonrpc, id, method, err, result []byte
}

func (e *envelope) member(key, val []byte) error {
	switch string(key) {
	case "jsonrpc":
		e.jsonrpc = val
	case "id":
		e.id = val
	case "method":
		e.method = val
	case "error":
		e.err = val
	case "result":
		e.result = val
	}
	return nil
}

// kind is what the message is: a notification, a request, or other.
func (e *envelope) kind() msgKind {
	switch {
	case e.method == nil:
		return kindOther
	case e.id == nil || isNull(e.id):
		return kindNote
	}
	return kindRequest
}

// plain reports the common forms the go-sdk's decoder always reads: a
// request or notification with a plain string method and an id that is
// absent, null, an integer or a plain string; a result answer whose id is
// an integer or a plain string. Anything else is judged by the decoder
// itself (decodes).
func (e *envelope) plain() bool {
	if string(e.jsonrpc) != `"2.0"` {
		return false
	}
	if e.method != nil {
		return plainString(e.method) && (e.id == nil || isNull(e.id) || integer(e.id) || plainString(e.id))
	}
	return (e.err == nil || isNull(e.err)) && (integer(e.id) || plainString(e.id))
}

// decodes reports whether the go-sdk's JSON-RPC decoder reads msg.
func decodes(msg []byte) bool {
	_, err := jsonrpc.DecodeMessage(msg)
	return err == nil
}

func plainString(b []byte) bool {
	return len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b[1:len(b)-1], '\\') < 0 && bytes.IndexByte(b[1:len(b)-1], '"') < 0
}

func integer(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("-"))
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// rewriteObject writes the JSON object b to w, each member as it is or as
// edit wrote it (edit returns true then). Keys are written as JSON
// strings of their decoded text.
func rewriteObject(w *bytes.Buffer, b []byte, edit func(w *bytes.Buffer, key, val []byte) (bool, error)) error {
	w.WriteByte('{')
	n := 0
	err := objectMembers(b, func(key, val []byte) error {
		if n > 0 {
			w.WriteByte(',')
		}
		n++
		writeKey(w, key)
		done, err := edit(w, key, val)
		if err == nil && !done {
			w.Write(val)
		}
		return err
	})
	w.WriteByte('}')
	return err
}

// errorAnswer is a JSON-RPC error answer to the request rawID (exact JSON)
// that says, in agt's words, why the server's answer was not read.
func errorAnswer(rawID json.RawMessage, cause error) []byte {
	text, _ := json.Marshal("mcpconn: the answer was not read: " + strings.TrimPrefix(cause.Error(), "mcpconn: "))
	return answer(rawID, "error", append(append([]byte(`{"code":-32603,"message":`), text...), '}'))
}

// answer is a JSON-RPC answer to the request rawID (exact JSON) whose
// member ("result" or "error") is val.
func answer(rawID json.RawMessage, member string, val []byte) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), rawID...)
	b = append(b, `,"`+member+`":`...)
	b = append(b, val...)
	return append(b, '}')
}

// lineReader is the reading half of screenedLines, the wire layer of
// stdio: it reads the body below in chunks, frames them into lines once
// (the bound, when set, finds the line ends as it counts them), hands
// each whole line (in line, its '\n' included) to its lineHandler, and
// serves what the handler put in out.
type lineReader struct {
	io.ReadCloser
	// bound keeps each line within the message bound; nil: none.
	bound *lineGuard
	chunk []byte
	ends  []int  // the line ends of the chunk
	line  []byte // the current line so far
	out   []byte // bytes for the go-sdk, from off
	off   int
	err   error // returned once out is read
}

// lineHandler takes the lines of a lineReader.
type lineHandler interface {
	// endLine takes the whole line in line.
	endLine()
	// endBody takes the end of the body (io.EOF), after its last line.
	endBody()
}

// readChunk is how much a lineReader asks of the reader below at a time.
const readChunk = 32 << 10

func (r *lineReader) read(p []byte, h lineHandler) (int, error) {
	for r.off == len(r.out) {
		r.out, r.off = r.out[:0], 0
		if r.err != nil {
			return 0, r.err
		}
		r.fill(h)
	}
	n := copy(p, r.out[r.off:])
	r.off += n
	return n, nil
}

func (r *lineReader) fill(h lineHandler) {
	if r.chunk == nil {
		r.chunk = make([]byte, readChunk)
	}
	n, err := r.ReadCloser.Read(r.chunk)
	b := r.chunk[:n]
	if r.bound != nil {
		var gerr error
		if r.ends, gerr = r.bound.lineEnds(b, r.ends[:0]); gerr != nil {
			// Nothing of this read reaches the go-sdk.
			r.err = gerr
			return
		}
	} else {
		r.ends = r.ends[:0]
		for i := 0; ; {
			k := bytes.IndexByte(b[i:], '\n')
			if k < 0 {
				break
			}
			r.ends = append(r.ends, i+k)
			i += k + 1
		}
	}
	from := 0
	for _, end := range r.ends {
		if r.err != nil {
			break
		}
		r.line = append(r.line, b[from:end+1]...)
		from = end + 1
		h.endLine()
	}
	if r.err == nil {
		r.line = append(r.line, b[from:]...)
	}
	if err != nil && r.err == nil {
		// At the end of the body a last line without its newline is read
		// too, as the go-sdk reads it; a body that broke (a bound below)
		// hands on nothing more.
		if errors.Is(err, io.EOF) {
			if len(r.line) > 0 {
				h.endLine()
			}
			h.endBody()
		}
		if r.err == nil {
			r.err = err
		}
	}
}

// screenedLines hands a stdio server's stdout to the go-sdk with every
// line screened: on stdio one line is one message (as the message bound
// counts it too).
type screenedLines struct {
	lineReader
	screen *messageScreen
}

func (l *screenedLines) Read(p []byte) (int, error) { return l.read(p, l) }

func (l *screenedLines) endBody() {}

func (l *screenedLines) endLine() {
	msg, changed, err := l.screen.screen(l.line, nil)
	switch {
	case err != nil:
		l.err = err
	case !changed && len(l.out) == 0:
		l.out, l.line = l.line, l.out // no copy of the common case
	case !changed:
		l.out = append(l.out, l.line...)
	case msg != nil:
		l.out = append(append(l.out, msg...), '\n')
	}
	l.line = l.line[:0]
}

// screenedJSONBody is an application/json response body of streamable
// HTTP, read whole (the go-sdk reads it whole too, within the message
// bound below it), screened as one message or batch, and noted in the
// capture when there is one.
type screenedJSONBody struct {
	io.ReadCloser
	screen  *messageScreen
	capture *toolsListCapture // nil: nothing to note
	guard   *peerGuard
	// scrubOnly: a body that is no answer the screen judges (an error
	// status's): only the screen's secrets are masked in it.
	scrubOnly bool
	req       *http.Request // the POST it answers
	// notify, when set, is handed each notification that passes, with
	// stream, the call whose POST the body answers (or nil).
	notify func(msg []byte, stream *inflightCall)
	stream *inflightCall
	out    []byte
	off    int
	done   bool
	err    error
}

func (j *screenedJSONBody) Read(p []byte) (int, error) {
	if !j.done {
		j.done = true
		body, err := io.ReadAll(j.ReadCloser)
		if err != nil {
			j.err = err
			return 0, err
		}
		j.out = body
		if j.scrubOnly {
			j.out, j.err = j.screen.scrub.json(body), io.EOF
			return j.Read(p)
		}
		msg, changed, kind, plain, serr := j.screen.judge(body, j.requestID)
		switch {
		case serr != nil:
			j.err = serr
		case changed:
			j.out = msg
		}
		if kind == kindNote && serr == nil && j.notify != nil {
			// A notification that passes, scrubbed or as it came.
			j.notify(msg, j.stream)
		}
		if j.capture != nil && j.err == nil && kind == kindOther {
			if e := j.capture.noteMessage(j.out, plain); e != nil {
				j.err = j.guard.trip(e)
			}
		}
		if j.err == nil {
			j.err = io.EOF
		}
	}
	if j.off == len(j.out) {
		return 0, j.err
	}
	n := copy(p, j.out[j.off:])
	j.off += n
	return n, nil
}

// requestID is the exact id of the request the body answers, nil when it
// cannot be read.
func (j *screenedJSONBody) requestID() json.RawMessage {
	if j.req == nil || j.req.GetBody == nil {
		return nil
	}
	body, err := j.req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	id, _, ok := peekRequest(body)
	if !ok {
		return nil
	}
	return id
}

// scrubFields returns ev, the lines of an event, with the screen's secrets
// masked in each line other than its data and blank lines (an id, an
// event name, a comment, a line the go-sdk would quote in an error), as
// text; the data is screened as a message. ev itself when none held one.
func (s *messageScreen) scrubFields(ev []byte) []byte {
	if !s.scrubs() {
		return ev
	}
	var segs []scrubSeg
	var spans []span // where each segment is in ev
	for i := 0; i < len(ev); {
		end := len(ev)
		if k := bytes.IndexByte(ev[i:], '\n'); k >= 0 {
			end = i + k
		}
		line := bytes.TrimRight(ev[i:end], "\r")
		if field, _, _ := bytes.Cut(line, []byte{':'}); len(line) > 0 && string(field) != "data" {
			segs = append(segs, scrubSeg{b: line, text: true})
			spans = append(spans, span{int32(i), int32(i + len(line))})
		}
		i = end + 1
	}
	if !s.scrub.scrub(segs) {
		return ev
	}
	out := make([]byte, 0, len(ev)+64)
	done := int32(0)
	for k, seg := range segs {
		out = append(append(out, ev[done:spans[k].from]...), seg.b...)
		done = spans[k].to
	}
	return append(out, ev[done:]...)
}

// appendEvent appends the lines of the event ev with its data lines
// replaced by data (one data line per line of it), or left out when data
// is nil.
func appendEvent(out, ev, data []byte) []byte {
	put := data != nil
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line = ev[:i+1]
		}
		ev = ev[len(line):]
		if field, _, ok := sseField(line); !ok || string(field) != "data" {
			out = append(out, line...)
			continue
		}
		if put {
			for part := range bytes.SplitSeq(data, []byte{'\n'}) {
				out = append(append(append(out, "data: "...), part...), '\n')
			}
			put = false
		}
	}
	return out
}
