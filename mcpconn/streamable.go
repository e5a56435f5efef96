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
	// DefaultReconnectBurst is how many reconnections one event stream
	// may make at once, each after the delay the server asked for.
	DefaultReconnectBurst = 10
	// DefaultMinReconnectInterval is the steady rate of reconnections of
	// one event stream past its burst: one per interval.
	DefaultMinReconnectInterval = time.Second
	// DefaultMaxReconnectDelay bounds the wait before a reconnection that
	// a server may ask for with the retry field of its event stream.
	DefaultMaxReconnectDelay = 30 * time.Second
)

// goSDKMaxRetries is the go-sdk's StreamableClientTransport.MaxRetries:
// both its count of reconnections of one stream without a new event id
// (handleSSE), which never resets with time, and its count of failed
// attempts of one reconnection. Our rate bound is the one that binds; the
// go-sdk's count is kept high, but below 57: past that many failed
// attempts its backoff overflows (calculateReconnectDelay) and rand.N
// panics. The standalone stream is primed with an event id of ours on
// every response, so its count does not run for a server that sends no
// ids (primeStandalone).
const goSDKMaxRetries = 50

// sessionIDHeader carries the session's id on every request after the
// handshake (streamable HTTP).
const sessionIDHeader = "Mcp-Session-Id"

// lastEventIDHeader names the event a resumed stream continues after.
const lastEventIDHeader = "Last-Event-ID"

// eventStreams follows the event streams of one streamable HTTP session
// across their reconnections. The go-sdk resumes a stream with a GET on
// the context of the request the stream answers (a call, a listing) or,
// for the standalone stream, on the connection's context: the context is
// the stream's identity here.
type eventStreams struct {
	burst int
	every time.Duration
	now   func() time.Time

	mu         sync.Mutex
	byCtx      map[context.Context]*eventStream
	standalone bool // the standalone stream was opened
	primed     atomic.Int64
}

// eventStream is one logical stream: its first response and every GET
// that resumed it.
type eventStream struct {
	standalone bool
	// A token bucket of reconnections: burst at most, one more per
	// interval; negative while reconnections wait for theirs.
	tokens    float64
	tokenTime time.Time
	// primedID is the event id primeStandalone put at the start of the
	// latest response of the standalone stream (a string).
	primedID atomic.Value
}

func newEventStreams(burst int, every time.Duration) *eventStreams {
	return &eventStreams{burst: burst, every: every, now: time.Now, byCtx: map[context.Context]*eventStream{}}
}

// open accounts for a GET of the session. initial: it is the first
// request of the standalone stream (the go-sdk resumes a request's stream
// only with a Last-Event-ID, so a GET without one on a context never seen
// is the standalone stream). Every other GET is a reconnection: it must
// wait the returned delay. A stream reconnects at most burst times at
// once, then once per interval, whatever retry its server asks for: a
// server that polls (ends the stream and asks for a short retry, again
// and again) works for ever, and one that ends its streams in a loop
// costs one request per interval and stream.
func (e *eventStreams) open(req *http.Request) (st *eventStream, initial bool, wait time.Duration) {
	ctx := req.Context()
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	st = e.byCtx[ctx]
	if st == nil {
		st = &eventStream{tokens: float64(e.burst), tokenTime: now}
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
			return st, true, 0
		}
	}
	st.tokens = min(float64(e.burst), st.tokens+float64(now.Sub(st.tokenTime))/float64(e.every))
	st.tokenTime = now
	st.tokens--
	if st.tokens >= 0 {
		return st, false, 0
	}
	return st, false, time.Duration(-st.tokens * float64(e.every))
}

// primeStandalone puts an event of ours, an id without data, at the start
// of a response of the standalone stream. The go-sdk ends a session whose
// stream it resumes goSDKMaxRetries times without a new event id, however
// far apart: a server that sends no ids on an idle standalone stream that
// a proxy cuts every few minutes would lose its session within hours. A
// fresh id on every response is progress to the go-sdk; the next GET
// carries it as Last-Event-ID, which unprime removes (the server never
// sees it). An id of the server's in the response comes later and wins,
// as it should.
func (e *eventStreams) primeStandalone(st *eventStream, body io.ReadCloser) io.ReadCloser {
	id := "agt-" + strconv.FormatInt(e.primed.Add(1), 10)
	st.primedID.Store(id)
	return &prefixedBody{ReadCloser: body, prefix: []byte("id: " + id + "\n\n")}
}

// unprime removes from a GET of the standalone stream the Last-Event-ID
// that primeStandalone made up.
func (st *eventStream) unprime(req *http.Request) {
	if id, _ := st.primedID.Load().(string); id != "" && req.Header.Get(lastEventIDHeader) == id {
		req.Header.Del(lastEventIDHeader)
	}
}

// prefixedBody reads prefix, then the body.
type prefixedBody struct {
	io.ReadCloser
	prefix []byte
}

func (p *prefixedBody) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.ReadCloser.Read(b)
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
		d.failed = err // the go-sdk reconnects, at the bounded rate
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
