package mcpconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// The wire layer of an HTTP event stream (issue 25 item 8). Every event
// stream of both HTTP transports is read once, by eventBody, whose one
// scanner (sseScanner) frames it into events exactly as the go-sdk's
// reader will; what agt does with the stream watches those events in
// turn, and none frames the bytes again:
//
//  1. the bounds (peerGuard): the bytes of one event, as they arrive, and
//     the rate of the messages the server starts, at each event's end;
//  2. the screen (messageScreen): secrets masked, a message the go-sdk
//     could not read judged, a notification handed on in the stream's
//     order;
//  3. the capture (toolsListCapture): a listing page, a call's answer;
//  4. the stream mark (attribution.go): a request on a call's own stream
//     marked as that call's;
//  5. the retry clamp (clampRetry): a retry field above
//     MaxReconnectDelay rewritten to it;
//  6. the id drop (dropEventIDs): the event ids of a modern request's
//     stream, which is never resumed, dropped.
//
// The first reads the events of a read as they are framed; the others see
// them only once every event of the read passed it, so that a bound
// broken anywhere in a read keeps all of it from the go-sdk, as a reader
// that fails does.

// sseScanner frames an event stream as the go-sdk's reader does
// (scanEventsLimited, go-sdk v1.8.0): a line ends at '\n'; every '\r'
// and '\n' at its end is trimmed, so a CRLF line end is one too, and a
// line of only '\r' is blank (a lone '\r' inside a line ends nothing); a
// blank line ends the event; a line's field is what comes before its
// first ':' and its value what follows, trimmed of spaces; data values
// are joined with '\n'; a line cut off by the end of the body still
// counts, and so does the event it ends.
//
// It bounds the bytes of one event as they arrive: past max (the line
// ends of its earlier lines included), feed fails, so nothing longer is
// ever held.
type sseScanner struct {
	max int
	n   int // bytes of the current event so far
	ev  *sseEvent
	// done are the events this feed ended; free keeps spent ones for
	// their buffers.
	done, free []*sseEvent
}

// sseEvent is one event of a stream.
type sseEvent struct {
	raw     []byte // the event as it came: its lines, the blank line that ended it included
	data    []byte // the values of its data lines, joined as the go-sdk joins them
	name    []byte // the value of its (last) event line
	hasData bool   // a data line
	// valued: a data line with a value that is not only spaces (a message
	// to count; a priming event has none).
	valued bool
	// retry: a line that starts with "retry:" (clampRetry reads it).
	retry bool
	// id: an id line (the event id the go-sdk resumes a stream after).
	id bool
	// ended: a blank line ended it (not the end of the body).
	ended   bool
	lineOff int // where its current line starts in raw
}

func (e *sseEvent) reset() {
	*e = sseEvent{raw: e.raw[:0], data: e.data[:0], name: e.name[:0]}
}

// feed frames p. onEnd, when not nil, sees each event a blank line ends,
// as it ends; its error, or the bound's, stops the scan. The events ended
// wait in done.
func (s *sseScanner) feed(p []byte, bound func() error, onEnd func(*sseEvent) error) error {
	if s.ev == nil {
		s.ev = s.spare()
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		s.n += len(seg)
		if s.max > 0 && s.n > s.max {
			return bound()
		}
		s.ev.raw = append(s.ev.raw, seg...)
		if i < 0 {
			return nil
		}
		s.n++
		s.ev.raw = append(s.ev.raw, '\n')
		p = p[i+1:]
		if s.endLine() {
			s.ev.ended = true
			if err := s.endEvent(onEnd); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish takes the end of the body: a line and an event cut off by it
// count.
func (s *sseScanner) finish() {
	if s.ev == nil || len(s.ev.raw) == 0 {
		return
	}
	if s.ev.lineOff < len(s.ev.raw) {
		s.endLine()
	}
	_ = s.endEvent(nil)
}

// endLine reads the line that ends raw; it reports a blank one.
func (s *sseScanner) endLine() (blank bool) {
	e := s.ev
	line := bytes.TrimRight(e.raw[e.lineOff:], "\r\n")
	e.lineOff = len(e.raw)
	if len(line) == 0 {
		return true
	}
	field, value, ok := sseField(line)
	if !ok {
		return false // the go-sdk fails the stream on it
	}
	switch string(field) {
	case "data":
		if e.hasData {
			e.data = append(e.data, '\n')
		}
		e.hasData = true
		v := bytes.TrimSpace(value)
		e.data = append(e.data, v...)
		e.valued = e.valued || len(v) > 0
	case "event":
		e.name = append(e.name[:0], bytes.TrimSpace(value)...)
	case "retry":
		e.retry = true
	case "id":
		e.id = true
	}
	return false
}

// sseField splits one line of an event, its line end or not, into its
// field name and value at the first colon: the one reading of a line's
// field for the scanner and the rewrites; ok is false without a colon.
func sseField(line []byte) (field, value []byte, ok bool) {
	return bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte{':'})
}

func (s *sseScanner) endEvent(onEnd func(*sseEvent) error) error {
	ev := s.ev
	s.done = append(s.done, ev)
	s.ev, s.n = s.spare(), 0
	if onEnd != nil {
		return onEnd(ev)
	}
	return nil
}

func (s *sseScanner) spare() *sseEvent {
	if n := len(s.free); n > 0 {
		ev := s.free[n-1]
		s.free = s.free[:n-1]
		ev.reset()
		return ev
	}
	return &sseEvent{}
}

// spent gives back the events of done.
func (s *sseScanner) spent() {
	s.free = append(s.free, s.done...)
	clear(s.done)
	s.done = s.done[:0]
}

// eventBody is an event-stream body of either HTTP transport, read
// through the wire layer (see above) before the go-sdk reads it.
type eventBody struct {
	io.ReadCloser
	guard *peerGuard
	// countRate: the events of this stream count against the message rate
	// (streamable HTTP; the SSE transport counts decoded messages instead).
	countRate bool
	// owed: the stream answers a request of ours, so one of its events is
	// the reply, not a message the server started.
	owed bool
	// screen judges each message; nil passes them all.
	screen *messageScreen
	// capture notes listing pages and calls' answers; nil: none.
	capture *toolsListCapture
	// notify, when set, is handed each notification that passes, in the
	// stream's order, with stream, the call whose own stream it is (or
	// nil).
	notify func(msg []byte, stream *inflightCall)
	stream *inflightCall
	// mark, when set, is put on each request of the stream (markMessage:
	// the session's secret and the call's token).
	mark string
	// clamp: the retry field is held to maxRetryMS (clampRetry).
	clamp      bool
	maxRetryMS int64
	// dropIDs: the id lines of events are dropped (the modern era:
	// dropEventIDs).
	dropIDs bool
	// prefix goes before the body (primeStandalone).
	prefix []byte
	// lease, when set, is the POST's own context (drain.go): told when
	// the answer to answerID (idKey form) has come, ended when the body
	// is closed.
	lease    *streamLease
	answerID string
	answered bool
	drained  int // bytes read after the read that brought the answer

	scan  sseScanner
	chunk []byte
	out   []byte // bytes for the go-sdk, from off
	off   int
	err   error // returned once out is read
}

func (b *eventBody) Read(p []byte) (int, error) {
	for b.off == len(b.out) {
		b.out, b.off = b.out[:0], 0
		if b.err != nil {
			return 0, b.err
		}
		b.fill()
	}
	n := copy(p, b.out[b.off:])
	b.off += n
	return n, nil
}

func (b *eventBody) fill() {
	if len(b.prefix) > 0 {
		b.out, b.prefix = append(b.out, b.prefix...), nil
		return
	}
	if e := b.guard.breach(); e != nil {
		b.err = e
		return
	}
	if b.chunk == nil {
		b.chunk = make([]byte, readChunk)
		b.scan.max = b.guard.maxMessage
	}
	n, err := b.ReadCloser.Read(b.chunk)
	if b.answered {
		// Nothing reads what follows the answer: it may only end.
		if b.drained += n; b.drained > maxDrainBytes {
			b.lease.end(errDrainCut)
			b.err = errDrainCut
			return
		}
	}
	if serr := b.scan.feed(b.chunk[:n], b.tooLarge, b.count); serr != nil {
		// Nothing of this read reaches the go-sdk.
		b.scan.spent()
		b.err = serr
		return
	}
	if errors.Is(err, io.EOF) {
		// Like the go-sdk's reader, an event cut off by the end of the
		// body still counts (not one cut off by an error).
		b.scan.finish()
	}
	for _, ev := range b.scan.done {
		if b.err = b.event(ev); b.err != nil {
			break
		}
	}
	b.scan.spent()
	if err != nil && b.err == nil {
		b.err = err
	}
}

// count counts an event that carried data against the message rate.
func (b *eventBody) count(ev *sseEvent) error {
	if ev.valued && b.countRate {
		return b.guard.message(b.owed)
	}
	return nil
}

// event hands one event to the screen, the capture, the mark and the
// clamp, and puts what the go-sdk is to read in out.
func (b *eventBody) event(ev *sseEvent) error {
	raw := b.screen.scrubFields(ev.raw)
	out, err := raw, error(nil)
	if len(ev.data) > 0 && (len(ev.name) == 0 || string(ev.name) == "message") {
		msg, changed, kind, plain, serr := b.screen.judge(ev.data, nil)
		err = serr
		if kind == kindNote && b.notify != nil && err == nil {
			// Before the event reaches the go-sdk, so before any answer
			// that follows it on the stream.
			b.notify(msg, b.stream)
		}
		if b.mark != "" && kind == kindRequest && len(raw) <= b.guard.maxMessage+maxStreamMarkBytes {
			if marked, ok := markMessage(msg, b.mark); ok {
				msg, changed = marked, true
			}
		}
		if changed {
			out = appendEvent(nil, raw, msg)
		}
		if b.capture != nil && msg != nil && err == nil && kind == kindOther {
			if e := b.capture.noteMessage(msg, plain); e != nil {
				// Before the client reads the end of the event: the page is
				// never decoded.
				err = b.guard.trip(e)
			}
		}
		if b.lease != nil && !b.answered && msg != nil && err == nil && kind == kindOther && answerKey(msg, plain) == b.answerID {
			// The answer the go-sdk waits for: what follows only ends
			// the stream (drain.go).
			b.answered = true
			b.lease.answer()
		}
	}
	if ev.retry && b.clamp {
		out = clampRetry(out, b.maxRetryMS)
	}
	if ev.id && b.dropIDs {
		out = dropEventIDs(out)
	}
	b.out = append(b.out, out...)
	return err
}

// maxRetryLine bounds a retry line of an event stream that the clamp
// reads; a longer one is dropped.
const maxRetryLine = 64

var retryField = []byte("retry:")

// clampRetry bounds the retry field of an event, which tells the go-sdk
// how long to wait before it reconnects: a larger value is rewritten to
// the bound, so a server cannot park a call (or the standalone stream)
// for hours; a retry line too long to hold a number worth reading is
// dropped, line end and all (an empty line would end the event). Every
// other line is left as it is.
func clampRetry(ev []byte, maxMS int64) []byte {
	out := make([]byte, 0, len(ev))
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line = ev[:i+1]
		}
		ev = ev[len(line):]
		content, nl := line, []byte(nil)
		if content[len(content)-1] == '\n' {
			content, nl = content[:len(content)-1], []byte{'\n'}
		}
		switch {
		case !bytes.HasPrefix(content, retryField):
			out = append(out, line...)
		case len(content) > maxRetryLine:
		default:
			v := bytes.TrimSpace(content[len(retryField):])
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n > maxMS {
				out = append(append(out, "retry:"+strconv.FormatInt(maxMS, 10)...), nl...)
			} else {
				out = append(out, line...)
			}
		}
	}
	return out
}

// dropEventIDs returns the event ev without its id lines, or nothing
// when they were all it had (its blank line aside). MCP 2026-07-28 has
// no stream resumption, but the go-sdk resumes a call's stream that
// breaks after an event id with a GET (Last-Event-ID), which a modern
// server refuses, and then fails the whole connection. Without ids, a
// broken stream fails only its request, as the revision says (issue 25
// item 6: Session.lostCall).
func dropEventIDs(ev []byte) []byte {
	out := make([]byte, 0, len(ev))
	for line := range bytes.SplitAfterSeq(ev, []byte{'\n'}) {
		if field, _, ok := sseField(line); ok && string(field) == "id" {
			continue
		}
		out = append(out, line...)
	}
	if len(bytes.TrimRight(out, "\r\n")) == 0 {
		return nil
	}
	return out
}

func (b *eventBody) tooLarge() error { return b.guard.tooLarge() }

// Close closes the body and ends its lease.
func (b *eventBody) Close() error {
	err := b.ReadCloser.Close()
	b.lease.end(nil)
	return err
}

// answerKey is the id (idKey form) of the answer msg, as the screen's
// envelope read it (plain) or, for the other forms, read again; "" for a
// message that names none.
func answerKey(msg []byte, plain *envelope) string {
	env := plain
	if env == nil {
		env = new(envelope)
		if b := bytes.TrimSpace(msg); len(b) == 0 || b[0] != '{' || objectMembers(b, env.member) != nil {
			return ""
		}
	}
	if env.method != nil {
		return ""
	}
	id, _ := rawIDKey(env.id)
	return id
}

// noteMessage records msg, a message or batch that passed the screen, for
// the listing and the calls in flight (noteResponses), and returns the
// bound a result broke. plain, when not nil, is msg's envelope as the
// screen read it, in a form the go-sdk always reads: the answer is taken
// from it, without decoding msg again.
func (c *toolsListCapture) noteMessage(msg []byte, plain *envelope) *LimitError {
	if plain == nil {
		return noteResponses(c, msg)
	}
	if plain.method != nil || !json.Valid(msg) {
		// Not an answer; or not JSON the go-sdk's decoder reads (the
		// screen's scanner checks the structure, not every token), which
		// is noted nowhere, as before.
		return nil
	}
	// A plain answer has an id that is an integer or a plain string, and
	// no error: the go-sdk's decoder reads the same id and result.
	id, ok := rawIDKey(plain.id)
	if !ok {
		return nil
	}
	result := bytes.TrimSpace(plain.result)
	if plain.result == nil {
		result = nil
	}
	c.initAnswered(id, result)
	if e := c.response(id, result); e != nil {
		return e
	}
	// A fresh copy, as the decoder would make: msg's buffer is the
	// reader's.
	c.callAnswered(id, resultOrNull(bytes.Clone(result)))
	return nil
}
