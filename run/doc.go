// Package run executes an agent's tool calls: a Run is one execution of an
// agent, with an immutable snapshot of its tools (the MCP servers mounted on
// the agent, plus the host's own tools) and the batch pipeline every model
// tool call goes through.
//
//	r, err := run.New(ctx, &run.Options{
//		Agent:      "writer",
//		Repository: repo,                // where the agent and MCP documents live
//		Permission: policy.AutoAllow(),  // required: there is no implicit allow
//	})
//	if err != nil { ... }
//	defer r.Close()
//	tools := r.Tools() // give these to the model
//	out, err := r.Execute(ctx, run.Batch{ID: "step-1", Agent: "writer", Calls: calls})
//	for _, res := range out.Results { send(res.CallID, res.ForModel()) }
//	if n := out.Notice(); n != "" { tell the model n }
//
// # The pipeline
//
//	Execute(ctx, Batch)
//	 1 batch checks   structure, unique non-empty call IDs, Batch.Agent, every
//	                  name in the snapshot, HostTool.Authorize (delegation)
//	                  -> any failure: *BatchError, nothing runs
//	 2 per call, concurrently (Options.Limits.MaxConcurrency), results in call order
//	   a validate     arguments are a JSON object valid for the schema
//	                  -> else invalid_arguments with violation paths; stop
//	                  (the call's ctx ends validation: deadline_exceeded or
//	                  canceled)
//	   b permission   Options.Permission.Check -> not Allow: permission_denied
//	   c interceptors Options.Interceptors, first = outermost:
//	                    first.before -> second.before -> execute
//	                    -> second.after -> first.after
//	                  run.Before(f) and run.After(f) adapt plain callbacks
//	   d execute      MCP session CallTool, or the host tool's Handler, at
//	                  most once per call, with the validated bytes
//	 3 audit          one Record per call (Options.Auditor); never argument values
//	                  (and one per request a server sent during it)
//	 4 boundary       a successful call changed this agent's document or a
//	                  mounted MCP resource (Result.Changed) -> refresh
//
// The Permission is a fixed stage, not an interceptor: it always sees the
// validated, final arguments. The Run validates and executes its own copy
// of each call's arguments, so neither the Permission nor an interceptor
// can change what the tool receives (Request.Arguments is their view), and
// an interceptor's next runs the tool at most once.
//
// # Tool results and ForModel
//
// An MCP tool's Result keeps what the server sent (mcpconn reads it from
// the wire bytes): Content is the "content" array exactly as sent, every
// block of every type, those of a failed result too; Structured is
// "structuredContent" exactly as sent (key order, 12345678901234567890,
// 1e-400 kept). The exception is a mount's secrets: mcpconn masks each
// value it resolved for the server's start, and the registration's
// literal credentials, in every form it recognises, in all the server
// sends (results, errors, tool descriptions and schemas, instructions,
// the requests Elicit and Sample get, the notifications Observe and the
// Logger get, the stderr the Go errors and the audit keep), as
// "[redacted]" (mcpconn's "Secrets in what servers send"). Result.Blocks decodes Content into typed blocks (Content,
// TextContent, ImageContent, AudioContent, ResourceLink,
// EmbeddedResource, and UnknownContent for a type agt does not know, kept
// rather than failing the call), each with its exact bytes; it works on a
// host tool's Content too. A block type agt does not know is a success,
// not a lost connection, and a malformed result (or one of more than
// mcpconn.MaxContentBlocks blocks, or nested deeper than
// mcpconn.MaxMessageDepth) is tool_error; the mount stays connected either
// way, for this Run and every other Run on a shared server. A message of
// the server's that answers no call (an error with "id": null) is dropped
// by mcpconn and costs no call.
//
// ForModel, what the host sends back to the model for a call:
//
//   - a failed call: the ToolError only. A failed MCP result (isError)
//     has the text of its text blocks as Message; its other blocks (an
//     image of the failure) stay in Content and Blocks for the host, but
//     the model gets the one error format, as for every other failure.
//   - a Notice: the content blocks plus a last text block holding it
//     (the structured content is left out).
//   - content with any block that is not text (image, audio, resource
//     link, embedded resource, an unknown type): the content blocks, so
//     an image reaches the model as an image block (server-filesystem's
//     read_media_file also puts its base64 in structuredContent).
//   - else the structured content when present, else the content blocks,
//     else [].
//
// A host turns the blocks into its model API's own (an image block, a
// document); Result.Blocks gives them typed.
//
// # Refresh at the batch boundary
//
// All calls of a batch use the snapshot the batch started with. At the end,
// if needed, the Run re-reads the agent's document, keeps the connection of
// every mount whose MCP resource revision is unchanged, connects the new and
// changed ones, lists and compiles their tools, and switches only when all of
// it is ready. It refreshes when a successful call changed this agent's
// document or a mounted (or failing) MCP resource (Result.Changed). Writes
// by other agents or other front ends never refresh a running Run; but a
// refresh that one of the agent's own writes caused reads every mounted
// resource as saved, so it also loads edits other writers made to the
// agent's mounted servers.
//
// A refresh never blocks a batch or Close: it starts and lists servers
// outside every lock, one refresh at a time, under a context that Close
// cancels. A connection closes once no snapshot that a batch may still use
// holds it: removed and replaced mounts close when the last batch on an
// older snapshot ends (in the background when that is not the refreshing
// batch): no batch waits for another.
//
// On a failure the old tools of the failed mounts stay, the additions and
// changes are not applied, removals are, and the Outcome's Notice, the
// audit and the Result of the writing call (in ForModel) say
// "configuration saved, but load failed: <mount: why>; ... write ... again
// to retry". The Run then knows it is behind its saved configuration: a
// later write (Result.Written) to the agent, or to a mounted, failing or
// pending MCP resource, retries the refresh even when it changes nothing.
// There is no retry loop of the Run's own.
//
// Restart: a mount whose connection was lost (a call got unavailable, the
// process exited, the remote server dropped the session) is restarted at
// the next batch boundary: at the end of the batch that found it, or at
// the start of the next batch when it died between batches. A restart
// alone reconnects the server with the document it was connected with and
// loads no other edit (a write of the agent's own loads everything, as
// above). It follows the rules of a refresh (tools listed and compiled
// before the switch, aliases unchanged, fingerprint updated when the tools
// changed, the Run-wide bounds).
// No call is sent again by a restart: a call in flight when the server
// died gets unavailable, saying when the server will be restarted. A
// call whose response stream broke on a modern streamable HTTP server
// (MCP 2026-07-28 has no resumption) is no loss of the server: its
// session sends it again once only where that cannot repeat an effect
// (the request never left, or the server's listing marks the tool
// readOnlyHint or idempotentHint: the server's word, see Protocol eras in
// package mcpconn), and the model gets the answer; otherwise the model
// gets unavailable saying the outcome is unknown, and the mount is not
// restarted (its next call works). A call whose
// request met the end of a remote server's session (HTTP 404: the server
// ended it) never reached the server, and its message says so, so the
// model may send it again after the restart. Restarts are
// bounded by Options.Limits.MaxRestarts per mount and Run (default 5) and a
// backoff that starts at Options.Limits.RestartBackoff (default 1 s) and doubles,
// up to 5 minutes. Only a loss charged to the Run counts and doubles the
// backoff: every loss of a server that is not shared, and a loss of a
// shared server while calls of this Run were in flight on it (see Shared
// servers). Each lost connection is audited once, at the batch boundary
// where the Run sees it: a Record of EventServerLost with Loss (shared,
// charged, the losses in a row, the Run's charged restarts before it).
// A failed restart keeps the lost mount (its calls get unavailable) and is
// reported like a failed refresh; it never blocks other changes.
//
// Server-side trigger: notifications/tools/list_changed is the one
// refresh a server itself can cause, in both protocol eras (a modern
// server sends it on the subscriptions/listen stream each of the Run's
// sessions opens; see Protocol eras in package mcpconn). A mount whose server sent it (during
// a call or between batches) has its tools listed again at the next batch
// boundary (the end of the batch during which it arrived, or the start of
// the next), on the same live connection: no process is restarted, and
// the change is not counted against MaxRestarts. It follows the rules of
// every refresh: listed and compiled before the switch, aliases a pure
// function of (mount, tool), the Run-wide bounds, the fingerprint
// updated, the report's Relisted. A re-listing that fails keeps the
// mount's old tools and reports "configuration saved, but load failed:
// re-listing the tools of ..." in the Notice; the Run tries again only
// when the server sends its next change notice. Re-listings of one mount
// are at least Options.Limits.MinRelistInterval apart (default 10 s): a change
// notice sooner is remembered and applied at the first batch boundary
// after the interval, so a server that says its tools changed before
// every batch costs one listing per interval. A lost mount is restarted
// instead (its new connection lists anew).
//
// The refresh audit Record carries the diff (RefreshDiff: added, removed,
// replaced, restarted, relisted, failed).
//
// # Requests and notifications from servers
//
// A mounted server may ask the Run's host during a call, through the
// handlers of Options (per Run: a Run is one conversation, so an
// elicitation reaches that conversation's user and a sampling request is
// billed to its model):
//
//   - Options.ClientFeatures.Elicit answers elicitation/create (form and url modes). An
//     accepted form gets the requested schema's defaults for what it
//     leaves out (SEP-1034) and must match the schema. It also gets the
//     url-mode elicitations of a call its server answered with URL
//     elicitation required (JSON-RPC error -32042: the user must first
//     complete a step in a browser, such as a third-party sign-in), with
//     that call, bounded and audited as any elicitation (mcpconn: URL
//     elicitation required). The call then fails with CodeToolError and
//     a message in agt's words: the user accepted, and the call may
//     succeed when made again once the user has finished; or the user
//     declined or dismissed it, or it could not be shown (no Elicit: the
//     Run has no handler), and the call cannot succeed as it is. The URL
//     and the server's text are for the user, through Elicit: the model
//     never reads them.
//   - Options.ClientFeatures.Sample answers sampling/createMessage with the Run's model.
//   - Options.ClientFeatures.Roots are the roots (roots/list); Run.SetRoots changes them
//     and sends notifications/roots/list_changed to every mounted server.
//   - Ping is always answered.
//
// A capability is declared in the initialize handshake only when its
// handler is set (Roots: when non-nil); a request for one that is not is
// refused (method not found), as every mount of a Run without handlers
// declares nothing. Each handler receives an Origin: the mount and the
// CallContext (agent, Options.RunID, batch and call IDs, alias, source)
// of the call the request names (over streamable HTTP, the call on
// whose event stream it came; on any transport, the call its _meta
// relatedRequestId or progressToken names: see mcpconn, Which call a
// message is about), else of the Run's calls to that server in flight
// when the request arrived. Origin.Call gives the call when exactly one
// is told; with several, Calls lists them all in start order (the server
// did not say which call it means); with none, Calls is nil. mcpconn
// bounds the requests (size, count at once, time; its Limits) and ends a
// handler's context when the calls it was told of have all returned.
//
// A server of the modern protocol era (2026-07-28) sends no requests: it
// answers the call with input_required, asking for the same elicitation,
// sampling and roots inside its result, and mcpconn answers them with the
// same handlers and sends the call again with the answers (mcpconn: Multi
// round-trip requests). Each request reaches its handler, bound and is
// audited exactly as above, with its call alone (Origin.Call), whatever
// else is in flight, on a shared server too; sampling counts against
// MaxSamplingPerCall. What the model sees then: an elicitation the user
// declines or dismisses goes back to the server in either era, and the
// model gets what the server then answers (its result, as for any
// call). A request the Run refuses (no handler, a refusal wrapping
// mcpconn.ErrRefused, a failed handler, past MaxSamplingPerCall or a
// bound of mcpconn's) cannot be told to a modern server: its call ends
// there, not sent again, and the model gets CodeToolError with agt's
// words saying what the server asked for and why it could not be given
// (a legacy server is told of the refusal and says what became of its
// call itself). A server that keeps asking gets at most
// mcpconn.ConnectorOptions.Limits.MaxInputRounds rounds (default 10), then the
// call fails the same way. All rounds are one call, within its timeout
// and MaxCallDuration; the server's requestState is never audited,
// logged or shown.
//
// Every such request, answered or refused, is audited: one Record of
// EventServerRequest with its Request kind (elicitation, sampling,
// roots), the call (CallID, Alias, Source; CallIDs when several were in
// flight), the Outcome (accepted, declined, cancelled, error, refused)
// and, for a refusal or error, why in agt's words; never a value of the
// request or the answer.
//
// Permission and policy: the Permission decides tool calls, on their
// validated arguments; it does not see these requests, and policy.Rules
// cannot deny them. A request is not a tool the model chose: it is the
// server acting inside a call the Permission already allowed, and the
// host's consent is the handler itself (no handler: nothing declared,
// everything refused). The handler receives the call's Source, so a host
// can apply its own rules there (policy.Match on Source.String()) and
// refuse with an error wrapping mcpconn.ErrRefused. Sampling costs
// model calls, so the Run bounds it: a sampling request is answered only
// during a call of its server (outside any call there is nobody to bill),
// and at most Options.Limits.MaxSamplingPerCall times per call (default 10;
// a request made while several calls of the
// server are in flight counts for each); past it the server is refused
// and the audit says so.
//
// Notifications: every MCP call carries a progress token, so progress
// names its call exactly and restarts its idle timeout (mcpconn: the
// document's tool_timeout_ms, up to ConnectorOptions.Limits.MaxCallDuration,
// default 10 minutes). Progress, server log lines (notifications/message,
// with the call they name, else the calls in flight) and tool list
// changes go to Options.ClientFeatures.Observe
// (one at a time per server; it must return quickly, and must not wait
// for a batch of its Run), and progress and
// log lines to Options.Logger ("agt.server_progress" at Debug,
// "agt.server_log" at the server's level, with agent, mount, run, batch
// and call IDs) at a bounded rate. Execute returns a call's result only
// once Observe has returned for every notification its server sent
// before that result: on stdio and SSE all of them, on streamable HTTP
// those sent on the call's own event stream and those of other streams
// read before it (mcpconn: What a server sends on its own; a stuck
// Observe holds a result at most tool_timeout_ms). The servers send log
// lines at Options.ClientFeatures.LogLevel and above (default info), in either
// protocol era.
//
// # Tasks
//
// A server may answer a call with a task (MCP tasks: long work it goes
// on with, such as a CI run or a research query) instead of its result.
// The Run follows the task for the call (mcpconn: Tasks), and what the
// model sees does not change:
//
//   - The call waits for its task within the call's bounds, and the batch
//     ends, as always, with one result per call: the task's
//     result, exactly the one the call would have had at once, or its
//     error. Each poll that finds the task alive restarts the call's idle
//     timeout (tool_timeout_ms) as progress does; MaxCallDuration of the
//     Connector (10 min by default) bounds the whole call, and so do
//     Execute's context and the batch's deadline. A task that outlives
//     them is cancelled (tasks/cancel) and the call fails as a call that
//     timed out does: the model never gets a handle to look at later, so
//     no result reaches it late, twice, or not at all. Hosts with longer
//     tasks raise MaxCallDuration and the registration's tool_timeout_ms.
//   - The task's status (working, input_required, ..., with the
//     server's message) reaches Observe as NotifyTask, with the call. An
//     input_required task's requests go to Elicit, Sample and Roots with
//     the same bounds, refusals and audit as any server request of the
//     call.
//   - Durable tasks: with a RunID and a Repository that keeps tasks
//     (resource.TaskStore: boltrepo and pgrepo do), the task's handle
//     (the Run, the call's ID, the registration and its revision, the
//     tool, the task id) is stored before the task is first polled, and
//     dropped once the call has its result or error. A host that stopped
//     while a task ran (it crashed, was killed, or closed the Run: Close
//     does not cancel tasks) makes a Run with the same RunID (New, or
//     Resume with its Checkpoint, whose fingerprint rules decide whether
//     it may) and executes the interrupted batch again with the same call
//     IDs: a call whose handle is stored, for the same registration,
//     revision and tool, takes its task's result instead of calling the
//     tool again, exactly once. A handle of another revision or tool is
//     not resumed (the call is made anew). Handles expire with the task's
//     TTL, at most MaxTaskHandleAge (24 h); resource.MaxRunTasks bounds
//     them per Run. Call IDs must be unique within a Run for this (model
//     APIs' tool call IDs are), and one process at a time resumes a
//     RunID.
//
// # Shared servers
//
// A registration with "shared": true (resource.MCPServer.Shared; never on
// by default) is shared by the Runs that use one Connector (agt.Host
// gives all its Runs one): Runs that mount it at the same revision, and
// whose Options set the same handlers among Elicit, Sample and Roots (the
// capabilities they declare to the server), use one connection, one
// process for a stdio server, instead of one each (mcpconn: Shared
// connections). The calls of all those Runs, that is of different
// conversations and users, meet in that one process: share only
// a server that keeps no state of a user's (a working directory, a login,
// a browser page, memory of earlier calls are everyone's). Each Run still
// lists the tools when it mounts the server and keeps its own snapshot,
// validators, aliases, permission decisions and audit; its fingerprint is
// the one an unshared Run gets. Calls of different Runs run concurrently
// on the connection. Close of a Run, or a refresh that unloads the mount,
// lets go of the Run's lease only; the Connector closes the connection
// SharedIdleTimeout (default 30 s) after the last Run let go, or at once
// when a newer revision replaced it; Run.Close does not wait for the
// process of a shared server, which is the Connector's.
//
// A tool list change makes every Run on the server re-list at its next
// batch boundary. SetRoots does not notify shared servers: they read a
// Run's roots only when they ask for one of its calls.
//
// Two users on one server. What a shared server sends reaches a Run only
// when it names one of that Run's calls (mcpconn: Shared connections):
// Elicit, Sample and Roots get a request that names a call of theirs in
// flight, with that call, even while other Runs' calls are in flight; a
// request that names no call is refused, however few calls are in
// flight, and audited in no Run (the Connector's Logger gets
// "agt.shared_server_request"); one that names a call of the Run that
// has returned is refused and audited in that Run. So one user's
// elicitation never reaches another user, a late one about a call that
// returned included. What names a call depends on the transport: over
// streamable HTTP, the event stream of the call's own request (a server
// sends its requests and log lines there during the call); over stdio
// and SSE there is no stream per call, so only a server that sets _meta
// relatedRequestId or progressToken in its requests gets them answered
// on a shared registration. Log lines go to the Observe of the Run whose
// call they name (in flight or just returned), else to the Connector's
// Logger ("agt.shared_server_log"), never to a Run by guess.
//
// A crash of a shared server (its process exits, the remote server drops
// the session, a call finds it unreachable) is every Run's on it: the
// calls of every Run in flight on it then fail as unavailable, all of
// them, whichever Run's call caused it, and are not sent again. It is
// charged only to the Runs whose calls were in flight then (against
// their MaxRestarts and backoff); a Run with none in flight restarts the
// mount at its next batch without counting it (within its backoff from
// its last restart), so one user who crashes the
// server again and again spends only their own restarts, and a crash
// with no call in flight is charged to no Run. The Connector starts one
// new process for all of them. Each Run audits each loss
// (EventServerLost, with Loss.Shared, Loss.Charged and Loss.Losses, the
// losses of the registration's connection in a row, all Runs together),
// and the agtotel module counts them (agt.server.losses): a count that
// keeps rising is a crash loop every Run on the server shares, and the
// host's cue to stop sharing the registration. Its stderr holds what it
// wrote during every Run's calls: with ServerStderrToModel set, one
// user's model could read it. Its notifications reach the Runs one at a
// time, as one server's always do: an Observe that is slow to return
// delays those of every Run on the server, and past the connection's
// queue (256) they are dropped; its bounds on server requests
// (mcpconn.ConnectorOptions.Limits.MaxServerRequests) hold for all those Runs
// together.
//
// # Server output
//
// What a stdio server writes on stderr, and a line that is not JSON-RPC on
// its stdout before the handshake, is for its operator, not for the model:
// a server may print its environment there, echo an argument of an earlier
// call, or print a token in a banner. The text a Run gives the model
// (Result.Message, the ToolError, RefreshReport.Notice) never holds it,
// unless the host sets Options.ServerStderrToModel: a mount whose server
// wrote a banner on stdout fails with a notice that says so, without the
// banner. The Go errors (MountErrors, RefreshReport.Err and Failures) and
// the audit (Record.Message of a failed refresh, and of a call that failed
// as unavailable) keep it.
//
// # Aliases and fingerprints
//
// An MCP tool's name is Alias(ref, tool), a pure function of the pair, so
// reordering mounts never points a name at another tool: mcp__REF__TOOL
// with "/" as "_" for references of [a-z0-9-] segments, mcp_HASH__TOOL for
// others. No server's aliases start with another's head (see Alias for the
// argument). Fingerprint covers
// the host's StaticInputs and the tool snapshot; Checkpoint and Resume use it
// to refuse resuming into a different configuration (ErrFingerprintMismatch).
// Of each tool it covers the alias, the source and the input schema's
// digest: what decides whether a call the model composed is still the same
// call. A tool's title, description, annotations, output schema and _meta
// describe it and are left out, so a server that rewords them does not
// make a suspended Run unresumable.
//
// # What a Run hands the host about its tools
//
// Tools lists, per tool, its alias, description and input schema, and for
// an MCP tool the server's title, annotations, output schema and _meta
// (the last two as the server's exact bytes; all within mcpconn's bounds).
// Instructions lists the instructions each loaded mount's server gave in
// its handshake, in the agent's order of mounts, each at most
// mcpconn.MaxInstructionsBytes (32 KiB, cut at a UTF-8 boundary and marked
// Truncated): the servers' own text, which a host may put in the model's
// prompt as it sees fit.
//
// A registration's enabled_tools and disabled_tools (see package resource)
// choose which of its server's tools the Run offers: a tool they leave out
// is not listed, a call to it is an unknown tool that never reaches the
// server, and it is not reported (SkippedTools lists failures only). A
// tool whose x-mcp-header annotations break the constraints of MCP
// 2026-07-28 or name a header the registration sets (mcpconn: Protocol
// eras) is a SkippedTool. A tool
// nested too deep for
// its listing to be read with it (an outputSchema 1001 levels deep) is a
// SkippedTool wrapping mcpconn.ErrLimit; the server's other tools are
// offered. The probe applies the same rules (mcpconn.LoadTools). A batch
// that names the alias of such a tool is rejected as any unknown tool
// (code unknown_tool), but its message says why the tool is not there,
// for the model too: "the tool X is excluded by its server's registration
// (enabled_tools/disabled_tools)" or "the tool X was left out of this
// run: " and the SkippedTool's reason; the *BatchError then matches
// ErrToolNotOffered.
//
// Compiled schemas are kept in a SchemaCache keyed by their exact bytes
// (bounded): the Run's own, or Options.SchemaCache, which agt.Host gives
// all its Runs and its Prober, so that many Runs of the same agents
// compile each tool once, also when their mounts connect at the same
// time. Each mount compiles its tools as soon as its own listing arrives,
// while the other mounts still connect.
//
// A mount of a modern server (MCP 2026-07-28) that lists its tools with a
// ttlMs may take its listing from the Connector's listing cache instead
// of asking the server: a Run, or a probe, of the same registration
// revision within that time, with the same credentials unless the
// server said the listing is public (see Listing cache in mcpconn; at
// most ConnectorOptions.Limits.MaxListingTTL, 10 minutes by default). It is the
// same exact bytes, so with a shared SchemaCache nothing is compiled
// either: measured for 100 Runs of one agent mounting one modern
// streamable HTTP server (BenchmarkHundredRuns), the server saw 1
// tools/list instead of 100, and a Run started in about a quarter of the
// time. A change notice of the server or a new revision of the
// registration lists again; a legacy server is listed for every Run.
//
// # Limits
//
// Each mount is bounded by its Connector (see mcpconn's Limits: message
// size and rate, the tools and bytes of one listing, one tool's text). A
// Run also bounds what all its mounts list together: Options.Limits.MaxToolsPerRun,
// default 10000 tools, and Options.Limits.MaxListBytesPerRun, default
// 64 MiB of names, titles, descriptions, schemas and _meta, excluded
// tools included.
// Mounts are counted in the agent's order; the mount that goes past a bound
// fails to load with an error wrapping mcpconn.ErrLimit. At most 16 mounts
// connect at once, so at most 16 listings are read at a time. An agent
// mounts at most MaxMounts (256) resources; a batch holds at most
// Options.Limits.MaxBatchCalls calls (default 256). Compiled schemas are kept in
// Options.SchemaCache (nil: the Run's own), at most mcpconn.SchemaCacheMaxEntries
// (4096) schemas of mcpconn.SchemaCacheMaxBytes (16 MiB) source bytes; a full
// cache starts over. Sampling: Options.Limits.MaxSamplingPerCall requests per
// call, default 10; a modern server's input
// rounds per call: mcpconn.ConnectorOptions.Limits.MaxInputRounds, default 10.
// Roots: at most 1024. The
// servers' log lines and progress written to Options.Logger: per mount, a
// burst of 100, then 20 per second; the others are dropped and counted in
// the next line that passes (dropped_before); Options.ClientFeatures.Observe still gets
// them (mcpconn drops log lines only past its own queue).
// Re-listing a mount's tools after its server said they changed: at most
// once per Options.Limits.MinRelistInterval, default 10 s.
// One tool result holds at most mcpconn.MaxContentBlocks (10000) content
// blocks (more is tool_error), and a failed result's Message at most 2 KiB
// of its text.
//
// # Errors
//
// A tool failure is a Result with a Code (the closed set invalid_arguments,
// permission_denied, unknown_tool, unauthorized, not_found, conflict,
// unavailable, deadline_exceeded, canceled, tool_error, internal) and a nil
// error; Result.ToolError renders the one ToolError JSON format. A Go error
// from Execute means the batch was rejected (*BatchError, ErrBatchRejected),
// the Run is closed (ErrClosed) or the context ended; the Outcome still
// holds one Result per call, with its call ID. New fails with
// ErrNoPermission, ErrAgentDisabled, ErrMountFailed or a repository error;
// Resume also with ErrFingerprintMismatch.
//
// # Concurrency
//
// A Run is safe for concurrent use. Permission, Interceptor, Auditor, host
// tool handlers, Elicit, Sample and Observe are called from several
// goroutines at once and must be safe for that. Close ends every connection (also those a refresh is about to
// unload) without waiting for running batches; their calls get
// unavailable. It cancels a refresh in progress (whose report then says
// ErrClosed) and returns once the Run's processes have ended: within about
// the Connector's termination grace. A panicking callback fails only its
// call; its value and stack go to the audit Record and Options.Logger,
// never to the model.
package run
