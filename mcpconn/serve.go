//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; agt still answers them from legacy servers, and a modern server asks for them inside input_required results

package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/internal/text"
)

// The methods a server may send on its own that agt looks at.
const (
	notificationProgress    = "notifications/progress"
	notificationMessage     = "notifications/message"
	notificationToolsChange = "notifications/tools/list_changed"
	// notificationRootsChanged is the one the client sends.
	notificationRootsChanged = "notifications/roots/list_changed"
)

// serving holds a session's handlers and the bounds on what its server
// asks.
type serving struct {
	h   Handlers
	max servingLimits
	// busy counts the requests being answered.
	busy atomic.Int32
}

type servingLimits struct {
	requests          int
	requestTime       time.Duration
	elicitBytes       int
	samplingMessages  int
	samplingBytes     int
	notificationBytes int
}

// newClient returns the go-sdk client of one session: it declares exactly
// the capabilities whose handlers are set, and routes what the server
// sends on its own through the session (receive).
func (c *Connector) newClient(s *Session, h *Handlers) *mcp.Client {
	s.serve = &serving{h: *h, max: servingLimits{
		requests:          c.lim.MaxServerRequests,
		requestTime:       c.lim.MaxServerRequestTime,
		elicitBytes:       c.lim.MaxElicitationBytes,
		samplingMessages:  c.lim.MaxSamplingMessages,
		samplingBytes:     c.lim.MaxSamplingBytes,
		notificationBytes: c.lim.MaxNotificationBytes,
	}}
	caps := clientCapabilities()
	copts := &mcp.ClientOptions{Capabilities: caps, MultiRoundTrip: noMultiRoundTrip()}
	if h.Elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
		copts.ElicitationHandler = s.elicit
	}
	if h.CreateMessage != nil {
		caps.Sampling = &mcp.SamplingCapabilities{}
		copts.CreateMessageHandler = s.createMessage
	}
	if h.Roots != nil {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	if h.Progress != nil || h.Log != nil || h.ToolsChanged != nil {
		s.notes = newNoteQueue()
		s.calls.notes = s.notes
	}
	if h.ToolsChanged != nil {
		copts.ToolListChangedHandler = listenForToolsChanges
		s.listen = newListenAck(c.lim.EraProbeTimeout)
	}
	cl := mcp.NewClient(c.info, copts)
	cl.AddReceivingMiddleware(s.receive)
	// The go-sdk's own sending path, kept to send
	// notifications/roots/list_changed (NotifyRootsChanged) without
	// touching the client's root set.
	cl.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		s.send = next
		return next
	})
	return cl
}

// noMultiRoundTrip turns off the go-sdk's multi round-trip middleware
// (SEP-2322, protocol 2026-07-28) for every client agt makes: it would
// answer the inputRequests of a tools/call result itself, from the
// client's own root set and handlers, past the bounds, the audit and the
// Roots handler of the session, ten rounds at most, and call the tool
// again. Session.CallTool runs the rounds itself instead (mrtr.go),
// through answerRequest as a legacy server's requests are.
func noMultiRoundTrip() *mcp.MultiRoundTripOptions {
	return &mcp.MultiRoundTripOptions{Disabled: true}
}

// refuseUndeclared is the receiving middleware of the shared client of
// sessions without handlers: it declares nothing, so it answers nothing
// but ping (the go-sdk would answer roots/list with an empty list).
func refuseUndeclared(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case MethodElicit, MethodCreateMessage, MethodListRoots:
			return nil, notDeclared(method)
		}
		return next(ctx, method, req)
	}
}

func notDeclared(method string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + " is not supported: the client did not declare its capability"}
}

// receive routes the requests the server sends on its own through
// serveRequest. Its notifications never reach it: the transports' readers
// hand them over as they read them (readServerMessage), in wire order.
func (s *Session) receive(next mcp.MethodHandler) mcp.MethodHandler {
	s.recv = next
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case MethodElicit, MethodCreateMessage, MethodListRoots:
			return s.serveRequest(ctx, method, req, next)
		}
		return next(ctx, method, req)
	}
}

// callback runs a host notification handler; a panic loses only that
// notification.
func callback(f func()) {
	defer func() { _ = recover() }()
	f()
}

// readServerMessage sees a message the server started as the reader reads
// it (stdio, SSE and Dial: the connection's reader; streamable HTTP: the
// reader of each event stream, stream the call whose own stream it is,
// else nil): a progress restarts its call's idle timeout at once,
// whatever the handlers are doing, and every notification is queued with
// the calls in flight then, so it keeps its place relative to the
// results of calls (awaitNotes).
func (s *Session) readServerMessage(m *jsonrpc.Request, stream *inflightCall) {
	if m.ID.IsValid() {
		return
	}
	switch m.Method {
	case notificationListenAck:
		s.listen.end()
	case notificationToolsChange:
		s.onToolsChanged()
	case notificationProgress:
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(m.Params, &p) == nil {
			s.onProgress(&p)
		}
	case notificationMessage:
		if s.notes == nil || s.serve.h.Log == nil {
			return
		}
		var p mcp.LoggingMessageParams
		if json.Unmarshal(m.Params, &p) != nil {
			return // the go-sdk refuses it too
		}
		s.onLog(&p, stream)
	}
}

// readNotification is readServerMessage for a notification of a
// streamable HTTP body, as the screen passed it: read on the body's
// reader, in the stream's order, before the go-sdk reads it.
func (s *Session) readNotification(msg []byte, stream *inflightCall) {
	if m, err := jsonrpc.DecodeMessage(msg); err == nil {
		if req, ok := m.(*jsonrpc.Request); ok {
			s.readServerMessage(req, stream)
		}
	}
}

// onToolsChanged counts a notifications/tools/list_changed and queues it
// for the ToolsChanged handler.
func (s *Session) onToolsChanged() {
	// Before the count: a session that sees it lists anew.
	s.listings.invalidate(s.ref)
	s.toolsChanged.Add(1)
	if h := s.serve; h != nil && h.h.ToolsChanged != nil {
		in := s.incoming(s.calls.live())
		s.enqueue(func(ctx context.Context) { h.h.ToolsChanged(ctx, in) })
	}
}

// onLog queues a log notification, bounded, for the Log handler; stream
// is the call whose own event stream it came on, or nil.
func (s *Session) onLog(p *mcp.LoggingMessageParams, stream *inflightCall) {
	if s.serve == nil || s.serve.h.Log == nil {
		return
	}
	_, tag, attr := s.attributeStream(p.Meta, stream)
	in := s.incoming(s.calls.live())
	if attr != attrNone {
		in.Calls = []any{tag}
	}
	q := boundLog(p, s.serve.max.notificationBytes)
	if sh := s.serve.h.shared; sh != nil {
		s.enqueue(func(ctx context.Context) { sh.log(ctx, in, attr, q) })
		return
	}
	s.enqueue(func(ctx context.Context) { s.serve.h.Log(ctx, in, q) })
}

// onProgress restarts the idle timeout of the call the token names and
// queues the notification for the Progress handler; progress for no call
// of this session is dropped.
func (s *Session) onProgress(p *mcp.ProgressNotificationParams) {
	delete(p.Meta, metaStream) // never the host's to see
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	tag, clock, ok := s.calls.byToken(token)
	if !ok {
		return
	}
	clock.progress()
	if s.serve == nil || s.serve.h.Progress == nil {
		return
	}
	q := *p
	q.Message = text.Bound(q.Message, s.serve.max.notificationBytes)
	in := Incoming{Ref: s.ref, Calls: []any{tag}}
	s.enqueue(func(ctx context.Context) { s.serve.h.Progress(ctx, in, &q) })
}

// enqueue hands a notification to deliverNotifications, or drops it when
// the queue is full (noteQueue.put).
func (s *Session) enqueue(f func(context.Context)) {
	if s.notes != nil {
		s.notes.put(f)
	}
}

// NotificationsDropped returns how many notifications (progress, log,
// tools/list_changed) the session dropped because their handlers were
// more than 256 behind. A dropped tools/list_changed is still counted by
// ToolsChanged, and a dropped progress still restarted its call's idle
// timeout.
func (s *Session) NotificationsDropped() uint64 {
	if s.lease != nil {
		return s.lease.base.NotificationsDropped()
	}
	if s.notes == nil {
		return 0
	}
	return s.notes.dropped.Load()
}

// deliverNotifications runs the queued notification handlers, one at a
// time and in order, until the session ends.
func (s *Session) deliverNotifications() {
	for {
		select {
		case f := <-s.notes.ch:
			s.notify(context.Background(), f)
			s.notes.handled()
		case <-s.closing.Done():
			return
		}
	}
}

// notify runs a host notification handler under ctx ended also by the
// session's close; a panic loses only that notification.
func (s *Session) notify(ctx context.Context, f func(ctx context.Context)) {
	hctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	defer func() { stop(); cancel() }()
	callback(func() { f(hctx) })
}

func (s *Session) incoming(calls []*inflightCall) Incoming {
	in := Incoming{Ref: s.ref}
	if len(calls) > 0 {
		in.Calls = make([]any, len(calls))
		for i, c := range calls {
			in.Calls[i] = c.tag
		}
	}
	return in
}

// request is what serveRequest tells the handler adapters (elicit,
// createMessage) through the context, and what they tell it back.
type request struct {
	in      Incoming
	attr    attribution // how the request named its call
	outcome RequestOutcome
	reason  string
}

type requestKey struct{}

// serveRequest answers one request of the server (answerRequest), by its
// handler or, for roots/list, by listRoots.
func (s *Session) serveRequest(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	live, tag, attr := s.attribute(metaOf(req.GetParams()))
	res, _, err := s.answerRequest(ctx, method, req.GetParams(), live, tag, attr, "", func(hctx context.Context, rq *request) (mcp.Result, error) {
		if method == MethodListRoots {
			return s.listRoots(hctx, rq)
		}
		return next(hctx, method, req)
	})
	return res, err
}

// answerRequest answers one request of the server, with params, about
// the call live (tag, attr: how it names its call): refused when its
// capability was not declared, when invalid is not "" (why it is
// malformed), when too many are being answered, or when it is over a
// bound; else answered by handle under a bounded context, with the idle
// timeouts of its calls held. Every request is reported to Served; rq
// says how it ended.
func (s *Session) answerRequest(ctx context.Context, method string, params mcp.Params, live *inflightCall, tag any, attr attribution, invalid string,
	handle func(hctx context.Context, rq *request) (mcp.Result, error)) (res mcp.Result, rq *request, err error) {
	start := time.Now()
	calls := s.calls.live()
	rq = &request{in: s.incoming(calls), attr: attr}
	sh := s.serve.h.shared
	switch {
	case attr == attrLive:
		// It names its call: it is about that call alone.
		calls, rq.in.Calls = []*inflightCall{live}, []any{tag}
	case sh != nil:
		// A shared connection answers only a request that names a call
		// in flight (the lease of a call that returned is told of it).
		calls, rq.in.Calls = nil, nil
		if attr == attrEnded {
			rq.in.Calls = []any{tag}
		}
	}
	rep := ServedRequest{Method: method}
	defer func() {
		rep.Duration = time.Since(start)
		rep.Outcome, rep.Reason = rq.outcome, rq.reason
		switch {
		case sh != nil:
			callback(func() { sh.served(rq.in, rq.attr, rep) })
		case s.serve.h.Served != nil:
			callback(func() { s.serve.h.Served(rq.in, rep) })
		}
	}()
	refuse := func(code int64, reason string) (mcp.Result, *request, error) {
		rq.outcome, rq.reason = OutcomeRefused, reason
		return nil, rq, &jsonrpc.Error{Code: code, Message: "refused: " + reason}
	}
	h := &s.serve.h
	if method == MethodElicit {
		if p, ok := params.(*mcp.ElicitParams); ok && p != nil {
			rep.Mode = p.Mode
			if rep.Mode == "" {
				rep.Mode = "form"
			}
		}
	}
	if (method == MethodElicit && h.Elicit == nil) || (method == MethodCreateMessage && h.CreateMessage == nil) ||
		(method == MethodListRoots && h.Roots == nil) {
		rq.outcome, rq.reason = OutcomeRefused, reasonNotDeclared
		return nil, rq, notDeclared(method)
	}
	if invalid != "" {
		return refuse(jsonrpc.CodeInvalidParams, invalid)
	}
	if reason := s.overBounds(method, params); reason != "" {
		return refuse(jsonrpc.CodeInvalidParams, reason)
	}
	if n := s.serve.busy.Add(1); int(n) > s.serve.max.requests {
		s.serve.busy.Add(-1)
		return refuse(jsonrpc.CodeInternalError, fmt.Sprintf("the client answers at most %d requests of a server at once (ConnectorOptions.Limits.MaxServerRequests)", s.serve.max.requests))
	}
	defer s.serve.busy.Add(-1)

	hctx, cancel := s.serverRequestContext(ctx, calls)
	defer cancel()
	for _, c := range calls {
		c.clock.hold()
	}
	defer func() {
		for _, c := range calls {
			c.clock.release()
		}
	}()
	hctx = context.WithValue(hctx, requestKey{}, rq)

	res, err = handle(hctx, rq)
	switch {
	case err == nil:
		if rq.outcome == "" {
			rq.outcome = OutcomeAccepted
		}
	case rq.outcome == OutcomeRefused || rq.outcome == OutcomeError:
		// The adapters said why.
	case rq.outcome != "":
		// The handler answered, but the go-sdk refused the answer: an
		// elicitation's content against its requested schema.
		rq.outcome, rq.reason = OutcomeError, "the answer does not match the requested schema"
	default:
		// The go-sdk refused the request before the handler ran: a form
		// schema that is not flat, a mode it does not know.
		rq.outcome, rq.reason = OutcomeRefused, "the request is malformed"
	}
	if err != nil && hctx.Err() != nil && rq.outcome != OutcomeRefused {
		rq.outcome, rq.reason = OutcomeCancelled, ""
	}
	return res, rq, err
}

// reasonNotDeclared is why a request for a capability the session did not
// declare is refused.
const reasonNotDeclared = "the capability was not declared"

// serverRequestContext bounds the handler of one server request: it ends with
// the session, after MaxServerRequestTime, and, when calls were in flight
// at its arrival, once they have all returned.
func (s *Session) serverRequestContext(ctx context.Context, calls []*inflightCall) (context.Context, context.CancelFunc) {
	hctx, cancel := context.WithTimeout(ctx, s.serve.max.requestTime)
	stops := []func() bool{context.AfterFunc(s.closing, cancel)}
	if len(calls) > 0 {
		var left atomic.Int32
		left.Store(int32(len(calls)))
		for _, c := range calls {
			stops = append(stops, context.AfterFunc(c.ctx, func() {
				if left.Add(-1) == 0 {
					cancel()
				}
			}))
		}
	}
	return hctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// overBounds returns why a request is over the session's bounds, or "".
func (s *Session) overBounds(method string, params mcp.Params) string {
	max := s.serve.max
	switch p := params.(type) {
	case *mcp.ElicitParams:
		if p == nil {
			return "the request has no params"
		}
		size := len(p.Message) + len(p.URL)
		if p.RequestedSchema != nil {
			b, err := json.Marshal(p.RequestedSchema)
			if err != nil {
				return "the requested schema is not JSON"
			}
			size += len(b)
		}
		if size > max.elicitBytes {
			return fmt.Sprintf("the elicitation is larger than %d bytes (ConnectorOptions.Limits.MaxElicitationBytes)", max.elicitBytes)
		}
		if p.Mode == "url" {
			u, err := url.Parse(p.URL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return "the elicitation's url is not an http or https URL"
			}
		}
	case *mcp.CreateMessageWithToolsParams:
		if p == nil {
			return "the request has no params"
		}
		if len(p.Messages) > max.samplingMessages {
			return fmt.Sprintf("the sampling request has more than %d messages (ConnectorOptions.Limits.MaxSamplingMessages)", max.samplingMessages)
		}
		b, err := json.Marshal(p)
		if err != nil {
			return "the sampling request is not JSON"
		}
		if len(b) > max.samplingBytes {
			return fmt.Sprintf("the sampling request is larger than %d bytes (ConnectorOptions.Limits.MaxSamplingBytes)", max.samplingBytes)
		}
	}
	if method == MethodCreateMessage {
		if _, ok := params.(*mcp.CreateMessageWithToolsParams); !ok {
			return "the request has no params"
		}
	}
	return ""
}

// elicit is the go-sdk's ElicitationHandler: the host's Elicit, then the
// defaults of an accepted form (SEP-1034). The go-sdk validates the form's
// schema before and the content after.
func (s *Session) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	rq, _ := ctx.Value(requestKey{}).(*request)
	if rq == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client could not answer the request"}
	}
	res, err := hostAnswer(rq, func() (*mcp.ElicitResult, error) { return s.serve.h.Elicit(ctx, rq.in, req.Params) })
	if err != nil {
		return nil, err
	}
	switch res.Action {
	case "accept":
		rq.outcome = OutcomeAccepted
		if req.Params.Mode == "" || req.Params.Mode == "form" {
			res.Content = withDefaults(res.Content, req.Params.RequestedSchema)
		}
	case "decline":
		rq.outcome = OutcomeDeclined
	case "cancel":
		rq.outcome = OutcomeCancelled
	default:
		rq.outcome, rq.reason = OutcomeError, "the handler's action is not accept, decline or cancel"
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client could not answer the request"}
	}
	return res, nil
}

// createMessage is the go-sdk's CreateMessageHandler: the host's.
func (s *Session) createMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	rq, _ := ctx.Value(requestKey{}).(*request)
	if rq == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client could not answer the request"}
	}
	res, err := hostAnswer(rq, func() (*mcp.CreateMessageResult, error) { return s.serve.h.CreateMessage(ctx, rq.in, req.Params) })
	if err == nil {
		rq.outcome = OutcomeAccepted
	}
	return res, err
}

func (s *Session) listRoots(ctx context.Context, rq *request) (mcp.Result, error) {
	roots, err := hostAnswer(rq, func() ([]*mcp.Root, error) { return s.serve.h.Roots(ctx, rq.in) })
	if err != nil {
		return nil, err
	}
	out := make([]*mcp.Root, 0, len(roots))
	for _, r := range roots {
		if r != nil {
			out = append(out, r)
		}
	}
	rq.outcome = OutcomeAccepted
	return &mcp.ListRootsResult{Roots: out}, nil
}

// hostAnswer runs a host handler: a panic, an error or a nil answer fails
// the request with agt's own words (the host's text never reaches the
// server); an error wrapping ErrRefused refuses it with its reason.
func hostAnswer[T any](rq *request, f func() (T, error)) (res T, err error) {
	fail := func(reason string) {
		rq.outcome, rq.reason = OutcomeError, reason
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client could not answer the request"}
	}
	defer func() {
		if p := recover(); p != nil {
			var zero T
			res = zero
			fail("the handler panicked")
		}
	}()
	res, err = f()
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		rq.outcome, rq.reason = OutcomeRefused, text.Bound(refused.Reason, 512)
		return res, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "refused: " + rq.reason}
	case errors.Is(err, ErrRefused):
		rq.outcome, rq.reason = OutcomeRefused, "refused by the host"
		return res, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "refused by the host"}
	case err != nil:
		fail("the handler failed")
		return res, err
	}
	if isNil(res) {
		fail("the handler returned no answer")
	}
	return res, err
}

func isNil(v any) bool {
	switch v := v.(type) {
	case *mcp.ElicitResult:
		return v == nil
	case *mcp.CreateMessageResult:
		return v == nil
	}
	return false
}

// withDefaults returns the content of an accepted form with each
// property of the requested schema that has a default and that the
// content leaves out filled with it (SEP-1034: the client applies the
// defaults the user did not change). The host's map is not changed: a
// copy is made when a default is added.
func withDefaults(content map[string]any, schema any) map[string]any {
	sm, _ := schema.(map[string]any)
	props, _ := sm["properties"].(map[string]any)
	copied := false
	for name, p := range props {
		pm, _ := p.(map[string]any)
		def, ok := pm["default"]
		if !ok {
			continue
		}
		if _, set := content[name]; set {
			continue
		}
		if !copied {
			content, copied = maps.Clone(content), true
			if content == nil {
				content = map[string]any{}
			}
		}
		content[name] = def
	}
	return content
}

// boundLog returns p, or a copy whose Data, larger than max bytes as JSON,
// is replaced by a string holding its start and text.Suffix, and whose logger
// name is bounded.
func boundLog(p *mcp.LoggingMessageParams, max int) *mcp.LoggingMessageParams {
	q := *p
	q.Logger = text.Bound(q.Logger, 256)
	if s, ok := q.Data.(string); ok {
		q.Data = text.Bound(s, max)
		return &q
	}
	b, err := json.Marshal(q.Data)
	if err != nil {
		q.Data = "(not JSON)"
	} else if len(b) > max {
		q.Data = text.Bound(string(b), max)
	}
	return &q
}

// NotifyRootsChanged sends notifications/roots/list_changed to the server:
// the roots the Roots handler returns have changed. It fails when the
// session declared no roots (Handlers.Roots unset) or is closed.
func (s *Session) NotifyRootsChanged() error {
	if s.lease != nil {
		// One session's roots are not pushed to a shared server: it gets
		// them when it asks during a call of that session alone.
		if s.lease.h.Roots == nil {
			return &Error{Ref: s.ref, Op: "notify roots changed", Detail: "the session declared no roots: set Handlers.Roots"}
		}
		if s.closed.Load() || s.Lost() {
			return s.closedError("notify roots changed")
		}
		return nil
	}
	if s.serve == nil || s.serve.h.Roots == nil {
		return &Error{Ref: s.ref, Op: "notify roots changed", Detail: "the session declared no roots: set Handlers.Roots"}
	}
	if s.closed.Load() || s.Lost() {
		return s.closedError("notify roots changed")
	}
	// Sent on the go-sdk's own sending path (the one its AddRoots takes),
	// so the client's root set stays empty: roots/list is only ever
	// answered by Handlers.Roots (serveRequest).
	ctx, cancel := s.requestContext(context.Background())
	defer cancel()
	_, err := s.send(ctx, notificationRootsChanged, &mcp.ClientRequest[*mcp.RootsListChangedParams]{Session: s.cs, Params: &mcp.RootsListChangedParams{}})
	if err != nil {
		return s.classify("notify roots changed", context.Background(), ctx, err)
	}
	return nil
}

// ToolsChanged returns how many notifications/tools/list_changed the
// server has sent: a caller that listed the tools when it was n knows the
// list changed once it is above n.
func (s *Session) ToolsChanged() uint64 {
	if s.lease != nil {
		return s.lease.base.ToolsChanged()
	}
	return s.toolsChanged.Load()
}

// askLogLevel asks a server that declares logging for the Log handler's
// level: a server sends no log messages until the client asks (the
// go-sdk's servers keep to that). A refusal only means fewer log lines.
func (s *Session) askLogLevel(ctx context.Context) {
	level := s.logLevel()
	if level == "" || modernVersion(s.protocolVersion) {
		return // modern: each call asks (callLogLevel)
	}
	_ = s.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
}

// logLevel is the level of the log lines the session's Handlers.Log
// wants from a server that declares logging; "" for none.
func (s *Session) logLevel() mcp.LoggingLevel {
	if s.serve == nil || s.serve.h.Log == nil || s.capabilities == nil || s.capabilities.Logging == nil {
		return ""
	}
	return logLevelOf(&s.serve.h)
}

// logLevelOf is the level the Log handler of h asks for: "info" for "".
func logLevelOf(h *Handlers) mcp.LoggingLevel {
	if h.LogLevel == "" {
		return "info"
	}
	return h.LogLevel
}

// metaLogLevel is the _meta key of a modern request that asks for the
// server's log lines at a level.
const metaLogLevel = "io.modelcontextprotocol/logLevel"

// callLogLevel asks a modern server for log lines during the call, at
// the session's level, where Handlers.Log wants them (the modern era has
// no logging/setLevel).
func (s *Session) callLogLevel(params *mcp.CallToolParams) {
	level := s.logLevel()
	if level == "" || !modernVersion(s.protocolVersion) {
		return
	}
	if params.Meta == nil {
		params.Meta = mcp.Meta{}
	}
	params.Meta[metaLogLevel] = level
}
