//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; agt still answers them from legacy servers, and a modern server asks for them inside input_required results

package mcpconn

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/agtsdk/agt/internal/serverlog"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sharedKey names one shared connection: the registration (reference
// and revision), the document itself (two stores, or a host that edits
// a document in place, share a process only when their documents are
// byte for byte the same, so the process is the same too), and what the
// sessions declare in the handshake (the capabilities and the log
// level: a server may list other tools for another client).
type sharedKey struct {
	ref      resource.Ref
	rev      int64
	doc      [sha256.Size]byte
	caps     uint8
	logLevel mcp.LoggingLevel
}

const (
	capElicit uint8 = 1 << iota
	capSample
	capRoots
	capLog
)

func newSharedKey(ref resource.Ref, rev int64, srv resource.MCPServer, h *Handlers) (sharedKey, error) {
	doc, err := documentDigest(srv)
	if err != nil {
		return sharedKey{}, err
	}
	k := sharedKey{ref: ref, rev: rev, doc: doc}
	k.caps, k.logLevel = declared(h)
	return k, nil
}

// declared is what a client with the handlers h declares: its
// capabilities, and the log level it asks for.
func declared(h *Handlers) (caps uint8, level mcp.LoggingLevel) {
	if h == nil {
		return 0, ""
	}
	for _, c := range []struct {
		set bool
		bit uint8
	}{{h.Elicit != nil, capElicit}, {h.CreateMessage != nil, capSample}, {h.Roots != nil, capRoots}, {h.Log != nil, capLog}} {
		if c.set {
			caps |= c.bit
		}
	}
	if h.Log != nil {
		level = logLevelOf(h)
	}
	return caps, level
}

// documentDigest is the SHA-256 of the document's JSON: maps are written
// in key order, so the same document gives the same digest.
func documentDigest(srv resource.MCPServer) ([sha256.Size]byte, error) {
	doc, err := json.Marshal(srv)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(doc), nil
}

// sharedPool holds a Connector's shared connections. One mutex guards it
// all: entries, their leases and their idle timers.
type sharedPool struct {
	idle   time.Duration
	logger *slog.Logger

	mu      sync.Mutex
	entries map[sharedKey]*sharedConn
	// open holds every connection whose close the pool still owes: those
	// of entries, and those a newer revision or a lost connection's
	// replacement took out of entries while leases still use them.
	// Connector.Close closes them all.
	open   map[*sharedConn]struct{}
	closed bool
	// life ends at Connector.Close: it cancels the starts in progress.
	life    context.Context
	endLife context.CancelFunc
	// work counts the starts in progress and the closes of shared
	// connections; Connector.Close waits for them. Add only under mu
	// while the pool is open.
	work sync.WaitGroup
	// lossRow counts, per key, the connections lost since the last one
	// that ended cleanly (idle, superseded) or the first: Loss.Count. At
	// most maxLossRows keys; past that it starts over.
	lossRow map[sharedKey]int
}

// maxLossRows bounds sharedPool.lossRow.
const maxLossRows = 4096

// noteLost counts e's loss once (lossRow). Under mu.
func (p *sharedPool) noteLost(e *sharedConn) {
	if e.lossNoted || e.base == nil || e.base.closed.Load() {
		return
	}
	e.lossNoted = true
	if p.lossRow == nil || len(p.lossRow) >= maxLossRows {
		p.lossRow = map[sharedKey]int{}
	}
	p.lossRow[e.key] = max(p.lossRow[e.key], e.losses+1)
}

// sharedConn is one shared connection and the leases on it.
type sharedConn struct {
	key  sharedKey
	pool *sharedPool
	// ready is closed once the start ended; base or err is set then.
	ready chan struct{}
	base  *Session
	err   error
	// retry: the start failed because its caller gave up, not the
	// server; a waiter starts again instead of taking the error.
	retry bool

	// Guarded by pool.mu.
	refs int // leases, and callers waiting for the start
	// shut: the pool has taken the close of base on itself (once).
	shut   bool
	leases map[*Session]struct{}
	timer  *time.Timer
	// idleGen numbers the idle timers: a timer that fired while a new
	// lease took the connection (and let go of it again, starting the
	// next timer) finds its number stale and closes nothing.
	idleGen uint64
	inPool  bool           // still the pool's entry for key
	gate    serverlog.Gate // its lines that belong to no one lease
	// losses counts the connections of key lost before this one
	// (sharedPool.lossRow); lossNoted: this one's loss is counted there.
	losses    int
	lossNoted bool
}

// lease is what makes a Session a lease on a shared connection.
type lease struct {
	conn *sharedConn
	// base is the connection: a lease keeps it after the pool let go of
	// it (lost, replaced, Connector.Close), and then sees it gone.
	base *Session
	h    Handlers
}

// leaseCall is the tag a lease's call carries on the shared connection:
// the lease it belongs to, and the caller's own tag.
type leaseCall struct {
	lease *Session
	tag   any
}

// connectShared returns a lease on the shared connection of key,
// starting it when there is none (or the one there is was lost).
func (c *Connector) connectShared(ctx context.Context, ref resource.Ref, srv resource.MCPServer, opts *ConnectOptions, key sharedKey) (*Session, error) {
	p := c.pool
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, &Error{Ref: ref, Op: "connect", Kind: ErrUnavailable, Detail: "the Connector is closed"}
		}
		var dead *Session
		e := p.entries[key]
		if e != nil && e.started() && e.base.gone() {
			// Lost: the first caller replaces it, so a crash costs one
			// new process however many sessions used it.
			p.noteLost(e)
			dead = p.detach(e)
			e = nil
		}
		var dropped []*Session
		if dead != nil {
			dropped = append(dropped, dead)
		}
		creator := e == nil
		if creator {
			// A newer revision supersedes the older ones: they close when
			// their last session does, without an idle time.
			for k, o := range p.entries {
				if k.ref == key.ref && k.rev < key.rev {
					if b := p.detach(o); b != nil {
						dropped = append(dropped, b)
					}
				}
			}
			for k := range p.lossRow {
				if k.ref == key.ref && k.rev < key.rev {
					delete(p.lossRow, k)
				}
			}
			e = &sharedConn{key: key, pool: p, ready: make(chan struct{}), leases: map[*Session]struct{}{}, inPool: true, losses: p.lossRow[key]}
			p.entries[key] = e
			p.open[e] = struct{}{}
			p.work.Add(1)
		}
		e.refs++
		if e.timer != nil {
			e.timer.Stop()
			e.timer = nil
		}
		p.mu.Unlock()
		// In the background: this start does not wait for their ends
		// (Connector.Close does). Their leases see the connection lost.
		p.closeLater(dropped)

		if creator {
			e.start(ctx, c, ref, srv)
		} else {
			select {
			case <-e.ready:
			case <-ctx.Done():
				p.release(e, nil)
				return nil, &Error{Ref: ref, Op: "connect", Detail: "cancelled by the caller while the shared connection started", Err: context.Cause(ctx)}
			}
		}
		if e.err != nil {
			p.release(e, nil)
			if !creator && e.retry && ctx.Err() == nil {
				continue
			}
			return nil, e.err
		}
		if l := p.lease(e, opts.Handlers); l != nil {
			return l, nil
		}
		return nil, &Error{Ref: ref, Op: "connect", Kind: ErrUnavailable, Detail: "the Connector is closed"}
	}
}

func (e *sharedConn) started() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// gone reports whether a connection can serve no more calls: lost, or
// closed (by Connector.Close).
func (s *Session) gone() bool { return s.closed.Load() || s.Lost() }

// start connects the shared connection under the caller's ctx, ended
// also by Connector.Close.
func (e *sharedConn) start(ctx context.Context, c *Connector, ref resource.Ref, srv resource.MCPServer) {
	p := e.pool
	defer p.work.Done()
	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.life, cancel)
	base, err := c.connect(sctx, ref, srv, &ConnectOptions{Handlers: e.handlers(), Revision: e.key.rev}, nil)
	stop()
	cancel()
	p.mu.Lock()
	if p.closed {
		err = &Error{Ref: ref, Op: "connect", Kind: ErrUnavailable, Detail: "the Connector is closed"}
	}
	if err != nil {
		if e.inPool {
			delete(p.entries, e.key)
			e.inPool = false
		}
		delete(p.open, e)
	}
	e.err, e.retry = err, err != nil && ctx.Err() != nil
	if err == nil {
		e.base = base
	}
	p.mu.Unlock()
	if err != nil && base != nil {
		_ = base.Close()
	}
	close(e.ready)
}

// lease makes a lease on e's live connection, or returns nil when the
// pool closed meanwhile. The caller's reference on e becomes the lease's.
func (p *sharedPool) lease(e *sharedConn, h *Handlers) *Session {
	b := e.base
	l := &Session{
		ref: b.ref, transport: b.transport, toolTimeout: b.toolTimeout, maxCall: b.maxCall, grace: b.grace,
		serverInfo: b.serverInfo, protocolVersion: b.protocolVersion, capabilities: b.capabilities,
		instructions: b.instructions, instructionsCut: b.instructionsCut,
		lease: &lease{conn: e, base: b},
	}
	if h != nil {
		l.lease.h = *h
	}
	l.closing, l.closeNow = context.WithCancel(context.Background())
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		e.refs--
		return nil
	}
	e.leases[l] = struct{}{}
	return l
}

// release lets go of one reference on e (a lease's, or a caller's that
// waited for the start): the last one starts the idle timer, or closes
// a connection the pool no longer holds.
func (p *sharedPool) release(e *sharedConn, l *Session) {
	p.mu.Lock()
	if l != nil {
		delete(e.leases, l)
	}
	e.refs--
	if e.refs > 0 || !e.started() || e.err != nil {
		p.mu.Unlock()
		return
	}
	if e.inPool && !p.closed && !e.base.gone() {
		e.idleGen++
		gen := e.idleGen
		e.timer = time.AfterFunc(p.idle, func() { p.expire(e, gen) })
		p.mu.Unlock()
		return
	}
	// Replaced, lost or the pool closed: nobody will take it again. Its
	// process is the Connector's: the lease's Close does not wait for it
	// (Connector.Close does).
	if e.base.Lost() {
		p.noteLost(e)
	}
	dead := p.detach(e)
	p.mu.Unlock()
	if dead != nil {
		p.closeLater([]*Session{dead})
	}
}

// closeAll closes what detach handed out, in parallel (each may wait out
// a grace period for its process).
func (p *sharedPool) closeAll(bases []*Session) {
	var wg sync.WaitGroup
	for _, b := range bases {
		if b == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.work.Done()
			_ = b.Close()
		}()
	}
	wg.Wait()
}

// closeLater closes what detach handed out, each on a goroutine of its
// own that ends with the close.
func (p *sharedPool) closeLater(bases []*Session) {
	for _, b := range bases {
		go func() {
			defer p.work.Done()
			_ = b.Close()
		}()
	}
}

// detach takes e out of the pool and returns its connection for the
// caller to close (and then p.work.Done), or nil when it is not the
// pool's to close (still used, or already being closed). Under mu.
func (p *sharedPool) detach(e *sharedConn) *Session {
	if e.inPool {
		delete(p.entries, e.key)
		e.inPool = false
	}
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	if e.base == nil || e.shut || (e.refs > 0 && !e.base.gone()) {
		return nil
	}
	e.shut = true
	delete(p.open, e)
	p.work.Add(1)
	return e.base
}

// expire closes e when the idle time of its timer gen passed with no
// lease taken since.
func (p *sharedPool) expire(e *sharedConn, gen uint64) {
	p.mu.Lock()
	if p.closed || e.refs > 0 || e.timer == nil || e.idleGen != gen {
		p.mu.Unlock()
		return
	}
	e.timer = nil
	if !e.base.gone() {
		delete(p.lossRow, e.key) // it ended cleanly: the next starts a new row
	}
	dead := p.detach(e)
	p.mu.Unlock()
	p.closeAll([]*Session{dead})
}

// Close closes every shared connection of the Connector (their leases
// see the connection lost, and calls in flight on them get
// ErrUnavailable), stops the starts in progress and refuses new shared
// connections; it returns once their processes have ended. Sessions
// that are not shared are their owners' to close, and can still be made
// after Close; Connect of a shared document then fails with
// ErrUnavailable. agt.Host.Close calls it. Close is idempotent.
func (c *Connector) Close() error {
	p := c.pool
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.work.Wait()
		return nil
	}
	p.closed = true
	p.endLife()
	var open []*Session
	for e := range p.open {
		e.inPool = false
		if e.timer != nil {
			e.timer.Stop()
			e.timer = nil
		}
		// One still starting closes its connection itself (start).
		if e.base != nil && !e.shut {
			e.shut = true
			p.work.Add(1)
			open = append(open, e.base)
		}
	}
	clear(p.open)
	clear(p.entries)
	p.mu.Unlock()
	p.closeAll(open)
	p.work.Wait()
	return nil
}

// SharedConnections returns how many shared connections the Connector
// holds open or is starting, used or idle, an older revision's still
// used included (for tests and metrics).
func (c *Connector) SharedConnections() int {
	c.pool.mu.Lock()
	defer c.pool.mu.Unlock()
	return len(c.pool.open)
}

// The lease side of Session: each method of a lease acts on the shared
// connection for this lease only.

// leaseContext ends ctx also when the lease closes.
func (s *Session) leaseContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	return ctx, func() { stop(); cancel() }
}

func (s *Session) leaseCallTool(ctx context.Context, name string, args json.RawMessage) (*CallResult, error) {
	if s.closed.Load() {
		return nil, s.closedError(callOp(name))
	}
	lctx, cancel := s.leaseContext(ctx)
	defer cancel()
	res, err := s.lease.base.CallTool(WithCallTag(lctx, &leaseCall{lease: s, tag: callTag(ctx)}), name, args)
	if err != nil && s.closed.Load() && ctx.Err() == nil {
		return nil, s.closedError(callOp(name))
	}
	return res, err
}

func (s *Session) leaseTools(ctx context.Context) ([]Tool, error) {
	if s.closed.Load() {
		return nil, s.closedError("list tools")
	}
	lctx, cancel := s.leaseContext(ctx)
	defer cancel()
	tools, err := s.lease.base.Tools(lctx)
	if err != nil && s.closed.Load() && ctx.Err() == nil {
		return nil, s.closedError("list tools")
	}
	return tools, err
}

func (s *Session) leaseClose() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeNow()
		e := s.lease.conn
		e.pool.release(e, s)
	})
	return nil
}

// handlers are the shared connection's own: they declare what the
// sessions on it declare, and hand what the server sends to the lease of
// the call it names, or refuse it (shared: the session's requests, log
// lines and reports come here with their attribution).
func (e *sharedConn) handlers() *Handlers {
	k := e.key
	h := &Handlers{
		Progress:     e.progress,
		ToolsChanged: e.toolsChanged,
		TaskStatus:   e.taskStatus,
		shared:       e,
	}
	if k.caps&capLog != 0 {
		h.Log = func(ctx context.Context, in Incoming, p *mcp.LoggingMessageParams) { e.log(ctx, in, attrNone, p) }
		h.LogLevel = k.logLevel
	}
	if k.caps&capElicit != 0 {
		h.Elicit = func(ctx context.Context, in Incoming, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			l, calls, err := e.route(ctx, in, MethodElicit)
			if err != nil {
				return nil, err
			}
			return l.lease.h.Elicit(ctx, Incoming{Ref: in.Ref, Calls: calls}, p)
		}
	}
	if k.caps&capSample != 0 {
		h.CreateMessage = func(ctx context.Context, in Incoming, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			l, calls, err := e.route(ctx, in, MethodCreateMessage)
			if err != nil {
				return nil, err
			}
			return l.lease.h.CreateMessage(ctx, Incoming{Ref: in.Ref, Calls: calls}, p)
		}
	}
	if k.caps&capRoots != 0 {
		h.Roots = func(ctx context.Context, in Incoming) ([]*mcp.Root, error) {
			l, calls, err := e.route(ctx, in, MethodListRoots)
			if err != nil {
				return nil, err
			}
			return l.lease.h.Roots(ctx, Incoming{Ref: in.Ref, Calls: calls})
		}
	}
	return h
}

// The reasons a shared connection refuses a server's request.
const (
	refuseNoCall   = "the server is shared and the request names no call in flight (by the call's own event stream, or _meta relatedRequestId or progressToken): it could be any session's"
	refuseEnded    = "the server is shared and the call the request names has returned"
	refuseUnhandle = "the session has no handler for it"
)

// split groups the tags of a shared connection's calls by lease, in
// order.
func split(in Incoming) (leases []*Session, calls map[*Session][]any) {
	for _, t := range in.Calls {
		lc, ok := t.(*leaseCall)
		if !ok {
			continue
		}
		if _, seen := calls[lc.lease]; !seen {
			if calls == nil {
				calls = map[*Session][]any{}
			}
			leases = append(leases, lc.lease)
		}
		calls[lc.lease] = append(calls[lc.lease], lc.tag)
	}
	return leases, calls
}

// owner is the lease of the one call a message names, with that call's
// tag; nil when it names none.
func owner(in Incoming, attr attribution) (*Session, []any) {
	if attr == attrNone {
		return nil, nil
	}
	leases, calls := split(in)
	if len(leases) != 1 {
		return nil, nil
	}
	return leases[0], calls[leases[0]]
}

// route returns the lease of the call in flight a request names, with
// that call; a request that names none, or a call that returned, is
// refused: one user's elicitation never reaches another user's handler,
// whatever calls happen to be in flight.
func (e *sharedConn) route(ctx context.Context, in Incoming, method string) (*Session, []any, error) {
	rq, _ := ctx.Value(requestKey{}).(*request)
	if rq == nil {
		return nil, nil, &RefusedError{Reason: refuseNoCall}
	}
	switch rq.attr {
	case attrNone:
		return nil, nil, &RefusedError{Reason: refuseNoCall}
	case attrEnded:
		return nil, nil, &RefusedError{Reason: refuseEnded}
	}
	l, calls := owner(in, rq.attr)
	if l == nil {
		return nil, nil, &RefusedError{Reason: refuseNoCall}
	}
	h := &l.lease.h
	if (method == MethodElicit && h.Elicit == nil) || (method == MethodCreateMessage && h.CreateMessage == nil) ||
		(method == MethodListRoots && h.Roots == nil) || l.closed.Load() {
		return nil, nil, &RefusedError{Reason: refuseUnhandle}
	}
	return l, calls, nil
}

// served tells the lease of the call a request named how it ended, with
// that call; a request that named none is logged, to no lease.
func (e *sharedConn) served(in Incoming, attr attribution, rep ServedRequest) {
	if l, calls := owner(in, attr); l != nil {
		if f := l.lease.h.Served; f != nil {
			callback(func() { f(Incoming{Ref: in.Ref, Calls: calls}, rep) })
		}
		return
	}
	if e.gate.Pass() {
		e.pool.logger.LogAttrs(context.Background(), slog.LevelInfo, "agt.shared_server_request",
			slog.String("mount", string(in.Ref)), slog.String("method", rep.Method), slog.String("outcome", string(rep.Outcome)),
			slog.String("reason", rep.Reason))
	}
}

// progress names its call exactly: it goes to that call's lease.
func (e *sharedConn) progress(ctx context.Context, in Incoming, p *mcp.ProgressNotificationParams) {
	leases, calls := split(in)
	if len(leases) != 1 || leases[0].closed.Load() || leases[0].lease.h.Progress == nil {
		return
	}
	leases[0].lease.h.Progress(ctx, Incoming{Ref: in.Ref, Calls: calls[leases[0]]}, p)
}

// taskStatus belongs to its call: it goes to that call's lease.
func (e *sharedConn) taskStatus(ctx context.Context, in Incoming, st TaskStatus) {
	leases, calls := split(in)
	if len(leases) != 1 || leases[0].closed.Load() || leases[0].lease.h.TaskStatus == nil {
		return
	}
	leases[0].lease.h.TaskStatus(ctx, Incoming{Ref: in.Ref, Calls: calls[leases[0]]}, st)
}

// log goes to the lease of the call it names (in flight, or just
// returned); a line that names none belongs to no lease, whatever calls
// are in flight: it goes to ConnectorOptions.Logger, bounded.
func (e *sharedConn) log(ctx context.Context, in Incoming, attr attribution, p *mcp.LoggingMessageParams) {
	if l, calls := owner(in, attr); l != nil {
		if !l.closed.Load() && l.lease.h.Log != nil {
			l.lease.h.Log(ctx, Incoming{Ref: in.Ref, Calls: calls}, p)
		}
		return
	}
	if e.gate.Pass() {
		attrs := []slog.Attr{slog.String("mount", string(in.Ref)), slog.String("server_level", string(p.Level)),
			slog.String("logger", p.Logger), serverlog.Data(p)}
		if n := e.gate.TakeDropped(); n > 0 {
			attrs = append(attrs, slog.Int64("dropped_before", n))
		}
		e.pool.logger.LogAttrs(ctx, serverlog.Level(p.Level), "agt.shared_server_log", attrs...)
	}
}

// toolsChanged goes to every lease: each lists the tools again for
// itself.
func (e *sharedConn) toolsChanged(ctx context.Context, in Incoming) {
	_, calls := split(in)
	e.pool.mu.Lock()
	leases := make([]*Session, 0, len(e.leases))
	for l := range e.leases {
		leases = append(leases, l)
	}
	e.pool.mu.Unlock()
	for _, l := range leases {
		if f := l.lease.h.ToolsChanged; f != nil && !l.closed.Load() {
			callback(func() { f(ctx, Incoming{Ref: in.Ref, Calls: calls[l]}) })
		}
	}
}
