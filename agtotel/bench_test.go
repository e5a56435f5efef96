package agtotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
)

// Run: go test -run '^$' -bench . -count 6 ./ (in this module)
//
// Each case runs the same batch with r.Execute on two Runs over the
// in-process fake server: untraced (plain options) and traced (options
// from Telemetry.Instrument, with the SDK's tracer and a synchronous
// no-op exporter, the SDK's meter with a manual reader, and the W3C
// propagator), so the ratio of the two reads in one run. The host-tool
// case has no server: there the pipeline's own cost is all there is, and
// the telemetry's share is largest. cpu-ns/op is the process's CPU time
// (client and in-process server), less disturbed than ns/op on a loaded
// machine.
//
// Measured on a 2-core machine at load average 13-18 (medians of 6
// rounds, instrumented / plain): mcp-1 0.84x ns/op, 0.86x cpu-ns/op;
// mcp-8 0.72x, 1.20x; host-1 12.8x, 7.4x (10 more rounds: 4.3x
// cpu-ns/op), that is about 30 us of CPU per one-call batch for two
// spans and the metrics, next to an MCP call's 420 us. On a load this
// high ns/op says little; the allocations say what Instrument costs
// over the Telemetry.Execute it replaced: 61 allocations a host-1 batch
// where that made 59 (the Run's WrapExecute, 112 bytes).
func BenchmarkExecute(b *testing.B) {
	for _, bc := range []struct {
		name, tool string
		calls      int
	}{
		{"mcp-1", alias(mcptest.ToolEcho), 1},
		{"mcp-8", alias(mcptest.ToolEcho), 8},
		{"host-1", "clock", 1},
	} {
		batch := run.Batch{ID: "bench", Agent: runtest.Agent}
		for i := range bc.calls {
			batch.Calls = append(batch.Calls, run.Call{ID: fmt.Sprintf("c%d", i), Name: bc.tool, Arguments: json.RawMessage(`{"text":"hello, benchmark"}`)})
		}
		for _, traced := range []bool{false, true} {
			name := bc.name + "/untraced"
			if traced {
				name = bc.name + "/traced"
			}
			b.Run(name, func(b *testing.B) {
				f := newFixture(b, fixtureOptions{untraced: !traced, bench: true})
				ctx := context.Background()
				b.ReportAllocs()
				n, cpu := 0, cpuTime()
				for b.Loop() {
					out, err := f.run.Execute(ctx, batch)
					if err != nil || out.Results[0].Failed() {
						b.Fatalf("%v %v", err, out.Results[0].Message)
					}
					n++
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(n), "cpu-ns/op")
			})
		}
	}
}
