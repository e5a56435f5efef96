package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
)

// echoText returns the text of a successful echo Result's single block.
func echoText(tb testing.TB, res run.Result) string {
	tb.Helper()
	var blocks []struct{ Text string }
	if res.Failed() || json.Unmarshal(res.Content, &blocks) != nil || len(blocks) != 1 {
		tb.Fatalf("not an echo result: %+v", res)
	}
	return blocks[0].Text
}

// overwrite writes "evil" over "good", and "[]" over "{}", in place, as a
// careless (or hostile) stage could through the shared bytes of
// Request.Arguments.
func overwrite(args json.RawMessage) {
	if string(args) == "{}" {
		copy(args, "[]")
	}
	for i := 0; i+4 <= len(args); i++ {
		if string(args[i:i+4]) == "good" {
			copy(args[i:], "evil")
		}
	}
}

// SPEC R5.2, DESIGN.md: nothing can change the arguments after the
// Permission saw them. A Permission or an interceptor that writes into
// Request.Arguments changes only its own view: the tool gets the validated
// bytes.
func TestStagesCannotChangeExecutedArguments(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		mutatingPermission := permissionFunc(func(_ context.Context, req run.Request) (run.Decision, error) {
			overwrite(req.Arguments)
			return run.Decision{Verdict: run.Allow, By: "test"}, nil
		})
		mutatingBefore := run.Before(func(_ context.Context, req run.Request) (context.Context, error) {
			overwrite(req.Arguments)
			return nil, nil
		})
		var handled string
		hostEcho := run.HostTool{Name: "host_echo", Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
			Handler: func(_ context.Context, req run.Request) (run.Result, error) {
				handled = string(req.Arguments)
				return run.Result{}, nil
			}}
		tests := []struct {
			name string
			opts run.Options
		}{
			{"permission", run.Options{Permission: mutatingPermission}},
			{"interceptor", run.Options{Interceptors: []run.Interceptor{mutatingBefore}}},
		}
		for _, tt := range tests {
			repo, mem := setupEra(t, e, notes)
			opts := tt.opts
			opts.Repository, opts.Connector, opts.HostTools = repo, mem.connector(), []run.HostTool{hostEcho}
			r := newRun(t, &opts)
			out, err := r.Execute(context.Background(), batch(call("c", echo, `{"text":"good"}`)))
			if err != nil {
				t.Fatal(err)
			}
			if got := echoText(t, out.Results[0]); got != "good" {
				t.Errorf("%s: the server received %q, want the validated %q", tt.name, got, "good")
			}
			out, err = r.Execute(context.Background(), batch(call("h", "host_echo", `{"text":"good"}`)))
			if err != nil || out.Results[0].Failed() {
				t.Fatalf("%s: host tool: %v %+v", tt.name, err, out.Results)
			}
			if handled != `{"text":"good"}` {
				t.Errorf("%s: the host tool received %s, want the validated arguments", tt.name, handled)
			}
			// Empty arguments read as {}; writing into that view must not
			// corrupt later calls.
			for i := range 2 {
				out, err = r.Execute(context.Background(), batch(call("e", "host_echo", ``)))
				if err != nil || out.Results[0].Failed() || handled != `{}` {
					t.Errorf("%s: empty arguments, round %d: %v %+v, handler got %s", tt.name, i, err, out.Results, handled)
				}
			}
		}
	})
}

// The Permission allows one execution: an interceptor that calls next twice,
// or after it returned, cannot run the tool again.
func TestNextRunsTheToolAtMostOnce(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		var second run.Result
		twice := interceptorFunc(func(ctx context.Context, _ run.Request, next func(context.Context) run.Result) (run.Result, error) {
			res := next(ctx)
			second = next(ctx)
			return res, nil
		})
		audit := &auditLog{}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Interceptors: []run.Interceptor{twice}, Auditor: audit})
		out, err := r.Execute(context.Background(), batch(call("c", echo, `{"text":"once"}`)))
		if err != nil || out.Results[0].Failed() {
			t.Fatalf("first execution: %v %+v", err, out.Results)
		}
		if n := mem.counters.Calls(); n != 1 {
			t.Errorf("the server ran the call %d times, want 1", n)
		}
		if second.Code != run.CodeInternal {
			t.Errorf("a second next: %+v, want an internal failure", second)
		}
		if recs := audit.records("call"); len(recs) != 1 || recs[0].Stage != "execute" {
			t.Errorf("audit = %+v, want one record at the execute stage", recs)
		}

		// next kept for later: after the interceptor returned it runs nothing.
		var kept func(context.Context) run.Result
		keep := interceptorFunc(func(ctx context.Context, _ run.Request, next func(context.Context) run.Result) (run.Result, error) {
			kept = next
			return run.Result{}, errorf(run.CodeUnauthorized, "not now")
		})
		repo2, mem2 := setupEra(t, e, notes)
		audit2 := &auditLog{}
		r2 := newRun(t, &run.Options{Repository: repo2, Connector: mem2.connector(), Interceptors: []run.Interceptor{keep}, Auditor: audit2})
		out, err = r2.Execute(context.Background(), batch(call("c", echo, `{"text":"later"}`)))
		if err != nil || out.Results[0].Code != run.CodeUnauthorized {
			t.Fatalf("refused call: %v %+v", err, out.Results)
		}
		if late := kept(context.Background()); late.Code != run.CodeInternal {
			t.Errorf("next after the interceptor returned: %+v, want an internal failure", late)
		}
		if n := mem2.counters.Calls(); n != 0 {
			t.Errorf("the server ran %d calls the interceptor refused", n)
		}
		if recs := audit2.records("call"); len(recs) != 1 || recs[0].Stage != "intercept" {
			t.Errorf("audit = %+v, want one record at the intercept stage", recs)
		}
	})
}

// Every call gets a Result with its tool_call_id, also when the Run is
// closed.
func TestExecuteAfterCloseAnswersEveryCall(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})
		_ = r.Close()
		out, err := r.Execute(context.Background(), batch(call("a", echo, `{"text":"x"}`), call("b", "no_such_tool", `{}`)))
		if !errors.Is(err, run.ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", err)
		}
		var got []string
		for _, res := range out.Results {
			got = append(got, res.CallID+" "+string(res.Code))
		}
		if diff := cmp.Diff([]string{"a unavailable", "b unavailable"}, got); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
	})
}

// SPEC R5.4: a delegation check that panics rejects the batch; it does not
// end the host, and nothing runs.
func TestPanickingAuthorizeRejectsTheBatch(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		delegate := run.HostTool{Name: "delegate", Schema: json.RawMessage(`{"type":"object"}`),
			Handler:   func(context.Context, run.Request) (run.Result, error) { return run.Result{}, nil },
			Authorize: func(context.Context, run.Request) error { panic("authorization bug") }}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{delegate}})
		out, err := r.Execute(context.Background(), batch(call("e", echo, `{"text":"x"}`), call("d", "delegate", `{}`)))
		var be *run.BatchError
		if !errors.As(err, &be) || be.Code != run.CodeUnauthorized || be.CallID != "d" {
			t.Fatalf("err = %v, want the batch rejected as unauthorized at call d", err)
		}
		if len(out.Results) != 2 || mem.counters.Calls() != 0 {
			t.Errorf("results %+v, server calls %d", out.Results, mem.counters.Calls())
		}
	})
}

// A Permission that fails never allows, and the audit never records an
// Allow for a call the Permission failed on.
func TestFailedPermissionIsNotAuditedAsAllow(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		audit := &auditLog{}
		broken := permissionFunc(func(context.Context, run.Request) (run.Decision, error) {
			return run.Decision{Verdict: run.Allow, By: "broken"}, errors.New("policy store down")
		})
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Permission: broken, Auditor: audit})
		out, err := r.Execute(context.Background(), batch(call("c", echo, `{"text":"x"}`)))
		if err != nil || out.Results[0].Code != run.CodeInternal || mem.counters.Calls() != 0 {
			t.Fatalf("a failed Permission: %v %+v, server calls %d", err, out.Results, mem.counters.Calls())
		}
		recs := audit.records("call")
		if len(recs) != 1 || recs[0].Decision.Verdict == run.Allow || recs[0].Decision.By != "broken" {
			t.Errorf("audit = %+v, want the decision by broken, not allow", recs)
		}
	})
}

// A hostile tool name is bounded in the audit of a rejected batch (the
// model's output is external input).
func TestRejectedBatchAuditBoundsNames(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		audit := &auditLog{}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Auditor: audit})
		long := strings.Repeat("x", 1<<20)
		_, err := r.Execute(context.Background(), batch(call("c", long, `{}`)))
		if !errors.As(err, new(*run.BatchError)) || len(err.Error()) > 1024 {
			t.Fatalf("err = %.200v (%d bytes), want a short rejection", err, len(err.Error()))
		}
		recs := audit.records("call")
		if len(recs) != 1 || len(recs[0].Alias) > 1024 || len(recs[0].Message) > 1024 {
			t.Errorf("audit record alias %d bytes, message %d bytes: want both bounded", len(recs[0].Alias), len(recs[0].Message))
		}
	})
}

type panickingAuditor struct{}

func (panickingAuditor) Audit(context.Context, run.Record) { panic("auditor bug") }

// A panicking Auditor, like any other host callback, does not end the
// host: every call still gets its Result, and refreshes still report.
func TestPanickingAuditorDoesNotEndTheHost(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b := resource.Ref("a"), resource.Ref("b")
		repo, mem := setupEra(t, e, a)
		putMCP(t, repo, b, inMemoryServer(t))
		r := newRun(t, &run.Options{
			Repository: repo,
			Connector:  mem.connector(),
			Auditor:    panickingAuditor{},
			HostTools:  []run.HostTool{mountTool(repo)},
			Limits:     &run.Limits{MaxConcurrency: 4},
		})
		out, err := r.Execute(context.Background(), batch(call("e1", run.Alias(a, mcptest.ToolEcho), `{"text":"x"}`), call("e2", run.Alias(a, mcptest.ToolEcho), `{"text":7}`)))
		if err != nil || len(out.Results) != 2 || out.Results[0].Failed() || out.Results[1].Code != run.CodeInvalidArguments {
			t.Fatalf("batch: %v %+v", err, out.Results)
		}
		if _, err := r.Execute(context.Background(), batch(call("u", "unknown", `{}`))); !errors.As(err, new(*run.BatchError)) {
			t.Errorf("rejected batch: %v", err)
		}
		out, err = r.Execute(context.Background(), batch(setMounts(a, b)))
		if err != nil || out.Refresh == nil || !out.Refresh.OK {
			t.Errorf("refresh: %v %+v", err, out.Refresh)
		}
	})
}
