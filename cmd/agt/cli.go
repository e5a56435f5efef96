package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agtsdk/agt/internal/text"
)

// Exit statuses, as documented in --help and the README.
const (
	exitOK     = 0
	exitFailed = 1 // the operation failed: probe failed, call refused, not found...
	exitUsage  = 2 // the command line is wrong
)

// usageError is a mistake on the command line: exit status 2, with a pointer
// to the help of the command that was being parsed.
type usageError struct {
	cmd string // "mcp create", or "" for the top level
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// reportedError is a failure whose explanation was already printed (a probe
// report, a ToolError): exit 1 without another message.
type reportedError struct{}

func (reportedError) Error() string { return "failed (reported above)" }

var errReported = reportedError{}

// stdio is the process's streams, with what the commands need to know about
// them.
type stdio struct {
	in       io.Reader
	out      io.Writer
	err      io.Writer
	inIsTTY  bool // stdin is a terminal: a person can answer a question
	errIsTTY bool // stderr is a terminal: progress lines help
	// errRaw is stderr without controlFilter, for the carriage return and
	// erase-line of the progress line only (statusLine); nil when stderr
	// is no terminal.
	errRaw io.Writer
}

func newStdio(in *os.File, out, errw *os.File) stdio {
	s := stdio{
		in: in, out: controlFilter{out}, err: controlFilter{errw},
		inIsTTY:  isTerminal(in),
		errIsTTY: isTerminal(errw),
	}
	if s.errIsTTY {
		s.errRaw = errw
	}
	return s
}

// action runs one command with its positional arguments.
type action func(ctx context.Context, e *env, args []string) error

// leaf is one command, such as "mcp create".
type leaf struct {
	name     string   // "create"
	aliases  []string // other names that run it: "remove", "rm" for "delete"
	args     string   // positional arguments and flags for the usage line
	summary  string   // one line
	help     string   // paragraphs shown by --help, after the usage line
	min, max int      // positional argument counts; max < 0 means any
	define   func(fs *flag.FlagSet) action
	// flagHint follows an unknown-flag error, for commands whose
	// arguments may look like flags (the server's command line).
	flagHint string
}

// group is a command with sub-commands, such as "mcp".
type group struct {
	name    string
	summary string
	leaves  []*leaf
}

func (g *group) find(name string) *leaf {
	for _, l := range g.leaves {
		if l.name == name || slices.Contains(l.aliases, name) {
			return l
		}
	}
	return nil
}

// names is every name a sub-command answers to, aliases included.
func (g *group) names() []string {
	var out []string
	for _, l := range g.leaves {
		out = append(out, l.name)
		out = append(out, l.aliases...)
	}
	return out
}

// commandTree is every command of agt, in the order the help lists them.
func commandTree() []*group {
	return []*group{
		{name: "mcp", summary: "MCP server registrations: create, inspect, test, probe, import; new writes a server module", leaves: mcpCommands()},
		{name: "agent", summary: "agents: create, mount MCP servers, check, list tools, call one", leaves: agentCommands()},
		{name: "secret", summary: "the values of ${secret:NAME} references: set, list, remove (never shown)", leaves: secretCommands()},
	}
}

func findGroup(tree []*group, name string) *group {
	for _, g := range tree {
		if g.name == name {
			return g
		}
	}
	return nil
}

// globalFlags are accepted before the command and after it.
type globalFlags struct {
	store string
}

func (g *globalFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&g.store, "db", "", "the `STORE`: a bbolt file path or a postgres:// URL (default $AGT_STORE, $AGT_DB, else $XDG_DATA_HOME/agt/agt.db)")
}

// runCLI runs agt with args (without the program name) and returns the exit
// status.
func runCLI(ctx context.Context, args []string, s stdio) int {
	e := &env{stdio: s}
	defer e.close()
	err := dispatch(ctx, e, args)
	if err == nil {
		return exitOK
	}
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(s.err, "agt: %s\n", ue.msg)
		if ue.cmd != "" {
			fmt.Fprintf(s.err, "Run 'agt %s --help' for usage.\n", ue.cmd)
		} else {
			fmt.Fprintf(s.err, "Run 'agt --help' for usage.\n")
		}
		return exitUsage
	case errors.Is(err, errReported):
		return exitFailed
	default:
		// A start that failed on its secret references names them all.
		fmt.Fprintf(s.err, "agt: %s\n", explain(e.withSecretHelp(ctx, err)))
		return exitFailed
	}
}

// refuseAllowMCP finds the removed master switch anywhere before "--".
func refuseAllowMCP(args []string) error {
	for i, a := range args {
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if i > 0 && (args[i-1] == "--arg" || args[i-1] == "-arg") {
			continue // the value of --arg: an argument of the server, not of agt
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "allow-mcp" || name == "allow_mcp" {
			return usagef("", "--allow-mcp was removed: there is no MCP master switch any more. "+
				"An agent uses exactly the MCP servers mounted on it; mount one with "+
				"'agt agent update AGENT --add-mcp REF' and unmount it with --remove-mcp")
		}
	}
	return nil
}

func dispatch(ctx context.Context, e *env, args []string) error {
	if err := refuseAllowMCP(args); err != nil {
		return err
	}
	tree := commandTree()

	top := newFlagSet("agt")
	e.global.define(top)
	version := top.Bool("version", false, "print agt's version")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return writeTopHelp(e.out, tree)
		}
		return usagef("", "%s", flagErrorText(top, err, args))
	}
	if *version {
		fmt.Fprintln(e.out, versionText())
		return nil
	}
	rest := top.Args()
	if len(rest) == 0 {
		writeTopHelp(e.err, tree)
		return usagef("", "no command given")
	}
	if rest[0] == "help" {
		return helpCommand(e, tree, rest[1:])
	}
	g := findGroup(tree, rest[0])
	if g == nil {
		return usagef("", "unknown command %q%s; the commands are mcp and agent", clip(rest[0]), suggestion(rest[0], groupNames(tree)))
	}
	if len(rest) == 1 {
		writeGroupHelp(e.err, g)
		return usagef(g.name, "agt %s needs a sub-command", g.name)
	}
	if rest[1] == "-h" || rest[1] == "--help" || rest[1] == "-help" || rest[1] == "help" {
		return writeGroupHelp(e.out, g)
	}
	l := g.find(rest[1])
	if l == nil {
		return usagef(g.name, "unknown command %q for agt %s%s; it has %s", clip(rest[1]), g.name, suggestion(rest[1], g.names()), leafNames(g))
	}
	return runLeaf(ctx, e, g, l, rest[2:])
}

func runLeaf(ctx context.Context, e *env, g *group, l *leaf, args []string) error {
	path := g.name + " " + l.name
	fs := newFlagSet("agt " + path)
	// Defining a flag resets its variable: the global flags given after the
	// command go to their own struct, and win over those given before.
	var after globalFlags
	after.define(fs)
	act := l.define(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return writeLeafHelp(e.out, g, l, fs)
		}
		msg := flagErrorText(fs, err, args)
		if l.flagHint != "" && strings.HasPrefix(msg, "unknown flag") {
			msg += "; " + l.flagHint
		}
		return usagef(path, "%s", msg)
	}
	if after.store != "" {
		e.global.store = after.store
	}
	if len(pos) < l.min || (l.max >= 0 && len(pos) > l.max) {
		return usagef(path, "agt %s takes %s; got %d argument(s)", path, argCountText(l), len(pos))
	}
	return act(ctx, e, pos)
}

func argCountText(l *leaf) string {
	switch {
	case l.min == 0 && l.max == 0:
		return "no positional arguments"
	case l.min == l.max:
		return fmt.Sprintf("exactly %d positional argument(s) (%s)", l.min, positionalNames(l.args))
	case l.max < 0:
		return fmt.Sprintf("at least %d positional argument(s)", l.min)
	default:
		return fmt.Sprintf("%d to %d positional arguments", l.min, l.max)
	}
}

// positionalNames keeps the upper-case words of a usage line: "REF", "AGENT
// TOOL JSON".
func positionalNames(usage string) string {
	var names []string
	for _, w := range strings.Fields(usage) {
		if w != "" && w == strings.ToUpper(w) && !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "[") && !strings.HasPrefix(w, "(") && !strings.ContainsAny(w, "|.") {
			names = append(names, w)
		} else {
			break
		}
	}
	return strings.Join(names, " ")
}

func leafNames(g *group) string {
	names := make([]string, len(g.leaves))
	for i, l := range g.leaves {
		names[i] = l.name
	}
	return strings.Join(names, ", ")
}

func groupNames(tree []*group) []string {
	names := make([]string, len(tree))
	for i, g := range tree {
		names[i] = g.name
	}
	return names
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are printed by dispatch
	return fs
}

// parseInterspersed parses flags placed before, between and after the
// positional arguments (the standard flag package stops at the first one).
// After "--" everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := args[:len(args)-len(rest)]
		if len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// invalidFlagValue matches the flag package's message for a value that
// does not parse; it quotes the value, which may be a secret.
var invalidFlagValue = regexp.MustCompile(`^invalid (?:boolean )?value "(?:[^"\\]|\\.)*" for (?:flag )?-([^:]+): (.*)$`)

// flagErrorText turns the flag package's messages into ours, without the
// values; a value that does not parse is answered with what the flag wants.
// A flag is named as it was typed (-e, --env), found in args, the command
// line that was parsed; an unknown one gets the nearest known name.
func flagErrorText(fs *flag.FlagSet, err error, args []string) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, dashed(f.Name)) })
		typed := typedFlag(args, name)
		return "unknown flag " + typed + suggestion(typed, known)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return typedFlag(args, name) + " needs a value"
	}
	if m := invalidFlagValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("invalid value for %s: %s", typedFlag(args, m[1]), flagWants(fs, m[1], m[2]))
	}
	if strings.Contains(msg, "invalid") {
		return "a flag has an invalid value"
	}
	return msg
}

// typedFlag is the flag called name as the command line wrote it: "-e",
// "--env" or "-env". A flag not found in args is written the way help
// writes it (dashed).
func typedFlag(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		dashes := "-"
		if strings.HasPrefix(a, "--") {
			dashes = "--"
		}
		n, _, _ := strings.Cut(a[len(dashes):], "=")
		if n == name {
			return dashes + name
		}
	}
	return dashed(name)
}

// dashed writes a flag as help does: -e for a one-letter shorthand, --env
// for the others.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagWants replaces the flag package's bare "parse error" with the form
// the flag's value takes.
func flagWants(fs *flag.FlagSet, name, why string) string {
	if why != "parse error" || fs == nil {
		return why
	}
	f := fs.Lookup(name)
	if f == nil {
		return why
	}
	getter, ok := f.Value.(flag.Getter)
	if !ok {
		return why
	}
	switch getter.Get().(type) {
	case time.Duration:
		return "want a duration such as 30s, 90s or 2m"
	case int, int64, uint, uint64:
		return "want a whole number"
	}
	return why
}

// clip shortens a user-supplied word for an error message.
func clip(s string) string { return text.Bound(s, 40) }

// helpCommand is "agt help [GROUP [COMMAND]]".
func helpCommand(e *env, tree []*group, args []string) error {
	if len(args) == 0 {
		return writeTopHelp(e.out, tree)
	}
	g := findGroup(tree, args[0])
	if g == nil {
		return usagef("", "no help for %q; the commands are mcp and agent", clip(args[0]))
	}
	if len(args) == 1 {
		return writeGroupHelp(e.out, g)
	}
	l := g.find(args[1])
	if l == nil {
		return usagef(g.name, "unknown command %q for agt %s%s; it has %s", clip(args[1]), g.name, suggestion(args[1], g.names()), leafNames(g))
	}
	fs := newFlagSet("agt " + g.name + " " + l.name)
	var gf globalFlags
	gf.define(fs)
	l.define(fs)
	return writeLeafHelp(e.out, g, l, fs)
}

const topIntro = `agt registers MCP servers, mounts them on agents and tries their tools, over
the same services an agent host embeds (github.com/agtsdk/agt).

Usage:
  agt [--db STORE] COMMAND [ARGUMENTS] [FLAGS]
  agt COMMAND --help      help for one command
`

const topOutro = `Global flags (before or after the command):
  --db STORE   the store: a bbolt file path, or a postgres://... URL.
               Default: $AGT_STORE, else $AGT_DB, else $XDG_DATA_HOME/agt/agt.db
               (~/.local/share/agt/agt.db).
  --version    print agt's version (before the command), for bug reports.

Secret references: args, env and header values may hold ${secret:NAME},
read from agt's secret store ('agt secret set NAME'), or ${env:NAME}, read
from agt's environment at start for names listed in $AGT_SECRET_ENV
(comma-separated; REF=NAME binds a name to one registration; unset allows
none); $${ is a literal ${.

Output: human-readable, aligned tables by default; --json on every read command
prints machine-readable JSON on stdout. Messages and progress go to stderr.

Exit status: 0 success; 1 the operation failed (not found, conflict, probe
failed, call refused or failed); 2 the command line is wrong.

There is no --allow-mcp switch: an agent uses exactly the MCP servers mounted
on it (agt agent update AGENT --add-mcp REF).

Walk-through:
  agt mcp add notes --cwd "$PWD" -- notes-server --verbose
                              # or: agt mcp create notes --command notes-server --cwd "$PWD" --arg --verbose
                              # or: agt mcp import .mcp.json (VS Code's mcp.json, Codex's config.toml)
  agt mcp test notes          # static checks, starts nothing
  agt mcp probe notes         # starts it, lists and compiles its tools, stops it
  agt agent create helper
  agt agent update helper --add-mcp notes
  agt agent tools helper      # the tools a Run of helper would see
  agt agent call helper mcp__notes__search '{"query":"a","limit":3}'
                              # one call: validated, then you are asked (--yes allows);
                              # - reads the JSON from stdin, @FILE from a file
`

func writeTopHelp(w io.Writer, tree []*group) error {
	fmt.Fprint(w, topIntro)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, g := range tree {
		fmt.Fprintf(w, "  %s: %s\n", g.name, g.summary)
		for _, l := range g.leaves {
			fmt.Fprintf(w, "    agt %s %s %s\n", g.name, l.name, l.args)
			fmt.Fprintf(w, "        %s%s\n", l.summary, aliasText(l))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, topOutro)
	return nil
}

func writeGroupHelp(w io.Writer, g *group) error {
	fmt.Fprintf(w, "agt %s: %s\n\nCommands:\n", g.name, g.summary)
	for _, l := range g.leaves {
		fmt.Fprintf(w, "  agt %s %s %s\n      %s%s\n", g.name, l.name, l.args, l.summary, aliasText(l))
	}
	fmt.Fprintf(w, "\nRun 'agt %s COMMAND --help' for the flags of one command.\n", g.name)
	return nil
}

func writeLeafHelp(w io.Writer, g *group, l *leaf, fs *flag.FlagSet) error {
	fmt.Fprintf(w, "Usage: agt %s %s %s\n\n%s%s\n", g.name, l.name, l.args, l.summary, aliasText(l))
	if l.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(l.help))
	}
	fmt.Fprintf(w, "\nFlags:\n")
	writeFlags(w, fs)
	return nil
}

// aliasText names a command's aliases for help: " (also: remove, rm)".
func aliasText(l *leaf) string {
	if len(l.aliases) == 0 {
		return ""
	}
	return " (also: " + strings.Join(l.aliases, ", ") + ")"
}

// writeFlags lists flags with two dashes, the way the usage lines write them.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	for _, n := range names {
		f := fs.Lookup(n)
		if long, ok := shorthands[n]; ok && fs.Lookup(long) != nil {
			continue // listed with its long form
		}
		arg, usage := flag.UnquoteUsage(f)
		head := dashed(f.Name)
		for short, long := range shorthands {
			if long == n && fs.Lookup(short) != nil {
				head = dashed(short) + ", " + head
			}
		}
		if arg != "" {
			head += " " + arg
		}
		fmt.Fprintf(w, "  %s\n      %s", head, usage)
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" && def != "[]" {
			fmt.Fprintf(w, " (default %s)", def)
		}
		fmt.Fprintln(w)
	}
}

// versionText is what --version prints: the module version agt was built
// from ("(devel)" from a clone), the commit when the build recorded one, and
// the Go version.
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "agt (no build information)"
	}
	v := "agt " + info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " commit " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += " (modified)"
		}
	}
	return v + ", " + info.GoVersion
}
