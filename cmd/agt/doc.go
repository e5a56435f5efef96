// Command agt registers, tests, probes and mounts MCP servers, and tries an
// agent's tools from a terminal, over the same resource service, Prober and
// Run pipeline that a host embeds (package github.com/agtsdk/agt).
//
//	agt mcp create notes --command notes-server --cwd "$PWD"
//	agt mcp test notes                 # static checks; starts nothing
//	agt mcp probe notes                # starts it, lists and compiles its tools
//	agt agent create helper
//	agt agent update helper --add-mcp notes
//	agt agent tools helper             # what a Run of helper would see
//	agt agent call helper mcp__notes__search '{"query":"a","limit":3}' --yes
//
// Run "agt --help" for every command and "agt COMMAND --help" for one.
//
// # Store
//
// --db STORE (before or after the command) names a bbolt file or a
// postgres:// URL; without it, $AGT_STORE, then $AGT_DB, then
// $XDG_DATA_HOME/agt/agt.db (~/.local/share/agt/agt.db). A bbolt file is
// opened in shared mode: only for the span of each operation, so a host that
// also opens it shared can run at the same time.
//
// # Output and exit status
//
// Human-readable, aligned output by default; --json on every read command.
// Progress of long operations (probe, agent tools, agent check --probe, agent
// call) goes to stderr when stderr is a terminal. Exit status 0 is success, 1
// a failed operation (not found, conflict, probe failed, call refused or
// failed), 2 a wrong command line. --allow-mcp is refused: the switch was
// removed, mounts decide (SPEC R3.7). Human output never shows env or header
// values, nor the user info or query of a URL (--json shows the stored
// document). What MCP servers say (names, versions, tool names and
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
// # Permission
//
// agent call validates the arguments, then asks on the terminal whether the
// call may run; --yes allows it explicitly. Without a terminal on stdin and
// without --yes the call is denied.
package main
