package agtotel

import (
	"context"
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
const ScopeName = "github.com/agtsdk/agt/otel"

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
	// tools/call request. Nil means otel.GetTextMapPropagator() at each
	// call, which writes nothing until the host sets one (for example
	// propagation.TraceContext{}).
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

	// live holds the span of each call in flight past this interceptor,
	// so a request its server sends during the call (audited with no
	// context) becomes an event of that span.
	liveMu sync.Mutex
	live   map[liveKey]*liveSpan
}

// liveSpan is one registration in Telemetry.live; compared by pointer, as
// a trace.Span of another provider need not be comparable.
type liveSpan struct{ span trace.Span }

type liveKey struct {
	agent           resource.Ref
	batchID, callID string
}

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
	t := &Telemetry{
		tracer:     tp.Tracer(ScopeName),
		propagator: opts.Propagator,
		live:       map[liveKey]*liveSpan{},
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
		metric.WithDescription("Batches executed through Telemetry.Execute."))
	handle(err)
	t.serverAsked, err = m.Int64Counter(MetricServerRequests, metric.WithUnit("{request}"),
		metric.WithDescription("Requests MCP servers sent to agt Runs (elicitation, sampling, roots), by kind and outcome."))
	handle(err)
	return t
}

func handle(err error) {
	if err != nil {
		otel.Handle(err)
	}
}

func (t *Telemetry) prop() propagation.TextMapPropagator {
	if t.propagator != nil {
		return t.propagator
	}
	return otel.GetTextMapPropagator()
}

// The metric names.
const (
	MetricCalls             = "agt.calls"
	MetricCallDuration      = "agt.call.duration"
	MetricMCPClientDuration = "mcp.client.operation.duration"
	MetricBatches           = "agt.batches"
	MetricServerRequests    = "agt.server_requests"
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

// batchState ties the spans of one batch together: the interceptor hands
// each call's span over, the auditor finishes it with the call's Record,
// and Execute ends what no auditor finished.
type batchState struct {
	owner *Telemetry
	mu    sync.Mutex
	calls map[string]*heldSpan
}

// heldSpan is a call span the interceptor is done with, waiting for the
// audit Record that completes it.
type heldSpan struct {
	span trace.Span
	end  time.Time
	code run.Code // the Result's code as the interceptor saw it
}

func (t *Telemetry) batchFrom(ctx context.Context) *batchState {
	bs, _ := ctx.Value(batchKey{}).(*batchState)
	if bs == nil || bs.owner != t {
		return nil
	}
	return bs
}

func (bs *batchState) hold(callID string, h *heldSpan) {
	bs.mu.Lock()
	prev := bs.calls[callID]
	bs.calls[callID] = h
	bs.mu.Unlock()
	if prev != nil {
		// The interceptor was installed twice: the outer one's span
		// ends as it is.
		finishSpan(prev.span, prev.code)
		prev.span.End(trace.WithTimestamp(prev.end))
	}
}

func (bs *batchState) take(callID string) *heldSpan {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	h := bs.calls[callID]
	delete(bs.calls, callID)
	return h
}

// Execute runs r.Execute(ctx, b) inside a span of the batch, so the call
// spans of the Interceptor and the Auditor are its children and each call
// gets exactly one span. The span, "agt.batch", carries the agent, the
// batch ID, the number of calls and whether a refresh or restart ran; a
// rejected batch, a closed Run or an ended context sets error.type to its
// code and the span status to Error.
func (t *Telemetry) Execute(ctx context.Context, r *run.Run, b run.Batch) (run.Outcome, error) {
	ctx, span := t.tracer.Start(ctx, "agt.batch", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			AttrAgent.String(bound(string(b.Agent), maxAttrBytes)),
			AttrBatchID.String(bound(b.ID, maxAttrBytes)),
			AttrBatchCalls.Int(len(b.Calls)),
		))
	defer span.End()
	bs := &batchState{owner: t, calls: map[string]*heldSpan{}}
	out, err := r.Execute(context.WithValue(ctx, batchKey{}, bs), b)

	// Spans no Auditor of this Telemetry finished (the host did not
	// install it) end with their Result's code.
	byCall := make(map[string]run.Code, len(out.Results))
	for _, res := range out.Results {
		byCall[res.CallID] = res.Code
	}
	bs.mu.Lock()
	left := bs.calls
	bs.calls = map[string]*heldSpan{}
	bs.mu.Unlock()
	for id, h := range left {
		code, ok := byCall[id]
		if !ok {
			code = h.code
		}
		finishSpan(h.span, code)
		h.span.End(trace.WithTimestamp(h.end))
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

// Interceptor returns the run.Interceptor that starts the span of each
// call that reaches it ("execute_tool ALIAS"; kind Client for an MCP
// tool, Internal for a host tool), writes the trace context with the
// Propagator into the _meta of the MCP tools/call request
// (mcpconn.WithRequestMeta), and records mcp.client.operation.duration
// for MCP tools. Under Execute the Auditor completes and ends the span
// with the call's Record; otherwise the interceptor ends it with the
// Result's code. Install it once, anywhere in Options.Interceptors: last
// (innermost), its span and duration time the tool alone.
func (t *Telemetry) Interceptor() run.Interceptor {
	return run.InterceptorFunc(t.intercept)
}

func (t *Telemetry) intercept(ctx context.Context, req run.Request, next run.Next) (res run.Result, err error) {
	isMCP := req.Source.Kind == run.SourceMCP
	kind := trace.SpanKindInternal
	if isMCP {
		kind = trace.SpanKindClient
	}
	ctx, span := t.tracer.Start(ctx, spanName(req.Alias), trace.WithSpanKind(kind),
		trace.WithAttributes(requestAttrs(req)...))
	if isMCP {
		carrier := propagation.MapCarrier{}
		t.prop().Inject(ctx, carrier)
		ctx = mcpconn.WithRequestMeta(ctx, carrier)
	}
	key, entry := liveKey{req.Agent, req.BatchID, req.CallID}, &liveSpan{span}
	t.liveMu.Lock()
	t.live[key] = entry
	t.liveMu.Unlock()

	start := time.Now()
	done := false
	defer func() {
		end := time.Now()
		t.liveMu.Lock()
		if t.live[key] == entry {
			delete(t.live, key)
		}
		t.liveMu.Unlock()
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
		if bs := t.batchFrom(ctx); bs != nil {
			bs.hold(req.CallID, &heldSpan{span: span, end: end, code: code})
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

// requestAttrs are the attributes a call's span starts with.
func requestAttrs(req run.Request) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		AttrOperationName.String(operationExecuteTool),
		AttrToolName.String(bound(req.Alias, maxAttrBytes)),
		AttrToolCallID.String(bound(req.CallID, maxAttrBytes)),
		AttrAgent.String(bound(string(req.Agent), maxAttrBytes)),
		AttrBatchID.String(bound(req.BatchID, maxAttrBytes)),
		AttrAlias.String(bound(req.Alias, maxAttrBytes)),
		AttrSourceKind.String(string(req.Source.Kind)),
		AttrSourceTool.String(bound(req.Source.Tool, maxAttrBytes)),
	}
	if req.Source.Kind == run.SourceMCP {
		attrs = append(attrs, AttrMCPMethod.String(methodToolsCall), AttrServerRef.String(bound(string(req.Source.Ref), maxAttrBytes)))
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

// Auditor returns the run.Auditor that records the metrics of every call
// (agt.calls, agt.call.duration), completes the span of each call that
// reached the Interceptor with its Record (stage, decision, final code,
// run ID), and gives every other call (a rejected batch, invalid
// arguments, a denied call) a span of its own from the Record's start and
// duration. Refreshes become "agt.refresh" spans under the batch, and the
// requests a server sent during a call events of that call's span. Every
// Record is then passed to next, when not nil, so a host keeps its own
// audit (run.NewSlogAuditor, say).
//
// Without Execute the Auditor cannot tell which calls the Interceptor
// saw: it gives a span to the calls that stopped before the interceptors
// (batch checks, validation, permission) and leaves the others to the
// Interceptor.
func (t *Telemetry) Auditor(next run.Auditor) run.Auditor {
	return &auditor{t: t, next: next}
}

type auditor struct {
	t    *Telemetry
	next run.Auditor
}

var _ run.Auditor = (*auditor)(nil)

func (a *auditor) Audit(ctx context.Context, rec run.Record) {
	switch rec.Event {
	case run.EventCall:
		a.t.auditCall(ctx, rec)
	case run.EventRefresh:
		a.t.auditRefresh(ctx, rec)
	case run.EventServerRequest:
		a.t.auditServerRequest(ctx, rec)
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
		AttrStage.String(string(rec.Stage)),
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
		if h := bs.take(rec.CallID); h != nil {
			completeSpan(h.span, rec)
			h.span.End(trace.WithTimestamp(h.end))
			return
		}
	} else if rec.Stage == run.StageIntercept || rec.Stage == run.StageExecute {
		return // the Interceptor's span, as far as can be told
	}
	_, span := t.tracer.Start(ctx, spanName(rec.Alias), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(rec.Time), trace.WithAttributes(recordAttrs(rec)...))
	completeSpan(span, rec)
	span.End(trace.WithTimestamp(rec.Time.Add(rec.Duration)))
}

// recordAttrs are the attributes of a span the auditor makes.
func recordAttrs(rec run.Record) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		AttrOperationName.String(operationExecuteTool),
		AttrToolName.String(bound(rec.Alias, maxAttrBytes)),
		AttrToolCallID.String(bound(rec.CallID, maxAttrBytes)),
		AttrAgent.String(bound(string(rec.Agent), maxAttrBytes)),
		AttrBatchID.String(bound(rec.BatchID, maxAttrBytes)),
		AttrAlias.String(bound(rec.Alias, maxAttrBytes)),
	}
	if rec.Source.Kind != "" {
		attrs = append(attrs, AttrSourceKind.String(string(rec.Source.Kind)), AttrSourceTool.String(bound(rec.Source.Tool, maxAttrBytes)))
	}
	if rec.Source.Kind == run.SourceMCP {
		attrs = append(attrs, AttrServerRef.String(bound(string(rec.Source.Ref), maxAttrBytes)))
	}
	return attrs
}

// completeSpan adds what only the Record knows and the outcome.
func completeSpan(span trace.Span, rec run.Record) {
	attrs := make([]attribute.KeyValue, 0, 9)
	attrs = append(attrs, AttrStage.String(string(rec.Stage)))
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
	if d := rec.Diff; d != nil {
		attrs = append(attrs,
			AttrRefreshAdded.Int(len(d.Added)), AttrRefreshRemoved.Int(len(d.Removed)),
			AttrRefreshChanged.Int(len(d.Replaced)), AttrRefreshRestart.Int(len(d.Restarted)),
			AttrRefreshRelist.Int(len(d.Relisted)), AttrRefreshFailed.Int(len(d.Failed)))
	}
	_, span := t.tracer.Start(ctx, "agt.refresh", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(rec.Time), trace.WithAttributes(attrs...))
	if rec.Code != "" {
		finishSpan(span, rec.Code)
	}
	span.End(trace.WithTimestamp(rec.Time.Add(rec.Duration)))
}

func (t *Telemetry) auditServerRequest(ctx context.Context, rec run.Record) {
	attrs := []attribute.KeyValue{
		AttrRequest.String(string(rec.Request)),
		AttrOutcome.String(string(rec.Outcome)),
		AttrServerRef.String(bound(string(rec.Source.Ref), maxAttrBytes)),
	}
	t.serverAsked.Add(ctx, 1, metric.WithAttributes(attrs...))
	ids := rec.CallIDs
	if rec.CallID != "" {
		ids = []string{rec.CallID}
	}
	ev := trace.WithAttributes(attrs[:2]...)
	t.liveMu.Lock()
	defer t.liveMu.Unlock()
	for _, id := range ids {
		if l := t.live[liveKey{rec.Agent, rec.BatchID, id}]; l != nil {
			l.span.AddEvent("agt.server_request", ev, trace.WithTimestamp(rec.Time))
		}
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
