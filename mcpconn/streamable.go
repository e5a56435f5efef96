package mcpconn

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the reconnection of streamable HTTP event streams.
const (
	// DefaultMaxReconnects bounds the reconnections of one event stream in
	// a row on which the server sent no message.
	DefaultMaxReconnects = 10
	// DefaultMaxReconnectDelay bounds the wait before a reconnection that
	// a server may ask for with the retry field of its event stream.
	DefaultMaxReconnectDelay = 30 * time.Second
)

// lastEventIDHeader names the event a resumed stream continues after.
const lastEventIDHeader = "Last-Event-ID"

// reconnectQuiet: a reconnection a minute or more after the one before is
// not part of a loop (a proxy that ends idle streams, a server that polls
// slowly), so it starts the count of MaxReconnects again.
const reconnectQuiet = time.Minute

// eventStreams follows the event streams of one streamable HTTP session
// across their reconnections. The go-sdk resumes a stream with a GET on
// the context of the request the stream answers (a call, a listing) or,
// for the standalone stream, on the connection's context: the context is
// the stream's identity here.
type eventStreams struct {
	guard         *peerGuard
	maxReconnects int
	now           func() time.Time

	mu         sync.Mutex
	byCtx      map[context.Context]*eventStream
	standalone bool // the standalone stream was opened
}

// eventStream is one logical stream: its first response and every GET
// that resumed it.
type eventStream struct {
	standalone bool
	reconnects int       // in a row, less than reconnectQuiet apart, without a message from the server between them
	last       time.Time // the latest request of the stream
	// message: the server sent a message on the stream since the last
	// reconnection (set by the body reader, read at the next one).
	message atomic.Bool
}

func newEventStreams(guard *peerGuard, maxReconnects int) *eventStreams {
	return &eventStreams{guard: guard, maxReconnects: maxReconnects, now: time.Now, byCtx: map[context.Context]*eventStream{}}
}

// open accounts for a GET of the session. initial: it is the first
// request of the standalone stream (the go-sdk resumes a request's stream
// only with a Last-Event-ID, so a GET without one on a context never seen
// is the standalone stream). A reconnection past the bound trips the
// guard: a server that ends its streams again and again, quickly and
// without sending anything on them, is closed as misbehaving.
func (e *eventStreams) open(req *http.Request) (st *eventStream, initial bool, err error) {
	ctx := req.Context()
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	st = e.byCtx[ctx]
	if st == nil {
		st = &eventStream{last: now}
		e.byCtx[ctx] = st
		// Every GET of the go-sdk's carries a context that ends: the
		// request's, or the connection's at Close.
		context.AfterFunc(ctx, func() {
			e.mu.Lock()
			delete(e.byCtx, ctx)
			e.mu.Unlock()
		})
		if req.Header.Get(lastEventIDHeader) == "" && !e.standalone {
			st.standalone, e.standalone = true, true
			return st, true, nil
		}
	}
	if st.message.Swap(false) || now.Sub(st.last) >= reconnectQuiet {
		st.reconnects = 0
	}
	st.reconnects++
	st.last = now
	if st.reconnects > e.maxReconnects {
		return nil, false, e.guard.trip(&LimitError{Option: "ConnectorOptions.MaxReconnects",
			What:  "the reconnections in a row to an event stream the server ended without sending a message on it",
			Limit: int64(e.maxReconnects), Unit: "reconnections"})
	}
	return st, false, nil
}

// deferredStream is the standalone event stream, answered at once with
// an empty 200 so that the handshake, inside which the go-sdk opens it,
// never waits for the server's (or a proxy's) response headers. The real
// request is sent by the first Read, in the go-sdk's stream reader. A
// server that offers no stream (405, any other refusal, not an event
// stream) leaves it open and silent until the session closes: the stream
// is optional, the session goes on without it.
type deferredStream struct {
	send   func(ctx context.Context) (*http.Response, error)
	ctx    context.Context
	cancel context.CancelFunc

	started bool
	silent  bool
	failed  error // the real request failed: the stream ends with it
	mu      sync.Mutex
	body    io.ReadCloser
}

func newDeferredResponse(req *http.Request, send func(ctx context.Context) (*http.Response, error)) *http.Response {
	ctx, cancel := context.WithCancel(req.Context())
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:          &deferredStream{send: send, ctx: ctx, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}
}

func (d *deferredStream) Read(p []byte) (int, error) {
	if !d.started {
		d.started = true
		d.start()
	}
	switch {
	case d.failed != nil:
		return 0, d.failed
	case d.silent:
		<-d.ctx.Done()
		return 0, d.ctx.Err()
	}
	return d.body.Read(p)
}

// start sends the real request.
func (d *deferredStream) start() {
	resp, err := d.send(d.ctx)
	if err != nil {
		d.failed = err // the go-sdk reconnects, within MaxReconnects
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 != 2 || mt != "text/event-stream" {
		_ = resp.Body.Close()
		d.silent = true
		return
	}
	d.mu.Lock()
	d.body = resp.Body
	d.mu.Unlock()
}

func (d *deferredStream) Close() error {
	d.cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.body != nil {
		return d.body.Close()
	}
	return nil
}

// maxRetryLine bounds a retry line of an event stream that the clamp
// holds while it reads it; a longer one is dropped.
const maxRetryLine = 64

// retryClamp bounds the retry field of an event stream, which tells the
// go-sdk how long to wait before it reconnects: a larger value is
// rewritten to the bound, so a server cannot park a call (or the
// standalone stream) for hours. Every other line passes unchanged.
type retryClamp struct {
	io.ReadCloser
	maxMS int64

	out     []byte // rewritten bytes not yet returned
	line    []byte // the current line while it may be a retry line
	holding bool   // at the start of a line, or inside a possible retry line
	passing bool   // inside a line that is passed on as it comes
	dropped bool   // the held retry line is too long: it is dropped
}

func newRetryClamp(body io.ReadCloser, max time.Duration) *retryClamp {
	return &retryClamp{ReadCloser: body, maxMS: max.Milliseconds()}
}

func (r *retryClamp) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		n, err := r.ReadCloser.Read(p)
		r.feed(p[:n])
		if err != nil {
			if r.holding && len(r.line) > 0 {
				r.endLine(nil) // a line cut off by the end counts, as the go-sdk reads it
			}
			if len(r.out) == 0 {
				return 0, err
			}
			break
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	if len(r.out) == 0 {
		r.out = nil
	}
	return n, nil
}

var retryField = []byte("retry:")

func (r *retryClamp) feed(b []byte) {
	for len(b) > 0 {
		if r.passing {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				r.out = append(r.out, b...)
				return
			}
			r.out = append(r.out, b[:i+1]...)
			b = b[i+1:]
			r.passing = false
			continue
		}
		r.holding = true
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !r.dropped {
			r.line = append(r.line, chunk...)
		}
		switch {
		case len(r.line) < len(retryField) && !bytes.HasPrefix(retryField, r.line),
			len(r.line) >= len(retryField) && !bytes.HasPrefix(r.line, retryField):
			// Not a retry line: pass it on.
			r.out = append(r.out, r.line...)
			r.line, r.holding = r.line[:0], false
			if i < 0 {
				r.passing = true
				return
			}
			r.out = append(r.out, '\n')
			b = b[i+1:]
			continue
		case len(r.line) > maxRetryLine:
			r.dropped, r.line = true, r.line[:0]
		}
		if i < 0 {
			return
		}
		r.endLine([]byte{'\n'})
		b = b[i+1:]
	}
}

// endLine ends a held line: a retry value above the bound becomes the
// bound; a dropped line leaves nothing, not even its newline (an empty
// line would end the event).
func (r *retryClamp) endLine(nl []byte) {
	switch {
	case r.dropped:
	case bytes.HasPrefix(r.line, retryField):
		v := bytes.TrimSpace(r.line[len(retryField):])
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n > r.maxMS {
			r.out = append(r.out, "retry:"+strconv.FormatInt(r.maxMS, 10)...)
		} else {
			r.out = append(r.out, r.line...)
		}
		r.out = append(r.out, nl...)
	default:
		r.out = append(r.out, r.line...)
		r.out = append(r.out, nl...)
	}
	r.line, r.holding, r.dropped = r.line[:0], false, false
}
