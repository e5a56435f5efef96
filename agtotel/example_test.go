package agtotel_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"slices"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/agtotel"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// A host instruments a Run's options and calls r.Execute as it always
// does: the batch gets a span, each call one span under it (the call
// with a bad argument too, which never reached the server), and the
// metrics count both calls. An in-memory exporter and a manual reader
// stand in for the host's OpenTelemetry pipeline.
func ExampleTelemetry_Instrument() {
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(ctx)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)
	tel := agtotel.New(&agtotel.Options{TracerProvider: tp, MeterProvider: mp})

	dir, err := os.MkdirTemp("", "agtotel-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// The bundled fake server, in memory; a real host leaves Connector nil.
	host, err := agt.Open(ctx, dir, &agt.Options{Connector: &mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)}})
	if err != nil {
		log.Fatal(err)
	}
	defer host.Close()
	for _, w := range []resource.WriteRequest{
		{Kind: resource.KindMCP, Ref: "notes", Create: true, Data: []byte(`{"mcpServers": {"notes": {"command": "fakemcp", "cwd": "/"}}}`)},
		{Kind: resource.KindAgent, Ref: "writer", Create: true, Data: []byte(`{"mcps": ["notes"]}`)},
	} {
		if _, err := host.Resources().Write(ctx, resource.Direct(), w); err != nil {
			log.Fatal(err)
		}
	}

	r, err := host.NewRun(ctx, "writer", tel.Instrument(&run.Options{Permission: policy.AutoAllow()}))
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Execute(ctx, run.Batch{ID: "step-1", Agent: "writer", Calls: []run.Call{
		{ID: "call-1", Name: "mcp__notes__search", Arguments: []byte(`{"query": "alpha", "limit": 1}`)},
		{ID: "call-2", Name: "mcp__notes__search", Arguments: []byte(`{"query": "alpha", "limit": 0}`)},
	}}); err != nil {
		log.Fatal(err)
	}

	var batch tracetest.SpanStub
	var lines []string
	for _, s := range spans.GetSpans() {
		if s.Name == "agt.batch" {
			batch = s
		}
	}
	for _, s := range spans.GetSpans() {
		if s.Name == "agt.batch" {
			continue
		}
		var code string
		for _, kv := range s.Attributes {
			if kv.Key == agtotel.AttrCode {
				code = kv.Value.AsString()
			}
		}
		lines = append(lines, fmt.Sprintf("%s (%s), under the batch: %v", s.Name, code, s.Parent.SpanID() == batch.SpanContext.SpanID()))
	}
	slices.Sort(lines)
	fmt.Println(batch.Name)
	for _, l := range lines {
		fmt.Println(l)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == agtotel.MetricCalls {
				var n int64
				for _, p := range sum.DataPoints {
					n += p.Value
				}
				fmt.Println(m.Name, n)
			}
		}
	}
	// Output:
	// agt.batch
	// execute_tool mcp__notes__search (invalid_arguments), under the batch: true
	// execute_tool mcp__notes__search (ok), under the batch: true
	// agt.calls 2
}
