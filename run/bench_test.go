package run_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/agtsdk/agt/toolschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Run: go test -run '^$' -bench . -benchmem ./run
//
// Pairs to read side by side, with their goals and what was measured on a
// 2-core machine shared with other builds (medians of 4-8 interleaved
// rounds at load average about 2, and in brackets at 11-18; cpu-ns/op is
// less disturbed by the load than ns/op; instruction counts are from
// valgrind --tool=callgrind with GOMAXPROCS=1 and GOGC=off,
// (I(420 iterations) - I(20)) / 400):
//
//	Execute/one-valid-call  vs RawSDKCallTool/one-call       goal <= 1.15x
//	    1.08x ns/op, 1.08x cpu-ns/op [cpu 1.01x]; instructions 1.02-1.05x
//	Execute/batch-32        vs RawSDKCallTool/sequential-32  goal < 1x
//	    0.90x [1.15x]: the in-process echo is pure CPU shared by client
//	    and server on 2 cores, so under load concurrency cannot win
//	Execute/batch-32-sleep-2ms vs RawSDKCallTool/sequential-32-sleep-2ms
//	    0.13x [0.30x]: with 2 ms of I/O per call, concurrency pays
//	Pipeline                vs PipelineBaseline (validate + call by hand)
//	    about 2.4 us vs 1.1 us: the pipeline's own cost per call
//	Refresh/add-one-of-10   vs NewRun/1-server                goal <= 1.3x
//	    0.97-1.08x ns/op, child CPU 0.98-1.08x: the nine do not restart
//	NewRun/10-servers       vs NewRun/1-server                goal <= 2x
//	    6.8-7.5x: starting the Go fake server is CPU work (about 9 ms of
//	    child CPU each), so ten starts need at least 5.6x on 2 cores
//	NewRunLatency/10-servers vs NewRunLatency/1-server
//	    2.5x with 20 ms of waiting per start: the starts overlap
//	    (TestMountsStartInParallel proves all ten are in flight at once)
//	SharedRuns/shared vs SharedRuns/in-memory, ns/run-start    goal <= 1.2x
//	    0.34x (8.5 ms vs 24.6 ms for 3 mounts, medians of 5 at load
//	    average 5-13), 0.43x (5.8 ms vs 13.5 ms at load average 2);
//	    3 processes instead of 300 (SharedRuns/unshared, 22-47 ms per
//	    start), peak RSS 79 MB instead of 3604-3631 MB
//
// NewRun gives each Run its own SchemaCache (Options.SchemaCache is nil),
// so every iteration compiles the fake server's eight schemas (once, not
// once per mount, for 10-servers); the Refresh case reuses its Run's
// cache and does not compile after the first iteration. SharedRuns gives
// all its Runs one SchemaCache, as agt.Host does.

const benchArgs = `{"text":"hello, benchmark"}`

// benchCases pair each BenchmarkExecute case with its
// BenchmarkRawSDKCallTool baseline. The sleep cases give each call 2 ms of
// waiting, as a server doing I/O would: there, concurrency pays even on a
// loaded 2-core machine, while the echo cases are pure CPU shared by the
// client and the in-process server.
var benchCases = []struct {
	execute, raw string
	tool, args   string
	calls        int
}{
	{"one-valid-call", "one-call", mcptest.ToolEcho, benchArgs, 1},
	{"batch-32", "sequential-32", mcptest.ToolEcho, benchArgs, 32},
	{"batch-32-sleep-2ms", "sequential-32-sleep-2ms", mcptest.ToolSleep, `{"ms":2}`, 32},
}

// cpuMeter reports CPU time per iteration beside the wall time, which a
// loaded 2-core machine makes noisy: cpu-ns/op is this process (client and
// in-memory server), child-cpu-ns/op the server processes (counted once
// they are waited for, so it includes their shutdown).
type cpuMeter struct{ self, children time.Duration }

func startCPU() cpuMeter {
	s, c := cpuUsage()
	return cpuMeter{s, c}
}

func (m cpuMeter) report(b *testing.B, children bool) {
	s, c := cpuUsage()
	b.ReportMetric(float64(s-m.self)/float64(b.N), "cpu-ns/op")
	if children {
		b.ReportMetric(float64(c-m.children)/float64(b.N), "child-cpu-ns/op")
	}
}

type countingAuditor struct{ n atomic.Int64 }

func (a *countingAuditor) Audit(context.Context, run.Record) { a.n.Add(1) }

// BenchmarkExecute runs the whole pipeline (batch checks, validation,
// permission, one interceptor, audit, the MCP call) over an in-memory
// session to the fake server.
func BenchmarkExecute(b *testing.B) {
	repo := newRepo(b)
	putMCP(b, repo, notes, inMemoryServer(b))
	putAgent(b, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{notes}})
	r := newRun(b, &run.Options{
		Repository:   repo,
		Connector:    mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)}),
		Permission:   policy.Rules{Allow: []string{"mcp__notes__*"}},
		Interceptors: []run.Interceptor{run.Before(func(context.Context, run.Request) (context.Context, error) { return nil, nil })},
		Auditor:      &countingAuditor{},
		Limits:       &run.Limits{MaxConcurrency: 32},
	})
	ctx := context.Background()
	for _, bc := range benchCases {
		n := bc.calls
		calls := make([]run.Call, n)
		for i := range calls {
			calls[i] = call(fmt.Sprintf("c%d", i), run.Alias(notes, bc.tool), bc.args)
		}
		name := bc.execute
		bt := batch(calls...)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				out, err := r.Execute(ctx, bt)
				if err != nil || out.Results[n-1].Failed() {
					b.Fatalf("%v %+v", err, out.Results[n-1])
				}
			}
			cpu.report(b, false)
		})
	}
}

// BenchmarkPipeline is the pipeline alone around a host tool that does
// nothing: what agt adds to every call, without any MCP traffic.
func BenchmarkPipeline(b *testing.B) {
	repo := newRepo(b)
	putAgent(b, repo, testAgent, resource.AgentDocument{})
	noop := run.HostTool{Name: "noop", Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":100}},"required":["text"]}`),
		Handler: func(context.Context, run.Request) (run.Result, error) { return run.Result{}, nil }}
	r := newRun(b, &run.Options{
		Repository:   repo,
		HostTools:    []run.HostTool{noop},
		Permission:   policy.Rules{Allow: []string{"noop"}},
		Interceptors: []run.Interceptor{run.Before(func(context.Context, run.Request) (context.Context, error) { return nil, nil })},
		Auditor:      &countingAuditor{},
	})
	bt := batch(call("c", "noop", benchArgs))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out, err := r.Execute(ctx, bt); err != nil || out.Results[0].Failed() {
			b.Fatal(err, out.Results)
		}
	}
}

// BenchmarkPipelineBaseline is what a host would write by hand for the same
// call: validate the arguments with toolschema, then call the handler.
func BenchmarkPipelineBaseline(b *testing.B) {
	schema, err := toolschema.Compile([]byte(`{"type":"object","properties":{"text":{"type":"string","maxLength":100}},"required":["text"]}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	handler := func(context.Context, run.Request) (run.Result, error) { return run.Result{}, nil }
	args := json.RawMessage(benchArgs)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := schema.Validate(args); err != nil {
			b.Fatal(err)
		}
		if _, err := handler(ctx, run.Request{Arguments: args}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawSDKCallTool is the baseline: the plain go-sdk
// ClientSession.CallTool on the same kind of in-memory pair, same tool and
// arguments.
func BenchmarkRawSDKCallTool(b *testing.B) {
	ctx := context.Background()
	server := mcptest.NewServer(nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: mcpconn.ModernProtocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for _, bc := range benchCases {
		n := bc.calls
		name := bc.raw
		params := &mcp.CallToolParams{Name: bc.tool, Arguments: json.RawMessage(bc.args)}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				for range n {
					res, err := cs.CallTool(ctx, params)
					if err != nil || res.IsError {
						b.Fatal(err, res)
					}
				}
			}
			cpu.report(b, false)
		})
	}
}

// stdioMounts registers n fake servers (the built binary, over stdio).
func stdioMounts(b *testing.B, repo resource.Repository, n int) []resource.Ref {
	refs := make([]resource.Ref, n)
	for i := range refs {
		refs[i] = resource.Ref(fmt.Sprintf("srv%02d", i))
		putMCP(b, repo, refs[i], stdioServer(b))
	}
	return refs
}

// BenchmarkNewRun starts Runs over stdio fake servers: 1-server is one
// server's start (read, start, handshake, list, compile) and the baseline;
// 10-servers starts ten in parallel. Close is not timed.
//
// Besides time and B/op (allocated while starting, Close excluded), it
// reports what an open Run holds, so that a regression shows:
// live-B/run, the heap a Run and its mounts keep once started, and
// goroutines/mount, the goroutines an open Run adds divided by its
// mounts (the Run's own included), both measured with openRunsMeasured
// Runs open at once after the timed loop.
func BenchmarkNewRun(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("%d-server", n)+map[bool]string{true: "s"}[n > 1], func(b *testing.B) {
			repo := newRepo(b)
			putAgent(b, repo, testAgent, resource.AgentDocument{MCPs: stdioMounts(b, repo, n)})
			opts := &run.Options{Agent: testAgent, Repository: repo, Permission: policy.AutoAllow(), FailOnMountError: true}
			ctx := context.Background()
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				r, err := run.New(ctx, opts)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = r.Close()
				b.StartTimer()
			}
			cpu.report(b, true)
			reportOpenRuns(b, opts, n)
		})
	}
}

// openRunsMeasured is how many Runs reportOpenRuns holds open at once.
const openRunsMeasured = 4

// reportOpenRuns opens openRunsMeasured Runs with opts (of mounts mounts
// each) and reports the heap and goroutines they hold: live-B/run and
// goroutines/mount.
func reportOpenRuns(b *testing.B, opts *run.Options, mounts int) {
	b.Helper()
	b.StopTimer()
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	heap0, g0 := heap(), runtime.NumGoroutine()
	runs := make([]*run.Run, 0, openRunsMeasured)
	defer func() {
		for _, r := range runs {
			_ = r.Close()
		}
	}()
	for range openRunsMeasured {
		r, err := run.New(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, r)
	}
	heap1, g1 := heap(), runtime.NumGoroutine()
	b.ReportMetric(float64(int64(heap1)-int64(heap0))/openRunsMeasured, "live-B/run")
	b.ReportMetric(float64(g1-g0)/float64(openRunsMeasured*mounts), "goroutines/mount")
}

// BenchmarkSharedRuns starts 100 Runs of one agent with 3 mounts of the
// fake server, one after the other, as a host serving 100 conversations
// would: shared (3 stdio mounts with "shared": true: the first Run starts
// the 3 processes, Runs #2..#100 take leases and list the tools on them),
// unshared (every Run starts its own 3: 300 processes) and in-memory (the
// servers in this process, no process at all: the baseline). Metrics:
// ns/run-start is the mean start of Runs #2..#100 (the goal: shared at
// most 1.2x in-memory), ns/first-start that of Run #1, processes the
// servers alive after the 100 starts (goal: 3 shared, not 300), and
// peak-rss-MB the resident memory of this process and those servers,
// summed, sampled then. ns/op is the 100 starts; closing is not timed.
//
//	go test -run '^$' -bench 'SharedRuns' -count 5 ./run
func BenchmarkSharedRuns(b *testing.B) {
	const runs, mounts = 100, 3
	for _, tc := range []struct {
		name           string
		shared, memory bool
	}{{"shared", true, false}, {"unshared", false, false}, {"in-memory", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			repo := newRepo(b)
			marker := fmt.Sprintf("agt-bench-%s-%d", tc.name, time.Now().UnixNano())
			refs := make([]resource.Ref, mounts)
			for i := range refs {
				refs[i] = resource.Ref(fmt.Sprintf("srv%02d", i))
				srv := inMemoryServer(b)
				if !tc.memory {
					srv = stdioServer(b, "-tag", marker)
				}
				srv.Shared = tc.shared
				putMCP(b, repo, refs[i], srv)
			}
			putAgent(b, repo, testAgent, resource.AgentDocument{MCPs: refs})
			ctx := context.Background()
			// One cache for all Runs, as agt.Host gives them: the start
			// measured is the connection's, not a compile.
			cache := new(mcpconn.SchemaCache)
			var first, rest time.Duration
			var procs int
			var peak float64
			for b.Loop() {
				copts := &mcpconn.ConnectorOptions{}
				if tc.memory {
					copts.Dial = mcptest.Dial(nil)
				}
				conn := mcpconn.NewConnector(copts)
				opts := &run.Options{Agent: testAgent, Repository: repo, Connector: conn, Permission: policy.AutoAllow(), FailOnMountError: true, SchemaCache: cache}
				started := make([]*run.Run, 0, runs)
				for i := range runs {
					t0 := time.Now()
					r, err := run.New(ctx, opts)
					d := time.Since(t0)
					if err != nil {
						b.Fatal(err)
					}
					started = append(started, r)
					if i == 0 {
						first += d
					} else {
						rest += d
					}
				}
				b.StopTimer()
				procs += processCount(marker)
				if !tc.memory {
					peak = max(peak, rssMB(marker))
				} else {
					peak = max(peak, rssMB(""))
				}
				var wg sync.WaitGroup
				for _, r := range started {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_ = r.Close()
					}()
				}
				wg.Wait()
				_ = conn.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(rest.Nanoseconds())/float64(b.N*(runs-1)), "ns/run-start")
			b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "ns/first-start")
			b.ReportMetric(float64(procs)/float64(b.N), "processes")
			b.ReportMetric(peak, "peak-rss-MB")
		})
	}
}

// BenchmarkNewRunLatency isolates the parallelism of the start from CPU:
// in-memory servers whose start takes 20 ms of waiting (as a server that
// connects to something would). 10-servers should cost about what
// 1-server costs.
func BenchmarkNewRunLatency(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("%d-server", n)+map[bool]string{true: "s"}[n > 1], func(b *testing.B) {
			repo := newRepo(b)
			refs := make([]resource.Ref, n)
			for i := range refs {
				refs[i] = resource.Ref(fmt.Sprintf("srv%02d", i))
				putMCP(b, repo, refs[i], inMemoryServer(b))
			}
			putAgent(b, repo, testAgent, resource.AgentDocument{MCPs: refs})
			// One server serves every session: building a fake server is
			// CPU work this benchmark is not about.
			server := mcptest.NewServer(nil)
			conn := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
				time.Sleep(20 * time.Millisecond)
				st, ct := mcp.NewInMemoryTransports()
				if _, err := server.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
					return nil, err
				}
				return ct, nil
			}})
			opts := &run.Options{Agent: testAgent, Repository: repo, Connector: conn, Permission: policy.AutoAllow(), FailOnMountError: true}
			ctx := context.Background()
			for b.Loop() {
				r, err := run.New(ctx, opts)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = r.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkRefresh/add-one-of-10 times a batch that mounts a tenth server
// beside nine running ones: the nine must not restart, so it should cost
// about one server's start (BenchmarkNewRun/1-server). Unmounting it again
// is not timed.
func BenchmarkRefresh(b *testing.B) {
	b.Run("add-one-of-10", func(b *testing.B) {
		repo := newRepo(b)
		refs := stdioMounts(b, repo, 10)
		putAgent(b, repo, testAgent, resource.AgentDocument{MCPs: refs[:9]})
		r := newRun(b, &run.Options{Repository: repo, HostTools: []run.HostTool{mountTool(repo)}, FailOnMountError: true})
		ctx := context.Background()
		add, remove := batch(setMounts(refs...)), batch(setMounts(refs[:9]...))
		cpu := startCPU()
		for b.Loop() {
			out, err := r.Execute(ctx, add)
			if err != nil || out.Refresh == nil || !out.Refresh.OK || len(out.Refresh.Added) != 1 {
				b.Fatalf("%v %+v", err, out.Refresh)
			}
			b.StopTimer()
			if out, err := r.Execute(ctx, remove); err != nil || !out.Refresh.OK {
				b.Fatalf("%v %+v", err, out.Refresh)
			}
			b.StartTimer()
		}
		cpu.report(b, true)
	})
}

// BenchmarkExecuteImageResult is a call whose result is a 1 MiB image (in
// memory): the result is read once, from the wire bytes, and its base64
// is neither decoded nor encoded again. Measured against the go-sdk's
// decoding and agt's re-encoding before (issue 15): 0.56x ns/op, 0.57x
// B/op, 249 allocs instead of 337.
func BenchmarkExecuteImageResult(b *testing.B) {
	const media = resource.Ref("media")
	img := make([]byte, 1<<20)
	_, _ = rand.Read(img)
	repo := newRepo(b)
	putMCP(b, repo, media, inMemoryServer(b))
	putAgent(b, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{media}})
	conn := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "img", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "img", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: img, MIMEType: "image/png"}}}, nil
		})
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}})
	r := newRun(b, &run.Options{Repository: repo, Connector: conn, Permission: policy.AutoAllow()})
	bt := batch(call("c", run.Alias(media, "img"), `{}`))
	b.ReportAllocs()
	for b.Loop() {
		out, err := r.Execute(context.Background(), bt)
		if err != nil || out.Results[0].Failed() || len(out.Results[0].ForModel()) < 1<<20 {
			b.Fatal(err, out.Results[0].Code)
		}
	}
}
