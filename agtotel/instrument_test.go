package agtotel_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agtsdk/agt/agtotel"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/run"
)

// eventLog is what the host's parts saw, in order.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

func spanOfCall(spans tracetest.SpanStubs, callID string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spansNamed(spans, "execute_tool ") {
		if attrMap(s.Attributes)["gen_ai.tool.call.id"] == callID {
			out = append(out, s)
		}
	}
	return out
}

// Instrument keeps the host's Interceptors, Auditor and WrapExecute, all
// in the order its doc gives: the host's WrapExecute outside the batch
// span (its own span is the batch span's parent), its interceptors inside
// the call span, its Auditor after the Telemetry's (the call's span has
// ended when it sees the Record).
func TestInstrumentKeepsTheHostsParts(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, era mcptest.Era) {
		log := &eventLog{}
		var hostSpan trace.SpanContext
		wrap := func(f *fixture) wrapFunc {
			return func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
				ctx, span := f.tracer.Start(ctx, "host.step")
				defer span.End()
				hostSpan = span.SpanContext()
				log.add("wrap " + b.ID)
				out, err := execute(ctx)
				log.add("wrap returned")
				return out, err
			}
		}
		var mu sync.Mutex
		seenInside := map[string]trace.SpanID{} // call -> span in its context
		inner := interceptorFunc(func(ctx context.Context, req run.Request, next func(context.Context) run.Result) (run.Result, error) {
			mu.Lock()
			seenInside[req.CallID] = trace.SpanContextFromContext(ctx).SpanID()
			mu.Unlock()
			log.add("intercept " + req.CallID)
			return next(ctx), nil
		})
		f := newFixture(t, fixtureOptions{era: era, wrap: wrap, inner: []run.Interceptor{inner}})
		f.audit.setHook(func(_ context.Context, rec run.Record) {
			if rec.Event != "call" {
				return
			}
			// The Telemetry's auditor ran first: the span has ended.
			log.add("audit " + rec.CallID + " spans=" + strconv.Itoa(len(spanOfCall(f.spans.GetSpans(), rec.CallID))))
		})
		b := run.Batch{ID: "b1", Agent: runtest.Agent, Calls: []run.Call{
			{ID: "c-allowed", Name: alias(mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"hi"}`)},
		}}
		if _, err := f.run.Execute(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"wrap b1", "intercept c-allowed", "audit c-allowed spans=1", "wrap returned"}, log.all()); diff != "" {
			t.Errorf("what the host's parts saw (-want +got):\n%s", diff)
		}

		spans := f.spans.GetSpans()
		batches, calls := spansNamed(spans, "agt.batch"), spanOfCall(spans, "c-allowed")
		if len(batches) != 1 || len(calls) != 1 || len(spansNamed(spans, "host.step")) != 1 {
			t.Fatalf("spans %v, want host.step, agt.batch and one call span", spans.Snapshots())
		}
		if batches[0].Parent.SpanID() != hostSpan.SpanID() {
			t.Errorf("the batch span's parent is %v, want the host's span %v", batches[0].Parent.SpanID(), hostSpan.SpanID())
		}
		if calls[0].Parent.SpanID() != batches[0].SpanContext.SpanID() {
			t.Errorf("the call span's parent is %v, want the batch span", calls[0].Parent.SpanID())
		}
		if got := seenInside["c-allowed"]; got != calls[0].SpanContext.SpanID() {
			t.Errorf("the host's interceptor ran in span %v, want the call span %v", got, calls[0].SpanContext.SpanID())
		}
	})
}

// Options instrumented twice by one Telemetry (or a copy of them) trace
// as once: one interceptor, one auditor, one batch span, one span per
// call, the metrics once, the host's WrapExecute run once per batch and
// its Auditor given each Record once.
func TestInstrumentTwice(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, era mcptest.Era) {
		for _, tc := range []struct {
			name     string
			hostWrap bool
		}{
			{"alone", false},
			{"with the host's WrapExecute", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var wraps int
				fo := fixtureOptions{era: era, twice: true}
				if tc.hostWrap {
					fo.wrap = func(*fixture) wrapFunc {
						return func(ctx context.Context, _ run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
							wraps++
							return execute(ctx)
						}
					}
				}
				f := newFixture(t, fo)
				if n := len(f.opts.Interceptors); n != 1 {
					t.Errorf("%d interceptors, want the Telemetry's alone", n)
				}
				checkThreeCalls(t, f) // 4 spans, each metric once, 3 records to the host
				if want := map[bool]int{false: 0, true: 1}[tc.hostWrap]; wraps != want {
					t.Errorf("the host's WrapExecute ran %d times, want %d", wraps, want)
				}
			})
		}
	})
}

// A batch that a call's handler executes on another Run (a sub-agent,
// on the same Telemetry, with the same batch and call IDs) is a batch of
// its own: its span is a child of the call's, its call's span a child of
// it, and each call has one span.
func TestSubRunBatch(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, era mcptest.Era) {
		sub := newFixture(t, fixtureOptions{era: era, runID: "sub"})
		echo := run.Batch{ID: "b1", Agent: runtest.Agent, Calls: []run.Call{
			{ID: "c1", Name: alias(mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"hi"}`)},
		}}
		delegate := run.HostTool{Name: "delegate", Schema: json.RawMessage(`{"type":"object"}`),
			Handler: func(ctx context.Context, _ run.Request) (run.Result, error) {
				out, err := sub.run.Execute(ctx, echo)
				if err != nil || out.Results[0].Failed() {
					t.Errorf("the sub-agent's batch: %v %+v", err, out.Results)
				}
				return run.Result{}, nil
			}}
		f := newFixture(t, fixtureOptions{era: era, share: sub, runID: "main", hostTools: []run.HostTool{delegate}})
		if _, err := f.run.Execute(context.Background(), run.Batch{ID: "b1", Agent: runtest.Agent, Calls: []run.Call{{ID: "c1", Name: "delegate"}}}); err != nil {
			t.Fatal(err)
		}
		spans := f.spans.GetSpans()
		byName := map[string]tracetest.SpanStub{}
		for _, s := range spans {
			byName[attrMap(s.Attributes)["agt.run_id"]+" "+s.Name] = s
		}
		batches := spansNamed(spans, "agt.batch")
		if len(batches) != 2 || len(spans) != 4 {
			t.Fatalf("spans %v, want 2 batch spans and 2 call spans", spans.Snapshots())
		}
		mainCall, subCall := byName["main execute_tool delegate"], byName["sub execute_tool "+alias(mcptest.ToolEcho)]
		var mainBatch, subBatch tracetest.SpanStub
		for _, b := range batches {
			if b.Parent.SpanID() == mainCall.SpanContext.SpanID() {
				subBatch = b
			} else {
				mainBatch = b
			}
		}
		if !subBatch.SpanContext.IsValid() || mainCall.Parent.SpanID() != mainBatch.SpanContext.SpanID() {
			t.Errorf("the sub-agent's batch span is not the delegate call's child, or the call not the main batch's: %v", spans.Snapshots())
		}
		if subCall.Parent.SpanID() != subBatch.SpanContext.SpanID() {
			t.Errorf("the sub-agent's call span's parent is %v, want its batch span %v", subCall.Parent.SpanID(), subBatch.SpanContext.SpanID())
		}
	})
}

// Instrument(nil) is options of their own that a host completes.
func TestInstrumentNil(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, era mcptest.Era) {
		f := newFixture(t, fixtureOptions{era: era, untraced: true}) // for its Telemetry and exporter
		opts := f.tel.Instrument(nil)
		if len(opts.Interceptors) != 1 || opts.Auditor == nil || opts.WrapExecute == nil {
			t.Fatalf("Instrument(nil) = %+v, want the Telemetry's interceptor, auditor and WrapExecute", opts)
		}
		opts.Permission = policy.AutoAllow()
		r := runtest.New(t, runtest.Repository(t), runtest.Dial(&mcptest.ServerOptions{Era: era}), *opts)
		if _, err := r.Execute(context.Background(), run.Batch{ID: "b", Agent: runtest.Agent, Calls: []run.Call{
			{ID: "c", Name: alias(mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"hi"}`)},
		}}); err != nil {
			t.Fatal(err)
		}
		spans := f.spans.GetSpans()
		batches, calls := spansNamed(spans, "agt.batch"), spanOfCall(spans, "c")
		if len(batches) != 1 || len(calls) != 1 || calls[0].Parent.SpanID() != batches[0].SpanContext.SpanID() {
			t.Errorf("spans %v, want a batch span and its call's", spans.Snapshots())
		}
	})
}

// tag is a comparable interceptor that does nothing.
type tag struct{ Name string }

func (tag) Intercept(ctx context.Context, _ run.Request, next func(context.Context) run.Result) (run.Result, error) {
	return next(ctx), nil
}

// Instrument writes nothing of the caller's: its options keep their
// fields, and the copy's Interceptors is a slice of its own even where
// the caller's has room to grow in place.
func TestInstrumentCopies(t *testing.T) {
	t.Parallel()
	tel := agtotel.New(nil)
	backing := make([]run.Interceptor, 1, 4)
	backing[0] = tag{"host"}
	auditor := &recordingAuditor{}
	opts := &run.Options{Agent: "writer", RunID: "r", Interceptors: backing, Auditor: auditor}
	got := tel.Instrument(opts)

	if got == opts || len(opts.Interceptors) != 1 || opts.Auditor != run.Auditor(auditor) || opts.WrapExecute != nil {
		t.Fatalf("the caller's options changed: %+v", opts)
	}
	if got.Agent != "writer" || got.RunID != "r" || len(got.Interceptors) != 2 || got.Interceptors[1] != run.Interceptor(tag{"host"}) {
		t.Fatalf("Instrument = %+v, want the fields kept and the host's interceptor second", got)
	}
	got.Interceptors[1] = tag{"changed"}
	got.Interceptors = append(got.Interceptors, tag{"added"})
	if diff := cmp.Diff([]run.Interceptor{tag{"host"}, nil, nil, nil}, backing[:4]); diff != "" {
		t.Errorf("the caller's Interceptors (-want +got):\n%s", diff)
	}

	// Again, on the copy: a slice of its own too, nothing added.
	again := tel.Instrument(got)
	again.Interceptors[0] = tag{"again"}
	if got.Interceptors[0] == run.Interceptor(tag{"again"}) || len(again.Interceptors) != 3 {
		t.Errorf("Instrument of instrumented options: %d interceptors, shares the slice: %v", len(again.Interceptors), got.Interceptors[0] == again.Interceptors[0])
	}
	if again.Auditor != got.Auditor {
		t.Error("Instrument of instrumented options wrapped the auditor again")
	}
}
