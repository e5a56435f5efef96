package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agtsdk/agt/internal/weborigin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	methodListTools = "tools/list"
	methodCallTool  = "tools/call"
)

// toolsListCapture keeps the exact bytes of tools/list results. The go-sdk
// client decodes inputSchema into map[string]any (losing key order and
// large integers); the capture sees the wire message first.
//
// It also bounds a listing walk while it is read: each page's bytes and
// tools are counted as the page arrives, before the go-sdk decodes it.
type toolsListCapture struct {
	maxTools, maxBytes int
	// calls are the session's calls in flight, whose results the
	// transports capture too (result.go); nil captures none.
	calls *inflightCalls

	mu        sync.Mutex
	want      string          // id of the latest tools/list request; "" when answered
	last      json.RawMessage // its result
	lastCut   []cutTool       // the tools the screen cut from it
	walkTools int             // tools of the walk so far
	walkBytes int             // bytes of the walk so far
	// cut are the tools the screen cut from the answer to the request
	// cutID, until that answer is recorded; refused is the bound that kept
	// the screen from reading the latest request's answer at all.
	cutID   string
	cut     []cutTool
	refused *LimitError
	// initID is the id of the initialize request until its answer;
	// taskCalls is what the answer said (declaresTaskCalls).
	initID    string
	taskCalls bool
}

func newToolsListCapture(maxTools, maxBytes int) *toolsListCapture {
	return &toolsListCapture{maxTools: maxTools, maxBytes: maxBytes}
}

// beginWalk starts counting a new tools/list walk.
func (c *toolsListCapture) beginWalk() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.walkTools, c.walkBytes = 0, 0
}

// request notes a tools/list request. Only the latest one counts: a
// Session walks one list at a time, so the answer to an older request is a
// late answer to one that timed out or was cancelled, and must never pass
// for the current page.
func (c *toolsListCapture) request(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.want = id
	c.last, c.lastCut = nil, nil
	c.cutID, c.cut, c.refused = "", nil, nil
}

// listingPage reports whether id is the tools/list request whose page the
// walk waits for.
func (c *toolsListCapture) listingPage(id string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return id != "" && id == c.want
}

// cutTools notes the tools the screen cut from the answer to the listing
// request id (n bytes of them, which count for the walk), for response
// to keep with the page.
func (c *toolsListCapture) cutTools(id string, cuts []cutTool, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id != c.want {
		return
	}
	c.cutID, c.cut = id, cuts
	c.walkBytes += n
}

// refusePage notes the bound that kept the screen from reading the answer
// to the listing request id.
func (c *toolsListCapture) refusePage(id string, e *LimitError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id == c.want {
		c.refused = e
	}
}

// takeRefused returns the bound refusePage noted for the latest listing
// request, and forgets it.
func (c *toolsListCapture) takeRefused() *LimitError {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.refused
	c.refused = nil
	return e
}

// response records the result of the current tools/list request; a page
// that takes the walk past its bounds is not kept, and the bound is
// returned.
func (c *toolsListCapture) response(id string, result json.RawMessage) *LimitError {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id == "" || id != c.want {
		return nil
	}
	c.want = ""
	c.walkBytes += len(result)
	if c.walkBytes > c.maxBytes {
		return &LimitError{Option: "ConnectorOptions.Limits.MaxListBytes", What: "the server's tool listing",
			Limit: int64(c.maxBytes), Unit: "bytes"}
	}
	c.walkTools += countListedTools(result)
	if c.walkTools > c.maxTools {
		return &LimitError{Option: "ConnectorOptions.Limits.MaxTools", What: "the server's tool listing",
			Limit: int64(c.maxTools), Unit: "tools"}
	}
	c.last = bytes.Clone(result)
	if c.cutID == id {
		c.lastCut = c.cut
	}
	c.cutID, c.cut = "", nil
	return nil
}

// take returns the latest captured result, with the tools the screen cut
// from it, and forgets them.
func (c *toolsListCapture) take() (json.RawMessage, []cutTool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, cut := c.last, c.lastCut
	c.last, c.lastCut = nil, nil
	return r, cut
}

func idKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	case string:
		return "s" + v
	default:
		return fmt.Sprint(v)
	}
}

// rawIDKey is idKey for an id still in JSON form.
func rawIDKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return "", false
	}
	return "n" + strconv.FormatInt(n, 10), true
}

// captureTransport wraps a transport whose connection carries no
// session-specific behaviour (stdio, in-memory, SSE), recording tools/list
// results as they are read.
type captureTransport struct {
	inner   mcp.Transport
	capture *toolsListCapture
	guard   *peerGuard
	// onServerMessage sees each message the server starts as it is read,
	// in wire order: before the result of a call the server sent after
	// it (the go-sdk hands them to a queue of their own). Nil: none.
	onServerMessage func(*jsonrpc.Request, *inflightCall)
	// detach: the inner transport ties its connection to the Connect
	// context (the SSE client's GET stream), which ends with the handshake;
	// give it a context that lives until the connection closes.
	detach bool
	// scrub masks the connection's values in each message read, for a
	// transport whose bytes no screen sees (Dial); nil: none.
	scrub *scrubber
	// probe bounds the wait for the answer to server/discover (stdio);
	// nil: not bounded apart.
	probe *discoverProbe
	// listen is told when the server answers subscriptions/listen (an
	// error, or the end of the listen); nil: nothing to tell.
	listen *listenAck
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	onClose := func() {}
	if t.detach {
		dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		stop := context.AfterFunc(ctx, cancel) // still bounded while connecting
		defer stop()
		ctx, onClose = dctx, cancel
	}
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		onClose()
		return nil, err
	}
	return &captureConn{Connection: conn, capture: t.capture, guard: t.guard, onServerMessage: t.onServerMessage, onClose: onClose, scrub: t.scrub, probe: t.probe, listen: t.listen}, nil
}

type captureConn struct {
	mcp.Connection
	capture         *toolsListCapture
	guard           *peerGuard
	onServerMessage func(*jsonrpc.Request, *inflightCall)
	onClose         func()
	scrub           *scrubber
	probe           *discoverProbe
	listen          *listenAck
}

func (c *captureConn) Close() error {
	err := c.Connection.Close()
	c.onClose()
	return err
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.probe != nil {
		return c.readProbed(ctx)
	}
	return c.read(c.Connection.Read(ctx))
}

// readProbed is Read while the era probe is on (readProbed).
func (c *captureConn) readProbed(ctx context.Context) (jsonrpc.Message, error) {
	return c.read(readProbed(ctx, c.Connection, c.probe))
}

func (c *captureConn) read(msg jsonrpc.Message, err error) (jsonrpc.Message, error) {
	if err != nil {
		return msg, err
	}
	c.scrub.message(msg)
	switch m := msg.(type) {
	case *jsonrpc.Response:
		// A reply to a request of ours is free; one nobody asked for
		// counts against the rate like a notification.
		if err := c.guard.message(true); err != nil {
			return nil, err
		}
		if m.ID.IsValid() {
			c.listen.answered(idKey(m.ID))
			call, e := c.capture.note(m)
			if e != nil {
				return nil, c.guard.trip(e)
			}
			if call {
				// The call reads its result from the capture: spare the
				// go-sdk a decode it would only throw away (and could fail
				// on an unknown block type). With its multi round-trip off
				// (noMultiRoundTrip), the go-sdk does nothing else with a
				// call's result.
				m.Result = decodedElsewhere
			}
		}
	case *jsonrpc.Request:
		if err := c.guard.message(false); err != nil {
			return nil, err
		}
		if c.onServerMessage != nil {
			c.onServerMessage(m, nil)
		}
	}
	return msg, nil
}

// note records a response (its id valid) for the listing and for the
// call in flight it answers; call reports whether its result became the
// call's.
func (c *toolsListCapture) note(m *jsonrpc.Response) (call bool, e *LimitError) {
	id := idKey(m.ID)
	if m.Error != nil {
		c.callAnswered(id, nil)
		return false, nil
	}
	c.initAnswered(id, m.Result)
	if e := c.response(id, m.Result); e != nil {
		return false, e
	}
	return c.callAnswered(id, resultOrNull(m.Result)), nil
}

// decodedElsewhere is the result the go-sdk decodes in place of one
// Session.CallTool reads from the capture.
var decodedElsewhere = json.RawMessage(`{"content":[]}`)

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		if tw := taskWireOf(ctx); tw != nil && req.Method == methodCallTool {
			// A request of a call's task (tasks.go): sent as the task's.
			out, err := tw.request(req)
			if err != nil {
				return err
			}
			c.capture.callWritten(ctx, idKey(req.ID))
			c.guard.owe()
			return c.Connection.Write(ctx, out)
		}
		c.guard.owe()
		switch req.Method {
		case methodListTools:
			c.capture.request(idKey(req.ID))
		case methodCallTool:
			// Before the request leaves: the answer can come at once.
			c.capture.callWritten(ctx, idKey(req.ID))
		case methodDiscover:
			if c.probe != nil {
				c.probe.written(req)
			}
		case methodListen:
			c.listen.written(idKey(req.ID))
		case "initialize":
			c.capture.initWritten(idKey(req.ID))
			if c.probe != nil {
				if err := c.probe.refuseLegacy(); err != nil {
					return err
				}
				c.probe.initWritten(req)
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// resultOrNull is a response's result, "null" when it has none: a result
// answer that is not a result object is malformed, not lost.
func resultOrNull(r json.RawMessage) json.RawMessage {
	if r == nil {
		return json.RawMessage("null")
	}
	return r
}

// maxCapturedMessage bounds a request body the HTTP capture reads whole
// to find tools/list requests (it matches the go-sdk's own default frame
// limit); the responses it keeps are bounded by the session's message
// bound, which boundedBody enforces anyway.
const maxCapturedMessage = mcp.DefaultMaxLineLength

// headerRoundTripper adds a document's headers to every request and, for
// streamable HTTP, captures tools/list results from the response bodies
// (wrapping the streamable Connection would hide the session id it needs).
//
// Every request goes to the registered origin only: a request the server
// sends elsewhere (a redirect, an SSE endpoint event naming another host)
// is refused before anything is sent, so the registration's headers never
// reach another origin, and an https server never continues over http.
// Every response body is bounded by the session's peerGuard.
type headerRoundTripper struct {
	base       http.RoundTripper
	headers    map[string]string
	origin     string
	guard      *peerGuard
	capture    *toolsListCapture // nil: no capture
	streamable bool              // bodies count against the message rate
	// streams follows the event streams of streamable HTTP across their
	// reconnections; nil for the SSE transport.
	streams *eventStreams
	// maxRetry bounds the retry field of streamable HTTP event streams.
	maxRetry time.Duration
	// answers keeps what the server answered that the transport cannot
	// use, for the handshake's error.
	answers *httpAnswers
	// mark is the session's secret prefix of the marks put on the
	// messages of a call's own event stream (eventBody.mark); "" for SSE.
	mark string
	// dropped is set when the server answers a POST that carries the
	// session's id with 404 Not Found: it ended the session (streamable
	// HTTP only; nil: not noted).
	dropped *atomic.Bool
	// screen judges every message of an event stream (both transports)
	// and of an application/json body (streamable HTTP) before the go-sdk
	// reads it; nil: none.
	screen *messageScreen
	// onNote sees each notification of a streamable HTTP body as it is
	// read (readNotification), with the call whose own stream the body
	// is; nil for SSE, whose connection's reader sees them.
	onNote func(msg []byte, stream *inflightCall)
	// listen is told when the subscriptions/listen stream fails, opens
	// nothing or ends (deferListen); nil: nothing to tell.
	listen *listenAck
	// closing ends with the session: it cuts the response streams still
	// going after their answers (drain.go); nil: none.
	closing context.Context
	// drainGrace is how long a response stream may go on after its
	// answer; 0: drainGrace.
	drainGrace time.Duration
	// endGrace bounds the DELETE that ends a streamable HTTP session
	// (Limits.TerminateGrace); 0: the go-sdk's own bound.
	endGrace time.Duration
}

// checkRedirect refuses a redirect to another origin at once (the
// RoundTrip check would refuse its request too, with a vaguer error), and
// follows at most 10 within the origin, as net/http does.
func (h *headerRoundTripper) checkRedirect(req *http.Request, via []*http.Request) error {
	if weborigin.Of(req.URL) != h.origin {
		return h.guard.redirected(req.URL)
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

func (h *headerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if weborigin.Of(req.URL) != h.origin {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, h.guard.redirected(req.URL)
	}
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	if h.streams != nil && isListen(req) {
		return deferListen(h, req), nil
	}
	if h.streams == nil || req.Method != http.MethodGet {
		return h.send(req, nil)
	}
	st, initial, wait := h.streams.open(req)
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		}
	}
	if st.standalone {
		st.unprime(req)
	}
	if initial {
		return newDeferredResponse(req, func(ctx context.Context) (*http.Response, error) {
			return h.send(req.WithContext(ctx), st)
		}), nil
	}
	return h.send(req, st)
}

// send sends req, which carries the document's headers, and bounds and
// captures the answer. st is the streamable event stream a GET resumes or
// opens, else nil.
func (h *headerRoundTripper) send(req *http.Request, st *eventStream) (*http.Response, error) {
	listing, calling, initializing := false, false, false
	// answerID: the request the POST sends (idKey form), whose answer
	// ends its response (drain.go); "" for a message that is not one.
	answerID := ""
	tw := taskWireOf(req.Context())
	if tw != nil && req.Method == http.MethodPost {
		// A request of a call's task (tasks.go): sent as the task's, and
		// its answer is the call's.
		var err error
		if req, err = tw.httpRequest(req); err != nil {
			return nil, err
		}
	}
	if h.capture != nil && req.Method == http.MethodPost && req.GetBody != nil && callOf(req.Context()) != nil {
		// A message of a call in flight (its request, or the cancellation):
		// peek at the id of a request without reading the arguments.
		if body, err := req.GetBody(); err == nil {
			id, call, ok := peekRequestID(body)
			_ = body.Close()
			if ok {
				answerID = id
				if call || tw != nil {
					h.capture.callWritten(req.Context(), id)
					calling = true
					req = traceSent(req, callOf(req.Context()))
				}
			}
		}
	} else if h.capture != nil && req.Method == http.MethodPost && req.GetBody != nil &&
		req.ContentLength > 0 && req.ContentLength <= maxCapturedMessage {
		// Peek at a copy of the body (the go-sdk's bodies can be re-read);
		// a tools/list request is small, anything large passes untouched.
		if body, err := req.GetBody(); err == nil {
			raw, err := io.ReadAll(io.LimitReader(body, maxCapturedMessage))
			_ = body.Close()
			if err == nil {
				for _, id := range listRequestIDs(raw) {
					h.capture.request(id)
					listing = true
				}
				if id, method, ok, _ := requestIDMethod(raw); ok {
					answerID, _ = rawIDKey(id)
					if method == "initialize" {
						// Its answer's capabilities say whether the
						// server runs tools as tasks (tasks.go).
						h.capture.initWritten(answerID)
						initializing = true
					}
				}
			}
		}
	}
	var lease *streamLease
	var release func() // nil: nothing to release
	switch {
	case h.streamable && answerID != "":
		// The response goes on after the call returns, to its end
		// (drain.go).
		req, lease = detach(req, h.closing, h.drainGrace)
	case h.streamable && req.Method == http.MethodPost && h.closing != nil:
		// A notification (notifications/cancelled above all): the go-sdk
		// gives it 5 s of its own; it ends with the session instead, so
		// a server that never answers cannot hold a failed handshake or a
		// Close that long.
		req, release = endsWithSession(req, h.closing)
	case h.streamable && req.Method == http.MethodDelete && h.endGrace > 0:
		// The session's end, sent by Close: the server gets the grace a
		// stdio server gets to end (Limits.TerminateGrace), not the
		// go-sdk's 5 s.
		ctx, cancel := context.WithTimeout(req.Context(), h.endGrace)
		req, release = req.WithContext(ctx), cancel
	}
	resp, err := h.base.RoundTrip(req)
	if err != nil {
		lease.end(nil)
		if release != nil {
			release()
		}
		return resp, err
	}
	if release != nil {
		resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	}
	if h.streamable && req.Method == http.MethodPost && resp.StatusCode == http.StatusNotFound &&
		req.Header.Get(sessionIDHeader) != "" {
		// The server no longer knows the session: it ended it (MCP
		// 2025-11-25, streamable HTTP, session management: the client
		// must start a new one), whatever the body says. A call whose own
		// request got it never reached the session (Session.Loss).
		if h.dropped != nil {
			h.dropped.Store(true)
		}
		if call := callOf(req.Context()); calling && call != nil {
			call.sessionGone.Store(true)
		}
	}
	// Classified as the go-sdk does (media type, any letter case).
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sse := mt == "text/event-stream"
	if h.answers != nil && !(resp.StatusCode == http.StatusBadRequest && req.Header.Get(methodHeader) == methodDiscover) {
		// (The 400 that answers the era probe of a legacy server is how
		// it says so, not a refusal: Protocol eras.)
		resp.Body = h.answers.note(req, resp.StatusCode, mt, resp.Body, h.headers)
	}
	post := req.Method == http.MethodPost
	// A resumed stream carries the reply its first response owed (the
	// POST counted it); the standalone stream owes none.
	owed := sse && (post || (st != nil && !st.standalone && req.Header.Get(lastEventIDHeader) != ""))
	if sse && post && h.streamable {
		h.guard.owe()
	}
	// A listing's page, or a call's result, may come on a resumed stream
	// (or, from a careless server, on the standalone one): only the page of
	// the request in flight, and answers to the ids of calls in flight, are
	// kept either way.
	var capture *toolsListCapture
	if listing || calling || initializing || (sse && st != nil) {
		capture = h.capture
	}
	// A call's own stream (its POST, or a GET that resumes it): what the
	// server sends on it is the call's.
	var stream *inflightCall
	if resp.StatusCode/100 == 2 && (calling || (st != nil && !st.standalone)) {
		stream = callOf(req.Context())
	}
	if sse {
		// The wire layer: one reading of the stream for every bound and
		// observer (wire.go).
		body := &eventBody{ReadCloser: resp.Body, guard: h.guard, countRate: h.streamable, owed: owed,
			screen: h.screen, capture: capture, notify: h.onNote, stream: stream, lease: lease, answerID: answerID}
		if h.mark != "" && stream != nil {
			body.mark = h.mark + stream.token
		}
		// A modern request's stream is never resumed: its event ids go
		// (dropEventIDs).
		body.dropIDs = h.streamable && modernVersion(req.Header.Get(protocolVersionHeader))
		if h.streams != nil {
			body.clamp, body.maxRetryMS = true, h.maxRetry.Milliseconds()
			if st != nil && st.standalone && resp.StatusCode/100 == 2 {
				body.prefix = h.streams.primeStandalone(st)
			}
		}
		resp.Body = body
		return resp, nil
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, guard: h.guard}
	switch {
	case post && mt == "application/json" && (capture != nil || (h.screen != nil && h.streamable)):
		resp.Body = &screenedJSONBody{ReadCloser: resp.Body, screen: h.screen, capture: capture, guard: h.guard, req: req,
			notify: h.onNote, stream: stream}
	case h.screen.scrubs():
		// Any other body (an error status's, of either transport) is
		// scrubbed as JSON: the go-sdk reads an error status's body as a
		// JSON-RPC error, whatever its media type.
		resp.Body = &screenedJSONBody{ReadCloser: resp.Body, screen: h.screen, guard: h.guard, scrubOnly: true}
	}
	if lease != nil {
		resp.Body = &leasedBody{ReadCloser: resp.Body, lease: lease}
	}
	return resp, nil
}

// listRequestIDs returns the ids of tools/list requests in a JSON-RPC
// message or batch.
func listRequestIDs(body []byte) []string {
	var ids []string
	eachMessage(body, func(msg []byte) {
		if id, method, ok, _ := requestIDMethod(msg); ok && method == methodListTools {
			if k, ok := rawIDKey(id); ok {
				ids = append(ids, k)
			}
		}
	})
	return ids
}

// noteResponses records the tools/list results and the answers to calls in
// flight in a JSON-RPC message or batch, decoded by the go-sdk's own
// decoder (keys match exactly, as the client that reads the same bytes
// sees them; each result is a fresh copy), and returns the bound a result
// broke.
func noteResponses(c *toolsListCapture, msg []byte) (e *LimitError) {
	eachMessage(msg, func(raw []byte) {
		if e != nil {
			return
		}
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return
		}
		if resp, ok := m.(*jsonrpc.Response); ok && resp.ID.IsValid() {
			_, e = c.note(resp)
		}
	})
	return e
}
