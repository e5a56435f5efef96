package agtotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/agtotel"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	// secret stands for an argument value: it must appear in no span,
	// event or metric.
	secret = "s3cr3t-argument-value"
)

// serverMeta records the params._meta of every tools/call the fake
// server receives, as the server decoded it.
type serverMeta struct {
	mu    sync.Mutex
	metas []map[string]any
}

func (s *serverMeta) all() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.metas)
}

// fixture is a real Run over a bbolt store, its options instrumented:
// the agent mounts the in-process fake MCP server (which records each
// request's _meta) and has one host tool; Telemetry records into an
// in-memory span exporter and a manual metric reader.
type fixture struct {
	run    *run.Run
	tel    *agtotel.Telemetry
	tracer trace.Tracer // of the Telemetry's provider, for a host's own spans
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	meta   *serverMeta
	audit  *recordingAuditor
	// opts are the options the Run was started with.
	opts *run.Options
}

type recordingAuditor struct {
	mu   sync.Mutex
	recs []run.Record
	// hook, when set, sees each Record as it comes.
	hook func(context.Context, run.Record)
}

func (a *recordingAuditor) Audit(ctx context.Context, rec run.Record) {
	a.mu.Lock()
	a.recs = append(a.recs, rec)
	hook := a.hook
	a.mu.Unlock()
	if hook != nil {
		hook(ctx, rec)
	}
}

func (a *recordingAuditor) setHook(hook func(context.Context, run.Record)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hook = hook
}

func (a *recordingAuditor) records() []run.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.recs)
}

// wrapFunc is the type of run.Options.WrapExecute.
type wrapFunc = func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error)

type fixtureOptions struct {
	// era is the fake server's protocol era ("": mcptest.EraDual).
	era mcptest.Era
	// replaceAuditor and dropWrap undo a part of Instrument: the host
	// sets its own Auditor, or a nil WrapExecute, on the instrumented
	// options.
	replaceAuditor, dropWrap bool
	// twice instruments the options twice.
	twice bool
	// wrap, when set, makes the host's WrapExecute.
	wrap func(f *fixture) wrapFunc
	// clientFeatures turns on the fake server's client-features tools
	// and gives the Run an Elicit handler that declines.
	clientFeatures bool
	// untraced installs no Telemetry at all (a baseline); bench keeps no
	// records (benchmarks would grow them without end).
	untraced, bench bool
	// inner are the host's Interceptors, which Instrument puts after
	// (inside) the Telemetry's; outer are put before (around) it on the
	// instrumented options.
	inner, outer []run.Interceptor
	// processor, when set, also sees every span start and end.
	processor sdktrace.SpanProcessor
	// share, when set, gives the Run the Telemetry (and exporter and
	// reader) of that fixture instead of its own; runID names the Run
	// ("run-1" when empty).
	share *fixture
	runID string
	// defaultPropagator leaves Options.Propagator nil.
	defaultPropagator bool
	// hostTools are added to the clock.
	hostTools []run.HostTool
}

func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	repo := runtest.Repository(t)

	f := &fixture{
		spans:  tracetest.NewInMemoryExporter(),
		reader: sdkmetric.NewManualReader(),
		meta:   &serverMeta{},
		audit:  &recordingAuditor{},
	}
	if fo.share != nil {
		f.spans, f.reader, f.tel, f.tracer = fo.share.spans, fo.share.reader, fo.share.tel, fo.share.tracer
	} else {
		var exporter sdktrace.SpanExporter = f.spans
		if fo.bench {
			exporter = tracetest.NewNoopExporter()
		}
		tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithSyncer(exporter)}
		if fo.processor != nil {
			tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(fo.processor))
		}
		tp := sdktrace.NewTracerProvider(tpOpts...)
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
		t.Cleanup(func() {
			_ = tp.Shutdown(context.Background())
			_ = mp.Shutdown(context.Background())
		})
		var prop propagation.TextMapPropagator = propagation.TraceContext{}
		if fo.defaultPropagator {
			prop = nil
		}
		f.tel = agtotel.New(&agtotel.Options{TracerProvider: tp, MeterProvider: mp, Propagator: prop})
		f.tracer = tp.Tracer("host")
	}
	runID := fo.runID
	if runID == "" {
		runID = "run-1"
	}

	dial := func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
		so := &mcptest.ServerOptions{Era: fo.era}
		if fo.clientFeatures {
			so.Faults = []mcptest.Fault{mcptest.FaultClientFeatures}
		}
		server := mcptest.NewServer(so)
		server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
					f.meta.mu.Lock()
					f.meta.metas = append(f.meta.metas, p.Meta)
					f.meta.mu.Unlock()
				}
				return next(ctx, method, req)
			}
		})
		return runtest.Serve(ctx, server)
	}
	var next run.Auditor = f.audit
	if fo.bench {
		next = nil
	}
	var elicit func(context.Context, run.Origin, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	if fo.clientFeatures {
		elicit = func(context.Context, run.Origin, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	opts := &run.Options{
		Permission:   policy.Rules{Allow: []string{"*"}, Deny: []string{"mcp__notes__" + mcptest.ToolNoteCreate}},
		Interceptors: fo.inner,
		Auditor:      next,
		RunID:        runID,
		HostTools: []run.HostTool{{
			Name:        "clock",
			Description: "Tells the time.",
			Schema:      json.RawMessage(`{"type":"object"}`),
			Handler: func(context.Context, run.Request) (run.Result, error) {
				return run.Result{Content: json.RawMessage(`[{"type":"text","text":"noon"}]`)}, nil
			},
		}},
		ClientFeatures: &run.ClientFeatures{Elicit: elicit},
	}
	opts.HostTools = append(opts.HostTools, fo.hostTools...)
	if fo.wrap != nil {
		opts.WrapExecute = fo.wrap(f)
	}
	if !fo.untraced {
		opts = f.tel.Instrument(opts)
		if fo.twice {
			opts = f.tel.Instrument(opts)
		}
		opts.Interceptors = append(slices.Clone(fo.outer), opts.Interceptors...)
		if fo.replaceAuditor {
			opts.Auditor = next
		}
		if fo.dropWrap {
			opts.WrapExecute = nil
		}
	}
	f.opts = opts
	f.run = runtest.New(t, repo, dial, *opts)
	return f
}

// inEras runs f in a subtest per protocol era of the fake server: the
// legacy one (2025-11-25, initialize and a session) and the dual one,
// with which agt speaks 2026-07-28.
func inEras(t *testing.T, f func(t *testing.T, era mcptest.Era)) {
	t.Helper()
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraDual} {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			f(t, era)
		})
	}
}

func alias(tool string) string { return run.Alias(runtest.Notes, tool) }

// threeCalls is one allowed call, one the policy denies and one with
// invalid arguments; each carries the secret in its arguments (the
// allowed echo gets it back in its result too).
func threeCalls() run.Batch {
	return run.Batch{ID: "b1", Agent: runtest.Agent, Calls: []run.Call{
		{ID: "c-allowed", Name: alias(mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"` + secret + `"}`)},
		{ID: "c-denied", Name: alias(mcptest.ToolNoteCreate), Arguments: json.RawMessage(`{"owner":"alice","title":"` + secret + `"}`)},
		{ID: "c-invalid", Name: alias(mcptest.ToolSearch), Arguments: json.RawMessage(`{"query":"` + secret + `","limit":0}`)},
	}}
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func spansNamed(spans tracetest.SpanStubs, prefix string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// noSecret fails when the secret appears in any span name, attribute,
// status, event or link, or in any metric's attributes.
func noSecret(t *testing.T, spans tracetest.SpanStubs, rm metricdata.ResourceMetrics) {
	t.Helper()
	var all strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&all, "%s|%s|%v|", s.Name, s.Status.Description, attrMap(s.Attributes))
		for _, e := range s.Events {
			fmt.Fprintf(&all, "%s|%v|", e.Name, attrMap(e.Attributes))
		}
		for _, l := range s.Links {
			fmt.Fprintf(&all, "%v|", attrMap(l.Attributes))
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			fmt.Fprintf(&all, "%s|%s|", m.Name, m.Description)
			for _, set := range metricSets(m) {
				fmt.Fprintf(&all, "%v|", set.Encoded(attribute.DefaultEncoder()))
			}
		}
	}
	if strings.Contains(all.String(), secret) {
		t.Errorf("an argument value is in the telemetry:\n%s", all.String())
	}
	if !strings.Contains(all.String(), "c-allowed") {
		t.Fatal("the scan saw no span attributes: it would pass on anything")
	}
}

func metricSets(m metricdata.Metrics) []attribute.Set {
	var sets []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	}
	return sets
}

// counts sums a counter's points, or counts a histogram's, by the
// attributes named in keys ("k=v,k=v").
func counts(t *testing.T, rm metricdata.ResourceMetrics, name string, keys ...attribute.Key) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	key := func(set attribute.Set) string {
		var parts []string
		for _, k := range keys {
			v, _ := set.Value(k)
			parts = append(parts, string(k)+"="+v.String())
		}
		return strings.Join(parts, ",")
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] += int64(p.Count)
				}
			default:
				t.Fatalf("%s: unexpected data %T", name, m.Data)
			}
		}
	}
	return out
}

func collect(t *testing.T, r *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// One batch of an allowed, a denied and an invalid call: one batch span,
// three call spans under it (the allowed one from the interceptor, the
// others from the auditor), the conventions' attributes, codes and
// statuses, no argument value anywhere, the metrics, and the server got
// the allowed call's span as its traceparent.
func TestBatchSpansMetricsAndTraceContext(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, era mcptest.Era) {
		f := newFixture(t, fixtureOptions{era: era})
		checkThreeCalls(t, f)
	})
}

// checkThreeCalls runs threeCalls on f's Run and checks what
// TestBatchSpansMetricsAndTraceContext says: the telemetry of one
// instrumented batch.
func checkThreeCalls(t *testing.T, f *fixture) {
	t.Helper()
	out, err := f.run.Execute(context.Background(), threeCalls())
	if err != nil {
		t.Fatal(err)
	}
	var gotCodes []run.Code
	for _, res := range out.Results {
		gotCodes = append(gotCodes, res.Code)
	}
	if diff := cmp.Diff([]run.Code{"", run.CodePermissionDenied, run.CodeInvalidArguments}, gotCodes); diff != "" {
		t.Fatalf("codes (-want +got):\n%s", diff)
	}

	spans := f.spans.GetSpans()
	batches := spansNamed(spans, "agt.batch")
	calls := spansNamed(spans, "execute_tool ")
	if len(batches) != 1 || len(calls) != 3 || len(spans) != 4 {
		t.Fatalf("%d spans (%d batch, %d call), want 4 (1, 3): %v", len(spans), len(batches), len(calls), spans.Snapshots())
	}
	batch := batches[0]
	if diff := cmp.Diff(map[string]string{
		"agt.agent": "writer", "agt.batch.id": "b1", "agt.batch.calls": "3", "agt.batch.refreshed": "false",
	}, attrMap(batch.Attributes)); diff != "" {
		t.Errorf("batch attributes (-want +got):\n%s", diff)
	}
	if batch.Status.Code != codes.Unset {
		t.Errorf("batch status %v, want unset", batch.Status)
	}

	type callView struct {
		Name   string
		Kind   trace.SpanKind
		Status codes.Code
		Attrs  map[string]string
	}
	byID := map[string]callView{}
	for _, s := range calls {
		if s.Parent.SpanID() != batch.SpanContext.SpanID() || s.SpanContext.TraceID() != batch.SpanContext.TraceID() {
			t.Errorf("%s: parent %v, want the batch span %v", s.Name, s.Parent.SpanID(), batch.SpanContext.SpanID())
		}
		if s.EndTime.Before(s.StartTime) {
			t.Errorf("%s ends before it starts", s.Name)
		}
		a := attrMap(s.Attributes)
		byID[a["gen_ai.tool.call.id"]] = callView{s.Name, s.SpanKind, s.Status.Code, a}
	}
	common := func(callID, tool string, extra map[string]string) map[string]string {
		m := map[string]string{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": alias(tool), "gen_ai.tool.call.id": callID,
			"agt.agent": "writer", "agt.batch.id": "b1", "agt.alias": alias(tool), "agt.run_id": "run-1",
			"agt.tool.source": "mcp", "agt.tool": tool, "agt.server.ref": "notes",
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	want := map[string]callView{
		"c-allowed": {"execute_tool " + alias(mcptest.ToolEcho), trace.SpanKindClient, codes.Unset, common("c-allowed", mcptest.ToolEcho, map[string]string{
			"mcp.method.name": "tools/call", "agt.stage": "execute", "agt.decision.verdict": "allow", "agt.decision.by": "rules", "agt.code": "ok",
		})},
		"c-denied": {"execute_tool " + alias(mcptest.ToolNoteCreate), trace.SpanKindInternal, codes.Error, common("c-denied", mcptest.ToolNoteCreate, map[string]string{
			"agt.stage": "permission", "agt.decision.verdict": "deny", "agt.decision.by": "rules",
			"agt.code": "permission_denied", "error.type": "permission_denied",
		})},
		"c-invalid": {"execute_tool " + alias(mcptest.ToolSearch), trace.SpanKindInternal, codes.Error, common("c-invalid", mcptest.ToolSearch, map[string]string{
			"agt.stage": "validate", "agt.code": "invalid_arguments", "error.type": "invalid_arguments", "agt.violations": "1",
		})},
	}
	if diff := cmp.Diff(want, byID); diff != "" {
		t.Errorf("call spans (-want +got):\n%s", diff)
	}

	rm := collect(t, f.reader)
	noSecret(t, spans, rm)
	if diff := cmp.Diff(map[string]int64{
		"agt.code=ok,agt.stage=execute":                   1,
		"agt.code=permission_denied,agt.stage=permission": 1,
		"agt.code=invalid_arguments,agt.stage=validate":   1,
	}, counts(t, rm, agtotel.MetricCalls, "agt.code", "agt.stage")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", agtotel.MetricCalls, diff)
	}
	if diff := cmp.Diff(map[string]int64{"agt.tool.source=mcp,agt.server.ref=notes,error.type=": 1, "agt.tool.source=mcp,agt.server.ref=notes,error.type=permission_denied": 1, "agt.tool.source=mcp,agt.server.ref=notes,error.type=invalid_arguments": 1},
		counts(t, rm, agtotel.MetricCallDuration, "agt.tool.source", "agt.server.ref", "error.type")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", agtotel.MetricCallDuration, diff)
	}
	if diff := cmp.Diff(map[string]int64{"mcp.method.name=tools/call,gen_ai.tool.name=" + alias(mcptest.ToolEcho) + ",error.type=": 1},
		counts(t, rm, agtotel.MetricMCPClientDuration, "mcp.method.name", "gen_ai.tool.name", "error.type")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", agtotel.MetricMCPClientDuration, diff)
	}
	if diff := cmp.Diff(map[string]int64{"error.type=": 1}, counts(t, rm, agtotel.MetricBatches, "error.type")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", agtotel.MetricBatches, diff)
	}

	// The server received the allowed call's span as its parent.
	var allowed tracetest.SpanStub
	for _, s := range calls {
		if attrMap(s.Attributes)["gen_ai.tool.call.id"] == "c-allowed" {
			allowed = s
		}
	}
	metas := f.meta.all()
	if len(metas) != 1 {
		t.Fatalf("the server got %d tools/call requests, want 1", len(metas))
	}
	wantParent := fmt.Sprintf("00-%s-%s-01", allowed.SpanContext.TraceID(), allowed.SpanContext.SpanID())
	if got := metas[0]["traceparent"]; got != wantParent {
		t.Errorf("traceparent in _meta = %v, want %s (the call span)", got, wantParent)
	}
	if _, ok := metas[0]["progressToken"]; !ok {
		t.Errorf("the progress token is gone from _meta: %v", metas[0])
	}

	// The host's own auditor still gets every record.
	if n := len(f.audit.records()); n != 3 {
		t.Errorf("the next auditor got %d records, want 3", n)
	}
}

// A rejected batch: the batch span has the rejection's code and status
// Error, and each call still gets exactly one span, under it.
func TestRejectedBatch(t *testing.T) {
	t.Parallel()
	inEras(t, testRejectedBatch)
}

func testRejectedBatch(t *testing.T, era mcptest.Era) {
	f := newFixture(t, fixtureOptions{era: era})
	b := run.Batch{ID: "b2", Agent: runtest.Agent, Calls: []run.Call{
		{ID: "c1", Name: alias(mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"` + secret + `"}`)},
		// A model-chosen name of 4 KiB: bounded in the span, absent from metrics.
		{ID: "c2", Name: "no_such_tool_" + strings.Repeat("x", 4096) + secret, Arguments: json.RawMessage(`{}`)},
	}}
	if _, err := f.run.Execute(context.Background(), b); err == nil {
		t.Fatal("a batch naming an unknown tool was not rejected")
	}
	spans := f.spans.GetSpans()
	batches := spansNamed(spans, "agt.batch")
	calls := spansNamed(spans, "execute_tool ")
	if len(batches) != 1 || len(calls) != 2 {
		t.Fatalf("%d batch and %d call spans, want 1 and 2", len(batches), len(calls))
	}
	if a := attrMap(batches[0].Attributes); a["error.type"] != "unknown_tool" || batches[0].Status.Code != codes.Error {
		t.Errorf("batch span: error.type %q, status %v; want unknown_tool, Error", a["error.type"], batches[0].Status)
	}
	for _, s := range calls {
		a := attrMap(s.Attributes)
		if s.Parent.SpanID() != batches[0].SpanContext.SpanID() || a["agt.stage"] != "batch" || a["error.type"] != "unknown_tool" {
			t.Errorf("%s: parent %v, stage %q, error.type %q", s.Name, s.Parent.SpanID(), a["agt.stage"], a["error.type"])
		}
	}
	if len(f.meta.all()) != 0 {
		t.Error("a call of a rejected batch reached the server")
	}
	for _, s := range spans {
		if len(s.Name) > 256+len("execute_tool ") {
			t.Errorf("span name of %d bytes", len(s.Name))
		}
		for _, kv := range s.Attributes {
			if v := kv.Value.AsString(); len(v) > 256 {
				t.Errorf("%s: %s is %d bytes, past 256", s.Name, kv.Key, len(v))
			}
		}
	}
	// The unknown name is the model's: it appears bounded in the call's
	// span, but never in a metric.
	rm := collect(t, f.reader)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, set := range metricSets(m) {
				if strings.Contains(set.Encoded(attribute.DefaultEncoder()), "no_such_tool") {
					t.Errorf("%s carries a model-chosen tool name: %s", m.Name, set.Encoded(attribute.DefaultEncoder()))
				}
			}
		}
	}
	if diff := cmp.Diff(map[string]int64{"error.type=unknown_tool": 1}, counts(t, rm, agtotel.MetricBatches, "error.type")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", agtotel.MetricBatches, diff)
	}
}

// A host that sets WrapExecute to nil on the instrumented options loses
// the batch span only: each call still gets one span, the interceptor's
// for those that reached it, the auditor's for the others; and the host
// tool's span is Internal.
func TestWithoutWrapExecute(t *testing.T) {
	t.Parallel()
	inEras(t, testWithoutWrapExecute)
}

func testWithoutWrapExecute(t *testing.T, era mcptest.Era) {
	f := newFixture(t, fixtureOptions{era: era, dropWrap: true})
	b := threeCalls()
	b.Calls = append(b.Calls, run.Call{ID: "c-host", Name: "clock"})
	if _, err := f.run.Execute(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	spans := f.spans.GetSpans()
	got := map[string]trace.SpanKind{}
	for _, s := range spans {
		id := attrMap(s.Attributes)["gen_ai.tool.call.id"]
		if _, dup := got[id]; dup {
			t.Errorf("two spans for call %s", id)
		}
		got[id] = s.SpanKind
	}
	want := map[string]trace.SpanKind{
		"c-allowed": trace.SpanKindClient, "c-denied": trace.SpanKindInternal,
		"c-invalid": trace.SpanKindInternal, "c-host": trace.SpanKindInternal,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans by call (-want +got):\n%s", diff)
	}
}

// A host that sets its own Auditor on the instrumented options (the
// Telemetry's is gone): the interceptor's span still ends, with the
// Result's code.
func TestWithoutAuditor(t *testing.T) {
	t.Parallel()
	inEras(t, testWithoutAuditor)
}

func testWithoutAuditor(t *testing.T, era mcptest.Era) {
	f := newFixture(t, fixtureOptions{era: era, replaceAuditor: true})
	if _, err := f.run.Execute(context.Background(), threeCalls()); err != nil {
		t.Fatal(err)
	}
	calls := spansNamed(f.spans.GetSpans(), "execute_tool ")
	if len(calls) != 1 {
		t.Fatalf("%d call spans, want 1 (the call that reached the interceptor)", len(calls))
	}
	if a := attrMap(calls[0].Attributes); a["agt.code"] != "ok" || a["gen_ai.tool.call.id"] != "c-allowed" {
		t.Errorf("span attributes %v", a)
	}
}

// A request the server sends during a call is an event of the call's
// span; a refresh at the batch boundary (the server said its tools
// changed) is a span under the batch.
func TestServerRequestAndRefresh(t *testing.T) {
	t.Parallel()
	inEras(t, testServerRequestAndRefresh)
}

func testServerRequestAndRefresh(t *testing.T, era mcptest.Era) {
	f := newFixture(t, fixtureOptions{era: era, clientFeatures: true})
	ctx := context.Background()
	if _, err := f.run.Execute(ctx, run.Batch{ID: "ask", Agent: runtest.Agent, Calls: []run.Call{
		{ID: "c-ask", Name: alias(mcptest.ToolAsk), Arguments: json.RawMessage(`{"mode":"form"}`)},
	}}); err != nil {
		t.Fatal(err)
	}
	out, err := f.run.Execute(ctx, run.Batch{ID: "add", Agent: runtest.Agent, Calls: []run.Call{
		{ID: "c-add", Name: alias(mcptest.ToolAddTool), Arguments: json.RawMessage(`{"name":"late"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Refresh == nil {
		t.Fatal("no refresh after the server said its tools changed")
	}

	spans := f.spans.GetSpans()
	var ask, addBatch tracetest.SpanStub
	var refresh []tracetest.SpanStub
	for _, s := range spans {
		a := attrMap(s.Attributes)
		switch {
		case a["gen_ai.tool.call.id"] == "c-ask":
			ask = s
		case s.Name == "agt.batch" && a["agt.batch.id"] == "add":
			addBatch = s
		case s.Name == "agt.refresh":
			refresh = append(refresh, s)
		}
	}
	var events []map[string]string
	for _, e := range ask.Events {
		if e.Name == "agt.server_request" {
			events = append(events, attrMap(e.Attributes))
		}
	}
	if diff := cmp.Diff([]map[string]string{{"agt.server_request.kind": "elicitation/create", "agt.server_request.outcome": "declined"}}, events); diff != "" {
		t.Errorf("server request events of the ask span (-want +got):\n%s", diff)
	}
	if len(refresh) != 1 {
		t.Fatalf("%d refresh spans, want 1", len(refresh))
	}
	if refresh[0].Parent.SpanID() != addBatch.SpanContext.SpanID() {
		t.Error("the refresh span is not under its batch")
	}
	if a := attrMap(refresh[0].Attributes); a["agt.refresh.relisted"] != "1" || refresh[0].Status.Code != codes.Unset {
		t.Errorf("refresh span: %v, status %v", a, refresh[0].Status)
	}
	if a := attrMap(addBatch.Attributes); a["agt.batch.refreshed"] != "true" {
		t.Errorf("batch span: agt.batch.refreshed = %q, want true", a["agt.batch.refreshed"])
	}
	rm := collect(t, f.reader)
	if diff := cmp.Diff(map[string]int64{"agt.server_request.kind=elicitation/create,agt.server_request.outcome=declined": 1},
		counts(t, rm, agtotel.MetricServerRequests, "agt.server_request.kind", "agt.server_request.outcome")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", agtotel.MetricServerRequests, diff)
	}
}

// An interceptor inside the Telemetry's that panics: the call's one span
// ends with internal, agt.panicked and status Error, never the panic's
// value.
func TestInnerInterceptorPanics(t *testing.T) {
	t.Parallel()
	inEras(t, testInnerInterceptorPanics)
}

func testInnerInterceptorPanics(t *testing.T, era mcptest.Era) {
	f := newFixture(t, fixtureOptions{era: era, inner: []run.Interceptor{run.Before(func(context.Context, run.Request) (context.Context, error) {
		panic("boom " + secret)
	})}})
	out, err := f.run.Execute(context.Background(), run.Batch{ID: "p", Agent: runtest.Agent, Calls: []run.Call{{ID: "c-host", Name: "clock"}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Results[0].Code != run.CodeInternal {
		t.Fatalf("code %q, want internal", out.Results[0].Code)
	}
	calls := spansNamed(f.spans.GetSpans(), "execute_tool ")
	if len(calls) != 1 {
		t.Fatalf("%d call spans, want 1", len(calls))
	}
	a := attrMap(calls[0].Attributes)
	if a["agt.code"] != "internal" || a["agt.panicked"] != "true" || calls[0].Status.Code != codes.Error {
		t.Errorf("span %v, status %v", a, calls[0].Status)
	}
	if strings.Contains(fmt.Sprint(a, calls[0].Status, calls[0].Events), secret) {
		t.Error("the panic's value is in the span")
	}
}

// New(nil) takes the otel globals, which record nothing until a host sets
// them: the interceptor passes the call and its Result through, and the
// auditor forwards every Record.
func TestGlobalsByDefault(t *testing.T) {
	t.Parallel()
	tel := agtotel.New(nil)
	next := &recordingAuditor{}
	opts := tel.Instrument(&run.Options{Auditor: next})
	req := run.Request{BatchID: "b", CallID: "c", Agent: runtest.Agent, Alias: alias(mcptest.ToolEcho),
		Source: run.Source{Kind: run.SourceMCP, Ref: runtest.Notes, Tool: mcptest.ToolEcho}}
	calls := 0
	res, err := opts.Interceptors[0].Intercept(context.Background(), req, func(ctx context.Context) run.Result {
		calls++
		return run.Result{Code: run.CodeToolError}
	})
	if err != nil || calls != 1 || res.Code != run.CodeToolError {
		t.Errorf("Intercept: %v, next ran %d times, code %q", err, calls, res.Code)
	}
	opts.Auditor.Audit(context.Background(), run.Record{Event: "call", CallID: "c", Stage: "validate", Code: run.CodeInvalidArguments})
	if n := len(next.records()); n != 1 {
		t.Errorf("the next auditor got %d records, want 1", n)
	}
}

// openSpans counts the spans started and not yet ended.
type openSpans struct {
	mu   sync.Mutex
	open map[trace.SpanID]string
}

func (o *openSpans) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open[s.SpanContext().SpanID()] = s.Name()
}

func (o *openSpans) OnEnd(s sdktrace.ReadOnlySpan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.open, s.SpanContext().SpanID())
}

func (o *openSpans) names() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, n := range o.open {
		out = append(out, n)
	}
	return out
}

func (*openSpans) Shutdown(context.Context) error   { return nil }
func (*openSpans) ForceFlush(context.Context) error { return nil }

// An interceptor a host put before the Telemetry's on the instrumented
// options gives up on a call (a timeout): it returns its own Result while
// next still runs, and next returns only after Execute has. Whether next
// starts before or after the call's Record and with or without the
// Telemetry's Auditor, every span started ends and the call has exactly
// one.
func TestAbandonedNextEndsItsSpan(t *testing.T) {
	t.Parallel()
	inEras(t, testAbandonedNext)
}

func testAbandonedNext(t *testing.T, era mcptest.Era) {
	for _, tc := range []struct {
		name string
		// started: next reaches the Telemetry's interceptor before the
		// outer one gives up; else only after Execute returned.
		started, replaceAuditor bool
	}{
		{name: "next after Execute", started: false},
		{name: "next during the batch", started: true},
		{name: "next during the batch, the host's Auditor", started: true, replaceAuditor: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			entered, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
			giveUp := interceptorFunc(func(ctx context.Context, _ run.Request, next func(context.Context) run.Result) (run.Result, error) {
				go func() {
					defer close(returned)
					if !tc.started {
						<-release
					}
					next(context.WithoutCancel(ctx))
				}()
				if tc.started {
					<-entered
				}
				return run.Result{Code: run.CodeDeadlineExceeded, Message: "gave up"}, nil
			})
			// Inside the Telemetry's: holds next until released.
			hold := interceptorFunc(func(ctx context.Context, _ run.Request, next func(context.Context) run.Result) (run.Result, error) {
				if tc.started {
					close(entered)
					<-release
				}
				return next(ctx), nil
			})
			open := &openSpans{open: map[trace.SpanID]string{}}
			f := newFixture(t, fixtureOptions{era: era, outer: []run.Interceptor{giveUp}, inner: []run.Interceptor{hold}, processor: open, replaceAuditor: tc.replaceAuditor})
			out, err := f.run.Execute(context.Background(), run.Batch{ID: "slow", Agent: runtest.Agent, Calls: []run.Call{{ID: "c-host", Name: "clock"}}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Results[0].Code != run.CodeDeadlineExceeded {
				t.Fatalf("code %q, want deadline_exceeded", out.Results[0].Code)
			}
			close(release)
			<-returned

			if names := open.names(); len(names) != 0 {
				t.Errorf("spans started and never ended: %q", names)
			}
			calls := spansNamed(f.spans.GetSpans(), "execute_tool ")
			if len(calls) != 1 {
				t.Fatalf("%d call spans ended, want 1", len(calls))
			}
			if a := attrMap(calls[0].Attributes); a["agt.code"] != "deadline_exceeded" {
				t.Errorf("the call span: %v", a)
			}
		})
	}
}

// Two Runs of one agent share a Telemetry and run batches with the same
// batch and call IDs at once: every call of every batch has exactly one
// span, under its own Run's batch span, and no span stays open.
func TestConcurrentRunsSameIDs(t *testing.T) {
	t.Parallel()
	inEras(t, testConcurrentRunsSameIDs)
}

func testConcurrentRunsSameIDs(t *testing.T, era mcptest.Era) {
	open := &openSpans{open: map[trace.SpanID]string{}}
	a := newFixture(t, fixtureOptions{era: era, processor: open, runID: "run-a"})
	b := newFixture(t, fixtureOptions{era: era, share: a, runID: "run-b"})
	const rounds = 20
	var wg sync.WaitGroup
	for _, f := range []*fixture{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				batch := threeCalls()
				batch.Calls = append(batch.Calls, run.Call{ID: "c-host", Name: "clock"})
				if _, err := f.run.Execute(context.Background(), batch); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()

	if names := open.names(); len(names) != 0 {
		t.Errorf("spans started and never ended: %q", names)
	}
	spans := a.spans.GetSpans()
	batchRun := map[trace.SpanID]string{} // batch span -> its Run, by its calls
	perCall := map[string]int{}           // run/call -> spans
	for _, s := range spansNamed(spans, "execute_tool ") {
		attrs := attrMap(s.Attributes)
		key := attrs["agt.run_id"] + "/" + attrs["gen_ai.tool.call.id"]
		perCall[key]++
		if prev, ok := batchRun[s.Parent.SpanID()]; ok && prev != attrs["agt.run_id"] {
			t.Errorf("a batch span has calls of %s and %s", prev, attrs["agt.run_id"])
		}
		batchRun[s.Parent.SpanID()] = attrs["agt.run_id"]
	}
	want := map[string]int{}
	for _, r := range []string{"run-a", "run-b"} {
		for _, c := range []string{"c-allowed", "c-denied", "c-invalid", "c-host"} {
			want[r+"/"+c] = rounds
		}
	}
	if diff := cmp.Diff(want, perCall); diff != "" {
		t.Errorf("call spans per run and call (-want +got):\n%s", diff)
	}
	if n := len(spansNamed(spans, "agt.batch")); n != 2*rounds || len(batchRun) != 2*rounds {
		t.Errorf("%d batch spans, %d with calls; want %d", n, len(batchRun), 2*rounds)
	}
}

// Not parallel: it sets the global propagator, as hosts commonly do, to
// the trace context and the W3C baggage. The baggage is the host's own
// (a user, a tenant): without a Propagator of its choosing, a server,
// perhaps a remote one of a third party, gets the trace context only.
func TestDefaultPropagatorSendsNoBaggage(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraDual} {
		t.Run(string(era), func(t *testing.T) { testDefaultPropagator(t, era) })
	}
}

func testDefaultPropagator(t *testing.T, era mcptest.Era) {
	f := newFixture(t, fixtureOptions{era: era, defaultPropagator: true})
	member, err := baggage.NewMember("user", "alice-"+secret)
	if err != nil {
		t.Fatal(err)
	}
	bag, err := baggage.New(member)
	if err != nil {
		t.Fatal(err)
	}
	ctx := baggage.ContextWithBaggage(context.Background(), bag)
	if _, err := f.run.Execute(ctx, run.Batch{ID: "b", Agent: runtest.Agent, Calls: []run.Call{
		{ID: "c", Name: alias(mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"hi"}`)},
	}}); err != nil {
		t.Fatal(err)
	}
	metas := f.meta.all()
	if len(metas) != 1 {
		t.Fatalf("%d tools/call requests, want 1", len(metas))
	}
	if _, ok := metas[0]["traceparent"]; !ok {
		t.Errorf("no traceparent in _meta: %v", metas[0])
	}
	if b, ok := metas[0]["baggage"]; ok {
		t.Errorf("the host's baggage went to the server: %v", b)
	}
}

// Issue 23 item 9 (c): a shared server's crash loop shows in the metric
// agt.server.losses, one per Run that saw each loss, by server, shared
// and charged (Bob's calls crashed it: charged to Bob, not to Alice),
// and as an agt.server_lost event of the batch span that saw it, with
// the count of losses in a row.
func TestSharedServerLossesMetric(t *testing.T) {
	t.Parallel()
	inEras(t, testSharedServerLossesMetric)
}

func testSharedServerLossesMetric(t *testing.T, era mcptest.Era) {
	repo := runtest.Repository(t)
	doc, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{
		"fake": {Type: resource.TransportStdio, Command: "fakemcp", Cwd: t.TempDir(), Shared: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Update(context.Background(), resource.Key{Kind: resource.KindMCP, Ref: runtest.Notes}, doc, resource.AnyRevision); err != nil {
		t.Fatal(err)
	}
	spans, reader := tracetest.NewInMemoryExporter(), sdkmetric.NewManualReader()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel := agtotel.New(&agtotel.Options{TracerProvider: tp, MeterProvider: mp})
	// In process (mcptest.Dial), the crash tool ends the connection of
	// its call: the client sees it lost.
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{Era: era, Faults: []mcptest.Fault{mcptest.FaultCrashOnCall}})})
	t.Cleanup(func() { _ = c.Close() })
	newRun := func(id string, maxRestarts int) *run.Run {
		r, err := run.New(context.Background(), tel.Instrument(&run.Options{
			Agent:      runtest.Agent,
			Repository: repo,
			Connector:  c,
			RunID:      id,
			Permission: policy.AutoAllow(),
			Limits:     &run.Limits{MaxRestarts: maxRestarts, RestartBackoff: time.Nanosecond},
		}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	alice, bob := newRun("alice", 0), newRun("bob", 10)
	const crashes = 3
	for i := 1; i <= crashes; i++ {
		out, err := bob.Execute(context.Background(), run.Batch{ID: fmt.Sprintf("bob-%d", i), Agent: runtest.Agent,
			Calls: []run.Call{{ID: "crash", Name: alias(mcptest.ToolCrash), Arguments: json.RawMessage(`{}`)}}})
		if err != nil || out.Results[0].Code != run.CodeUnavailable {
			t.Fatalf("Bob's crash %d: %v %+v", i, err, out.Results)
		}
		out, err = alice.Execute(context.Background(), run.Batch{ID: fmt.Sprintf("alice-%d", i), Agent: runtest.Agent,
			Calls: []run.Call{{ID: "echo", Name: alias(mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"hi"}`)}}})
		if err != nil || out.Results[0].Failed() {
			t.Fatalf("Alice's call after Bob's crash %d: %v %+v", i, err, out.Results)
		}
	}
	rm := collect(t, reader)
	want := map[string]int64{
		"agt.server.ref=notes,agt.server.shared=true,agt.server.loss.charged=true":  crashes, // Bob's
		"agt.server.ref=notes,agt.server.shared=true,agt.server.loss.charged=false": crashes, // Alice's
	}
	if diff := cmp.Diff(want, counts(t, rm, agtotel.MetricServerLosses, agtotel.AttrServerRef, agtotel.AttrServerShared, agtotel.AttrLossCharged)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", agtotel.MetricServerLosses, diff)
	}
	var events []string
	for _, s := range spans.GetSpans() {
		a := attrMap(s.Attributes)
		for _, e := range s.Events {
			if e.Name == "agt.server_lost" {
				ea := attrMap(e.Attributes)
				events = append(events, a["agt.batch.id"]+" charged="+ea["agt.server.loss.charged"]+" losses="+ea["agt.server.losses"])
			}
		}
	}
	slices.Sort(events)
	wantEvents := []string{
		"alice-1 charged=false losses=1", "alice-2 charged=false losses=2", "alice-3 charged=false losses=3",
		"bob-1 charged=true losses=1", "bob-2 charged=true losses=2", "bob-3 charged=true losses=3",
	}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("agt.server_lost events of the batch spans (-want +got):\n%s", diff)
	}
}

// interceptorFunc adapts a function to run.Interceptor.
type interceptorFunc func(ctx context.Context, req run.Request, next func(context.Context) run.Result) (run.Result, error)

func (f interceptorFunc) Intercept(ctx context.Context, req run.Request, next func(context.Context) run.Result) (run.Result, error) {
	return f(ctx, req, next)
}
