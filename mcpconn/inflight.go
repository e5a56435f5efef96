package mcpconn

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
)

// WithCallTag returns a context that carries tag to Session.CallTool: the
// handlers of the session (Handlers) receive the tags of the calls in
// flight when a server sends something on its own, so a host can tell
// which of its calls a request or notification belongs to. A Run tags
// each call with its run.CallContext.
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

	mu sync.Mutex
	id string // idKey of the request, once written
	// raw is the call's result exactly as it came on the wire, or nil.
	raw json.RawMessage
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
}

// begin registers a call and returns the context that carries it; end
// must be called when the call returns.
func (r *inflightCalls) begin(ctx context.Context) (context.Context, *inflightCall) {
	c := &inflightCall{tag: callTag(ctx), token: "agt-" + strconv.FormatUint(r.seq.Add(1), 10)}
	r.mu.Lock()
	if r.all == nil {
		r.all = map[*inflightCall]struct{}{}
		r.byID = map[string]*inflightCall{}
	}
	r.all[c] = struct{}{}
	r.order = append(r.order, c)
	r.mu.Unlock()
	return context.WithValue(ctx, inflightKey{}, c), c
}

// end forgets the call.
func (r *inflightCalls) end(c *inflightCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.all, c)
	c.mu.Lock()
	if c.id != "" && r.byID[c.id] == c {
		delete(r.byID, c.id)
	}
	c.mu.Unlock()
	for i, o := range r.order {
		if o == c {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
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
	c.id = id
	c.mu.Unlock()
	r.byID[id] = c
}

// byRequest returns the call in flight whose request had the ID id, or
// nil.
func (r *inflightCalls) byRequest(id string) *inflightCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[id]
}

// byToken returns the call in flight whose progress token is token, or
// nil.
func (r *inflightCalls) byToken(token string) *inflightCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.order {
		if c.token == token {
			return c
		}
	}
	return nil
}

// tags returns the tags of the calls in flight, in the order they
// started (nil tags included).
func (r *inflightCalls) tags() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.order) == 0 {
		return nil
	}
	out := make([]any, len(r.order))
	for i, c := range r.order {
		out[i] = c.tag
	}
	return out
}
