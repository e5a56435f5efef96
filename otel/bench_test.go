package agtotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
)

// Run: go test -run '^$' -bench . -count 6 ./ (in this module)
//
// Each case runs the same batch on two Runs over the in-process fake
// server: untraced (no Telemetry) and traced (Telemetry.Execute, its
// Interceptor and Auditor, the SDK's tracer with a synchronous no-op
// exporter, the SDK's meter with a manual reader, and the W3C
// propagator), so the ratio of the two reads in one run.
func BenchmarkExecute(b *testing.B) {
	for _, calls := range []int{1, 8} {
		batch := run.Batch{ID: "bench", Agent: agent}
		for i := range calls {
			batch.Calls = append(batch.Calls, run.Call{ID: fmt.Sprintf("c%d", i), Name: alias(mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"hello, benchmark"}`)})
		}
		for _, traced := range []bool{false, true} {
			name := fmt.Sprintf("calls-%d/untraced", calls)
			if traced {
				name = fmt.Sprintf("calls-%d/traced", calls)
			}
			b.Run(name, func(b *testing.B) {
				f := newFixture(b, fixtureOptions{untraced: !traced, bench: true})
				ctx := context.Background()
				exec := f.run.Execute
				if traced {
					exec = func(ctx context.Context, bt run.Batch) (run.Outcome, error) { return f.tel.Execute(ctx, f.run, bt) }
				}
				b.ReportAllocs()
				for b.Loop() {
					out, err := exec(ctx, batch)
					if err != nil || out.Results[0].Failed() {
						b.Fatalf("%v %v", err, out.Results[0].Message)
					}
				}
			})
		}
	}
}
