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
//
// Both also report, for the Go clients, the CPU time of the benchmark's
// process per round (NAME-cpu-ns: the client's own, the servers being
// processes of their own) and its ratio to go-sdk's (NAME-cpu/go-sdk,
// below 1 is cheaper), which a loaded machine disturbs far less than wall
// time.
//	EraProbe/{stdio,http}       connect, list, close by a new Connector
//	                            (no era cached) to a modern and a legacy
//	                            server, negotiated and pinned to its era:
//	                            ERA-negotiated/pinned is what finding
//	                            the era costs
//
// OneCall and Concurrent64 are the same operations as separate
// benchmarks per client, for ns/op, B/op and allocs/op (the TypeScript
// client's memory is its own process's, not reported).
package bench
