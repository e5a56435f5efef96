// Package mcptest is agt's bundled fake MCP server, for tests: typed go-sdk
// tools (whose input schemas come from their Go input types),
// fault modes, and helpers to launch it in-process, as a stdio process, or
// over HTTP.
//
//	// In-process, through the Connector (no process):
//	counters := &mcptest.Counters{}
//	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
//		Dial: mcptest.Dial(&mcptest.ServerOptions{Counters: counters}),
//	})
//
//	// As a real stdio server: the binary is built once per test process.
//	srv := resource.MCPServer{Command: mcptest.Command(t), Cwd: t.TempDir(),
//		Args: []string{"-fault", "crash-on-call"}}
//
//	// Over streamable HTTP on 127.0.0.1, requiring a header:
//	url := mcptest.StartHTTP(t, "-require-header", "Authorization: Bearer t")
//
// # Tools
//
// environment (reports cwd, args, env names and the values asked for, pid,
// pgid), note_create / note_list / note_delete (a notes store with business
// rules: titles unique per owner, and only the owner may delete, checked
// by the server even for schema-valid calls), search (required
// fields, integer bounds 1..100, string lengths, an enum, a nested object
// with a pattern and an array), tree (a recursive $defs/$ref type), sleep
// (for timeouts; honours cancellation) and echo. The limits are exported
// constants, so tests can probe exactly at and just past each one.
//
// # Fault modes
//
// Chosen with -fault (comma-separated) or $AGT_FAKEMCP_FAULTS for the
// binary, or ServerOptions.Faults in-process; see Fault. Process faults:
// exit-at-start, no-handshake, banner, spawn-child, ignore-sigterm; the
// hostile ones, a hand-written peer in place of the server:
// refuse-initialize, old-protocol, endless-line, notification-flood,
// endless-listing, hostile-content (also over -http: a tool listed 1001
// levels deep, a result 100,000 deep, an error with a null id),
// echo-secret (also over -http: a server that sends its secret back in
// every channel it has), and drop-session (streamable HTTP with -http: no
// GET stream, and the tool drop_session, which ends its session, whose
// later requests get 404 and the Python SDK's JSON-RPC error body
// DropSessionBody). Tool
// faults: crash-on-call, many-tools (5,000 tools), invalid-schema,
// root-string, external-ref, tool-metadata (tools listed with a title,
// annotations, an outputSchema and _meta as exact bytes, and each
// execution.taskSupport), client-features (tools that elicit, sample,
// list roots, report progress, log, and add a tool during the session,
// and late, which sends an elicitation and a log line after its call
// returned; their messages can name their call in _meta: Names*; and
// rounds, which asks in several rounds: by input_required results in a
// session of protocol 2026-07-28, as ask, sample and list_roots do
// there, by server requests in a legacy one),
// content-kinds (the tool content, answering with the exact result its
// kind names: every content block type, one no protocol defines, exact
// structuredContent, an error with several blocks, malformed results;
// ContentResult), param-headers (the tool param_headers, whose parameters
// carry x-mcp-header annotations and which answers with the Mcp-Param-*
// headers it got, checked by the go-sdk's server in a modern or dual era
// over HTTP; and tools whose annotations are invalid:
// BadParamHeaderTools), tasks (the task tools, below), contract-drift (tools whose
// handlers disagree with their input schemas one way each: laxer,
// stricter, a crash, a hang, a leak, a business rule, an internal error;
// see ToolDriftLax).
//
// # Tasks
//
// With the fault mode tasks the server answers calls of its task tools
// with a task, in both eras (each request in the era it speaks): in
// 2025-11-25 as the experimental tasks (capability tasks, execution.
// taskSupport, a tools/call with params.task answered {"task":{...}},
// tasks/get, tasks/result, which waits for the end and sends an
// input_required task's elicitation on its own request, tasks/list,
// tasks/cancel), in 2026-07-28 as the extension TasksExtension (declared
// in server/discover; a call that declares it is answered with
// resultType "task"; tasks/get with inputRequests, result or error;
// tasks/update; tasks/cancel; over streamable HTTP Mcp-Name must be the
// taskId). task_work and task_optional complete with echo's exact result,
// task_ask asks one elicitation, task_fail fails, task_cancelled is
// cancelled by the server, task_ttl lapses, task_forever works until
// cancelled, task_unasked returns a task to a call that did not ask for
// one, and task_stats reports TaskStats (also Counters.Tasks). Tasks live
// in a store of the server (of the process for the binary, of the Dial in
// process), so a new session can still read and collect them. See TaskIn
// and the Task* constants for arguments, texts and codes.
//
// # Concurrency
//
// A server from NewServer serves any number of sessions; its notes store
// is shared by them and guarded. Counters are safe for concurrent use.
// Command builds at most once per process and is safe to call from
// parallel tests.
package mcptest
