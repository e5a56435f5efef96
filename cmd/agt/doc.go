// Command agt registers, tests, probes and mounts MCP servers, and tries an
// agent's tools from a terminal, over the same resource service, Prober and
// Run pipeline that a host embeds (package github.com/agtsdk/agt).
//
//	agt mcp add notes --cwd "$PWD" -e TOKEN='${env:NOTES_TOKEN}' -- notes-server --verbose
//	agt mcp create notes --command notes-server --cwd "$PWD"   # the same, flag by flag
//	agt mcp import .mcp.json           # or .vscode/mcp.json, ~/.codex/config.toml
//	agt mcp test notes                 # static checks; starts nothing
//	agt mcp probe notes                # starts it, lists and compiles its tools
//	agt mcp contract notes             # calls its read-only tools with cases from their schemas
//	agt mcp new notes --agt ../agt     # writes a Go MCP server module; registers nothing
//	agt agent create helper
//	agt agent update helper --add-mcp notes
//	agt agent tools helper             # what a Run of helper would see
//	agt agent call helper mcp__notes__search '{"query":"a","limit":3}' --yes
//	agt agent call helper mcp__notes__search @args.json --yes   # or - for stdin
//	agt mcp add linear --oauth https://mcp.linear.app/mcp   # a URL: streamable HTTP
//	agt mcp login linear               # OAuth: prints the URL to open; keeps the token
//
// Run "agt --help" for every command and "agt COMMAND --help" for one.
//
// # Habits from other hosts
//
// agt mcp add REF [--cwd DIR] [-e K=V]... -- CMD [ARGS...] is the form of
// claude mcp add and codex mcp add (without --cwd the server runs in the
// current directory, made absolute, and agt says so); agt mcp add REF URL
// [-H "K: V"]... registers a remote server (streamable HTTP; -t/--transport
// sse for an old one; --url URL and --bearer-token-env-var NAME as in
// codex). -e (repeated: -e A=1 -e B=2) is --env, -H is --header, -t is
// --transport, --client-id and --client-secret are --oauth-client-id and
// --oauth-client-secret; --scope/-s is accepted with a note (agt has one
// store); ls is list, remove and rm are delete; agt mcp add-json REF JSON
// takes one server's entry as claude mcp add-json does. New references
// follow one naming rule (names.go): lowercase, every run of other
// characters than letters and digits one '-' (My_Server -> my-server, with
// a note), so that tool aliases read mcp__REF__TOOL. A flag is named in
// errors as it was typed, and a misspelled command, flag, reference or
// tool gets "did you mean", which knows the name a person predicts for a
// tool whose alias carries a hash. agt mcp delete refuses while agents
// mount the server, naming them; --force deletes it anyway. agt mcp import
// reads .mcp.json (Claude, Cursor), VS Code's servers form (JSONC) and
// Codex's config.toml, and --update replaces servers registered with
// another configuration (compare-and-set).
//
// --timeout of probe, agent check, agent tools and agent call bounds the
// whole command: the servers' shutdown is kept inside it (each step of
// stopping a server gets a twentieth of the timeout, 100 ms to 1 s).
//
// The library's errors name fields, never agt's commands: hints.go maps
// their sentinels, codes and error types (never their text) to the command
// to run, in one table.
//
// # Store
//
// --db STORE (before or after the command) names a bbolt file or a
// postgres:// URL (a keyword=value connection string is refused, not made
// a file); without it, $AGT_STORE, then $AGT_DB, then
// $XDG_DATA_HOME/agt/agt.db (~/.local/share/agt/agt.db). A bbolt file is
// opened in shared mode: only for the span of each operation, so a host that
// also opens it shared can run at the same time.
//
// # Secret references
//
// A registration's args, env values and header values may hold
// ${env:NAME}, read from agt's own environment when the server starts,
// and $${ for a literal ${. agt reads only the names $AGT_SECRET_ENV lists
// (names separated by commas or spaces, a trailing '*' a prefix; unset
// allows none): AGT_SECRET_ENV=GITHUB_TOKEN agt mcp probe gh. A bare name
// may be read by every server the command starts; gh=GITHUB_TOKEN binds
// it to registration gh only (team/*=TEAM_* for a category). A
// ${secret:NAME} reads agt's secret store: agt secret set NAME stores a
// value (from stdin, or typed at a prompt without echo; never from the
// command line), agt secret list shows the names, agt secret rm NAME
// removes one; no command prints a value. Values go to the OS keychain
// through github.com/zalando/go-keyring (macOS Keychain, Windows
// Credential Manager, a Secret Service on D-Bus) when one answers within
// 10 s, else to secrets.json beside tokens.db (mode 0600, refused when
// its group or others may read or write it); $AGT_SECRET_STORE=file or
// =keyring chooses. The file lists the names either way (a keychain cannot
// list them). Keychain calls run one at a time: a call the keychain does
// not answer goes on (it cannot be stopped) and the next waits for it, so
// at most one is left running, and each set writes a new keychain item
// the file then points to, so a late Set never replaces a newer value
// (keychain.go). set --ref REF keeps a secret for some registrations. A
// start that fails on its references names every one agt cannot resolve,
// secret and env, at once, each with the command or variable that fixes
// it (secret.go). import rewrites
// the ${VAR} and ${VAR:-DEFAULT} of Claude-style files as ${env:VAR} and
// ${env:VAR:-DEFAULT} (the default is used when VAR is unset or not
// listed; a default holding a reference, ${A:-${B}}, refuses the entry,
// for agt's default is literal text), Codex's variables as ${env:NAME} and VS Code's ${input:ID} as
// ${secret:ID}, with a note.
//
// # OAuth login
//
// agt mcp login REF prints the authorization URL of a server registered
// with --oauth (only a plain http(s) URL of printable ASCII is shown) and
// waits for the redirect on 127.0.0.1, a random port, path /callback
// (RFC 8252). Only a GET whose state is the authorization URL's ends the
// login; any other request there (another method, another state) gets an
// error page and agt keeps waiting, and requests after the redirect get
// 410. Each request must arrive within 2 s and hundreds are served at
// once, so that slow connections cannot hold the browser's back. The
// code goes to mcpconn's Connector.Login and is never printed nor logged;
// the token is kept in the Host's token store (tokens.db beside a bbolt
// store). mcp test says when no login is stored; a probe, agent tools and
// agent call that meet mcpconn.ErrLoginRequired say to log in. agt mcp
// logout REF removes the credential.
//
// # Output and exit status
//
// Human-readable, aligned output by default; --json on every read command.
// Progress of long operations (probe, agent tools, agent check --probe, agent
// call) goes to stderr when stderr is a terminal. Exit status 0 is success, 1
// a failed operation (not found, conflict, probe failed, call refused or
// failed), 2 a wrong command line. A probe (mcp probe, agent check --probe)
// fails when the server cannot be started, connected or listed, or none of
// the tools it offers is usable; tools a Run would leave out beside usable
// ones (a schema that does not compile, a size bound) are a warning that
// names each with a short reason, unless --strict, which makes any of them
// fail; tools a server runs as MCP tasks are usable. Tools the
// registration's enabled_tools/disabled_tools exclude never fail a probe;
// calling one (or a left-out tool) is unknown_tool with a message that says
// so, and gets no "did you mean" for another tool. probe --json adds
// "usable" (the tools a Run offers) to its contract keys; its "ok" stays
// true only when every tool is usable. The servers' log lines
// (notifications/message) go to stderr as slog text lines, structured data
// as JSON. --allow-mcp is refused: the switch was
// removed, mounts decide. Human output never shows env or header
// values, nor what resourcefn.MaskArgs and resourcefn.MaskURL hide: the user
// info, query and fragment of a URL, a path segment that looks like a
// credential or an opaque token, the value of a credential argument
// (--token X, --api-key=X, -e DB_PASSWORD=X, -H "Authorization: Bearer X",
// or an argument that looks like a key); it says "credentials hidden" only
// where it hid one. --json shows the stored document, references
// unresolved; no output shows a resolved secret. What MCP servers say (names, versions, tool names and
// descriptions, errors, stderr lines, call results) is hostile text: human
// output prints it without control characters, line breaks, tabs, bidi
// and other format characters (Unicode Cf, U+2028, U+2029), each shown as
// '?', so a server can neither drive the terminal nor forge a row; and cut
// to a width with "…" and its size in bytes: 80 characters for a name in a
// table, 70 for the first line of a description, 1000 for an error or a
// stderr line. JSON output (--json, and agent call's results) is exact,
// with those characters escaped as \uXXXX. A server's stderr, which a Run
// keeps from the model by default, is shown to the operator: in probe
// reports, mount failures, and the ToolError and notice of agent call (as
// with run.Options.ServerStderrToModel). agt --version prints the version,
// for bug reports.
//
// # Limits
//
//   - A JSON argument (--data, agent call's JSON, - or @FILE): 1 MiB
//     (maxJSONArg).
//   - A repeatable flag: 256 occurrences (maxRepeated).
//   - An import file: 4 MiB and 1,000 servers; a TOML one 256 KiB, with
//     arrays and inline tables nested at most 4 deep, checked before it is
//     parsed (maxImportFile, maxImportServers, maxTOMLFile, maxTOMLDepth).
//   - "Did you mean": words and candidates of up to 128 characters, the
//     first 10,000 candidates (internal/suggest).
//   - agent check --probe: 4 servers probed at once (maxParallelProbes).
//   - The login's redirect receiver: a request's line and headers 8 KiB
//     (maxRedirectHeader, larger gets 431), 10 s to read one request
//     (redirectReadTimeout), 8 connections at once (maxRedirectConns); the
//     whole login 10 minutes (--timeout; mcpconn.DefaultLoginTimeout, the
//     library's own).
//
// These are constants of the command: a host that needs others embeds
// the library and sets its options.
//
// # Permission
//
// agent call validates the arguments, then asks on the terminal whether the
// call may run; --yes allows it explicitly. Without a terminal on stdin and
// without --yes the call is denied.
//
// # Tasks
//
// A server may run a call as an MCP task, in either protocol era; the Run
// follows it to its result (run and mcpconn: Tasks). probe and agent check
// count such tools as usable. agent call prints each new status of the
// call's task on stderr, one line each ("task working: step 1 of 3"; the
// server's message made safe by shown, at most 1000 characters), from
// run.Options.ClientFeatures.Observe, and the result on stdout as for any call. When
// the command's context ends (--timeout, a signal) while the task runs,
// the call ends deadline_exceeded or canceled, mcpconn sends tasks/cancel,
// and agt says both.
//
// # What a server asks
//
// agent call and agent tools offer the servers what a terminal can
// answer, through run.ClientFeatures (agent tools declares the same, so
// it lists the tools a call sees: server-everything lists its
// elicitation and roots tools only to a client that offers them):
//
//   - Elicitation (form and URL modes): asked on the terminal, stderr for
//     the questions and stdin for the answers, one person at a time
//     (form.go). A form's fields come in name order with their type,
//     choices and default; each answer is checked against the field's
//     schema with toolschema and asked again, at most 3 times, then the
//     form is cancelled; an empty line keeps the default; Ctrl-D cancels.
//     A URL is shown, never opened. With --yes, without a terminal on
//     stdin, or with the arguments on stdin, the request is declined and
//     stderr says how to answer it.
//   - Roots: the directories of --root (repeatable), else the current
//     directory, as file:// URIs.
//   - Sampling: offered only with --sampling-command COMMAND or
//     $AGT_SAMPLING_COMMAND (sampler.go): COMMAND, split at spaces and run
//     without a shell in its own process group, reads the request's params
//     as JSON on stdin and writes a CreateMessageResult as JSON on stdout
//     (at most 1 MiB), within --sampling-timeout (1 minute); its group is
//     killed at the end. Without one, the capability is not declared, a
//     request is refused, and stderr says how to answer it.
//   - Progress: one line on stderr, rewritten in place while the call
//     runs and erased before the result, when stderr is a terminal;
//     nothing on a pipe.
package main
