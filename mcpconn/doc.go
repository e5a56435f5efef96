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
// A Connector (ConnectorOptions: nil means the defaults) starts and reaches
// servers; Connect (its ConnectOptions give handlers and sharing)
// returns a Session: one connection to one server. Session.Tools lists all
// pages; Connector.LoadTools turns a listing into the tools a host offers (the
// registration's enabled_tools and disabled_tools, the per-tool bounds,
// the schemas compiled), for the Prober and a Run alike, so they never
// disagree; Session.CallTool calls one tool. A Prober connects, lists,
// compiles and closes, and never calls a tool. Each topic below gives the
// rules a host relies on; the full rules are in the repository's docs/.
//
// # Launch rules and remote servers
//
// A stdio server runs in its document's absolute cwd, never the host's,
// its command a bare name looked up in the PATH the child gets or an
// absolute path (resource.ResolveLaunch, the rule resource.Service.Test
// applies too), with a small allowlist of the host's environment and the
// document's env on top, in a process group of its own that Close ends:
// no zombie and no orphan. There is no sandbox: the command runs with the
// host user's rights. ConnectorOptions.LaunchEnv.Allow restricts the
// commands, directories and origins that may be started or contacted, for
// every start whoever asks. The full rules: docs/launch.md.
//
// A remote server ("http", streamable HTTP, or "sse") is reached at its
// url with its headers; every request goes to the registered origin only,
// a redirect to another origin is refused, and (in the legacy era) an
// event stream the server ends before its answer is resumed within
// bounds. The full rules: docs/transports-and-eras.md.
//
// # Protocol eras
//
// A Connector prefers the modern era (ModernProtocolVersion, 2026-07-28:
// server/discover, no sessions, stateless HTTP) and falls back to the
// legacy one (LegacyProtocolVersion, 2025-11-25: the initialize
// handshake), caches the era found per Connector, and skips the detection
// for a pin (the document's protocol_version, or
// ConnectorOptions.ProtocolVersion). Every other rule of this package
// holds in both eras. The full rules, change notifications included:
// docs/transports-and-eras.md.
//
// # What a server sends on its own
//
// ConnectOptions.Handlers answer what a server sends outside the answers
// to its requests: elicitation, sampling and roots requests, progress and
// log lines, tool list changes, task status. The handshake declares
// exactly the capabilities whose handlers are set. Each handler is told
// the call the message names (Incoming.Calls), and Handlers.Served
// reports every request, never a value. A call's result never overtakes
// the notifications before it. The full rules: docs/server-requests.md.
//
// # Multi round-trip requests
//
// A modern server asks for input inside a tools/call result
// (input_required); CallTool answers through the same handlers and sends
// the call again (ConnectorOptions.Limits.MaxInputRounds), and the caller sees
// one call and one result. The full rules: docs/server-requests.md.
//
// # Tasks
//
// A server may answer a call with a task; CallTool follows it to its end
// and returns what the call would have returned at once, polling within
// bounds, and cancels a task its call outlives. A Run resumes its tasks
// after a restart (run's task store). The full rules: docs/tasks.md.
//
// # Listing cache
//
// A modern server's tools/list result is kept per Connector for its ttlMs
// (at most ConnectorOptions.Limits.MaxListingTTL), for the same registration
// revision and, unless the server says the listing is public, the same
// credentials. The full rules: docs/tools-and-listings.md.
//
// # Shared connections
//
// A registration with "shared": true, connected with
// ConnectOptions.Revision, gives each session a lease on one connection
// the Connector keeps: the calls of every user meet in one server
// process, so share only a server that keeps no state of a user's. What
// the server sends reaches the lease of the call it names, or no lease.
// The full rules: docs/shared-connections.md.
//
// # Secret references
//
// ${env:NAME} (only for a registration ConnectorOptions.LaunchEnv.SecretEnv binds
// it to) and ${secret:NAME} (ConnectorOptions.LaunchEnv.Secrets) are resolved at
// each start, never written back; one that cannot be resolved fails the
// start with ErrSecret before anything starts. No text of agt's own
// holds a resolved value.
//
// # Secrets in what servers send
//
// Every session masks its connection's secret values, in the forms it
// recognises, in all its server sends, before anything above mcpconn sees
// it. The full rules: docs/secrets.md.
//
// # OAuth
//
// A remote document with an "oauth" field is reached with OAuth 2.1: the
// interactive step is the host's (OAuthOptions.Authorize), tokens live in
// OAuthOptions.Tokens and never in a document, an error or the audit, and
// client secrets and keys go only to the authorization server the
// registration admits. Connector.Login and Connector.Logout manage a
// login. The full rules: docs/oauth.md.
//
// # Handshake and calls
//
// The handshake is bounded by the document's startup_timeout_ms (default
// 30 s), tools/list by tool_timeout_ms (default 60 s). A tools/call is
// bounded by tool_timeout_ms as an idle timeout that each progress
// notification restarts, and as a whole by
// ConnectorOptions.Limits.MaxCallDuration (or tool_timeout_ms when longer). A
// result is read from the exact bytes the server sent. The full rules:
// docs/tool-results.md.
//
// # Errors
//
// Connect, Tools and CallTool return *Error, which wraps one of the
// sentinels (ErrNoAbsoluteCwd, ErrInvalidServer, ErrNotAllowed, ErrStart,
// ErrSecret, ErrHandshake with ErrUnauthorized or ErrWrongTransport,
// ErrLoginRequired, ErrUnavailable, ErrBadResult,
// ErrURLElicitationRequired, ErrInputRequired) and its cause; a server
// past a bound also wraps ErrLimit and a *LimitError naming the option. A
// tool result with IsError set is a result, not an error. Messages never
// hold argument, env or header values; a stdio server's output is kept
// apart (Error.StderrTail, Error.StdoutHead; ErrorText). The full list:
// docs/errors.md.
//
// # Limits
//
// A server is hostile until its bytes are bounded: every bound is checked
// while the bytes arrive, before the go-sdk decodes them. The bounds a
// host may change are ConnectorOptions fields whose zero value is the
// default (message size and rate, tools and bytes of a listing, server
// requests, call duration); the others are fixed, with their values in
// docs/limits.md (a message nests at most 1000 levels, a result holds at
// most 10000 content blocks, a tool name is at most 256 bytes...). A
// server past a bound on what it sends loses its session, but for the
// bounds of one answer (nesting, content blocks), which fail that request
// alone; a request of the server's past a bound is refused. The table:
// docs/limits.md.
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
