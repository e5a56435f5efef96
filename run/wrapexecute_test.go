package run_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
)

type (
	wrapKey    struct{}
	startedKey struct{}
)

// Options.WrapExecute wraps the whole batch: its context reaches every
// call, it sees the Outcome, and a wrapper that runs the batch twice or
// not at all never gets a call sent twice or an Outcome without a Result
// per call.
func TestWrapExecute(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		cases := []struct {
			name  string
			wrap  func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error)
			codes []run.Code
			err   bool
			sent  int
		}{
			{"passes its context and the outcome", func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
				return execute(context.WithValue(ctx, wrapKey{}, "batch-span"))
			}, []run.Code{"", ""}, false, 1},
			{"never runs it", func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
				return run.Outcome{}, nil
			}, []run.Code{run.CodeInternal, run.CodeInternal}, true, 0},
			{"returns another outcome", func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
				_, err := execute(ctx)
				return run.Outcome{}, err
			}, []run.Code{"", ""}, false, 1},
			{"runs it from two goroutines", func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
				errs := make(chan error, 2)
				for range 2 {
					go func() { _, err := execute(ctx); errs <- err }()
				}
				return run.Outcome{}, errors.Join(<-errs, <-errs)
			}, []run.Code{"", ""}, true, 1},
			{"returns before its execute does", func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
				started := make(chan struct{})
				go func() { _, _ = execute(context.WithValue(ctx, startedKey{}, started)) }()
				<-started // the batch runs; the wrapper returns before it ends
				return run.Outcome{}, nil
			}, []run.Code{"", ""}, false, 1},
			{"never runs it and fails", func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
				return run.Outcome{}, errors.New("tracer down")
			}, []run.Code{run.CodeInternal, run.CodeInternal}, true, 0},
			{"runs it twice", func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
				if _, err := execute(ctx); err != nil {
					return run.Outcome{}, err
				}
				return execute(ctx)
			}, []run.Code{"", ""}, true, 1},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				repo, mem := setupEra(t, e, notes)
				var seen []any
				probe := run.HostTool{Name: "probe", Schema: []byte(`{"type":"object"}`),
					Handler: func(ctx context.Context, _ run.Request) (run.Result, error) {
						seen = append(seen, ctx.Value(wrapKey{}))
						if started, ok := ctx.Value(startedKey{}).(chan struct{}); ok {
							close(started)
						}
						return run.Result{}, nil
					}}
				r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(),
					HostTools: []run.HostTool{probe}, WrapExecute: tc.wrap,
					Limits: &run.Limits{MaxConcurrency: 1}})
				out, err := r.Execute(context.Background(), batch(call("a", "probe", `{}`), call("b", echo, `{"text":"x"}`)))
				if (err != nil) != tc.err {
					t.Fatalf("Execute error = %v, want error %v", err, tc.err)
				}
				if diff := cmp.Diff(tc.codes, codes(out)); diff != "" {
					t.Errorf("codes (-want +got):\n%s", diff)
				}
				if len(out.Results) == 2 && (out.Results[0].CallID != "a" || out.Results[1].CallID != "b") {
					t.Errorf("call IDs = %q, %q; want a, b", out.Results[0].CallID, out.Results[1].CallID)
				}
				if len(seen) != tc.sent {
					t.Fatalf("the host tool ran %d times, want %d", len(seen), tc.sent)
				}
				if tc.name == "passes its context and the outcome" && seen[0] != "batch-span" {
					t.Errorf("the call's context holds %v, want the wrapper's value", seen[0])
				}
			})
		}
	})
}
