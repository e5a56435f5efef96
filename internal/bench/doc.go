// Package bench holds agt's client benchmarks against third-party MCP
// clients (issue 25 item 11), in a module of its own so that agt's go.mod
// does not depend on github.com/mark3labs/mcp-go. It has no API: only its
// benchmarks, and one quick test (TestClients) that CI runs to keep them
// working.
//
// Every client talks to the same server: the go-sdk v1.8.0 server of
// internal/interop (package gosdkserver), modern-only (2026-07-28) unless
// a benchmark says otherwise, over stdio or stateless streamable HTTP, on
// one open connection that each client negotiated, pinned to nothing
// (TestClients checks that each negotiates 2026-07-28). The clients:
//
//	go-sdk       the go-sdk's own client: the baseline of every ratio
//	go-sdk-deadline
//	             the same with a deadline per call, cancelled when the
//	             call returns, as a host (and agt) bounds a call; over
//	             HTTP the cancel often comes before the go-sdk has read
//	             the end of the response body, and the connection is not
//	             reused
//	agt-session  agt's connection layer alone (mcpconn.Session.CallTool)
//	agt-run      agt through its whole pipeline, as a host calls a tool:
//	             a Run's batch (alias, validation against the compiled
//	             schema, permission, execution, result)
//	mcp-go       github.com/mark3labs/mcp-go v1.2.1's client (it speaks
//	             2026-07-28)
//	ts-v2        the TypeScript SDK v2 client (@modelcontextprotocol/client
//	             2.4.0, versionNegotiation 'auto': its default is legacy
//	             only), run by testdata/tsv2client.mjs under the pinned
//	             Node 22 and timed by its own clock
//
// Run them, at the repository root after npm ci (the TypeScript client
// is skipped without node_modules, and fails so with CI=true):
//
//	cd internal/bench && go test -run '^$' -bench . -benchmem -count 6 ./...
//
// Reading the ratios: the *Paired benchmarks are the ones to read. Each
// iteration runs every client once, in a rotating order, after a garbage
// collection that is not timed, and the benchmark reports each client's
// median and its ratio to go-sdk's median (NAME/go-sdk), so a load that
// drifts during the run (the machine is shared) disturbs the ratios far
// less than it does the ns/op of separate benchmarks. Take the median of
// the ratios over -count runs.
//
//	OneCallPaired/{stdio,http}  one call on an open connection: NAME-ns
//	                            and NAME/go-sdk (below 1 is faster); the
//	                            goal for agt-run and agt-session is
//	                            <= 1.10
//	Concurrent64Paired          a round of 64 calls at once over HTTP:
//	                            NAME-calls/s and NAME/go-sdk (calls per
//	                            second, above 1 is faster); run it with
//	                            -benchtime 30x, a round of all the
//	                            clients takes about half a second
//	EraProbe/{stdio,http}       connect, list, close by a new Connector
//	                            (no era cached) to a modern and a legacy
//	                            server, negotiated and pinned to its era:
//	                            ERA-negotiated/pinned is what finding
//	                            the era costs
//
// The paired one-call and 64-call benchmarks also report, for the Go
// clients, the CPU time of the benchmark's process per round
// (NAME-cpu-ns: the client's own, the servers being processes of their
// own) and its ratio to go-sdk's (NAME-cpu/go-sdk, below 1 is cheaper),
// which a loaded machine disturbs far less than wall time.
//
// Measured on 2026-12-03 (issue 25), a 2-core machine shared with five
// other builds (load average 10-17): the range of the medians of two to
// three runs of -count 6 (each the median of its paired medians; HTTP
// from the two runs with a connection pool per client); the CPU ratios
// from one run, and far steadier.
//
//	one call           stdio wall  stdio CPU   HTTP wall  HTTP CPU
//	agt-session        0.96-1.00   1.02        1.11-1.16  1.24
//	agt-run            1.07-1.10   1.21        1.21-1.25  1.37
//	go-sdk-deadline    0.95-1.01   0.97        1.12-1.16  1.17
//	mcp-go             0.95-1.01   0.97        1.07-1.13  1.16
//	ts-v2              1.76-1.89   -           2.84-3.42  -
//
//	64 at once (HTTP)  calls/s ratio  CPU ratio
//	agt-session        0.97-1.01      1.15
//	agt-run            0.90           1.24
//	go-sdk-deadline    1.03-1.05      0.98
//	mcp-go             1.21-1.28      0.61
//	ts-v2              0.58-0.61      -
//
//	era probe          negotiated/pinned, stdio  HTTP
//	modern server      1.01 (5.9 ms)             0.97 (2.1 ms)
//	legacy server      1.07 (6.0 ms)             1.28 (2.7 ms)
//
// Where agt's time went (CPU profiles of OneCall): over HTTP, about half
// of agt's calls opened a new connection (strace: 165 TCP connects for
// 300 calls; the go-sdk 19, with a deadline per call 184; mcp-go 193).
// Every agt call has a deadline (tool_timeout_ms) whose context is
// cancelled when the call returns, and the go-sdk reads the end of a
// call's response body after it handed the result on, with that
// context: the cancel often came first and the connection was not
// reused (go-sdk-deadline shows the same cost on the go-sdk alone).
// mcpconn now sends each request with a context the call's return does
// not end, read to the end of its stream within a short grace after the
// answer (docs/transports-and-eras.md, Remote servers). In one paired run of -count 6
// before and after it (load average about 4), agt-session went from
// 1.10x to 1.01x wall and from 1.15x to 1.02x CPU, agt-run from 1.12x
// to 1.07x wall and from 1.19x to 1.08x CPU; 64 at once did not change
// (agt-session 0.99x and 0.99x, agt-run 0.91x and 0.90x: by default
// net/http keeps two idle connections per host, so most of 64 at once
// are new either way). Under strace
// (BenchmarkOneCall/http, 341 calls with the warm-up): agt-session 198
// TCP connects before, 25 after; agt-run 113 and 28. The rest of
// the session's cost is the wire layer's (issue 25 item 8): a 32 KiB line
// buffer per response stream (screen.go's lineReader: 33 KB of the 76 KB
// agt allocates per call beyond the go-sdk) and a second decoding of
// each event by the screen. A Run adds about 17 us of CPU per call over
// its session (stdio profile), 15 us of it validating the arguments
// against the tool's compiled schema before they are sent: the guarantee
// agt-run pays for, which the other clients do not give.
//
// OneCall and Concurrent64 are the same operations as separate
// benchmarks per client, for ns/op, B/op and allocs/op (the TypeScript
// client's memory is its own process's, not reported).
package bench
