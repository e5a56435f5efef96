package mcpconn

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
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
	// Reconnections: burst at most at once, then one per interval; a
	// reservation past them waits for its turn.
	reconnects *rate.Limiter
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
		st = &eventStream{reconnects: rate.NewLimiter(rate.Every(e.every), e.burst)}
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
	return st, false, st.reconnects.ReserveN(now, 1).DelayFrom(now)
}

// primeStandalone returns an event of ours, an id without data, to put
// at the start of a response of the standalone stream (eventBody.prefix).
// The go-sdk ends a session whose stream it resumes goSDKMaxRetries times
// without a new event id, however far apart: a server that sends no ids
// on an idle standalone stream that a proxy cuts every few minutes would
// lose its session within hours. A fresh id on every response is
// progress to the go-sdk; the next GET carries it as Last-Event-ID, which
// unprime removes (the server never sees it). An id of the server's in
// the response comes later and wins, as it should.
func (e *eventStreams) primeStandalone(st *eventStream) []byte {
	id := "agt-" + strconv.FormatInt(e.primed.Add(1), 10)
	st.primedID.Store(id)
	return []byte("id: " + id + "\n\n")
}

// unprime removes from a GET of the standalone stream the Last-Event-ID
// that primeStandalone made up.
func (st *eventStream) unprime(req *http.Request) {
	if id, _ := st.primedID.Load().(string); id != "" && req.Header.Get(lastEventIDHeader) == id {
		req.Header.Del(lastEventIDHeader)
	}
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

	// ended, when set, is told once the stream failed, opened nothing,
	// ended or was closed (a subscriptions/listen: listenAck.end).
	ended func()

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
		d.end()
		return 0, d.failed
	case d.silent:
		d.end()
		<-d.ctx.Done()
		return 0, d.ctx.Err()
	}
	n, err := d.body.Read(p)
	if err != nil {
		d.end()
	}
	return n, err
}

func (d *deferredStream) end() {
	if d.ended != nil {
		d.ended()
	}
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
	d.end()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.body != nil {
		return d.body.Close()
	}
	return nil
}
