// Package mcpconn turns a stored MCP server document into a running,
// connected MCP session, and probes registered servers. It is the only way
// agt starts or reaches a server: a Run and the Prober both go through a
// Connector.
//
//	c := mcpconn.NewConnector(nil)
//	s, err := c.Connect(ctx, ref, srv, nil) // srv from resource.DecodeMCP
//	if err != nil {
//		return err // *mcpconn.Error: errors.Is ErrNoAbsoluteCwd, ErrStart, ErrHandshake...
//	}
//	defer s.Close() // ends the whole process group
//	tools, err := s.Tools(ctx) // all pages; InputSchema is the server's exact bytes
//	res, err := s.CallTool(ctx, "search", json.RawMessage(`{"query":"a","limit":3}`))
//	// res.Content: typed blocks; res.ContentJSON, res.Structured: the exact bytes
//
//	p := mcpconn.NewProber(repo, c, nil)
//	report, err := p.Probe(ctx, "tools/search") // handshake, tools/list, compile; no tool call
//
// # Launch rules (stdio)
//
//   - The process runs in the document's cwd, never in the working
//     directory of the host, the Run or the prober. A document
//     without an absolute cwd, such as a record saved before cwd was
//     required, fails before anything starts with ErrNoAbsoluteCwd and a
//     message that says how to fix it.
//   - command is a bare name, looked up in the PATH the child will get
//     (the document's env may set PATH; relative PATH entries resolve
//     against cwd), or an absolute path used as is. These rules are
//     resource.ResolveLaunch, which resource.Service.Test applies too:
//     agt.Host gives its Service the Connector's LaunchEnv, so a static
//     test and a start resolve a command the same way. Anything else ("./x",
//     "bin/x") is refused with ErrInvalidServer.
//   - ${cwd} and ${workspace} expand to cwd in args and env values; other
//     text is passed as is, $${ as a literal ${. Relative paths in args
//     resolve against cwd because the process runs there.
//   - Secret references in args, env values and header values are resolved
//     at each start (see Secret references below).
//   - Environment: a small allowlist of the host's variables
//     (resource.DefaultInheritEnv(): PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*,
//     TZ, TMPDIR), then the document's env on top. ConnectorOptions.LaunchEnv can pass
//     the host's whole environment, or its own list; a PWD inherited that
//     way is set to cwd. An env name that is empty or holds '=' or NUL is
//     refused with ErrInvalidServer.
//   - The child gets its own process group. Close closes its stdin, waits a
//     grace period, sends SIGTERM to the group, waits, sends SIGKILL, reaps
//     the child, and then ends whatever is left in the group: no zombie and
//     no orphan, even when the server starts children or was launched
//     through a shell. When the host is PID 1 (in a container) or a child
//     subreaper, the members it adopted are reaped too. A process that
//     leaves the group on purpose (setsid, setpgid) escapes this, and so
//     does everything if the host itself is killed.
//   - stderr is kept in a bounded ring buffer; its tail is part of every
//     start and handshake error (Error.StderrTail) and of
//     Session.StderrTail. A server that writes a line that is not
//     JSON-RPC on stdout before the handshake fails it with ErrHandshake;
//     the line's first 80 bytes are the error's StdoutHead, not its
//     Detail (see Errors).
//   - There is no sandbox: the command runs with the host user's rights.
//     Registering a server installs nothing, but connecting or probing it
//     runs it.
//
// # Launch allowlist
//
// ConnectorOptions.LaunchEnv.Allow (a resource.LaunchAllowlist) says which
// commands, working directories and url origins may be started or
// contacted; nil, the default, allows all. Every start and every contact
// by the document consults it, whoever asks: a Run, the refresh at a batch
// boundary, a restart, a probe, the agt CLI. A server it does not admit
// fails Connect with ErrNotAllowed before any process starts or any
// request is sent, with a message that names the field (/command, /cwd,
// /url) and the allowlist field to set, never the value.
//
//   - Commands: an absolute path admits exactly that executable, compared
//     with the resolved one (after the PATH lookup, cleaned; symbolic links
//     are not followed); a bare name admits the program it resolves to in
//     the host's own PATH, so a document that sets PATH in its env cannot
//     reach another program of that name. Admitting an interpreter or a
//     launcher (sh, node, python, npx, uvx) admits whatever its args run.
//   - Dirs: cwd must be a listed directory or inside one, compared after
//     symbolic links on both sides.
//   - Origins: scheme://host[:port] (default ports may be left out);
//     redirects never leave the origin anyway.
//   - Env: the env names an agent caller may set (nil: none), and the
//     start-altering ones (LD_*, BASH_ENV, PYTHON*, PERL5OPT, NODE_OPTIONS,
//     PATH and the like: the full list is on resource.LaunchAllowlist) a
//     registration may carry: under an allowlist none starts with an
//     unlisted start-altering name, whoever wrote it, since env is code
//     for the loader and for interpreters.
//
// The rule lives in resource.ResolveLaunch and resource.ResolveRemote, and
// Connector.LaunchEnv hands it on: a resource.Service given it
// (agt.Host does) reports a refused server in Test and refuses an agent
// caller's write of one, so the static test, the write-time check and the
// start decide the same way. A Dial option that returns a transport is
// the host's own start and is not judged; a Dial that starts the
// document's command itself should resolve it with resource.ResolveLaunch
// and Connector.LaunchEnv to keep the same rule.
//
// # Remote servers
//
// Documents of type "http" (streamable HTTP) and "sse" (the older HTTP+SSE
// transport) are reached at their url with their headers added to every
// request by an http.RoundTripper.
//
// A streamable HTTP server may end the event stream that answers a
// request before the answer (SEP-1699: it sent a priming event, an event
// id without data, and a retry delay). The request is then resumed: after
// the delay the server asked for (its retry field, at most
// ConnectorOptions.Limits.MaxReconnectDelay, default 30 s; the go-sdk's backoff
// of 1 s and more when it asked for none), a GET with Last-Event-ID
// continues the stream, and its answer ends the call as if the first
// stream had carried it. The bounds of the first stream hold on every
// resumed one: the origin check, MaxMessageBytes per event, the message
// rate (the reply a resumed stream carries is the one its request owed),
// and the capture of a tools/list page. Reconnections end with the call's
// tool timeout. The rate of reconnections of one stream is bounded, not
// their number: ConnectorOptions.Limits.ReconnectBurst at once (default 10),
// then one per ConnectorOptions.Limits.MinReconnectInterval (default 1 s),
// however short a retry the server asks for. So a server may poll (end
// its standalone stream after a priming event and ask for a short retry,
// for ever) and keep its session, and a server that ends its streams in a
// loop costs one request per interval and stream. The go-sdk keeps its
// own count of reconnections without a new event id, which never resets
// with time (50, the most its backoff survives): agt puts an event id of
// its own at the start of every response of the standalone stream, so
// that count never runs for it (the id is never sent to the server); a
// call's stream whose server repeats one event id 50 times is ended by
// it, as is a standalone stream whose server sends the same id on every
// response (its session is then lost: a Run restarts it at the next
// batch).
//
// The standalone GET event stream, on which a server sends what it starts
// outside a call, is opened only for a session that has a handler to
// receive it (ConnectOptions.Handlers with any field set); Connect without
// handlers opens none. It never holds the handshake: the go-sdk opens it
// inside the handshake, so agt answers that request at once and sends the
// real GET from the stream's reader, after the handshake returned; a proxy
// that holds the response headers delays nothing. A server that offers no
// such stream (405, any other refusal, an answer that is not an event
// stream) keeps a working session without it, with no retry. A standalone
// stream the server ends is resumed under the same bounds.
//
// A streamable HTTP server that ends a session answers its every request
// with 404 Not Found, and the client must start a new session (MCP
// 2025-11-25, session management); the Python SDK's body is a JSON-RPC
// error, "Session not found", which the go-sdk would hand on as the
// server's answer. agt reads a 404 to any POST that carries the session's
// id as the end of the session, whatever its body: the session is Lost
// from then on (a Run restarts it at the next batch boundary); the call
// whose own request got the 404 fails with ErrUnavailable saying that it
// never reached the server and did not run, so it may be sent again on a
// new session (agt never sends it again itself); any other request fails
// with ErrUnavailable too, never as a protocol error of the server's. The
// error does not quote the session id. A 404 to the first GET of the
// standalone stream is no stream, as a 405 is (a server that routes only
// POST answers so), not the end of the session.
//
// A streamable HTTP request's connection is kept for the next request:
// the response stream of a request whose answer came is read to its end
// after the call returned (the go-sdk reads it last), so that net/http
// puts the connection back in its pool instead of opening a new one for
// each call; but for at most 250 ms and 64 KiB after the answer, past
// either of which the stream, and its connection, is cut. A request whose
// answer has not come is cut as soon as its call ends (the tool timeout,
// the caller's cancel, the longest call time), as a stream still going
// is by the session's close.
//
// A remote server whose answer to the handshake shows what is wrong gets
// an error that says what to set, wrapping ErrHandshake and one of:
// ErrUnauthorized for 401 and 403 (set headers, such as an Authorization
// header with a ${secret:...} reference); ErrWrongTransport for a url of
// the other HTTP transport (set "type": "sse" or "type": "http"), a web
// page, or no MCP endpoint at the path (when the server has not answered
// as an MCP endpoint before in the handshake). Any other refusal says
// "the server refused the handshake" with the status. The answer is the
// one that failed the handshake, the latest: after an OAuth login, not
// the 401 that started it. Its status is given, and the server's message
// as it wrote it, where the client read the answer's body (streamable
// HTTP reads a failed answer whole; the SSE transport closes it unread):
// the message of a JSON-RPC error (or an "error" or "message" string) in
// a JSON body, the first line of a text/plain body, nothing of a web
// page; cut at 512 bytes, control characters replaced by U+FFFD, and
// every value of the request it echoes (the Authorization, Cookie and
// registration headers' values, the url's query values and long path
// segments) replaced by [redacted]. The answer's headers are never
// quoted.
//
// Every request goes to the registered origin (scheme, host and port)
// only. A redirect to another origin is refused, not followed: the session
// ends with an error wrapping ErrLimit that names the new origin
// (scheme://host:port, never its path or query), and the other origin
// receives no request at all, so the registration's headers
// (Authorization, API keys) cannot follow it.
// The same holds for an SSE server whose endpoint event names another
// origin, and for an https url redirected to http. Redirects within the
// origin are followed (at most 10), headers included. To use a server that
// moved, register its new url.
//
// # What a server sends on its own
//
// Connect(ctx, ref, srv, &ConnectOptions{Handlers: h}) gives the
// session handlers for what its server sends outside the answers to its
// requests. Connect (and the Prober) give none.
//
// Capabilities: the initialize handshake declares exactly the client
// capabilities whose handlers are set: elicitation (form and url modes)
// for Handlers.Elicit, sampling for Handlers.CreateMessage, roots with
// listChanged for Handlers.Roots; nothing else, and nothing at all without
// them (the go-sdk's default roots capability is never declared).
// A request for a feature not declared (elicitation/create,
// sampling/createMessage, roots/list) is refused with JSON-RPC error
// -32601 "method not found"; the go-sdk alone would answer roots/list
// with an empty list. Ping is always answered. A session with Handlers.Log
// asks a server that declares logging for Handlers.LogLevel (default
// info) right after the handshake (logging/setLevel, the way of protocol
// 2025-11-25, which agt speaks): servers send no log lines before.
//
// URL elicitation required: a server may answer a tools/call with the
// JSON-RPC error -32042 (MCP 2025-11-25) listing url-mode elicitations
// the user must complete before the call can succeed (a third-party
// authorization, a payment). Each goes to Handlers.Elicit as a url-mode
// elicitation/create of that call would: Incoming.Calls holds the call,
// the handler runs under the same context and bounds
// (MaxElicitationBytes, an http or https url, MaxServerRequests at once
// and listed at most, MaxServerRequestTime) and Served reports each, so
// a host audits it as any elicitation. It must be in url mode with an
// elicitationId and a url and no requestedSchema, else it is refused as
// malformed. They are asked one after the other, and the asking stops at
// the first the user does not accept. The answers go to no server (the
// error asked nothing): the call fails with ErrURLElicitationRequired,
// whose Detail says in agt's words how the user answered and whether the
// call may succeed when made again once the user has finished; it never
// holds a URL, an elicitation's message or the server's text: the URL
// is for the user, through the handler, not for a model. Without an
// Elicit handler the call fails the same way, saying the client has no
// handler to show it (Served reports it refused).
//
// Which call a message is about: a request or a log line the server
// sends names its call only by what the transport says, and MCP
// 2025-11-25 gives a server no field of its own for it. What agt reads,
// on each transport:
//
//   - streamable HTTP: the event stream it came on. What the server sends
//     on the stream of a call's own POST (or of the GET that resumes it)
//     is that call's: the round tripper reads each notification there
//     with the call, and marks each request with a secret of the
//     session's the server never sees, so a message sent on another
//     stream cannot pass for it. What comes on the standalone GET stream
//     (or, in the modern era, on the subscriptions/listen stream) names
//     no call.
//   - stdio, SSE (one stream for the whole session) and Dial: no per-call
//     channel, so only the server's own word below.
//   - every transport: params._meta.relatedRequestId, the JSON-RPC id of
//     the call's tools/call request, or params._meta.progressToken, the
//     progress token the call carried (every call carries one of its own),
//     where the server puts them. A progress notification names its call
//     by its token.
//
// Requests: each handler receives an Incoming: the session's reference
// and, for a request that names a call in flight (above), that call's tag
// (WithCallTag) alone; otherwise the tags of the session's calls in
// flight when the request arrived, in start order. One call is
// unambiguous; with several the host is told all of them (the server did
// not say which one it means); with none, Calls is nil. (A shared
// connection answers only a request that names a call in flight: see
// Shared connections.) A handler runs under a context that ends when the
// session closes, when the server cancels the request, after
// ConnectorOptions.Limits.MaxServerRequestTime (default 10 minutes), and once all
// the calls it was told of have returned. While it runs, those calls'
// idle timeouts are held: a user answering an elicitation is not a slow
// server. An elicitation's form accepted by the
// handler gets the requested schema's defaults for the properties it
// leaves out (SEP-1034, as the spec and the conformance scenario
// elicitation-sep1034-client-defaults ask), and the go-sdk then checks the
// content against the requested schema (flat, primitive properties), so a
// server never receives an answer its own schema refuses. A url-mode
// elicitation must name an http or https URL. A handler's error never
// reaches the server as text: the server is told the client could not
// answer, or, for an error wrapping ErrRefused, that it refused (with a
// *RefusedError's reason). Handlers.Served reports every such request
// (method, mode, outcome: accepted, declined, cancelled, error, refused;
// a reason in agt's words), never a value.
//
// Notifications: every tools/call carries a progress token of its own
// (_meta.progressToken), so notifications/progress names its call exactly:
// Handlers.Progress gets that call's tag alone (also for progress read
// just after the call returned); progress for no call is dropped. Each
// progress restarts the call's tool timeout (see Handshake and calls).
// notifications/message goes to Handlers.Log with the call it names (in
// flight, or one of the last to return), else with the calls in flight
// when it was read; notifications/tools/list_changed is counted
// (Session.ToolsChanged) and goes to Handlers.ToolsChanged. Every
// notification is seen where the transport's bytes are read, in the order
// the server sent it, before the go-sdk sees it: on stdio, SSE and Dial
// by the connection's reader, on streamable HTTP by the reader of each
// event stream (or application/json body). There a progress restarts its
// call's idle timeout, a list change is counted, and each notification is
// queued with the calls in flight then. Notification handlers run one at
// a time, in that order, from a bounded queue (see Limits).
//
// A call's result never overtakes the notifications before it: CallTool
// returns once every notification read before the call's answer has
// been handed to its handler and the handler returned. On stdio, SSE and
// Dial (one stream for the session) that is every notification the
// server sent before the answer: the call's progress and log lines, and
// all else. On streamable HTTP (a stream per request) it is every
// notification the server sent before the answer on the call's own
// stream, and those of other streams (the standalone one, other calls')
// read before the answer was, an order HTTP does not keep between
// streams (a server that answers with application/json sends its
// notifications on the standalone stream: they keep no order with its
// answers). A notification dropped from a full queue is not waited for; a
// handler that does not return holds the call at most tool_timeout_ms
// more, never past the caller's context or the session's close. So a
// handler must not wait for a call of its own session. Session.NotifyRootsChanged sends
// notifications/roots/list_changed; roots/list is answered by
// Handlers.Roots alone (the go-sdk client's own root set stays empty).
//
// A server of protocol 2026-07-28 sends no requests: it asks for input
// inside a tools/call result (input_required), and the same handlers
// answer it (see Multi round-trip requests).
//
// # Multi round-trip requests
//
// In the modern era (SEP-2322) a server that needs input during a call
// answers the tools/call with resultType "input_required": the requests
// it needs answered (inputRequests: elicitation/create,
// sampling/createMessage, roots/list, each under a key of the server's)
// and an opaque requestState. Session.CallTool answers them and sends
// the call again, as a new request with a new JSON-RPC id, carrying the
// answers (inputResponses) and the requestState, until the server
// answers with a result; the caller sees one call and one result. agt
// runs these rounds itself: the go-sdk's own middleware, which would
// answer past the handlers, bounds and reports below, is off. Such a
// result is answered in a legacy session too, by the same rules.
//
//   - Each request goes to the session's handler as a server's request
//     that names the call would (see Which call a message is about):
//     Incoming.Calls holds that call alone, whatever else is in flight,
//     on a shared connection too (its lease alone is asked), with the
//     same checks and bounds (a flat form, MaxElicitationBytes,
//     MaxSamplingMessages, MaxSamplingBytes, MaxServerRequestTime, the
//     SEP-1034 defaults) and one Served report each. The requests of one
//     answer are asked one after the other, in the order of their keys;
//     more than ConnectorOptions.Limits.MaxServerRequests in one answer are
//     refused whole.
//   - A request the session cannot answer is refused without asking any
//     handler, nor any other request of that answer: a capability no
//     handler declared (the server must not ask for it), a malformed
//     request, one past a bound. A handler's refusal (ErrRefused) or
//     failure stops the asking there. The spec gives a client no way to
//     tell the server (the server does not wait for a client that does
//     not send the call again), so the call ends: it fails with
//     ErrInputRequired, whose Detail says in agt's words what was asked
//     and why it could not be given, and it is not sent again. (A
//     legacy server's request refused the same way gets a JSON-RPC
//     error, and the server decides what its call returns.)
//   - An elicitation the user declines or dismisses is an answer, in
//     both eras: it goes back to the server (action decline or cancel),
//     which decides what the call returns.
//   - The requestState is sent back exactly as it came: its value is not
//     read, changed, logged, reported or put in an error. It must be a
//     JSON string of at most MaxRequestStateBytes (1 MiB, fixed) on the
//     wire, and valid Unicode text (a state holding bytes that are not
//     UTF-8, or an escaped lone surrogate, cannot be sent back exactly by
//     any JSON encoder); else the call fails with ErrBadResult, as it does
//     for an input_required result with neither inputRequests nor a
//     requestState, or with a request of another method. An answer
//     without a requestState is sent again without one; an empty one
//     too (the go-sdk leaves an empty requestState out). Like every
//     string a server sends, the state reaches the client with the
//     connection's secrets masked (see Secrets in what servers send).
//     An answer with a requestState and no request (a busy server) is
//     sent again at once.
//   - Rounds: at most ConnectorOptions.Limits.MaxInputRounds (default
//     defaultMaxInputRounds, 10) input_required answers of one call are
//     answered; the next fails the call with ErrInputRequired, unsent.
//   - Time: all the rounds are one call, within its bounds (see
//     Handshake and calls): the tool timeout is held while a handler
//     answers and starts again after it, and each input_required answer
//     restarts it as a progress notification does; the whole call, every
//     round and every handler's time included, ends at MaxCallDuration
//     (or tool_timeout_ms when that is longer), or with the caller's
//     context.
//   - Each round's request carries the call's progress token and
//     _meta, so progress and log lines of every round are the call's.
//     A tools/call answered with URL elicitation required in any round
//     is handled as above.
//
// prompts/get and resources/read may be answered with input_required
// too; agt sends neither.
//
// # Tasks
//
// A server may answer a tools/call with a task, a handle of work it goes
// on with, instead of the result (MCP tasks). CallTool follows the task
// to its end and returns exactly what the call would have returned at
// once: the result, its bytes as the server wrote them, or the JSON-RPC
// error of a failed task (a *jsonrpc.Error, errors.As). The caller sees
// no task unless it asks (Handlers.TaskStatus, WithTaskCall).
//
//   - Protocol 2026-07-28 (the extension io.modelcontextprotocol/tasks):
//     every request declares the extension, and the server decides per
//     call (resultType "task"). The task is polled with tasks/get; the
//     input an input_required task needs is asked through the Handlers
//     exactly as a multi round-trip request's (the same bounds, refusals
//     and Served reports; MaxInputRounds counts its rounds) and answered
//     with tasks/update; a completed task's result and a failed task's
//     error come with tasks/get.
//   - Protocol 2025-11-25: a tool whose execution.taskSupport is
//     "required", on a server that declares task-augmented tools/call,
//     is called as a task (params.task, Limits.TaskTTL); any other
//     tool is called as usual. The task is polled with tasks/get until it
//     ends or needs input, then tasks/result takes its result; the
//     server's requests meanwhile name their task (_meta
//     io.modelcontextprotocol/related-task), which ties them to the call.
//   - Polls: at the server's pollInterval, within
//     Limits.MinTaskPollInterval and MaxTaskPollInterval (1 s and 30 s;
//     twice the minimum, 2 s, when the server suggests none): an idle
//     task costs at most 60 requests a minute, 30 when the server
//     suggests nothing, and 2 at the least. Each answer restarts the call's idle timeout
//     (tool_timeout_ms) as progress does; MaxCallDuration bounds the
//     whole call, and the caller's context ends it.
//   - A call that ends before its task (its context, its timeout) sends
//     tasks/cancel (cooperative: the server may finish anyway), once,
//     bounded by 5 s. A session closed under the call does not: the task
//     goes on, and a later call with WithTaskCall(ctx,
//     &TaskCall{Resume: id}) collects it (a Run does this for its
//     stored tasks; see package run).
//   - Bounds: a task id is at most MaxTaskIDBytes; a status message is
//     cut to 1 KiB, its control characters replaced; a task answer that
//     is not one (no id, an unknown status, a tasks/get about another
//     task) fails the call with ErrBadResult and cancels the task. A
//     task in answer to a request that did not ask for one (2025-11-25)
//     is ErrBadResult too.
//   - A task the server cancelled fails the call with ErrUnavailable; so
//     does one the server no longer knows (its TTL lapsed: tasks/get is
//     refused).
//   - Status notifications (notifications/tasks through
//     subscriptions/listen, notifications/tasks/status) are not asked
//     for: polling is what the protocol requires of a client, and is
//     what agt does.
//
// # Protocol eras
//
// MCP has two eras. The modern one (ModernProtocolVersion, 2026-07-28,
// the current revision) has no handshake and no sessions: every request
// carries its protocol version, the client's capabilities and its
// identity in _meta, a server answers server/discover with the versions
// it speaks, and streamable HTTP is stateless. The legacy one
// (LegacyProtocolVersion, 2025-11-25, and earlier) opens with the
// initialize handshake. A Connector prefers the modern era and falls
// back to the legacy one, per transport as the spec's versioning page
// says, on the go-sdk's own dual-era Connect:
//
//   - stdio (and a Dial transport, whose Connection.Read must end when
//     its context does without losing a message, as the go-sdk's do):
//     server/discover is sent first. A result means a modern
//     server; an UnsupportedProtocolVersion error (-32022) names the
//     versions it speaks, and the go-sdk asks again with the newest one
//     agt speaks; any other error means a legacy server, which gets the
//     initialize handshake. A legacy server that ignores unknown methods
//     never answers: after ConnectorOptions.Limits.EraProbeTimeout (default
//     defaultEraProbeTimeout, 2 s) without an answer the server is taken
//     for a legacy one, so it costs that long, not the startup timeout
//     (measured: the timeout plus about 2 ms; a pinned or cached connect
//     of the same server, about 5 ms). A modern server whose answer
//     comes after the timeout (one slower to start) is started once
//     more, as modern, without the bound: its late result to
//     server/discover or its UnsupportedProtocolVersion refusal of the
//     fallback's initialize naming a modern version, whichever comes
//     first, tells.
//   - streamable HTTP: the same request, modern; an answer of 400 whose
//     body is a JSON-RPC error is read as such (a modern error keeps the
//     modern era), anything else (a plain-text 400, 404, 405) means a
//     legacy server, which gets initialize. SSE documents speak the
//     legacy era.
//   - A modern server that names no version agt speaks fails Connect
//     with ErrHandshake, saying which versions it named: it is never
//     sent initialize.
//
// The era found is cached per Connector: for a stdio server per
// registration and document (a changed document probes again), for a
// remote one per origin. The next Connect speaks it at once (a cached
// legacy era skips the probe); when a cached era fails (the server
// refused the handshake: it changed), the entry is dropped and Connect
// starts once more with the probe. Such a second start (here, and for a
// modern server slower than the probe) has its own startup_timeout_ms.
//
// A pin skips the detection: the document's protocol_version
// (resource.MCPServer.ProtocolVersion: a version, or "modern" or
// "legacy") or, for every server of the host, ConnectorOptions.ProtocolVersion;
// the document's wins. A legacy pin sends initialize at once; a modern
// pin never falls back (a legacy server fails Connect with ErrHandshake
// and a message that says to unpin). Session.ProtocolVersion, and the
// ProbeReport's ProtocolVersion, give the version spoken.
//
// In the modern era the go-sdk puts the required _meta keys on every
// request (io.modelcontextprotocol/protocolVersion,
// io.modelcontextprotocol/clientCapabilities: exactly what the Handlers
// declare, and io.modelcontextprotocol/clientInfo:
// ConnectorOptions.ClientInfo); the server's identity
// (Session.ServerInfo) and capabilities come from its server/discover
// result. A result's resultType is read: absent or "complete" is the
// result, "input_required" asks for input (see Multi round-trip
// requests), anything else fails the call with ErrBadResult. Every other
// rule of this package (bounds, the screen, exact bytes, secrets,
// errors, shared connections) holds in both eras unchanged.
//
// Over streamable HTTP the modern era has no session: agt sends no
// Mcp-Session-Id (a session id a server answers with is dropped, never
// sent back), opens no GET stream, sends no DELETE and no Last-Event-ID.
// Every POST carries MCP-Protocol-Version and Mcp-Method; a tools/call
// also Mcp-Name, the tool's name, Base64-encoded in the spec's
// =?base64?...?= sentinel when it is not plain visible ASCII (the go-sdk's
// own server compares the header without decoding it, so it refuses such
// a name). A tool may mark parameters of its inputSchema with
// x-mcp-header; a call then carries one Mcp-Param-{name} header for each
// marked parameter present (and not null) in its arguments: a string as
// is, an integer in decimal, a boolean as true or false, Base64-encoded
// in the sentinel when not plain visible ASCII or with leading or
// trailing white space, so that no value carries CR, LF or any other
// control character. agt builds these headers itself, from the arguments
// the call sends and the tool's definition in the session's latest
// listing (whichever lease of a shared connection listed it), and never
// lets one replace a header of the registration (the registration's
// value is sent; LoadTools leaves such a tool out, as its calls could
// not succeed) or touch Authorization. A registration cannot set the
// headers the client sets itself (resource refuses them). The headers of one call are
// bounded: 8 KiB for their names and encoded values together (HTTP
// servers commonly refuse requests whose headers pass 8 to 16 KiB). A
// call whose mirrored arguments would pass that bound, or that has an
// integer outside ±(2^53-1) or a value that is neither a string, an
// integer nor a boolean in a marked parameter, is not sent: CallTool
// fails with a *toolschema.ArgumentError naming the parameter (never
// its value), as a server would refuse the call without the header. Like
// every argument value, a mirrored value is never put in an error, a log
// or an audit record. A server that refuses a call's headers
// (HeaderMismatch, -32020: the tool changed since the listing, or the
// session never listed) gets the call once more after a new listing. On
// stdio and in the legacy era no Mcp-Param-* header exists.
//
// A tool whose x-mcp-header annotations break the spec's constraints (an
// annotation that is empty or not an HTTP token, used twice without
// regard to case, on a property whose type is not exactly "string",
// "integer" or "boolean", or not reached from the schema's root by
// properties keys alone) is left out by LoadTools with the reason (the
// go-sdk's client would drop it without one), in both eras and on every
// transport: its definition does not depend on how it is reached.
//
// A modern server's requests (elicitation, sampling, roots) come only
// inside input_required results (see Multi round-trip requests), answered
// by the same handlers; there each belongs to its call exactly, so the
// attribution of a legacy server's requests (Which call a message is
// about) and the refusal on a shared connection of a request that names
// no call are not needed.
//
// Change notifications: in the modern era a server sends
// notifications/tools/list_changed only on a subscriptions/listen
// stream the client opened (SEP-2575), which replaces the legacy
// standalone GET stream of streamable HTTP and a legacy server's own
// notifications on stdio. A session opens one exactly when the host
// wants them (Handlers.ToolsChanged is set) and the server's
// server/discover result declares tools.listChanged: one listen with
// toolsListChanged, opened right after the discovery (the go-sdk's),
// ended when the session closes; a legacy session opens none and keeps
// the GET stream and stdio as before. What comes on the listen is read
// like every other message of the session: MaxMessageBytes per message,
// MaxServerMessageRate for all the server sends on its own (a flood
// ends the session with a *LimitError), counted by Session.ToolsChanged
// and queued for the handler. Over HTTP the listen's POST never holds
// Connect (it is sent on the stream's first read, as the legacy GET
// stream is), and a server that opens nothing (an error, a JSON answer,
// a stream that ends) costs nothing more: the session works on without
// change notifications, and the listen is not opened again. Progress
// and log lines never come on the listen: they stay on the stream of
// their own request. Over HTTP the listen is not the call's stream, so a
// change made by a call may be read after the call's result (a Run
// re-lists at the next batch boundary then); on stdio it keeps its place
// among the call's messages, as in the legacy era. A modern server
// notifies only a listen it has acknowledged
// (notifications/subscriptions/acknowledged), and Connect does not wait
// for that: the session's first Session.Tools (a lease's too: it lists
// through its shared connection) does, before it sends tools/list, so a
// change the server makes after that listing is reported. The wait ends
// when the acknowledgement is read, the listen fails, is refused or
// ends (over HTTP; on stdio, the server answers it, with an error or a
// result), the session closes or ctx ends (Tools then fails),
// or at the latest after ConnectorOptions.Limits.EraProbeTimeout (default 2
// s): a server that declares tools.listChanged but never acknowledges
// costs that once per session, and a change it makes between Connect
// and the acknowledgement may then go unreported (the next change, or a
// new start, lists it). Later listings never wait; a legacy session, or
// one without Handlers.ToolsChanged, never does. Calls do not wait: a
// change a call makes before the acknowledgement is not reported.
//
// A lost request: in the modern era a streamable HTTP response stream
// that breaks before its answer loses the request for good (the revision
// has no Last-Event-ID resumption), while the session is fine (each
// request is its own POST). CallTool then sends a tools/call again,
// once, only where that cannot repeat an effect: when the request never
// left (the POST failed before it was written whole), or when the
// session's last listing (Session.Tools) marks the tool readOnlyHint or
// idempotentHint (a tool this session has not listed is not known, so
// it is not sent again). The second request has a new JSON-RPC id, the
// same arguments and progress token, and the first one's tool timeout
// and longest call time. Otherwise the call fails with ErrUnavailable saying
// the outcome is unknown (the tool may or may not have run), the session
// is not lost, and nothing is sent again: sending a call with side
// effects twice is the duplicate no restart makes either. The hints are
// the server's word, read from its listing, not a guarantee: a hostile
// or careless server that marks a tool with side effects read-only gets
// it run twice when its own stream breaks, which it could as well do by
// itself; a host that cannot accept that registers no such server. A
// request that again could not be sent loses the session (the server is
// out of reach); one sent again whose stream breaks again fails with the
// outcome unknown. The legacy era keeps its resumption: the go-sdk
// resumes a stream whose server gave event ids (with Last-Event-ID, at
// the bounded reconnection rate above); a stream without them that
// breaks loses the connection (ErrUnavailable, Session.Lost), and
// nothing is sent again. A modern server that gives its events ids all
// the same is read as one that gives none: agt drops the id lines of a
// modern request's stream before the go-sdk reads it (which would resume
// the stream with a GET, refused by a modern server, and then fail the
// whole connection), so its broken stream takes the rule above and the
// session lives on.
//
// A listing's ttlMs and cacheScope are used across sessions (see Listing
// cache). A session with Handlers.Log asks
// a modern server for its log lines on each tools/call
// (io.modelcontextprotocol/logLevel in _meta, at Handlers.LogLevel), not
// with logging/setLevel, which the modern era does not have.
//
// # Listing cache
//
// A modern server says how long its tools/list result stays fresh (ttlMs)
// and who may reuse it (cacheScope, MCP 2026-07-28 caching, SEP-2549). A
// Connector keeps such listings, so that another session of the same
// registration within that time (a Run's mount, a probe: the Prober's
// ProbeReport.ListingCached says so) sends no tools/list and gets the
// same exact bytes; given the same SchemaCache (agt.Host shares one), it
// compiles nothing either. The rules:
//
//   - Only in the modern era, and only for a session given
//     ConnectOptions.Revision (a Run's mounts; the Prober passes the
//     revision it read): a legacy listing is listed every time, whatever
//     fields it carries.
//   - A listing answers the same registration, revision and document,
//     listed at the same protocol version by a client declaring the same
//     capabilities (the Handlers set, the log level): a server may list
//     other tools for another client.
//   - cacheScope "public" lets it serve any credentials. Anything else
//     ("private", absent, unknown) keeps it to the credentials it was
//     listed with: for stdio the server's arguments and environment as
//     started (secrets resolved), for HTTP its URL and headers as
//     resolved; a private listing of a server with OAuth (its token
//     changes under it) or reached through ConnectorOptions.Dial (its
//     credentials are the host's transport's) is not kept at all.
//   - Fresh while now < the walk's start + the least ttlMs of its pages.
//     0, negative or absent is stale at once; a longer one is capped at
//     ConnectorOptions.Limits.MaxListingTTL (default 10
//     minutes), compared before any arithmetic, so no ttlMs overflows.
//     MaxListingTTL below 0 turns the cache off. A ttlMs the go-sdk
//     cannot read as an integer (a float, past int64, a string) fails
//     the listing as malformed, naming the member; the connection lives.
//   - A notifications/tools/list_changed read by any session of the
//     registration drops its listings at once, and a walk in progress
//     then is not kept; so does a call the server refuses as an unknown
//     tool or invalid params (-32602) or for its headers
//     (HeaderMismatch, -32020): the tool is no longer as listed. A newer
//     revision of the registration drops the older one's, and a session
//     of an older revision keeps none.
//   - Bounded: at most 256 listings of 64 MiB together, a listing of more
//     than 8 MiB is not kept; a new one goes in after the expired ones,
//     then those that expire soonest, are dropped. A listing handed out is
//     a copy.
//
// The go-sdk keeps a cache of its own per session, keyed by cursor and
// trusting any ttlMs, whose answer carries no wire copy (neither the exact
// bytes nor the walk's bounds). A Session never lets it answer: it reads
// each page's ttlMs and cacheScope, then sets the ttlMs of the result the
// go-sdk keeps to 0 (stale), so every walk that the Connector's cache
// does not answer reaches the server.
//
// # Shared connections
//
// A host that serves many conversations starts one Run per conversation,
// and each Run would start its own process for every stdio server it
// mounts. A registration can opt in to sharing: with "shared": true in
// its document (resource.MCPServer.Shared), Connect given
// ConnectOptions.Share (a Run asks for it, with the revision it read in
// ConnectOptions.Revision) returns a lease on one connection the
// Connector keeps for (reference, revision, the document's digest, the
// capabilities the Handlers declare and their log level). Sharing is
// never on by default: without the field, or without Share (the Prober: a
// probe tests a fresh start), every session is its own.
//
// What sharing means: the calls of every session on the connection, that
// is of every conversation and user of the host, meet in one server
// process. Whatever the server keeps between calls is theirs together: a
// working directory it changes, a login or cookie, an open browser page,
// a database transaction, files it writes, what it remembers. Share only
// servers that keep no state of a user's (a filesystem view of fixed
// directories, fetch, search, time). Its stderr tail (Session.StderrTail,
// the tails in errors) holds what the server wrote during everyone's
// calls. Its secret references are resolved once, when the connection
// starts, under the context of the session that started it: a host whose
// SecretResolver answers per user must not share that server.
//
// Each lease is a Session of its own: its Handlers, its calls, its Close.
// Tools lists the tools on the shared connection (one walk at a time, a
// cheap request; a lease waits for another's walk only as long as its
// own context lets it), so each caller keeps its own snapshot; CallTool calls
// of all leases run concurrently. Close of a lease ends its calls in
// flight only (ErrUnavailable) and never the connection under another
// lease. When the last lease closes, the connection stays open for
// ConnectorOptions.Limits.SharedIdleTimeout (default 30 s) for the next session
// to take, then closes. A new revision, or another document, is a new
// connection; the connections of older revisions of the reference close
// as soon as their last lease does, without the idle time, in the
// background: Close of a lease never waits for a process to end.
// Connector.Close closes every shared connection (agt.Host.Close calls
// it; a lease still open sees it lost), and refuses new shared sessions
// with ErrUnavailable.
//
// What the server sends goes to the lease of the call it names (see
// Which call a message is about, above), or to none: which calls happen
// to be in flight never decides it. So what holds depends on the
// transport: over streamable HTTP a request or log line sent during a
// call goes on that call's stream and reaches its lease; over stdio and
// SSE only a server that sets _meta relatedRequestId or progressToken
// gets its requests answered on a shared connection, and its unnamed log
// lines reach the Connector's Logger, not a session.
//
//   - Progress names its call (by token): it goes to that call's lease.
//   - A request (elicitation/create, sampling/createMessage, roots/list)
//     goes to the handler of the lease of the call in flight it names,
//     with that call only in Incoming.Calls, whatever other sessions'
//     calls are in flight. One that names no call is refused
//     (OutcomeRefused, with the reason), however many calls are in
//     flight, even one; it is reported to no lease's Served and logged
//     ("agt.shared_server_request", to ConnectorOptions.Logger, bounded
//     as below). One that names a call that has returned is refused too,
//     and reported to that call's lease. So one user's elicitation never
//     reaches another user's handler, including one a server sends late,
//     about a call that returned while another user's call is in flight.
//     roots/list is answered the same way (never empty outside a call),
//     and NotifyRootsChanged of a lease sends nothing: a shared server
//     learns a session's roots only by asking for one of that session's
//     calls. A modern server's requests always name their call: they
//     come inside the result of the call's own request (see Multi
//     round-trip requests), on every transport.
//   - A log line goes to the Log handler of the lease of the call it names
//     (in flight, or one of the last to return); one that names none goes
//     to ConnectorOptions.Logger ("agt.shared_server_log": mount, level,
//     logger, data), at most a burst of 100 then 20 lines per second per
//     connection, the rest counted (dropped_before), never to a session.
//   - tools/list_changed goes to the ToolsChanged handler of every lease
//     (each lists again for itself); Session.ToolsChanged counts the
//     connection's notices.
//
// A server that exits, or a connection that is lost, is seen by every
// lease (Lost, ErrUnavailable): the calls of every lease in flight then
// fail with ErrUnavailable, all of them, whichever lease's call caused
// it, and they are not sent again. One user's call that crashes the
// server loses the other users' calls in flight with it; share only a
// server that does not crash. Session.Loss says whose the loss is: a
// lease whose calls were in flight (they failed with it) is charged, a
// lease with none is not (a Run counts only a charged loss against its
// MaxRestarts, so one user who crashes the server again and again does
// not spend another's restarts); a loss with no call in flight is
// charged to no lease. Loss.Count counts the losses of the registration's
// connection in a row, all leases together, so a server in a crash loop
// shows it (a Run audits it, see package run). The first Connect for
// it afterwards starts one new process and the others take leases on it:
// a crash costs one restart, however many sessions used the server. The
// bounds of a connection hold for all its leases together:
// MaxServerRequests requests answered at once, the notification queue,
// the message rate. The notification handlers of all its leases run one
// at a time, in the order the server sent: one lease's slow handler
// delays the others', and past the queue's 256 their notifications are
// dropped (Session.NotificationsDropped counts the connection's).
//
// # Secret references
//
// A document keeps credentials out of its text with references, resolved
// only when the server starts (a Run's mount or refresh, a probe, the
// CLI), in the arguments, environment and headers handed to the process
// or the HTTP client, and never written back:
//
//   - ${env:NAME} reads NAME from the host's environment (Environ), only
//     for a registration ConnectorOptions.LaunchEnv.SecretEnv binds it to (REF=NAME,
//     like "gh=GH_TOKEN"; "*=NAME" for every registration); the default
//     list is empty, so no name is readable until the host says so, and
//     a server an agent registers reads none the host did not bind to it.
//   - ${secret:NAME} asks ConnectorOptions.LaunchEnv.Secrets, a resource.SecretResolver
//     the host provides, with the registration's reference: a host binds
//     each secret to the servers allowed to use it. Nil means none.
//   - $${ is a literal ${. Literal values keep working.
//
// A reference that cannot be resolved (a name not allowed or unset, no
// resolver, a failing resolver, a value holding NUL, or a line break in a
// header) fails the start with ErrSecret before anything is started or
// contacted. The message names the field and the reference as written and
// says what to set; it never holds a resolved value nor the resolver's own
// error text. Resolved values live only in the started process, in the
// session's round tripper, and in the session's scrubber (see Secrets in
// what servers send): no Error, ProbeReport or stderr tail text of agt's
// own holds them, and what the server sends back is scrubbed of them. The
// Dial option receives the document as stored, references unresolved.
//
// # Secrets in what servers send
//
// A server may send back what it was given: a token it echoes in a
// result, an error that quotes its Authorization header, a log line or
// stderr that prints its environment. Every session scrubs the values of
// its own connection from everything its server sends, before anything
// above mcpconn sees it (results, errors, the model, the audit, slog,
// OTel, the CLI):
//
//   - The values: each value a ${secret:...} or ${env:...} reference
//     resolved to for this start (in args, env and headers), and the
//     document's literal credentials (resource.CredentialValues: every
//     env value's literal text, credential headers, what
//     resource.MaskArgs hides in args, the url's user info and credential
//     query values; a "Bearer x" value gives x too). They live in the
//     session only, as the forms matched, and are never logged. A value
//     shorter than MinScrubbedBytes (8) is not scrubbed, since it would
//     mask ordinary words and numbers. The values of other registrations,
//     OAuth tokens (the go-sdk's handler gets and refreshes them during
//     the session) and a Dial transport's references (never resolved)
//     are not among them. A shared connection scrubs the values of its
//     one registration for every lease.
//   - The forms: each value as is and in any letter case (ASCII letters
//     in any mix, and the value's Unicode upper and lower case), hex
//     (either case), URL-escaped (query and path escaping), escaped as a
//     JSON string's contents, and base64 in the standard and URL
//     alphabets, padded or not, alone or at any of the three alignments
//     inside a longer base64 text (an image's data).
//     Matching is on each string's decoded text, so JSON escapes on the
//     wire hide nothing. A value split in two between the end of one
//     string and the start of a later string of the same message (two
//     text blocks) is masked in both; so is a piece of at least
//     MinScrubbedBytes that is half of a form or more at either end of a
//     string, wherever the rest went. Other encodings (gzip, encryption,
//     double base64, reversed text, a value in three pieces, pieces in
//     two messages smaller than half) are not recognised, nor a value
//     written as a JSON number.
//   - Where: in the screen that judges every message before the go-sdk
//     reads it (see Limits: MaxMessageDepth), first, on every message (an
//     answer, an error, a server's request, a notification), so every
//     channel above it sees scrubbed bytes: results, isError text,
//     JSON-RPC errors, the handshake's serverInfo and instructions (and
//     the ProbeReport), the tool listing (names, titles, descriptions,
//     schemas, _meta), elicitation and sampling requests, log and
//     progress notifications. On stdio each stdout line, on streamable
//     HTTP and SSE each event of an event stream (its data as JSON, its
//     other lines as text) and each other response body, on a Dial
//     transport each message as it is read. A stdio server's stderr tail
//     and the stdout it printed before the handshake are scrubbed as
//     text, with a piece of a value of at least 4 bytes masked where agt
//     cut the text.
//   - How: each JSON string that holds a form is rewritten with the bytes
//     that encode it replaced by resource.Mask ("[redacted]", one mask
//     for touching matches); every other byte of the message stays as
//     sent (other escapes, key order, numbers). A base64 text with a mask
//     no longer decodes (ImageContent.Decode fails). Object keys are
//     scrubbed too, but never counted as half of a split value.
//   - Cost: one pass of an Aho-Corasick automaton over each string's
//     decoded bytes and a pass over the start of each string (at most the
//     longest form), whatever the number of values; a message with
//     nothing to mask is handed on unchanged. A result of 1 MiB with four
//     occurrences and three values costs about 1.07 times the call without
//     scrubbing (BenchmarkScrub). A message that masking makes longer is
//     still bounded by MaxMessageBytes as sent.
//
// # OAuth
//
// A remote document with an "oauth" field (resource.MCPOAuth) is
// reached with OAuth 2.1, on the go-sdk's auth.AuthorizationCodeHandler
// set as the transport's OAuthHandler: the protected resource metadata
// (RFC 9728, from WWW-Authenticate or the well-known URLs) names the
// authorization server, whose metadata (RFC 8414, with the OpenID
// Connect fallback and the 2025-03-26 paths) gives the endpoints; the
// client is, in the order of the 2026-07-28 client registration or as
// oauth.registration says, the pre-registered one (client_id,
// client_secret), else the one of the client ID metadata document
// (oauth.client_metadata_url, else OAuthOptions.ClientMetadataURL) when
// the authorization server advertises
// client_id_metadata_document_supported (no registration request), else
// one registered dynamically (RFC 7591; deprecated, for authorization
// servers without metadata documents). A dynamic registration sends
// application_type (SEP-837): "native" for a loopback (127.0.0.1,
// [::1], localhost) or custom-scheme RedirectURL, the default's case,
// "web" for any other; the go-sdk infers it from the redirect URI;
// the authorization uses PKCE and the resource parameter (RFC 8707), the
// scopes of oauth.scopes, else those the server names, with
// offline_access when the authorization server offers it. The go-sdk's
// SSE transport has no OAuth hook: for a document of type "sse" agt's
// round tripper does the same (the token on every request; on a 401 or
// 403, the flow once and the request again), above the round tripper
// that keeps requests on the registered origin and bounds every response
// body, so the 401 or 403 the flow reads is bounded by MaxMessageBytes
// too.
//
// Tokens are credentials, not configuration: they live in
// OAuthOptions.Tokens (a resource.TokenStore; nil means an in-memory
// store for the Connector's life), under the registration's reference,
// never in a document, an error, a probe report or the audit. mcpconn
// owns what it stores there: the token, the refresh token, the client a
// dynamic registration obtained, the token endpoint, and the url the
// token was obtained for (a document whose url changed does not send
// it). A pre-registered client's secret is never stored: it stays behind
// its ${secret:NAME} reference. A Connect uses a stored token while it is
// valid and refreshes it when expired, optimistically: it reads the
// stored credential, makes the refresh request with no store lock held
// (TokenStore.Update must be quick), then writes the new token only if
// the stored refresh token is still the one it used; otherwise another
// Run refreshed meanwhile and its token is used. Within a Connector the
// refreshes of one registration are serialised, so its Runs refresh once;
// other registrations are not held up. A refresh the authorization server
// refuses (revoked, expired) drops the token from the store and is a
// login required; a Run whose refresh of that same refresh token
// succeeded meanwhile (another process; the refusal was its rotation)
// stores its token over the refusal, so a rotated login is not lost. A
// refreshed token the store fails to write is kept in memory for the
// connection (its refresh token may have replaced the stored one).
//
// A stored credential is bound to the authorization server that issued
// it (SEP-2352): a login stores the issuer the server's protected
// resource metadata named with the token, the refresh token, the
// dynamically registered client and the DPoP key, beside the server
// url. Once the server names another issuer (seen by the discovery after
// a 401 or 403, or, before a refresh in a connection that has not
// discovered yet, by one request for the server's metadata) the
// credential is neither sent nor refreshed: no token, refresh token,
// client ID or client secret of the old issuer goes to the new one, nor
// to the old one again. The request goes without a token, and the flow
// registers a new client with the new authorization server (or uses the
// client ID metadata document, which is portable across issuers, or the
// pre-registered client where the issuer rule below lets it go there)
// and needs a new login: Connect with an Authorize step logs in, without
// one it fails with ErrLoginRequired. The new login replaces the stored
// credential (one per registration reference). A DPoP key never serves
// two issuers: a flow toward another issuer generates a new one. A
// changed oauth.authorization_server also makes the stored login of the
// pre-registered client unusable: a login required, not an error. A
// credential stored before issuers were kept names none; it is used, and
// refreshed at its own token endpoint only, until a connection
// discovers the issuer (after a 401 or 403) or the next login stores one. The
// grants without a person store nothing: they discover the authorization
// server at each flow and apply the issuer rule below each time. The
// host configures nothing for this.
//
// The interactive step belongs to the host. OAuthOptions.Authorize gets
// the authorization URL and returns an AuthorizationResponse: the code,
// state and iss (RFC 9207; "" when absent) of the redirect to
// OAuthOptions.RedirectURL (default DefaultOAuthRedirectURL,
// http://127.0.0.1/callback); the host opens a browser, shows a link, or
// (in tests) follows the URL itself. Without it, a Connect to a server
// that needs a login (none stored, logged out, revoked) fails with
// ErrLoginRequired before any request to the authorization server:
// that is how a Run's mount reports it. The iss is the mix-up defence:
// an authorization server that advertises
// authorization_response_iss_parameter_supported must send its own
// issuer, one that does not must send none, else the login fails.
// Connector.Login runs the flow now (with LoginOptions.Authorize or
// OAuthOptions.Authorize, ignoring a stored token), lists the tools, and
// stores the credential, all within LoginOptions.Timeout (default
// DefaultLoginTimeout, 10 minutes, in place of startup_timeout_ms: a
// person has to act); Connector.Logout deletes it.
//
// The client_credentials grant (oauth.grant, for machine-to-machine
// hosts: the extension the go-sdk's client lacks) asks the token endpoint
// for a token with the pre-registered client's secret
// (client_secret_basic, or client_secret_post) or a client assertion
// signed with oauth.private_key (private_key_jwt, RFC 7523: a PEM RSA key
// signs RS256, an EC P-256 key ES256; audience the authorization server's
// issuer, valid for five minutes), each time the last token expired; it
// stores nothing and needs no login.
//
// The enterprise grant (oauth.grant "enterprise", enterprise-managed
// authorization) takes the host's ID token from OAuthOptions.IDToken,
// exchanges it at the token endpoint of oauth.idp_issuer's metadata
// (RFC 8414 or OpenID Connect discovery, issuer checked) for an identity
// assertion grant (RFC 8693: audience the authorization server's issuer,
// resource the server), and trades that for the access token with the
// pre-registered client (RFC 7523 jwt-bearer grant, client_secret_basic
// or client_secret_post as the authorization server supports), each time
// the last token expired; it stores nothing. Without IDToken the
// connection fails with ErrLoginRequired.
//
// The workload_identity grant (oauth.grant "workload_identity", workload
// identity federation, SEP-1933: a host on Kubernetes or a cloud with no
// person) resolves oauth.assertion, a ${secret:NAME} reference, through
// ConnectorOptions.LaunchEnv.Secrets at each exchange (not once at Connect), and
// trades that workload identity token for the access token with the
// jwt-bearer grant of RFC 7523 (grant_type
// urn:ietf:params:oauth:grant-type:jwt-bearer, the token as assertion,
// the server as resource) at the token endpoint the server's metadata
// leads to, each time the last access token expired. The host's resolver
// is the callback: one that reads a file (a projected service account
// token the kubelet rotates) reads it again at each exchange, so a
// rotated token is used. oauth.client_id, when set, is sent in the body
// (with oauth.client_secret, the client authenticates as for
// client_credentials). The access token stays in memory for the
// connection and is never stored: it can always be obtained again from
// the workload token. A refused exchange fails the connection once, with
// no retry and no other grant tried (no grant without a person runs its
// exchange twice in a connection); a token the resolver cannot give fails
// it naming oauth.assertion and the reference. The workload token is a
// credential: it goes only where a client secret may (below), and appears
// in no error, audit entry or read of the registration (which shows the
// reference).
//
// Sender-constrained tokens (DPoP, RFC 9449; the MCP extension
// io.modelcontextprotocol/auth/dpop): when the authorization server's
// metadata lists ES256 in dpop_signing_alg_values_supported, every
// grant's token request carries a DPoP proof of a P-256 key the
// connection generates, and a token the server issues as token_type
// DPoP is presented with the DPoP Authorization scheme (never Bearer)
// and a fresh proof on each request to the MCP server (jti random, iat,
// htm, htu without query or fragment, ath of the token, the server's
// nonce when it gave one). A use_dpop_nonce refusal (the token
// endpoint's 400, or the MCP server's 401 with WWW-Authenticate DPoP
// error="use_dpop_nonce") with a DPoP-Nonce is answered by sending the
// request once more with that nonce; a second refusal is the request's
// answer. A nonce longer than 512 bytes or with characters outside
// printable ASCII is ignored. The key is stored with the token
// (PKCS #8 inside the stored credential), so a restarted host keeps
// using its stored token and refreshes it with the same key; it is
// never put in an error, a probe report or the audit, and only the
// public key leaves the process, in the proofs. The client_credentials
// and enterprise grants store nothing: their key lives with the
// connection.
//
// The server's metadata names the authorization server, so a configured
// client secret, private key or workload token (oauth.client_secret,
// oauth.private_key, oauth.assertion) goes only to an authorization server whose issuer equals
// oauth.authorization_server or, when that is not set, whose origin
// (scheme, host, port) is the MCP server's; any other fails the flow
// before the secret or an assertion is sent, with an error naming
// oauth.authorization_server. The issuer checked at login is stored with
// the credential, and a stored login of the pre-registered client is used
// (and its secret sent with a refresh) only while the rule still lets the
// secret go there. Public clients (no secret, no key) follow the
// discovery.
//
// Every request of the OAuth flow (metadata, registration, token) goes
// through one client per Connector, over ConnectorOptions.HTTPTransport:
// any origin (the authorization server is another host), but no redirect
// is followed, each request is bounded by OAuthOptions.RequestTimeout and
// each response by OAuthOptions.MaxResponseBytes. Its URLs come from the
// server's metadata, so for an MCP server on a public address the flow
// dials public addresses only: a private, loopback, link-local or
// reserved address is refused at dial time (after name resolution); an
// MCP server on such an address itself (an internal or loopback server)
// may name an authorization server there too. The check needs an
// *http.Transport without a proxy (with the transport's own DialContext,
// the address it reached is checked before anything is sent); a host
// whose HTTPTransport is another RoundTripper, or proxies, has taken over
// dialing and checks it there. The authorization server is not subject
// to the launch allowlist: the allowlist admits the MCP servers a host
// registers, while the authorization server is the one that server
// names, bounded by this dial check and, for a client secret or key, by
// oauth.authorization_server. Its errors are
// rendered without values: the token endpoint's answer is reduced to its
// status and standard error code, URLs to their scheme and host, quoted
// values and response bodies are dropped, the host's Authorize error
// is not shown, and what remains of the server's text is cut at 512 bytes
// with its control characters (escape sequences, bidirectional
// overrides) replaced by U+FFFD, as in every server text an error quotes. A flow that fails wraps ErrHandshake and ErrUnauthorized.
//
// # Limits
//
//   - A secret reference's NAME: resource.MaxSecretNameBytes (128); a
//     resolved value: resource.MaxSecretValueBytes (64 KiB), fixed.
//
// A server is hostile until its bytes are bounded. Each bound below is
// checked while the bytes arrive, before the go-sdk decodes them, by one
// wire layer that reads every transport's bytes once: a stdio line, an
// HTTP event stream, framed by one SSE scanner with the go-sdk's own
// rules (a line ends at LF and the CRs before it are dropped, so CRLF
// works and a lone CR ends no line), or an application/json body, read with one JSON scanner that
// keeps no stack. The bounds, the rate, the screen (Messages the decoder
// refuses), the capture of results and listings, the mark that ties a
// request to its call's stream, and the retry clamp see each message
// there once. A server past one ends its session (calls in flight and later ones fail with
// ErrUnavailable), and the error wraps ErrLimit and a *LimitError that
// names the option to change.
//
//   - One message: ConnectorOptions.Limits.MaxMessageBytes, default 16 MiB
//     (defaultMaxMessageBytes), whatever the transport: a stdio line, an
//     HTTP response body (errors included), one server-sent event.
//   - Messages the server sends on its own (notifications and requests to
//     the client; replies are not counted):
//     ConnectorOptions.Limits.MaxServerMessageRate, default 1000 per second
//     (defaultMaxServerMessageRate) after a burst of ten seconds' worth. A
//     server past it is closed as misbehaving.
//   - One tools/list walk, all pages together: ConnectorOptions.Limits.MaxTools,
//     default 10000 tools (defaultMaxTools), counted in each page's bytes
//     before the page is decoded, and ConnectorOptions.Limits.MaxListBytes,
//     default 32 MiB (defaultMaxListBytes). A walk also stops after 1000
//     pages or at a repeated cursor.
//   - One message's nesting: at most MaxMessageDepth (1000, fixed)
//     levels of arrays and objects, the go-sdk decoder's own bound. This
//     one costs a request, not the session (see Messages the decoder
//     refuses): a tools/call answer nested deeper fails its call with
//     ErrBadResult and ErrLimit; a tools/list page nested deeper is read
//     without each tool that nests more than 997 levels (the message, its
//     result and the tools array are the other 3), which LoadTools leaves
//     out with the reason, while the page's other tools are offered; any
//     other answer fails its request with a JSON-RPC error naming the
//     bound; a request or notification of the server's is dropped.
//   - One tool result: at most MaxContentBlocks (10000, fixed) content
//     blocks; more fails the call with ErrBadResult and ErrLimit (the
//     session stays). The wire copy of a result kept for its call is one
//     message, so at most MaxMessageBytes per call in flight.
//   - One tool: CheckTool refuses a name over MaxToolNameBytes (256
//     bytes), a title or annotations.title over MaxToolTitleBytes (1 KiB),
//     a description over MaxToolDescriptionBytes (32 KiB), an outputSchema
//     over MaxToolOutputSchemaBytes (1 MiB) or a _meta over
//     MaxToolMetaBytes (64 KiB); fixed. LoadTools, the one path by which
//     the Prober and a Run take a listing, leaves such a tool out with the
//     reason, as it does the second tool of a name, a tool that requires
//     tasks, a tool nested too deep for its page (see the nesting above)
//     and a tool whose schema fails under ConnectorOptions.Schema.
//   - The _meta fields a caller adds to a tools/call request
//     (WithRequestMeta): at most MaxRequestMetaKeys (16) fields of
//     MaxRequestMetaBytes (4 KiB) of keys and values together, fixed; the
//     rest are dropped, not an error.
//   - Compiling one listing's schemas: identical inputSchema bytes are
//     compiled once; the distinct ones on at most GOMAXPROCS goroutines
//     at a time (one per four schemas, the caller's goroutine included,
//     so a listing of up to four starts none); each schema within
//     toolschema's limits (ConnectorOptions.Schema). Fixed. A SchemaCache
//     keeps at most SchemaCacheMaxEntries (4096) compiled schemas of
//     SchemaCacheMaxBytes (16 MiB) source bytes, then starts over.
//   - The listing cache (see Listing cache): at most 256 listings of 64
//     MiB together, none over 8 MiB, each fresh for at most
//     ConnectorOptions.Limits.MaxListingTTL (default 10 minutes) whatever ttlMs
//     the server sent. Fixed, but for MaxListingTTL.
//   - The server's instructions (the handshake's instructions): at most
//     MaxInstructionsBytes (32 KiB) are kept, cut at a UTF-8 boundary
//     (Session.InstructionsTruncated); fixed.
//   - Tool selection: an item of enabled_tools or disabled_tools is at
//     most resource.MaxToolPatternBytes (256) and a name longer than that
//     matches no item, so one match costs at most 256 x 256 steps.
//   - Time: startup_timeout_ms (default 30 s) bounds start and handshake,
//     tool_timeout_ms (default 60 s) one call or one tools/list walk,
//     reconnections of its streams included.
//   - Streamable HTTP reconnections: the wait a server asks for with its
//     retry field, ConnectorOptions.Limits.MaxReconnectDelay, default 30 s
//     (defaultMaxReconnectDelay; a longer one is held to it, a retry line
//     over 64 bytes is dropped); the rate of reconnections of one event
//     stream: ConnectorOptions.Limits.ReconnectBurst at once, default 10
//     (defaultReconnectBurst), then one per
//     ConnectorOptions.Limits.MinReconnectInterval, default 1 s
//     (defaultMinReconnectInterval); a reconnection sooner waits.
//   - A stdio server's stderr: the last ConnectorOptions.Limits.StderrTailBytes
//     (default 8 KiB) are kept.
//   - A shared connection without a lease: closed after
//     ConnectorOptions.Limits.SharedIdleTimeout, default 30 s
//     (defaultSharedIdleTimeout). Its server's lines that belong to no one
//     lease: at most a burst of 100, then 20 per second, to
//     ConnectorOptions.Logger; fixed.
//   - OAuth: one response of the flow (metadata, registration, token):
//     OAuthOptions.MaxResponseBytes, default 1 MiB
//     (DefaultMaxOAuthResponseBytes); one request:
//     OAuthOptions.RequestTimeout, default 30 s
//     (DefaultOAuthRequestTimeout); no redirect is followed. A credential
//     read from the token store over MaxStoredCredentialBytes (256 KiB,
//     fixed), or one that does not decode, counts as no login. A login:
//     LoginOptions.Timeout, default 10 minutes (DefaultLoginTimeout).
//     These fail the flow (ErrUnauthorized, the message names the option)
//     rather than wrap ErrLimit.
//
// What a server asks of the client is bounded too; a request past a bound
// is refused (the session goes on), and Handlers.Served names the option:
//
//   - Requests answered at once (elicitation, sampling, roots):
//     ConnectorOptions.Limits.MaxServerRequests, default 4
//     (defaultMaxServerRequests); more are refused at once, so a server
//     flooding elicitations meets at most four dialogs. A URL
//     elicitation required answer that lists more elicitations than that
//     is refused whole (one Served report).
//   - One answer's time: ConnectorOptions.Limits.MaxServerRequestTime, default
//     10 minutes (defaultMaxServerRequestTime), besides the ends above.
//   - Multi round-trip requests (modern era): the input_required answers
//     of one call, ConnectorOptions.Limits.MaxInputRounds, default 10
//     (defaultMaxInputRounds); one requestState, MaxRequestStateBytes
//     (1 MiB, fixed); past either the call fails (ErrInputRequired,
//     ErrBadResult with ErrLimit) and is not sent again.
//   - One elicitation (message, url and requested schema as JSON):
//     ConnectorOptions.Limits.MaxElicitationBytes, default 64 KiB
//     (defaultMaxElicitationBytes).
//   - One sampling request: ConnectorOptions.Limits.MaxSamplingMessages, default
//     100 messages (defaultMaxSamplingMessages), and
//     ConnectorOptions.Limits.MaxSamplingBytes, default 1 MiB as JSON
//     (defaultMaxSamplingBytes).
//   - The server's text in one progress or log notification handed to a
//     handler: ConnectorOptions.Limits.MaxNotificationBytes, default 8 KiB
//     (defaultMaxNotificationBytes; a log line's data larger as JSON
//     arrives as a string of its start and "..."); a logger name, 256
//     bytes.
//   - Notifications waiting for their handlers (Progress, Log,
//     ToolsChanged, one queue per session): 256, fixed; more are dropped
//     and counted (Session.NotificationsDropped), so a slow handler
//     under a flood holds at most 256 notifications of at most
//     MaxNotificationBytes of text each. A dropped progress still
//     restarted its call's idle timeout; a dropped tools/list_changed is
//     still counted by Session.ToolsChanged.
//   - One call whose server reports progress:
//     ConnectorOptions.Limits.MaxCallDuration, default 10 minutes
//     (defaultMaxCallDuration), or tool_timeout_ms when that is longer.
//
// # Handshake and calls
//
// The handshake (server/discover, or initialize; see Protocol eras) is
// bounded by the document's startup_timeout_ms (default 30 s). tools/list is bounded by
// tool_timeout_ms (default 60 s). A tools/call is bounded by
// tool_timeout_ms as an idle timeout, like the TypeScript SDK's
// resetTimeoutOnProgress with maxTotalTimeout: each progress notification
// for the call restarts it, and it is held while a handler answers a
// request of the server for the call; the whole call never lasts longer
// than ConnectorOptions.Limits.MaxCallDuration (default 10 minutes) or
// tool_timeout_ms, whichever is longer. A server that reports no progress
// gets exactly tool_timeout_ms. When a bound or the caller's context ends,
// the request is cancelled on the server too (notifications/cancelled).
// WithRequestMeta adds string fields to the params._meta of the
// tools/call requests made under a context (the W3C trace context, for
// one): never progressToken or a key MCP reserves, only valid _meta keys,
// at most MaxRequestMetaKeys (16) fields of MaxRequestMetaBytes (4 KiB)
// together; the rest are dropped, not an error.
// Tools returns each inputSchema, outputSchema and _meta as the
// exact bytes the server sent (captured from the wire, not re-encoded from
// a map), so key order and large integers survive, with the tool's title,
// annotations and execution.taskSupport. Session.Instructions holds the
// server's instructions: the server's text, which a host may show a model
// (run.Run.Instructions hands them on per mount).
//
// # Tool selection and tools agt cannot call
//
// LoadTools turns a listing into usable tools for the Prober and a Run
// alike, so they never disagree:
//
//   - The registration's enabled_tools and disabled_tools (names or globs
//     with * and ?; see package resource) choose the tools offered: a tool
//     they leave out is neither listed nor callable in a Run, and is not
//     an error; ProbeReport.Excluded counts them (a Run does not report
//     them: that is its configuration, not a failure).
//   - A tool whose execution.taskSupport is "required" loads as any
//     other: CallTool calls it as a task (see Tasks).
//
// Compiling the schemas is the part of a probe that costs CPU: a Prober
// closes the session (its process ends) while it compiles, keeps what it
// compiled in a SchemaCache (ProberOptions.SchemaCache; agt.Host shares
// one with its Runs), and compiles identical bytes of one listing once.
//
// # Tool results
//
// CallTool reads each result from the exact bytes the server sent, not
// from the go-sdk's decoding. Every transport captures them: on stdio,
// SSE and Dial the connection notes the id of each tools/call request of
// a call in flight (the call's context reaches Connection.Write) and keeps
// the result of the response with that id; on streamable HTTP the round
// tripper reads the id at the head of the POST body (not the arguments
// where, as the go-sdk writes them, they come after it) and keeps the
// result from the response body, whether an
// event stream, application/json, or a GET stream resumed after a broken
// one. Only the first answer to a call's current request counts. Where
// the capture holds a call's result, the go-sdk is spared its own decode
// (stdio, SSE, Dial); a result without a capture (it always exists, but
// the rule is there) is the go-sdk's decoding, re-encoded.
//
// A CallResult holds:
//
//   - Content: typed blocks, *TextContent, *ImageContent, *AudioContent,
//     *ResourceLink, *EmbeddedResource (text or blob), each with its
//     annotations, _meta and exact bytes (Content.JSON). A block of a type
//     this package does not know (a newer protocol's, a server's own) is an
//     *UnknownContent with its type name and exact bytes: the result
//     stands, where the go-sdk fails the whole call (which agt reported as
//     a lost connection before). DecodeContent applies the same rules to
//     any content array.
//   - ContentJSON and Structured: the "content" array and
//     "structuredContent" byte for byte (key order, 12345678901234567890,
//     1e-400 kept), and IsError, Meta, Raw.
//
// Base64 (image and audio data, resource blobs) is kept as sent and not
// checked: the message bound already bounds it, a model or a host that
// uses it decodes it anyway, and checking every image of every call would
// cost a decode for nothing. ImageContent.Decode, AudioContent.Decode and
// ResourceContents.DecodeBlob decode and check it when asked. The two
// changes made to the bytes: the connection's secrets are masked (see
// Secrets in what servers send), and text no JSON decoder keeps (bytes
// that are not valid UTF-8, \u escapes of lone surrogates) becomes
// U+FFFD, as every decoder reads it, so the bytes stay valid in a host's
// request to its model.
//
// A result that is malformed (not an object, "content" not an array of
// objects with a type, a known type with a field of the wrong JSON type,
// isError not a boolean, an answer the JSON-RPC decoder refuses) or past
// MaxContentBlocks or MaxMessageDepth fails the call with ErrBadResult,
// naming the field or the bound, never the server's data; the connection
// is fine and the session stays usable.
//
// # Messages the decoder refuses
//
// The go-sdk ends a connection at the first message its JSON-RPC decoder
// refuses, whoever the message was for. agt reads every message first (on
// stdio each line: one line is one message; on streamable HTTP each event
// and each application/json body; on SSE each event; not what a Dial
// transport reads, which is the host's) and hands the go-sdk only what it
// can read, so that one message costs at most its own request, and a
// shared server's every session stays:
//
//   - An answer to a request of ours that the decoder refuses (nested past
//     MaxMessageDepth, an error member that is not an object, an unknown
//     jsonrpc version) fails that request alone: a tools/call with
//     ErrBadResult (with ErrLimit for the nesting), a tools/list page as
//     said under Limits, any other request with a JSON-RPC error in agt's
//     words.
//   - A message that answers no request (an error or result whose "id" is
//     null or missing, as a server sends for a request it could not parse)
//     and a request or notification of the server's that the decoder
//     refuses are dropped: logged to ConnectorOptions.Logger as
//     agt.server_message_dropped with the reference and the reason in
//     agt's words, never the data (at most a burst of 100, then 20 per
//     second), and counted against MaxServerMessageRate as messages the
//     server started. A request so dropped is never answered. An
//     application/json body of streamable HTTP is the answer to its POST,
//     so a body that names no request fails that POST's request instead.
//   - Everything else goes to the go-sdk byte for byte. A line that is not
//     JSON at all fails the handshake (see Launch rules) or ends the
//     session, as a broken stream does.
//
// # Errors
//
// Connect, Tools and CallTool return *Error, which wraps a sentinel and
// its cause: ErrNoAbsoluteCwd and ErrInvalidServer (a document that cannot
// be started; nothing ran), ErrNotAllowed (the launch allowlist does not
// admit it; nothing ran or was contacted), ErrStart (command not found, cwd missing,
// connection refused), ErrHandshake (exited early with its exit status,
// never answered, wrote non-JSON on stdout, spoke another protocol; a
// remote server's refusal also wraps ErrUnauthorized or
// ErrWrongTransport, see Remote servers), ErrLoginRequired (an OAuth
// server with no usable login, see OAuth),
// ErrUnavailable (the connection died or the session was closed; a call
// that fails with it leaves the session Lost),
// ErrBadResult (a tool result that is malformed, nested too deep for the
// decoder, or past a bound; the session stays usable),
// ErrURLElicitationRequired (the server answered that the user must
// first complete a step at a URL; see URL elicitation required above;
// the session stays usable), ErrInputRequired (the server asked for
// input the session could not give, or for more rounds than allowed;
// see Multi round-trip requests; the session stays usable). A tool timeout
// wraps context.DeadlineExceeded;
// the caller's cancellation wraps the caller's context error. A tool
// result with IsError set is a result,
// not an error; a JSON-RPC protocol error (such as an unknown tool) can be
// read with errors.As into a *jsonrpc.Error. The messages mcpconn writes
// never contain argument values, env values or header values, and a
// remote server's URL shows only its scheme and host (a token often hides
// in its path or query); a server's own error text (in a *jsonrpc.Error or
// a tool result) is passed on as the server wrote it, and so is a stdio
// server's output (its stderr tail, and a non-JSON first line of stdout),
// less the connection's secrets (see Secrets in what servers send).
//
// A handshake the server refused keeps its cause: the server's JSON-RPC
// error code and message, or the protocol version it offered, even though
// such a server usually exits as soon as its stdin closes. A server past a
// bound (see Limits) gives an error that also wraps ErrLimit and a
// *LimitError naming the option.
//
// A stdio server's output is for its operator, not for a model: a server
// may print its environment on stderr, echo an argument of an earlier
// call, or print a token in a banner on stdout ("starting with token
// ..."). An *Error keeps it in two fields, never in its Detail: StderrTail
// and StdoutHead (the first line of stdout when it was not JSON-RPC, as
// the handshake saw it). Error.Error includes both (so logs, the audit and
// the CLI keep them); ErrorText(err, false) renders any error without the
// output of the *Errors inside it (the Detail still says "the server wrote
// non-JSON on stdout", not what), and ProbeReport keeps each apart from its
// Error (StdoutHead, StderrTail). Package run and the framework tools
// build every text a model reads that way unless the host opts in
// (ServerStderrToModel).
//
// # Concurrency
//
// A Connector, a Session and a Prober are safe for concurrent use. Calls
// on one Session run concurrently over its single connection; Close cancels
// the calls in flight. Probes are independent of each other. The leases on
// a shared connection share its connection the same way; one mutex per
// Connector guards its shared connections, and no goroutine of theirs
// outlives Connector.Close.
package mcpconn
