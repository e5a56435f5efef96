package mcpconn

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// WithCallTag returns a context that carries tag to Session.CallTool: the
// handlers of the session (Handlers) receive the tags of the calls in
// flight when a server sends something on its own, so a host can tell
// which of its calls a request or notification belongs to. A Run tags
// each call with its run.Request.
func WithCallTag(ctx context.Context, tag any) context.Context {
	return context.WithValue(ctx, callTagKey{}, tag)
}

type callTagKey struct{}

// callTag returns the tag WithCallTag put in ctx, or nil.
func callTag(ctx context.Context) any { return ctx.Value(callTagKey{}) }

// inflightCall is one tools/call in flight on a Session. The call's
// context carries it (inflightKey): the go-sdk hands that context to
// Connection.Write (stdio, SSE, Dial) and to the HTTP request of a
// streamable POST, so the transports can tie the JSON-RPC request ID to
// the call.
type inflightCall struct {
	tag any
	// token is the progress token sent with the call: unique in the
	// session, so a progress notification names its call exactly.
	token string

	// ctx is the call's context: it ends when the call returns.
	ctx context.Context
	// clock is the call's idle timeout, restarted by progress and held
	// while a host handler answers a request for the call; nil when the
	// call has no idle timeout of its own.
	clock *callClock

	mu sync.Mutex
	id string // idKey of the request, once written
	// raw is the call's result exactly as it came on the wire, or nil.
	raw json.RawMessage
	// answered: the request id has had its answer (raw is nil for an
	// error answer); later ones are not the call's.
	answered bool
	// sessionGone: a streamable HTTP server answered the call's request
	// with 404, so the session was gone before the call reached it.
	sessionGone atomic.Bool
	// sent: the call's latest request was written whole (streamable
	// HTTP: traceSent), so the server may have it.
	sent atomic.Bool
	// refused is why the answer could not be read (the screen kept it
	// from the go-sdk), or nil.
	refused error
	// notesBefore is how many notifications the session had queued for
	// its handlers when the answer was read: the call returns once they
	// have been handled (Session.awaitNotes).
	notesBefore uint64
	// task is the id of the task the server runs for the call, "" when
	// none (tasks.go): a 2025-11-25 server's request names it.
	task string
}

type inflightKey struct{}

// callOf returns the call in flight ctx belongs to, or nil.
func callOf(ctx context.Context) *inflightCall {
	c, _ := ctx.Value(inflightKey{}).(*inflightCall)
	return c
}

// inflightCalls is a Session's registry of calls in flight.
type inflightCalls struct {
	seq   atomic.Uint64
	mu    sync.Mutex
	all   map[*inflightCall]struct{}
	byID  map[string]*inflightCall // request ID -> call
	order []*inflightCall          // in start order, for Incoming.Calls
	// recent holds the progress token and tag of the last calls that
	// ended, so that progress the session reads just after the result
	// (the go-sdk hands notifications to a queue of their own) still
	// names its call. Only those two: an ended call's result and context
	// are its caller's to keep or drop.
	recent [recentCalls]endedCall
	next   int
	// notes is the session's notification queue, nil when it has no
	// notification handler: an answer read notes its mark.
	notes *noteQueue
}

// endedCall is what attribution needs of a call that returned: its
// progress token, the id of its last request, and its tag.
type endedCall struct {
	token string
	id    string
	tag   any
}

// recentCalls is how many ended calls keep their progress token and
// request id.
const recentCalls = 16

// begin registers a call and returns the context that carries it; end
// must be called when the call returns.
func (r *inflightCalls) begin(ctx context.Context, clock *callClock) (context.Context, *inflightCall) {
	c := &inflightCall{tag: callTag(ctx), token: "agt-" + strconv.FormatUint(r.seq.Add(1), 10), clock: clock}
	ctx = context.WithValue(ctx, inflightKey{}, c)
	c.ctx = ctx
	r.mu.Lock()
	if r.all == nil {
		r.all = map[*inflightCall]struct{}{}
		r.byID = map[string]*inflightCall{}
	}
	r.all[c] = struct{}{}
	r.order = append(r.order, c)
	r.mu.Unlock()
	return ctx, c
}

// end forgets the call.
func (r *inflightCalls) end(c *inflightCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.all, c)
	c.mu.Lock()
	id := c.id
	if id != "" && r.byID[id] == c {
		delete(r.byID, id)
	}
	c.mu.Unlock()
	for i, o := range r.order {
		if o == c {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	r.recent[r.next] = endedCall{token: c.token, id: id, tag: c.tag}
	r.next = (r.next + 1) % recentCalls
}

// written ties the request ID id (idKey form) to the call ctx carries, if
// any; the transports call it as they send a tools/call request.
func (r *inflightCalls) written(ctx context.Context, id string) {
	c := callOf(ctx)
	if c == nil || id == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, live := r.all[c]; !live {
		return
	}
	c.mu.Lock()
	if c.id != "" && r.byID[c.id] == c {
		delete(r.byID, c.id) // an earlier request of the call (input_required): answered
	}
	c.id = id
	c.raw, c.answered, c.refused = nil, false, nil // a new request: its answer is the call's
	c.sent.Store(false)
	c.mu.Unlock()
	r.byID[id] = c
}

// setTask records the id of the task the server runs for the call.
func (c *inflightCall) setTask(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.task = id
}

// taskID is the id of the call's task, "" when none.
func (c *inflightCall) taskID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.task
}

// byRequest returns the call in flight whose request had the ID id, or
// nil.
func (r *inflightCalls) byRequest(id string) *inflightCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[id]
}

// byToken returns the tag and idle clock of the call in flight, or the
// tag of one of the last that ended (with a nil clock), whose progress
// token is token; ok is false for none.
func (r *inflightCalls) byToken(token string) (tag any, clock *callClock, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.order {
		if c.token == token {
			return c.tag, c.clock, true
		}
	}
	for _, e := range r.recent {
		if e.token == token && token != "" {
			return e.tag, nil, true
		}
	}
	return nil, nil, false
}

// named returns the call a server's message names by its progress token,
// by the id (idKey form) of its tools/call request, or by the id of its
// task (2025-11-25: _meta io.modelcontextprotocol/related-task): the call in
// flight (live), or the tag of one of the last that ended (live nil); ok
// is false when neither names a call of the session.
func (r *inflightCalls) named(token, id, task string) (live *inflightCall, tag any, ok bool) {
	if token == "" && id == "" && task == "" {
		return nil, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id != "" {
		if c := r.byID[id]; c != nil {
			return c, c.tag, true
		}
	}
	if task != "" {
		for _, c := range r.order {
			if c.taskID() == task {
				return c, c.tag, true
			}
		}
	}
	for _, c := range r.order {
		if token != "" && c.token == token {
			return c, c.tag, true
		}
	}
	for _, e := range r.recent {
		if (token != "" && e.token == token) || (id != "" && e.id == id) {
			return nil, e.tag, true
		}
	}
	return nil, nil, false
}

// live returns the calls in flight, in the order they started.
func (r *inflightCalls) live() []*inflightCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

// callClock is a call's idle timeout: it fires after idle without
// progress, unless held (a host handler is answering a request for the
// call: that wait is not the server's).
type callClock struct {
	mu      sync.Mutex
	idle    time.Duration
	t       *time.Timer
	holds   int
	stopped bool
}

func newCallClock(idle time.Duration, fire func()) *callClock {
	c := &callClock{idle: idle}
	c.t = time.AfterFunc(idle, fire)
	return c
}

// progress restarts the idle time.
func (c *callClock) progress() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holds == 0 && !c.stopped {
		c.t.Reset(c.idle)
	}
}

// hold stops the idle time until the matching release.
func (c *callClock) hold() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds++
	c.t.Stop()
}

// release ends a hold; the idle time starts again from now.
func (c *callClock) release() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds--
	if c.holds == 0 && !c.stopped {
		c.t.Reset(c.idle)
	}
}

func (c *callClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.t.Stop()
}
