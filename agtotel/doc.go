// Package agtotel gives an agt Run OpenTelemetry traces and metrics: a
// span per batch and per tool call, metrics of call counts, codes and
// latencies, and the W3C trace context sent to MCP servers in the
// tools/call request's _meta, so a server's own spans join the trace. It
// is its own Go module (github.com/agtsdk/agt/agtotel, directory agtotel),
// so agt's core module does not depend on OpenTelemetry; its name does not
// collide with the otel packages a host imports beside it.
//
//	tel := agtotel.New(&agtotel.Options{
//		TracerProvider: tp, MeterProvider: mp,       // nil: the otel globals
//		// Propagator nil: propagation.TraceContext{}, never the host's baggage
//	})
//	r, err := run.New(ctx, tel.Instrument(&run.Options{
//		Agent: "writer", Repository: repo, Permission: perm,
//		Auditor: run.NewSlogAuditor(nil), // still gets every Record
//	}))
//	if err != nil { ... }
//	out, err := r.Execute(ctx, batch) // traced: nothing else changes
//
// Telemetry.Instrument is the one way in: it returns a copy of the Run's
// options with three parts set, which together give the whole picture.
// Its WrapExecute makes the batch span and ties the others to it; its
// interceptor, first in Interceptors, makes the span of each call that
// gets past the Permission and carries the trace context to its server;
// its Auditor completes those spans with the call's audit Record, gives
// a span to every call that stopped earlier (rejected batch, invalid
// arguments, denied), records the metrics of every call, and then hands
// each Record to the host's Auditor. Each call gets exactly one span, a
// child of its batch's. The host's own parts keep running: its
// interceptors inside the call span (their spans and logs join it), its
// WrapExecute outside the batch span (a span it starts is the batch
// span's parent), its Auditor after the Telemetry's. Instrumenting
// options twice with one Telemetry traces them once.
//
// # Spans and attributes
//
// The names follow the OpenTelemetry GenAI semantic conventions
// (open-telemetry/semantic-conventions-genai v0.1.0: the execute_tool
// span of gen-ai-spans.md and the MCP conventions of mcp.md; status
// Development), agt's own attributes under agt.:
//
//   - "agt.batch" (Internal): agt.agent, agt.batch.id, agt.batch.calls,
//     agt.batch.refreshed; error.type (the code) and status Error when the
//     batch was rejected, the Run closed or the context ended.
//   - "execute_tool ALIAS", one per call: gen_ai.operation.name
//     (execute_tool), gen_ai.tool.name (the alias), gen_ai.tool.call.id,
//     agt.alias, agt.agent, agt.run_id, agt.batch.id, agt.tool.source
//     (mcp, host, framework), agt.tool (the server's or host's tool
//     name), agt.stage (the last stage reached), agt.decision.verdict,
//     agt.decision.by, agt.code ("ok" or the code), agt.violations (how
//     many), agt.panicked; for MCP tools mcp.method.name (tools/call) and
//     agt.server.ref. A failed call has error.type = its agt code
//     (tool_error for a result with isError, as the MCP conventions say)
//     and status Error with the code as its description. Kind Client for
//     an MCP call the interceptor saw (a request went to the server),
//     Internal otherwise. The MCP conventions' own name, "tools/call
//     TOOL", is not used: agt traces the tool execution itself, and the
//     conventions then ask for the MCP attributes on the execute_tool span
//     rather than a second span.
//   - "agt.refresh" (Internal), under the batch: what a refresh or restart
//     at the batch boundary changed, as counts (agt.refresh.added,
//     .removed, .replaced, .restarted, .relisted, .failed); error.type and
//     status Error when it failed.
//   - A request a server sent during a call (elicitation, sampling,
//     roots) is an "agt.server_request" event of that call's span, with
//     agt.server_request.kind (the MCP method: elicitation/create,
//     sampling/createMessage, roots/list) and agt.server_request.outcome: the Run
//     audits such a request with the context its call was sent with, so
//     the event lands on that call's span exactly. A request that came
//     while no call, or several, were in flight is counted but is no
//     event (a server does not say which call asked).
//   - A mount's connection found lost ("server_lost") is an
//     "agt.server_lost" event of the batch span that saw it, with
//     agt.server.ref, agt.server.shared, agt.server.loss.charged and
//     agt.server.losses (the losses in a row).
//
// Not recorded, because a run.Request does not carry them:
// jsonrpc.request.id (the go-sdk numbers requests inside the session),
// mcp.session.id, mcp.protocol.version and network.transport.
//
// # Metrics
//
//   - agt.calls ({call}) and agt.call.duration (s, the whole pipeline from
//     the batch checks to the result), for every call: agt.tool.source,
//     agt.server.ref (MCP tools), agt.code ("ok" or the code), agt.stage,
//     and error.type on failure.
//   - mcp.client.operation.duration (s), for each MCP call the
//     interceptor saw, timed from the interceptor to the server's
//     answer. The interceptor is first in Interceptors, so this time
//     includes the host's interceptors (an approval a run.Before waits
//     for, say) as well as the server's: it is the call's time past the
//     Permission, not the server's alone. mcp.method.name, gen_ai.operation.name, gen_ai.tool.name,
//     agt.server.ref, error.type on failure. Both histograms use the MCP
//     conventions' buckets, 0.01 s to 300 s.
//   - agt.batches ({batch}), one per Run.Execute, error.type when it
//     failed.
//   - agt.server_requests ({request}): agt.server_request.kind,
//     agt.server_request.outcome, agt.server.ref.
//   - agt.server.losses ({loss}): each lost connection of a mounted server
//     as each Run saw it ("server_lost"), by agt.server.ref,
//     agt.server.shared and agt.server.loss.charged (whether the loss
//     counts against that Run's MaxRestarts: its calls were in flight).
//     A shared server's crash adds one per Run on it; a rate that stays
//     up for a shared server is a crash loop all its Runs share, the cue
//     to stop sharing the registration. The count in a row is not an
//     attribute (it has no bound): it is on the span event.
//
// # Trace context to servers
//
// For an MCP call, the interceptor writes the call span's context with
// the Propagator into a map and passes it to mcpconn.WithRequestMeta, so
// the tools/call request carries it in params._meta (traceparent,
// tracestate, and baggage with a propagator that writes it), as the MCP
// conventions recommend. mcpconn never lets these fields replace the
// progress token or a key MCP reserves. The default Propagator is
// propagation.TraceContext{}, the W3C trace context alone, not the global
// propagator (otel.GetTextMapPropagator): that one commonly writes the
// host's baggage too (a user, a tenant), which a server, perhaps a third
// party's, has no need of. A host sets Options.Propagator to send more.
//
// # What it never records
//
// Argument values, results (content or structured), Result.Message and
// Record.Message (a server's words and stderr tail), a panic's value or
// stack (only agt.panicked), violation paths (only their count), the
// permission decision's reason, and env or header values: none of these
// reach a span, an event or a metric. The conventions' opt-in
// gen_ai.tool.call.arguments and gen_ai.tool.call.result are not offered.
//
// # Limits
//
//   - Every string attribute of model or server origin (call and batch
//     IDs, aliases, a rejected batch's tool names, the server's tool
//     names, the agent and run names) is made valid UTF-8 and cut to 256
//     bytes; agt.decision.by and agt.decision.verdict to 64.
//     gen_ai.tool.name is the alias: for a tool in the Run's snapshot the
//     Run already bounds it (64 characters, a pure function of the
//     server reference and tool name).
//   - Metric attributes come from closed sets (source kinds, codes,
//     stages, request kinds and outcomes, booleans), the Run's mounted
//     references,
//     and, for mcp.client.operation.duration only, the aliases of tools in
//     the Run's snapshot (run.Options.Limits.MaxToolsPerRun, default 10000, bounds
//     them). A name the model made up (a rejected batch's unknown tool)
//     never reaches a metric. The SDK's cardinality limit (2000 attribute
//     sets per instrument by default) bounds the rest.
//   - The trace context sent to a server: 16 fields of
//     4 KiB together (fixed bounds of mcpconn.WithRequestMeta); a larger
//     tracestate or baggage is dropped, not sent cut.
//   - Spans held for the Auditor live until the call's Record, or the end
//     of the batch: at most one per call of a batch in flight. A next
//     that an interceptor gave up on and that still runs does not keep
//     its span open: it ends with the call's Record or the batch, and a
//     next that reaches the Telemetry's interceptor only after its call's
//     Record (a host put an interceptor before it) runs untraced.
//
// # Concurrency
//
// A Telemetry is safe for concurrent use: make one, instrument the
// options of every Run with it, and run batches of several Runs at once;
// each batch has its own span and its own set of held call spans. A
// batch a call's handler runs on another Run (a sub-agent) is a batch of
// its own, its span under the span of the context it was given.
package agtotel
