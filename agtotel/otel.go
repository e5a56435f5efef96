package agtotel

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/agtsdk/agt/agtotel"

// Options configures a Telemetry. Nil means all defaults.
type Options struct {
	// TracerProvider makes the spans. Nil means otel.GetTracerProvider()
	// at New, which records nothing until the host sets one.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the instruments. Nil means
	// otel.GetMeterProvider() at New, which records nothing until the
	// host sets one.
	MeterProvider metric.MeterProvider
	// Propagator writes the trace context into the _meta of each MCP
	// tools/call request. Nil means propagation.TraceContext{}: the W3C
	// traceparent and tracestate, nothing else. Not the global
	// propagator, which commonly writes the host's W3C baggage too (a
	// user, a tenant), and a server may be a third party's: a host that
	// wants baggage or another format sent sets it here.
	Propagator propagation.TextMapPropagator
}

// Telemetry makes spans and metrics of a Run's batches and calls. Make one
// with New and share it between Runs; it is safe for concurrent use.
type Telemetry struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator

	calls       metric.Int64Counter
	callTime    metric.Float64Histogram
	mcpTime     metric.Float64Histogram
	batches     metric.Int64Counter
	serverAsked metric.Int64Counter
	serverLost  metric.Int64Counter
}

// The span kind options, made once: trace.WithSpanKind allocates a
// closure on every use, and the interceptor starts a span per call.
var (
	kindInternal = trace.WithSpanKind(trace.SpanKindInternal)
	kindClient   = trace.WithSpanKind(trace.SpanKindClient)
)

// durationBuckets are the MCP conventions' boundaries for
// mcp.client.operation.duration, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// New returns a Telemetry; nil opts means the otel globals.
func New(opts *Options) *Telemetry {
	if opts == nil {
		opts = &Options{}
	}
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if opts.Propagator == nil {
		// A copy with the default: opts is the caller's.
		o := *opts
		o.Propagator = propagation.TraceContext{}
		opts = &o
	}
	t := &Telemetry{
		tracer:     tp.Tracer(ScopeName),
		propagator: opts.Propagator,
	}
	m := mp.Meter(ScopeName)
	// The names are constants: an error here is a bug of this package.
	// The API returns a usable (no-op) instrument with it; report it the
	// OpenTelemetry way and go on.
	var err error
	t.calls, err = m.Int64Counter(MetricCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls of agt Runs, by source, server, code and stage."))
	handle(err)
	t.callTime, err = m.Float64Histogram(MetricCallDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of agt tool calls through the whole pipeline (validation, permission, interceptors, execution)."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	handle(err)
	t.mcpTime, err = m.Float64Histogram(MetricMCPClientDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of MCP tools/call requests, from the interceptor to the server's answer."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	handle(err)
	t.batches, err = m.Int64Counter(MetricBatches, metric.WithUnit("{batch}"),
		metric.WithDescription("Batches of instrumented Runs, one per Run.Execute."))
	handle(err)
	t.serverAsked, err = m.Int64Counter(MetricServerRequests, metric.WithUnit("{request}"),
		metric.WithDescription("Requests MCP servers sent to agt Runs (elicitation, sampling, roots), by kind and outcome."))
	handle(err)
	t.serverLost, err = m.Int64Counter(MetricServerLosses, metric.WithUnit("{loss}"),
		metric.WithDescription("Connections of agt Runs' mounted MCP servers found lost (crashed, dropped), each Run's view: by server, shared or not, and whether the Run was charged."))
	handle(err)
	return t
}

// Instrument returns a copy of opts (nil opts: new Options) that traces
// and measures the Run it starts:
//
//   - Interceptors: the Telemetry's interceptor first, then opts's, in a
//     new slice (the caller's is never written). It starts each call's
//     span and sends the trace context to MCP servers; the host's
//     interceptors run inside the call span, so their own spans and logs
//     join it, and the context a run.Before returns reaches the call as
//     before.
//   - Auditor: the Telemetry's, which forwards every Record to
//     opts.Auditor (nil: to none) once it has recorded it.
//   - WrapExecute: the batch span around every Execute, inside the one
//     opts set, if any: the host's wrapper runs first and outside the
//     batch span (its own span, say, is the batch span's parent), and
//     each call span is a child of the batch span. The batch span
//     starts from the context the host's wrapper gives execute.
//
// The other fields are copied as they are. Instrument is idempotent for
// one Telemetry: options it returned (or a copy) given to it again get
// no second interceptor, auditor or batch span. A host that changes the
// returned options keeps the interceptor first (an interceptor put
// before it runs outside the call span, and a call it stops gets the
// auditor's span); a WrapExecute it sets on them replaces the batch
// span (each call still gets one span, with no batch span above), so a
// host sets its own on the options it gives Instrument.
func (t *Telemetry) Instrument(opts *run.Options) *run.Options {
	var o run.Options
	if opts != nil {
		o = *opts
	}
	mine := interceptor{t}
	if slices.Contains(o.Interceptors, run.Interceptor(mine)) {
		o.Interceptors = slices.Clone(o.Interceptors)
	} else {
		o.Interceptors = append([]run.Interceptor{mine}, o.Interceptors...)
	}
	if a, ok := o.Auditor.(*auditor); !ok || a.t != t {
		o.Auditor = &auditor{t: t, next: o.Auditor}
	}
	if host := o.WrapExecute; host != nil {
		o.WrapExecute = func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
			return host(ctx, b, func(ctx context.Context) (run.Outcome, error) { return t.execute(ctx, b, execute) })
		}
	} else {
		o.WrapExecute = t.execute
	}
	return &o
}

func handle(err error) {
	if err != nil {
		otel.Handle(err)
	}
}

// The metric names.
const (
	MetricCalls             = "agt.calls"
	MetricCallDuration      = "agt.call.duration"
	MetricMCPClientDuration = "mcp.client.operation.duration"
	MetricBatches           = "agt.batches"
	MetricServerRequests    = "agt.server_requests"
	MetricServerLosses      = "agt.server.losses"
)

// The attribute keys, after the OpenTelemetry GenAI and MCP conventions
// where they have one, agt's own under agt.
const (
	AttrOperationName  = attribute.Key("gen_ai.operation.name")
	AttrToolName       = attribute.Key("gen_ai.tool.name")
	AttrToolCallID     = attribute.Key("gen_ai.tool.call.id")
	AttrMCPMethod      = attribute.Key("mcp.method.name")
	AttrErrorType      = attribute.Key("error.type")
	AttrAgent          = attribute.Key("agt.agent")
	AttrRunID          = attribute.Key("agt.run_id")
	AttrBatchID        = attribute.Key("agt.batch.id")
	AttrBatchCalls     = attribute.Key("agt.batch.calls")
	AttrBatchRefreshed = attribute.Key("agt.batch.refreshed")
	AttrAlias          = attribute.Key("agt.alias")
	AttrSourceKind     = attribute.Key("agt.tool.source")
	AttrSourceTool     = attribute.Key("agt.tool")
	AttrServerRef      = attribute.Key("agt.server.ref")
	AttrStage          = attribute.Key("agt.stage")
	AttrCode           = attribute.Key("agt.code")
	AttrVerdict        = attribute.Key("agt.decision.verdict")
	AttrDecidedBy      = attribute.Key("agt.decision.by")
	AttrViolations     = attribute.Key("agt.violations")
	AttrPanicked       = attribute.Key("agt.panicked")
	AttrRequest        = attribute.Key("agt.server_request.kind")
	AttrOutcome        = attribute.Key("agt.server_request.outcome")
	AttrRefreshAdded   = attribute.Key("agt.refresh.added")
	AttrRefreshRemoved = attribute.Key("agt.refresh.removed")
	AttrRefreshChanged = attribute.Key("agt.refresh.replaced")
	AttrRefreshRestart = attribute.Key("agt.refresh.restarted")
	AttrRefreshRelist  = attribute.Key("agt.refresh.relisted")
	AttrRefreshFailed  = attribute.Key("agt.refresh.failed")
	AttrServerShared   = attribute.Key("agt.server.shared")
	AttrLossCharged    = attribute.Key("agt.server.loss.charged")
	AttrLossCount      = attribute.Key("agt.server.losses")
)

const (
	operationExecuteTool = "execute_tool"
	methodToolsCall      = "tools/call"
	// codeOK is agt.code of a call that succeeded.
	codeOK = "ok"
	// maxAttrBytes bounds every string attribute of model or server
	// origin: call and batch IDs, aliases of a rejected batch, tool names.
	maxAttrBytes = 256
	// maxDecidedBy bounds agt.decision.by, a host's name for a decider.
	maxDecidedBy = 64
)

// ---------------------------------------------------------------- batch

type batchKey struct{}

// batchState ties the spans of one batch together. The interceptor
// registers each call's span as it starts; exactly one of three ends it:
// the auditor with the call's Record, the interceptor itself when the
// span is no longer registered as it returns (another interceptor of
// this Telemetry inside it took the call's place, or the span was ended
// already), or execute, once the batch returned, for every span still
// registered. A next that an interceptor before this Telemetry's
// abandoned (a timeout of its own) may return after all of these: its
// span is ended already.
type batchState struct {
	owner *Telemetry
	mu    sync.Mutex
	// calls holds the registered spans; nil once execute has returned.
	calls map[string]*callSpan
	// batch is the batch's identity: its ID and its calls' first
	// element, the same for every wrapper of one Execute (they share the
	// Batch value the Run was given), distinct for a batch another Run
	// executes from inside this one (a sub-agent's, from a handler or a
	// Permission).
	batch batchID
	// recorded holds the calls whose Record the auditor gave a span of
	// its own: at most one per call of the batch; nil until the first.
	recorded map[string]struct{}
}

// callSpan is the span of one call that reached the interceptor. Its
// fields other than span are guarded by the batchState's mu.
type callSpan struct {
	span  trace.Span
	done  bool      // the interceptor returned
	end   time.Time // when it returned
	code  run.Code  // the Result's code as the interceptor saw it
	ended bool
}

func (t *Telemetry) batchFrom(ctx context.Context) *batchState {
	bs, _ := ctx.Value(batchKey{}).(*batchState)
	if bs == nil || bs.owner != t {
		return nil
	}
	return bs
}

// start starts and registers the span of a call that reached the
// interceptor, under the batch's lock so that the auditor sees either it
// or none. A call whose Record came first (it has its span from the
// auditor) or whose batch has ended gets no span: held is nil. A span
// already registered under the ID (the interceptor installed twice) is
// left to the interceptor that started it.
func (bs *batchState) start(ctx context.Context, callID string, tracer trace.Tracer, name string, opts ...trace.SpanStartOption) (_ context.Context, _ trace.Span, held *callSpan) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if _, done := bs.recorded[callID]; done || bs.calls == nil {
		return ctx, nil, nil
	}
	ctx, span := tracer.Start(ctx, name, opts...)
	held = &callSpan{span: span}
	bs.calls[callID] = held
	return ctx, span, held
}

type batchID struct {
	id    string
	first *run.Call
	n     int
}

func idOf(b run.Batch) batchID {
	id := batchID{id: b.ID, n: len(b.Calls)}
	if len(b.Calls) > 0 {
		id.first = &b.Calls[0]
	}
	return id
}

// returned is the interceptor's return: a span still registered waits
// for the call's Record; any other span not yet ended ends now.
func (bs *batchState) returned(callID string, cs *callSpan, end time.Time, code run.Code) {
	bs.mu.Lock()
	if cs.ended {
		bs.mu.Unlock()
		return
	}
	if bs.calls[callID] == cs {
		cs.done, cs.end, cs.code = true, end, code
		bs.mu.Unlock()
		return
	}
	cs.ended = true
	bs.mu.Unlock()
	finishSpan(cs.span, code)
	cs.span.End(trace.WithTimestamp(end))
}

// take unregisters the span of a call for the auditor to end, with
// when it ends: when the interceptor returned, or recordEnd for a next
// that still runs. A nil span: the interceptor did not see the call, and
// will not trace it if it does later.
func (bs *batchState) take(callID string, recordEnd time.Time) (trace.Span, time.Time) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	cs := bs.calls[callID]
	if cs == nil {
		if bs.recorded == nil {
			bs.recorded = map[string]struct{}{}
		}
		bs.recorded[callID] = struct{}{}
		return nil, time.Time{}
	}
	delete(bs.calls, callID)
	cs.ended = true
	if cs.done {
		return cs.span, cs.end
	}
	return cs.span, recordEnd
}

// spanLeft is a span execute ends, copied under the batch's lock.
type spanLeft struct {
	callID string
	span   trace.Span
	end    time.Time
	code   run.Code
}

// close unregisters every span left, for execute to end (a next that
// still runs ends at now), and makes the interceptor end the span of any
// call that starts later itself.
func (bs *batchState) close(now time.Time) []spanLeft {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	left := make([]spanLeft, 0, len(bs.calls))
	for id, cs := range bs.calls {
		cs.ended = true
		l := spanLeft{callID: id, span: cs.span, end: now, code: cs.code}
		if cs.done {
			l.end = cs.end
		}
		left = append(left, l)
	}
	bs.calls = nil
	return left
}

// execute runs the batch (next) inside a span of the batch, so the call
// spans of the interceptor and the auditor are its children and each call
// gets exactly one span. The span, "agt.batch", carries the agent, the
// batch ID, the number of calls and whether a refresh or restart ran; a
// rejected batch, a closed Run or an ended context sets error.type to its
// code and the span status to Error.
//
// Inside the span of the same batch (the same Batch value) from this
// Telemetry, it runs next alone: it is the second wrapper of options
// instrumented twice, and the batch has its span. A batch that another
// Run executes from inside this one (a sub-agent's, from a handler or a
// Permission) is another Batch, and gets a span of its own, under the
// span of the context it was given (the call's, from a handler).
func (t *Telemetry) execute(ctx context.Context, b run.Batch, next func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
	if bs := t.batchFrom(ctx); bs != nil && bs.batch == idOf(b) {
		return next(ctx)
	}
	ctx, span := t.tracer.Start(ctx, "agt.batch", kindInternal,
		trace.WithAttributes(
			AttrAgent.String(bound(string(b.Agent), maxAttrBytes)),
			AttrBatchID.String(bound(b.ID, maxAttrBytes)),
			AttrBatchCalls.Int(len(b.Calls)),
		))
	defer span.End()
	bs := &batchState{owner: t, calls: map[string]*callSpan{}, batch: idOf(b)}
	out, err := next(context.WithValue(ctx, batchKey{}, bs))

	// Spans no auditor of this Telemetry ended (the host replaced the
	// Auditor, or a call's next still runs) end with their Result's code.
	byCall := make(map[string]run.Code, len(out.Results))
	for _, res := range out.Results {
		byCall[res.CallID] = res.Code
	}
	for _, l := range bs.close(time.Now()) {
		code, ok := byCall[l.callID]
		if !ok {
			code = l.code
		}
		finishSpan(l.span, code)
		l.span.End(trace.WithTimestamp(l.end))
	}

	span.SetAttributes(AttrBatchRefreshed.Bool(out.Refresh != nil))
	var attrs []attribute.KeyValue
	if err != nil {
		code := string(run.CodeOf(err))
		span.SetAttributes(AttrErrorType.String(code))
		span.SetStatus(codes.Error, code)
		attrs = append(attrs, AttrErrorType.String(code))
	}
	t.batches.Add(ctx, 1, metric.WithAttributes(attrs...))
	return out, err
}

// ---------------------------------------------------------- interceptor

// interceptor is the Telemetry's run.Interceptor, first in the
// Interceptors of instrumented options. It starts the span of each call
// that reaches it ("execute_tool ALIAS"; kind Client for an MCP tool,
// Internal for a host tool), writes the trace context with the
// Propagator into the _meta of the MCP tools/call request
// (mcpconn.WithRequestMeta), and records mcp.client.operation.duration
// for MCP tools. Inside a batch span the auditor completes and ends the
// span with the call's Record; outside one (a host that replaced the
// instrumented WrapExecute) the interceptor ends it with the Result's
// code, and the auditor cannot tell a call an interceptor before this one
// stopped from one it saw: such a call gets no span.
type interceptor struct{ t *Telemetry }

func (i interceptor) Intercept(ctx context.Context, req run.Request, next func(context.Context) run.Result) (res run.Result, err error) {
	t := i.t
	isMCP := req.Source.Kind == run.SourceMCP
	kind := kindInternal
	if isMCP {
		kind = kindClient
	}
	name := spanName(req.Alias)
	opts := []trace.SpanStartOption{kind,
		trace.WithAttributes(callAttrs(req.Agent, req.BatchID, req.CallID, req.Alias, req.Source, true)...)}
	bs := t.batchFrom(ctx)
	var (
		span trace.Span
		held *callSpan
	)
	if bs == nil {
		ctx, span = t.tracer.Start(ctx, name, opts...)
	} else if ctx, span, held = bs.start(ctx, req.CallID, t.tracer, name, opts...); held == nil {
		// The call has its one span already, ended: its Record came
		// first, as an outer interceptor gave up on it and runs next
		// late. It runs untraced.
		return next(ctx), nil
	}
	if isMCP {
		carrier := propagation.MapCarrier{}
		t.propagator.Inject(ctx, carrier)
		ctx = mcpconn.WithRequestMeta(ctx, carrier)
	}
	start := time.Now()
	done := false
	defer func() {
		end := time.Now()
		code := res.Code
		if !done {
			code = run.CodeInternal // a panic below: the Run fails the call so
		}
		if isMCP {
			attrs := []attribute.KeyValue{
				AttrMCPMethod.String(methodToolsCall),
				AttrOperationName.String(operationExecuteTool),
				AttrToolName.String(bound(req.Alias, maxAttrBytes)),
				AttrServerRef.String(bound(string(req.Source.Ref), maxAttrBytes)),
			}
			if code != "" {
				attrs = append(attrs, AttrErrorType.String(string(code)))
			}
			t.mcpTime.Record(ctx, end.Sub(start).Seconds(), metric.WithAttributes(attrs...))
		}
		if bs != nil {
			bs.returned(req.CallID, held, end, code)
			return
		}
		finishSpan(span, code)
		span.End(trace.WithTimestamp(end))
	}()
	res = next(ctx)
	done = true
	return res, nil
}

func spanName(alias string) string {
	return operationExecuteTool + " " + bound(alias, maxAttrBytes)
}

// callAttrs are the attributes a call's span starts with: the
// interceptor's (sent: a tools/call request goes to an MCP server) and
// the auditor's for a call that stopped before it. A call of a rejected
// batch may name no tool of the snapshot: it has no source.
func callAttrs(agent resource.Ref, batchID, callID, alias string, src run.Source, sent bool) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 10) // all of them: one allocation
	attrs = append(attrs,
		AttrOperationName.String(operationExecuteTool),
		AttrToolName.String(bound(alias, maxAttrBytes)),
		AttrToolCallID.String(bound(callID, maxAttrBytes)),
		AttrAgent.String(bound(string(agent), maxAttrBytes)),
		AttrBatchID.String(bound(batchID, maxAttrBytes)),
		AttrAlias.String(bound(alias, maxAttrBytes)),
	)
	if src.Kind != "" {
		attrs = append(attrs, AttrSourceKind.String(string(src.Kind)), AttrSourceTool.String(bound(src.Tool, maxAttrBytes)))
	}
	if src.Kind == run.SourceMCP {
		if sent {
			attrs = append(attrs, AttrMCPMethod.String(methodToolsCall))
		}
		attrs = append(attrs, AttrServerRef.String(bound(string(src.Ref), maxAttrBytes)))
	}
	return attrs
}

// finishSpan sets a call's outcome: error.type and status Error on a
// failure. The status description is the code alone: a Result's Message
// may hold a server's words or stderr.
func finishSpan(span trace.Span, code run.Code) {
	if code == "" {
		span.SetAttributes(AttrCode.String(codeOK))
		return
	}
	span.SetAttributes(AttrCode.String(string(code)), AttrErrorType.String(string(code)))
	span.SetStatus(codes.Error, string(code))
}

// -------------------------------------------------------------- auditor

// auditor is the Telemetry's run.Auditor, the Auditor of instrumented
// options. It records the metrics of every call (agt.calls,
// agt.call.duration), completes the span of each call that reached the
// interceptor with its Record (stage, decision, final code, run ID), and
// gives every other call (a rejected batch, invalid arguments, a denied
// call) a span of its own from the Record's start and duration.
// Refreshes become "agt.refresh" spans under the batch, and the requests
// a server sent during a call events of that call's span. Every Record
// is then passed to next, the host's Auditor, when not nil.
//
// Outside a batch span it cannot tell which calls the interceptor saw:
// it gives a span to the calls that stopped before the interceptors
// (batch checks, validation, permission) and leaves the others to the
// interceptor.
type auditor struct {
	t    *Telemetry
	next run.Auditor
}

var _ run.Auditor = (*auditor)(nil)

func (a *auditor) Audit(ctx context.Context, rec run.Record) {
	switch rec.Event {
	case "call":
		a.t.auditCall(ctx, rec)
	case "refresh":
		a.t.auditRefresh(ctx, rec)
	case "server_request":
		a.t.auditServerRequest(ctx, rec)
	case "server_lost":
		a.t.auditServerLost(ctx, rec)
	}
	if a.next != nil {
		a.next.Audit(ctx, rec)
	}
}

func (t *Telemetry) auditCall(ctx context.Context, rec run.Record) {
	code := codeOK
	if rec.Code != "" {
		code = string(rec.Code)
	}
	mattrs := []attribute.KeyValue{
		AttrSourceKind.String(string(rec.Source.Kind)),
		AttrCode.String(code),
		AttrStage.String(rec.Stage),
	}
	if rec.Source.Kind == run.SourceMCP {
		mattrs = append(mattrs, AttrServerRef.String(bound(string(rec.Source.Ref), maxAttrBytes)))
	}
	if rec.Code != "" {
		mattrs = append(mattrs, AttrErrorType.String(code))
	}
	set := metric.WithAttributeSet(attribute.NewSet(mattrs...))
	t.calls.Add(ctx, 1, set)
	t.callTime.Record(ctx, rec.Duration.Seconds(), set)

	bs := t.batchFrom(ctx)
	if bs != nil {
		if span, end := bs.take(rec.CallID, rec.Time.Add(rec.Duration)); span != nil {
			completeSpan(span, rec)
			span.End(trace.WithTimestamp(end))
			return
		}
	} else if rec.Stage == "intercept" || rec.Stage == "execute" {
		return // the interceptor's span, as far as can be told
	}
	_, span := t.tracer.Start(ctx, spanName(rec.Alias), kindInternal,
		trace.WithTimestamp(rec.Time), trace.WithAttributes(callAttrs(rec.Agent, rec.BatchID, rec.CallID, rec.Alias, rec.Source, false)...))
	completeSpan(span, rec)
	span.End(trace.WithTimestamp(rec.Time.Add(rec.Duration)))
}

// completeSpan adds what only the Record knows and the outcome.
func completeSpan(span trace.Span, rec run.Record) {
	attrs := make([]attribute.KeyValue, 0, 9)
	attrs = append(attrs, AttrStage.String(rec.Stage))
	if rec.RunID != "" {
		attrs = append(attrs, AttrRunID.String(bound(rec.RunID, maxAttrBytes)))
	}
	if rec.Decision.Verdict != "" {
		attrs = append(attrs, AttrVerdict.String(bound(string(rec.Decision.Verdict), maxDecidedBy)))
	}
	if rec.Decision.By != "" {
		attrs = append(attrs, AttrDecidedBy.String(bound(rec.Decision.By, maxDecidedBy)))
	}
	if n := len(rec.ViolationPaths); n > 0 {
		attrs = append(attrs, AttrViolations.Int(n))
	}
	if rec.Panic != "" {
		attrs = append(attrs, AttrPanicked.Bool(true))
	}
	// One SetAttributes: each call costs the SDK a copy and a dedupe.
	if rec.Code == "" {
		span.SetAttributes(append(attrs, AttrCode.String(codeOK))...)
		return
	}
	span.SetAttributes(append(attrs, AttrCode.String(string(rec.Code)), AttrErrorType.String(string(rec.Code)))...)
	span.SetStatus(codes.Error, string(rec.Code))
}

func (t *Telemetry) auditRefresh(ctx context.Context, rec run.Record) {
	var attrs []attribute.KeyValue
	if rec.RunID != "" {
		attrs = append(attrs, AttrRunID.String(bound(rec.RunID, maxAttrBytes)))
	}
	attrs = append(attrs, AttrAgent.String(bound(string(rec.Agent), maxAttrBytes)), AttrBatchID.String(bound(rec.BatchID, maxAttrBytes)))
	if d := rec.Refresh; d != nil {
		attrs = append(attrs,
			AttrRefreshAdded.Int(len(d.Added)), AttrRefreshRemoved.Int(len(d.Removed)),
			AttrRefreshChanged.Int(len(d.Replaced)), AttrRefreshRestart.Int(len(d.Restarted)),
			AttrRefreshRelist.Int(len(d.Relisted)), AttrRefreshFailed.Int(len(d.Failures)))
	}
	_, span := t.tracer.Start(ctx, "agt.refresh", kindInternal,
		trace.WithTimestamp(rec.Time), trace.WithAttributes(attrs...))
	if rec.Code != "" {
		finishSpan(span, rec.Code)
	}
	span.End(trace.WithTimestamp(rec.Time.Add(rec.Duration)))
}

func (t *Telemetry) auditServerRequest(ctx context.Context, rec run.Record) {
	attrs := []attribute.KeyValue{
		AttrRequest.String(rec.Request),
		AttrOutcome.String(string(rec.Outcome)),
		AttrServerRef.String(bound(string(rec.Source.Ref), maxAttrBytes)),
	}
	t.serverAsked.Add(ctx, 1, metric.WithAttributes(attrs...))
	// The Run audits a request of one call with the context that call
	// was sent with: its span is there (the interceptor's, or the batch's
	// without it). A request with no call or several in flight has none.
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("agt.server_request", trace.WithAttributes(attrs[:2]...), trace.WithTimestamp(rec.Time))
	}
}

func (t *Telemetry) auditServerLost(ctx context.Context, rec run.Record) {
	attrs := []attribute.KeyValue{
		AttrServerRef.String(bound(string(rec.Source.Ref), maxAttrBytes)),
		AttrServerShared.Bool(rec.Shared),
		AttrLossCharged.Bool(rec.Charged),
	}
	t.serverLost.Add(ctx, 1, metric.WithAttributes(attrs...))
	// The Run audits a loss with the batch's context: an event of the
	// batch span, with the count in a row (not a metric attribute: it
	// has no bound).
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("agt.server_lost", trace.WithAttributes(append(attrs, AttrLossCount.Int(rec.Losses))...), trace.WithTimestamp(rec.Time))
	}
}

// bound makes s valid UTF-8 and cuts it to at most n bytes, never inside
// a UTF-8 sequence: these strings come from models and servers.
func bound(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for range utf8.UTFMax - 1 { // a cut sequence leaves at most 3 bytes
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}
