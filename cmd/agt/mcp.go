package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

func mcpCommands() []*leaf {
	return []*leaf{
		{
			name: "create", min: 1, max: 1,
			args:    "REF (--command CMD --cwd DIR [--arg A]... [--env K=V]... | --url URL [--header \"K: V\"]... [--sse] | --data JSON)",
			summary: "register one MCP server under REF (name or category/name); starts and installs nothing",
			help: `A stdio server needs --command (a bare name found in PATH, or an absolute
path) and --cwd (the directory it runs in; a relative --cwd is made absolute
against your current directory, and the result is printed). Relative --arg
values resolve against --cwd when the server starts; ${cwd} and ${workspace}
expand to the cwd.

A remote server needs --url (streamable HTTP; add --sse for an old SSE
server) and optional --header "Name: value" lines. One that uses OAuth gets
--oauth (and --oauth-client-id, --oauth-scopes when needed); log in once with
'agt mcp login REF'.

--enabled-tools and --disabled-tools choose which of the server's tools
agents get (enabled_tools, disabled_tools): comma-separated names or globs,
where * matches any run of characters and ? one character; disabled applies
after enabled. A tool left out is neither listed nor callable.

--shared lets the Runs of one host that mount this server at the same
revision share one connection (one process) instead of starting one each
("shared": true; off unless given). Only for a server that keeps no state of
a user's: on a shared connection the calls of different users meet in one
process, with its working directory, logins and memory.

--data takes the whole document instead: {"mcpServers":{"NAME":{...}}}, or
one server's entry ({"command": ...} or {"type": "http", "url": ...}, as
claude mcp add-json takes it), kept under the name part of REF.

REF follows agt's naming rule: lowercase, every run of other characters than
letters and digits one '-' (My_Server -> my-server, noted).

Once registered, the static checks of 'agt mcp test' run (nothing starts),
and what would keep the server from starting is printed as a warning.`,
			define: func(fs *flag.FlagSet) action {
				sf := defineServerFlags(fs, false)
				return func(ctx context.Context, e *env, args []string) error {
					return mcpCreate(ctx, e, fs, sf, args[0])
				}
			},
		},
		{
			name: "add", min: 1, max: -1,
			args:    "REF [--cwd DIR] [-e K=V]... -- CMD [ARGS...] | REF [-t http|sse] [-H \"K: V\"]... URL",
			summary: "register one MCP server, the claude/codex way: the command line after --, or a URL",
			help: `The short form of 'agt mcp create', as in 'claude mcp add' and 'codex mcp
add'. Everything after -- is the server's command line, its flags included:

  agt mcp add notes -- notes-server --db data/notes.db
  agt mcp add notes --cwd ~/notes -e TOKEN='${env:NOTES_TOKEN}' -- npx -y notes-mcp

A stdio server runs in --cwd DIR; without --cwd it runs in the current
directory, made absolute, and agt says so. -e is --env, -H is --header.

A remote server: its URL (streamable HTTP; -t/--transport sse for an old SSE
server), or --url URL:

  agt mcp add docs https://mcp.example.com/mcp --bearer-token-env-var DOCS_TOKEN
  agt mcp add linear --oauth https://mcp.linear.app/mcp   # then: agt mcp login linear

REF follows agt's naming rule: lowercase, every run of other characters than
letters and digits one '-' (My_Server -> my-server, noted), so that its tools
are mcp__REF__TOOL. --scope/-s (Claude Code's) is accepted and ignored with
a note: agt has one store. -e takes one K=V: repeat it (-e A=1 -e B=2).

--enabled-tools and --disabled-tools (comma-separated names or globs with *
and ?) choose which of its tools agents get:

  agt mcp add notes --disabled-tools 'note_delete,*_admin' -- notes-server

--shared lets the Runs of one host share one process of a server that keeps
no state of a user's (calls of different users meet in it; off by default):

  agt mcp add time --shared -- mcp-server-time

Then, as after create, the static checks run (nothing starts).`,
			flagHint: "put the server's command line after --: agt mcp add REF [FLAGS] -- CMD [ARGS...]",
			define: func(fs *flag.FlagSet) action {
				af := defineAddFlags(fs)
				return func(ctx context.Context, e *env, args []string) error {
					return mcpAdd(ctx, e, fs, af, args)
				}
			},
		},
		mcpNewCommand(),
		{
			name: "add-json", min: 2, max: 2,
			args:    "REF JSON [--cwd DIR]",
			summary: "register one MCP server from its JSON entry, the claude way: {\"command\": ..., \"args\": [...]} or {\"type\": \"http\", \"url\": ...}",
			help: `As 'claude mcp add-json': JSON is one server's entry of an mcpServers
file, read as 'agt mcp import' reads one ({"type", "command", "args", "env",
"cwd", "url", "headers"}, comments and trailing commas allowed): ${VAR} and
${VAR:-DEFAULT} become ${env:VAR} references, VS Code's ${input:ID} a
${secret:ID}. A stdio server without "cwd" runs in --cwd DIR, else the
current directory, made absolute. REF follows the naming rule of 'agt mcp
add'. - reads the JSON from stdin, @FILE from a file.

  agt mcp add-json weather '{"command":"weather-mcp","env":{"KEY":"${WEATHER_KEY}"}}'`,
			define: func(fs *flag.FlagSet) action {
				cwd := fs.String("cwd", "", "stdio: the directory `DIR` a server without \"cwd\" runs in (default: the current directory)")
				fs.String("scope", "", "accepted for claude mcp add-json (`S`), with a note: agt has one store, --db")
				defineShorthands(fs)
				return func(ctx context.Context, e *env, args []string) error {
					return mcpAddJSON(ctx, e, fs, *cwd, args[0], args[1])
				}
			},
		},
		{
			name: "get", min: 1, max: 1, args: "REF [--json]",
			summary: "show one registration with its revision",
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print {kind, reference, revision, data, ...} as JSON")
				return func(ctx context.Context, e *env, args []string) error {
					return showResource(ctx, e, resource.KindMCP, args[0], *asJSON)
				}
			},
		},
		{
			name: "list", aliases: []string{"ls"}, min: 0, max: 0, args: "[--category C] [--json]",
			summary: "list the registered MCP servers",
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print a JSON array of resources")
				category := fs.String("category", "", "only references in category `C` (C/name)")
				return func(ctx context.Context, e *env, args []string) error {
					return mcpList(ctx, e, *category, *asJSON)
				}
			},
		},
		{
			name: "update", min: 1, max: 1,
			args:    "REF [--command CMD] [--cwd DIR] [--arg A]... [--env K=V]... [--url URL] [--header \"K: V\"]... [--sse] [--data JSON] [--expected-revision N]",
			summary: "change a registration; flags given replace their field, others are kept",
			help: `The stored document is read, the flags are applied to its server entry, and
it is written back only if nobody wrote it in between (compare-and-set on the
revision read). --arg, --env and --header replace the whole list or map when
given. Switching between --command and --url switches the transport.
--enabled-tools and --disabled-tools replace their list; --enabled-tools '*'
offers every tool again, --disabled-tools "" takes out none.
--shared turns sharing between Runs on, --shared=false off (see 'agt mcp
create --help' for what sharing means).
--data replaces the whole document.

--expected-revision N refuses the write unless the stored revision is N: use
the revision you saw with 'agt mcp get', so that a stale edit never
overwrites a newer one.`,
			define: func(fs *flag.FlagSet) action {
				sf := defineServerFlags(fs, true)
				return func(ctx context.Context, e *env, args []string) error {
					return mcpUpdate(ctx, e, fs, sf, args[0])
				}
			},
		},
		{
			name: "delete", aliases: []string{"remove", "rm"}, min: 1, max: 1, args: "REF [--force] [--expected-revision N]",
			summary: "remove a registration; refused while agents mount it, unless --force",
			help: `Before deleting, agt looks for the agents that mount REF. If there are any,
it names them and deletes nothing: unmount it first with
'agt agent update AGENT --remove-mcp REF', or give --force to delete it
anyway (those agents then report the mount as missing, and their Runs start
without it). The look-up and the delete are two steps: an agent that mounts
REF in between is not seen.`,
			define: func(fs *flag.FlagSet) action {
				rev := fs.Int64("expected-revision", 0, "refuse unless the stored revision is `N` (0: no check)")
				force := fs.Bool("force", false, "delete even when agents mount it")
				return func(ctx context.Context, e *env, args []string) error {
					return mcpDelete(ctx, e, args[0], *rev, *force)
				}
			},
		},
		{
			name: "test", min: 1, max: 1, args: "REF [--json]",
			summary: "check a registration statically: cwd, command, URL; never starts the server",
			help:    "Exit status 1 when a finding is an error. Each finding says how to fix it.",
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the findings as JSON")
				return func(ctx context.Context, e *env, args []string) error {
					return mcpTest(ctx, e, args[0], *asJSON)
				}
			},
		},
		{
			name: "probe", min: 1, max: 1, args: "REF [--json] [--strict] [--timeout DURATION]",
			summary: "start or contact the server as a Run would, list and compile its tools, then stop it",
			help: `A probe runs the configured command (or contacts the URL) exactly the way a
Run does: it is not a static check, and it gives no sandbox. It performs the
handshake and tools/list, compiles every tool's input schema, and calls no
tool. Tools the registration leaves out (enabled_tools, disabled_tools) are
counted, not checked.

A tool a Run cannot use is left out of the Run, which offers the others:
its schema does not compile, or it is over a size bound (list it in
--disabled-tools to leave it out without a warning). The first line names
each such tool with a short reason ("12 of 13 tools usable; left out: NAME
(input schema does not compile)"), and the table gives the whole reason.
Tools a server runs as MCP tasks (execution.taskSupport) are usable: a Run
follows the task to its result.

Exit status 1 when the server cannot be started, connected or listed, or
none of the tools it offers is usable; tools left out beside usable ones
are a warning (exit status 0) unless --strict, which makes any tool left
out fail the probe. Tools the registration excludes never fail it.

--json prints {"reference", "server": {"name", "version"}, "protocol_version",
"tools": [{"name", "ok", "error"}], "duration_ms"}, with "usable" (how many
tools have ok true: what a Run offers), "ok" (true only when every tool is
usable), and "excluded" when the registration left tools out.`,
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the probe report as JSON")
				strict := fs.Bool("strict", false, "fail (exit status 1) when a Run would leave any tool out")
				timeout := fs.Duration("timeout", 60*time.Second, "give up after this `DURATION`, the server's shutdown included")
				return func(ctx context.Context, e *env, args []string) error {
					return mcpProbe(ctx, e, args[0], *timeout, *asJSON, *strict)
				}
			},
		},
		contractLeaf(),
		{
			name: "login", min: 1, max: 1, args: "REF [--scopes S1,S2] [--timeout DURATION]",
			summary: "log in to a server that uses OAuth: open the printed URL in a browser; the token is kept, never shown",
			help: `For a remote server registered with --oauth. agt discovers the server's
authorization server, registers itself as a client when it needs to, and
prints the authorization URL. Open it in a browser and log in there: the
authorization server sends the browser back to a listener of agt on
127.0.0.1 (a random port, one request), and agt exchanges the code for a
token. The token is kept in the token store beside the store (tokens.db,
mode 0600, beside a bbolt file; a table of a PostgreSQL store), never in
the registration, and never printed. Runs, probe and agent call then use it,
and refresh it when it expires.

--scopes asks for these scopes in this login, in place of the registration's
(oauth.scopes; 'agt mcp update REF --oauth-scopes' keeps them for every
login). --timeout bounds the whole login, the time in the browser included.`,
			define: func(fs *flag.FlagSet) action {
				timeout := fs.Duration("timeout", mcpconn.DefaultLoginTimeout, "give up after this `DURATION`, the time in the browser included")
				var scopes commaList
				fs.Var(&scopes, "scopes", "the comma-separated `SCOPES` to ask for in this login (default: the registration's, else the ones the server names)")
				return func(ctx context.Context, e *env, args []string) error {
					return mcpLogin(ctx, e, args[0], *timeout, scopes)
				}
			},
		},
		{
			name: "logout", min: 1, max: 1, args: "REF",
			summary: "forget the OAuth token of a server: the next use needs 'agt mcp login' again",
			define: func(fs *flag.FlagSet) action {
				return func(ctx context.Context, e *env, args []string) error {
					return mcpLogout(ctx, e, args[0])
				}
			},
		},
		{
			name: "import", min: 1, max: 1, args: "FILE [--category C] [--update] [--dry-run]",
			summary: "register every server of a config file: .mcp.json, Claude, Cursor, VS Code, Codex config.toml",
			help: `FILE holds {"mcpServers": {NAME: SERVER}} (Claude, Cursor, .mcp.json),
{"servers": {NAME: {type, command, args, env, envFile, url, headers}}} (VS
Code's .vscode/mcp.json, comments and trailing commas allowed), or, when its
name ends in .toml, Codex's [mcp_servers.NAME] tables (command, args, env,
env_vars, cwd, startup_timeout_sec, tool_timeout_sec, enabled_tools,
disabled_tools; url, http_headers, env_http_headers and
bearer_token_env_var for a remote server). enabled_tools and disabled_tools
are kept from any format.

Each server becomes one resource named by agt's naming rule: its key in
lowercase, every run of other characters than letters and digits turned into
one '-' (My_Server -> my-server), optionally under --category; a renamed one
is noted. A server without cwd gets the directory of FILE as its cwd (the
project's, for .vscode/, .cursor/ and .codex/ files), and the command says
so. A relative command (./x, bin/x) is refused with the absolute path to
write instead; a command not found in PATH, or a cwd that does not exist, is
a warning (the check of 'agt mcp test').

What the file reads when the server starts stays a reference, resolved when
agt starts it: ${VAR} and ${VAR:-DEFAULT} become ${env:VAR} and
${env:VAR:-DEFAULT}, Codex's env_vars, env_http_headers and
bearer_token_env_var become ${env:NAME} in env and headers, and VS Code's
${input:ID} becomes ${secret:ID} ('agt secret set ID' stores its value).
A default is literal text: an entry whose default holds a reference,
${A:-${B}} or ${A:-$B}, is refused with what to write instead.
VS Code's envFile is not read: the note names its variables. Credentials
written as literal text are noted: a reference is safer.

A server that is already registered as in FILE is reported and left alone.
One registered with another configuration is left unchanged unless
--update, which replaces it with FILE's (compare-and-set on the revision
read: a write in between is reported, not overwritten).

Exit status 1 if any server could not be imported, or differs and
--update was not given.`,
			define: func(fs *flag.FlagSet) action {
				category := fs.String("category", "", "register every server as `C`/NAME")
				dryRun := fs.Bool("dry-run", false, "show what would be registered; write nothing")
				update := fs.Bool("update", false, "replace servers registered with another configuration")
				return func(ctx context.Context, e *env, args []string) error {
					return mcpImport(ctx, e, args[0], *category, *dryRun, *update)
				}
			},
		},
	}
}

// serverFlags are the flags that describe one MCP server entry.
type serverFlags struct {
	command, cwd, url, data, name, description string
	protocolVersion                            string
	args                                       stringList
	env, headers                               *pairList
	enabledTools, disabledTools                commaList
	sse, shared                                bool
	startupTimeout, toolTimeout                time.Duration
	expectedRevision                           int64
	oauth                                      *oauthFlags
}

func defineServerFlags(fs *flag.FlagSet, update bool) *serverFlags {
	sf := &serverFlags{env: newPairList("=", "K=V"), headers: newPairList(":", `"Name: value"`)}
	fs.StringVar(&sf.command, "command", "", "stdio: the command `CMD`, a bare name found in PATH or an absolute path")
	fs.StringVar(&sf.cwd, "cwd", "", "stdio: the directory `DIR` the server runs in (made absolute)")
	fs.Var(&sf.args, "arg", "stdio: one argument `A`; repeat for more")
	fs.Var(sf.env, "env", "stdio: one `K=V` environment variable; repeat for more")
	fs.StringVar(&sf.url, "url", "", "remote: the streamable HTTP (or SSE) endpoint `URL`")
	fs.Var(sf.headers, "header", "remote: one `\"Name: value\"` header; repeat for more")
	fs.BoolVar(&sf.sse, "sse", false, "remote: the server speaks the old SSE transport")
	fs.StringVar(&sf.data, "data", "", "the whole document as `JSON`: {\"mcpServers\":{\"NAME\":{...}}}")
	fs.StringVar(&sf.name, "name", "", "the server's key `NAME` inside mcpServers (default: the name part of REF)")
	fs.StringVar(&sf.description, "description", "", "free `TEXT` for people")
	fs.DurationVar(&sf.startupTimeout, "startup-timeout", 0, "bound on start plus handshake, a `DURATION` such as 45s (0: the default, 30s)")
	fs.DurationVar(&sf.toolTimeout, "tool-timeout", 0, "bound on one tool call, a `DURATION` (0: the default, 60s)")
	defineToolSelection(fs, &sf.enabledTools, &sf.disabledTools)
	defineShared(fs, &sf.shared)
	defineProtocolVersion(fs, &sf.protocolVersion)
	sf.oauth = defineOAuthFlags(fs)
	if update {
		fs.Int64Var(&sf.expectedRevision, "expected-revision", 0, "refuse unless the stored revision is `N` (0: the revision just read)")
	}
	defineShorthands(fs)
	return sf
}

// addFlags are the flags of mcp add.
type addFlags struct {
	cwd, transport, name, description string
	url, bearerTokenEnvVar, scope     string
	protocolVersion                   string
	env, headers                      *pairList
	enabledTools, disabledTools       commaList
	startupTimeout, toolTimeout       time.Duration
	shared                            bool
	oauth                             *oauthFlags
}

func defineAddFlags(fs *flag.FlagSet) *addFlags {
	af := &addFlags{env: newPairList("=", "K=V"), headers: newPairList(":", `"Name: value"`)}
	fs.StringVar(&af.cwd, "cwd", "", "stdio: the directory `DIR` the server runs in (default: the current directory, made absolute)")
	fs.StringVar(&af.transport, "transport", "", "`T`: stdio (the command line after --), http (streamable HTTP) or sse, with the URL (default: http for a URL, else stdio)")
	fs.StringVar(&af.url, "url", "", "remote: the endpoint `URL`, in place of the URL argument (as codex mcp add --url)")
	fs.StringVar(&af.bearerTokenEnvVar, "bearer-token-env-var", "", "remote: send \"Authorization: Bearer ${env:`NAME`}\", the token read from agt's environment at each connect (as Codex's bearer_token_env_var)")
	fs.StringVar(&af.scope, "scope", "", "accepted for claude mcp add (`S`: local, user, project), with a note: agt has one store, --db")
	fs.Var(af.env, "env", "stdio: one `K=V` environment variable; repeat for more")
	fs.Var(af.headers, "header", "remote: one `\"Name: value\"` header; repeat for more")
	fs.StringVar(&af.name, "name", "", "the server's key `NAME` inside mcpServers (default: the name part of REF)")
	fs.StringVar(&af.description, "description", "", "free `TEXT` for people")
	fs.DurationVar(&af.startupTimeout, "startup-timeout", 0, "bound on start plus handshake, a `DURATION` such as 45s (0: the default, 30s)")
	fs.DurationVar(&af.toolTimeout, "tool-timeout", 0, "bound on one tool call, a `DURATION` (0: the default, 60s)")
	defineToolSelection(fs, &af.enabledTools, &af.disabledTools)
	defineShared(fs, &af.shared)
	defineProtocolVersion(fs, &af.protocolVersion)
	af.oauth = defineOAuthFlags(fs)
	defineShorthands(fs)
	return af
}

// defineShared defines --shared, the document's "shared".
func defineShared(fs *flag.FlagSet, shared *bool) {
	fs.BoolVar(shared, "shared", false, "let the Runs of one host share one connection (one process) to this server; only for a server that keeps no state of a user's: calls of different users meet in one process; --shared=false turns it off (shared)")
}

// defineProtocolVersion defines --protocol-version, the document's
// protocol_version; the resource service checks it on write, as it
// checks the field in a document.
func defineProtocolVersion(fs *flag.FlagSet, v *string) {
	fs.StringVar(v, "protocol-version", "", "pin the MCP protocol `V`: modern, legacy, or a version ("+strings.Join(mcpdoc.ProtocolVersions(), ", ")+"); \"\" negotiates, preferring the modern revision (protocol_version)")
}

// defineToolSelection defines the flags of enabled_tools and
// disabled_tools.
func defineToolSelection(fs *flag.FlagSet, enabled, disabled *commaList) {
	fs.Var(enabled, "enabled-tools", "offer only the tools matching these comma-separated `NAMES` or globs (* any run, ? one character); \"\" offers none, '*' all (enabled_tools)")
	fs.Var(disabled, "disabled-tools", "leave out the tools matching these comma-separated `NAMES` or globs, after --enabled-tools (disabled_tools)")
}

// setToolSelection sets the tool selection fields whose flags were given.
func setToolSelection(fs *flag.FlagSet, enabled, disabled *commaList, srv *resource.MCPServer) {
	if given(fs, "enabled-tools") {
		srv.EnabledTools = append([]string{}, enabled.items...)
	}
	if given(fs, "disabled-tools") {
		srv.DisabledTools = append([]string{}, disabled.items...)
	}
}

// envAssignment matches a word that sets an environment variable:
// NAME=value.
func envAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && shellVarName(name)
}

// remoteURL reports whether w is an http(s) URL, the endpoint of a
// remote server.
func remoteURL(w string) bool {
	l := strings.ToLower(w)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// server builds the server entry of mcp add from its flags and positional
// arguments (REF, then CMD [ARGS...] or URL). It returns the notes to
// print: the cwd it chose when none was given, a --scope it ignored.
func (af *addFlags) server(fs *flag.FlagSet, pos []string) (srv resource.MCPServer, notes []string, err error) {
	const cmd = "mcp add"
	srv = resource.MCPServer{Description: af.description, Shared: af.shared, ProtocolVersion: af.protocolVersion,
		StartupTimeoutMS: af.startupTimeout.Milliseconds(), ToolTimeoutMS: af.toolTimeout.Milliseconds()}
	setToolSelection(fs, &af.enabledTools, &af.disabledTools, &srv)
	if given(fs, "scope") {
		notes = append(notes, "note: --scope is Claude Code's; agt keeps every registration in one store (--db), and an agent uses a server once it is mounted ('agt agent update AGENT --add-mcp REF')")
	}
	if given(fs, "url") {
		if len(pos) > 1 {
			return srv, nil, usagef(cmd, "--url gives the endpoint; do not give a command or another URL after REF")
		}
		pos = append(pos, af.url)
	}
	if len(pos) < 2 {
		return srv, nil, usagef(cmd, "say how to start or reach the server: -- CMD [ARGS...] (stdio), or a URL (remote)")
	}
	t := strings.ToLower(af.transport)
	if t == "" {
		t = resource.TransportStdio
		if len(pos) == 2 && remoteURL(pos[1]) {
			t = resource.TransportHTTP // a URL is a remote server's endpoint
		}
	}
	switch t {
	case "stdio":
		if given(fs, "header") || given(fs, "bearer-token-env-var") {
			return srv, nil, usagef(cmd, "-H/--header and --bearer-token-env-var are for remote servers (a URL); a stdio server takes -e K=V")
		}
		if envAssignment(pos[1]) {
			// -e A=1 B=2: the flag takes one K=V; B=2 is no program.
			return srv, nil, usagef(cmd, "%s looks like an environment variable, not a command: give one -e per variable (-e A=1 -e B=2), then -- CMD [ARGS...]", clip(strings.SplitN(pos[1], "=", 2)[0]+"=..."))
		}
		srv.Type, srv.Command, srv.Args, srv.Env = resource.TransportStdio, pos[1], append([]string(nil), pos[2:]...), af.env.value
		cwd := af.cwd
		if !given(fs, "cwd") {
			cwd = "."
		}
		if srv.Cwd, err = filepath.Abs(cwd); err != nil {
			return srv, nil, fmt.Errorf("--cwd: %w", err)
		}
		switch {
		case !given(fs, "cwd"):
			notes = append(notes, fmt.Sprintf("note: no --cwd: it runs in the current directory, %s", srv.Cwd))
		case !filepath.IsAbs(af.cwd):
			notes = append(notes, fmt.Sprintf("note: --cwd made absolute: %s", srv.Cwd))
		}
	case resource.TransportHTTP, resource.TransportSSE, "streamable-http":
		if t == "streamable-http" {
			t = resource.TransportHTTP
		}
		if len(pos) != 2 {
			return srv, nil, usagef(cmd, "a remote server takes the URL as the one argument after REF; got %d", len(pos)-1)
		}
		if given(fs, "cwd") || given(fs, "env") {
			return srv, nil, usagef(cmd, "--cwd and -e/--env are for stdio servers; a remote server takes -H \"Name: value\"")
		}
		srv.Type, srv.URL, srv.Headers = t, pos[1], af.headers.value
		if given(fs, "bearer-token-env-var") {
			if !shellVarName(af.bearerTokenEnvVar) {
				return srv, nil, usagef(cmd, "--bearer-token-env-var takes a variable name (letters, digits and _)")
			}
			if _, dup := srv.Headers["Authorization"]; dup {
				return srv, nil, usagef(cmd, "--bearer-token-env-var sets the Authorization header; do not give it with -H too")
			}
			if srv.Headers == nil {
				srv.Headers = map[string]string{}
			}
			srv.Headers["Authorization"] = "Bearer ${env:" + af.bearerTokenEnvVar + "}"
			notes = append(notes, fmt.Sprintf("note: the token is read from agt's environment, %s, when agt connects; list it in $%s", af.bearerTokenEnvVar, secretEnvVar))
		}
	default:
		return srv, nil, usagef(cmd, "--transport must be stdio, http or sse")
	}
	if err := af.oauth.apply(fs, &srv); err != nil {
		return srv, nil, usagef(cmd, "%s", err)
	}
	return srv, notes, nil
}

// anyServerFlag reports whether a flag other than --data and
// --expected-revision describes the server.
func anyServerFlag(fs *flag.FlagSet) bool {
	for _, n := range append([]string{"command", "cwd", "arg", "env", "url", "header", "sse", "name", "description", "startup-timeout", "tool-timeout", "enabled-tools", "disabled-tools", "shared", "protocol-version"}, oauthFlagNames...) {
		if given(fs, n) {
			return true
		}
	}
	return false
}

// apply sets the fields named by the flags that were given on srv.
func (sf *serverFlags) apply(fs *flag.FlagSet, srv *resource.MCPServer) error {
	if given(fs, "command") && given(fs, "url") {
		return errors.New("give --command (a stdio server) or --url (a remote server), not both")
	}
	if given(fs, "command") {
		srv.Command = sf.command
		srv.Type, srv.URL, srv.Headers, srv.OAuth = resource.TransportStdio, "", nil, nil
	}
	if given(fs, "url") {
		srv.URL = sf.url
		srv.Type, srv.Command, srv.Args, srv.Env, srv.Cwd = resource.TransportHTTP, "", nil, nil, ""
	}
	if given(fs, "sse") {
		if sf.sse {
			srv.Type = resource.TransportSSE
		} else if srv.Type == resource.TransportSSE {
			srv.Type = resource.TransportHTTP
		}
	}
	remote := srv.Transport() != resource.TransportStdio
	if given(fs, "cwd") {
		if remote {
			return errors.New("--cwd is for stdio servers; a remote server (--url) has no cwd")
		}
		abs, err := filepath.Abs(sf.cwd)
		if err != nil {
			return fmt.Errorf("--cwd: %w", err)
		}
		srv.Cwd = abs
	}
	if given(fs, "arg") {
		if remote {
			return errors.New("--arg is for stdio servers; a remote server (--url) takes no arguments")
		}
		srv.Args = append([]string(nil), sf.args...)
	}
	if given(fs, "env") {
		if remote {
			return errors.New("-e/--env is for stdio servers; a remote server (--url) takes -H/--header")
		}
		srv.Env = sf.env.value
	}
	if given(fs, "header") {
		if !remote {
			return errors.New("-H/--header is for remote servers (--url); a stdio server takes -e/--env")
		}
		srv.Headers = sf.headers.value
	}
	if given(fs, "description") {
		srv.Description = sf.description
	}
	if given(fs, "startup-timeout") {
		srv.StartupTimeoutMS = sf.startupTimeout.Milliseconds()
	}
	if given(fs, "tool-timeout") {
		srv.ToolTimeoutMS = sf.toolTimeout.Milliseconds()
	}
	setToolSelection(fs, &sf.enabledTools, &sf.disabledTools, srv)
	if given(fs, "shared") {
		srv.Shared = sf.shared
	}
	if given(fs, "protocol-version") {
		srv.ProtocolVersion = sf.protocolVersion
	}
	return sf.oauth.apply(fs, srv)
}

// documentFromFlags builds the data of a new MCP resource.
func documentFromFlags(fs *flag.FlagSet, sf *serverFlags, ref resource.Ref) (json.RawMessage, error) {
	const cmd = "mcp create"
	if given(fs, "data") {
		if anyServerFlag(fs) {
			return nil, usagef(cmd, "--data gives the whole document; do not combine it with the server flags")
		}
		data, err := jsonArg(cmd, "--data", sf.data)
		if err != nil || !bareServer(data) {
			return data, err
		}
		// One server's entry, as claude mcp add-json takes it: the
		// document holds it under the server's name.
		name := cmp.Or(sf.name, ref.Name())
		return json.Marshal(map[string]map[string]json.RawMessage{"mcpServers": {name: data}})
	}
	switch {
	case !given(fs, "command") && !given(fs, "url"):
		return nil, usagef(cmd, "say how to start or reach the server: --command CMD --cwd DIR (stdio), --url URL (remote), or --data JSON")
	case given(fs, "command") && !given(fs, "cwd"):
		return nil, usagef(cmd, "a stdio server needs --cwd DIR, the directory it runs in (for example --cwd \"$PWD\"); it never inherits the directory of whoever starts it")
	}
	var srv resource.MCPServer
	if err := sf.apply(fs, &srv); err != nil {
		return nil, usagef(cmd, "%s", err)
	}
	name := sf.name
	if name == "" {
		name = ref.Name()
	}
	return json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{name: srv}})
}

// jsonArg checks that a command-line value is one JSON object of bounded
// size; it never echoes the value.
func jsonArg(cmd, what, v string) (json.RawMessage, error) {
	if len(v) > maxJSONArg {
		return nil, usagef(cmd, "%s is %d bytes; the limit is %d", what, len(v), maxJSONArg)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &obj); err != nil || obj == nil {
		return nil, usagef(cmd, "%s must be one JSON object (%s)", what, jsonErrorText(err))
	}
	return json.RawMessage(v), nil
}

// jsonErrorText describes a JSON syntax error by its offset, never by the
// offending text.
func jsonErrorText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "got null"
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("got a JSON %s", te.Value)
	default:
		return "not valid JSON"
	}
}

func parseRefArg(cmd, s string) (resource.Ref, error) {
	ref, err := resource.ParseRef(s)
	if err != nil {
		return "", usagef(cmd, "%s", strings.TrimPrefix(err.Error(), "resource: "))
	}
	return ref, nil
}
