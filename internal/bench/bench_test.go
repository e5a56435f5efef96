package bench_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn"
)

// TestClients is what CI runs of this module (benchmarks do not run as
// tests): every client connects unpinned to the modern-only go-sdk server
// over stdio and streamable HTTP, negotiates 2026-07-28, and gets the
// exact echo from a round of one call and a round of four.
func TestClients(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			tg := gosdkTarget(t, transport, "modern")
			for _, name := range clientNames {
				t.Run(name, func(t *testing.T) {
					c := openClient(t, name, tg)
					if v := c.version(); v != mcpconn.ModernProtocolVersion {
						t.Errorf("protocol version negotiated = %q, want %s", v, mcpconn.ModernProtocolVersion)
					}
					for _, conc := range []int{1, 4} {
						if _, err := c.rounds(1, conc); err != nil {
							t.Errorf("a round of %d: %v", conc, err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkOneCall: one call on an open connection to the modern-only
// go-sdk server, per client (go-sdk is the baseline; agt-run is a Run's
// batch of one call through its whole pipeline). ns/op is per call.
func BenchmarkOneCall(b *testing.B) {
	for _, transport := range []string{"stdio", "http"} {
		b.Run(transport, func(b *testing.B) {
			tg := gosdkTarget(b, transport, "modern")
			for _, name := range clientNames {
				b.Run(name, func(b *testing.B) {
					c := openClient(b, name, tg)
					warm(b, c, 1)
					b.ResetTimer()
					if _, err := c.rounds(b.N, 1); err != nil {
						b.Fatal(err)
					}
				})
			}
		})
	}
}

// BenchmarkOneCallPaired is BenchmarkOneCall with every client in one
// loop: each iteration makes one call through each client (in an order
// that rotates), after a garbage collection that is not timed, so that a
// load that drifts disturbs the ratios of the medians far less than it
// does separate benchmarks. It reports each client's median (NAME-ns,
// by the client's own clock) and its ratio to go-sdk's (NAME/go-sdk), and
// for the Go clients the median CPU time of this process per call
// (NAME-cpu-ns, the client's alone: the server is a process of its own)
// and its ratio (NAME-cpu/go-sdk), which a loaded machine disturbs less.
func BenchmarkOneCallPaired(b *testing.B) {
	for _, transport := range []string{"stdio", "http"} {
		b.Run(transport, func(b *testing.B) {
			paired(b, gosdkTarget(b, transport, "modern"), 1)
		})
	}
}

// BenchmarkConcurrent64: rounds of 64 calls at once on one connection to
// the modern-only go-sdk server over streamable HTTP (agt-run: a batch of
// 64 calls, the Run's MaxConcurrency 64); ns/op is per round, calls/s the
// calls per second.
func BenchmarkConcurrent64(b *testing.B) {
	tg := gosdkTarget(b, "http", "modern")
	for _, name := range clientNames {
		b.Run(name, func(b *testing.B) {
			c := openClient(b, name, tg)
			warm(b, c, 64)
			b.ResetTimer()
			d, err := c.rounds(b.N, 64)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(64*b.N)/d.Seconds(), "calls/s")
		})
	}
}

// BenchmarkConcurrent64Paired is BenchmarkConcurrent64 paired as
// BenchmarkOneCallPaired is: each iteration runs one round of 64 through
// each client; it reports each client's median calls per second
// (NAME-calls/s) and its ratio to go-sdk's (NAME/go-sdk: above 1 is
// faster).
func BenchmarkConcurrent64Paired(b *testing.B) {
	paired(b, gosdkTarget(b, "http", "modern"), 64)
}

// warm makes a few rounds first, so that connections, caches and the
// runtimes (Node's JIT) are in their steady state.
func warm(b *testing.B, c client, conc int) {
	b.Helper()
	if _, err := c.rounds(20, conc); err != nil {
		b.Fatal(err)
	}
}

// paired runs one round of conc calls through every client per
// iteration and reports the medians and their ratios to go-sdk's.
func paired(b *testing.B, tg target, conc int) {
	clients := make([]client, len(clientNames))
	for i, name := range clientNames {
		clients[i] = openClient(b, name, tg)
		warm(b, clients[i], conc)
	}
	took := make([][]time.Duration, len(clients))
	cpu := make([][]time.Duration, len(clients))
	i := 0
	for b.Loop() {
		for k := range clients {
			j := (i + k) % len(clients)
			b.StopTimer()
			runtime.GC()
			b.StartTimer()
			c0 := selfCPU()
			d, err := clients[j].rounds(1, conc)
			cpu[j] = append(cpu[j], selfCPU()-c0)
			if err != nil {
				b.Fatalf("%s: %v", clientNames[j], err)
			}
			took[j] = append(took[j], d)
		}
		i++
	}
	base, baseCPU := median(took[0]), median(cpu[0])
	for j, name := range clientNames {
		m := median(took[j])
		if conc == 1 {
			b.ReportMetric(m, name+"-ns")
			if j > 0 {
				b.ReportMetric(m/base, name+"/go-sdk")
			}
		} else {
			b.ReportMetric(float64(conc)/m*1e9, name+"-calls/s")
			if j > 0 {
				b.ReportMetric(base/m, name+"/go-sdk")
			}
		}
		// The CPU of the Go clients, per round; the TypeScript client's
		// is its own process's.
		if name != "ts-v2" {
			b.ReportMetric(median(cpu[j]), name+"-cpu-ns")
			if j > 0 && baseCPU > 0 {
				b.ReportMetric(median(cpu[j])/baseCPU, name+"-cpu/go-sdk")
			}
		}
	}
}

func median(d []time.Duration) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[len(d)/2])
}

// BenchmarkEraProbe: what finding the era costs. Each op is a connect,
// a tools/list and a close by a new Connector (so no era is cached), to
// the go-sdk server of each era, negotiated (the default) and pinned to
// that era's version (ConnectorOptions.ProtocolVersion): with a modern
// server the difference is what the era probe costs, with a legacy one
// what the fallback costs. One loop runs the four passes of a transport
// (paired, as BenchmarkOneCallPaired is) and reports each median (ns)
// and negotiated/pinned per era.
func BenchmarkEraProbe(b *testing.B) {
	for _, transport := range []string{"stdio", "http"} {
		b.Run(transport, func(b *testing.B) {
			type pass struct {
				name string
				tg   target
				opts *mcpconn.ConnectorOptions
			}
			var passes []pass
			for _, era := range []struct{ name, version string }{
				{"modern", mcpconn.ModernProtocolVersion},
				{"legacy", mcpconn.LegacyProtocolVersion},
			} {
				tg := gosdkTarget(b, transport, era.name)
				passes = append(passes,
					pass{era.name + "-pinned", tg, &mcpconn.ConnectorOptions{ProtocolVersion: era.version}},
					pass{era.name + "-negotiated", tg, nil})
			}
			ctx := context.Background()
			connect := func(p pass) {
				s, err := mcpconn.NewConnector(p.opts).Connect(ctx, "bench", p.tg.mcpServer(b), nil)
				if err != nil {
					b.Fatalf("%s: %v", p.name, err)
				}
				if tools, err := s.Tools(ctx); err != nil || len(tools) != 5 {
					b.Fatalf("%s: %d tools, %v", p.name, len(tools), err)
				}
				if want := strings.TrimSuffix(strings.TrimSuffix(p.name, "-pinned"), "-negotiated"); (want == "modern") != (s.ProtocolVersion() == mcpconn.ModernProtocolVersion) {
					b.Fatalf("%s: protocol version %s", p.name, s.ProtocolVersion())
				}
				_ = s.Close()
			}
			for _, p := range passes {
				connect(p) // warm
			}
			took := make([][]time.Duration, len(passes))
			for b.Loop() {
				for j, p := range passes {
					b.StopTimer()
					runtime.GC()
					b.StartTimer()
					t0 := time.Now()
					connect(p)
					took[j] = append(took[j], time.Since(t0))
				}
			}
			for j, p := range passes {
				b.ReportMetric(median(took[j]), p.name+"-ns")
			}
			for j := 0; j < len(passes); j += 2 {
				era, _, _ := strings.Cut(passes[j].name, "-")
				b.ReportMetric(median(took[j+1])/median(took[j]), fmt.Sprintf("%s-negotiated/pinned", era))
			}
		})
	}
}
