package main

import (
	"context"
	"flag"
	"strings"
	"time"

	"github.com/agtsdk/agt/resource"
)

func agentCommands() []*leaf {
	return []*leaf{
		{
			name: "create", min: 1, max: 1,
			args:    "AGENT [--manager] [--capability resource_management]... [--disabled] [--mcp REF]...",
			summary: "create an agent (enabled, no mounts, unless flags say otherwise)",
			help: `A manager, or an agent with the resource_management capability, sees the
framework tools (resource_write, resource_read, resource_test, mcp_probe,
agent_mcp_list) in its Runs; their calls still pass the permission policy.
Using mounted MCP tools needs no capability.`,
			define: func(fs *flag.FlagSet) action {
				af := defineAgentFlags(fs, false)
				return func(ctx context.Context, e *env, args []string) error {
					return agentCreate(ctx, e, fs, af, args[0])
				}
			},
		},
		{
			name: "get", min: 1, max: 1, args: "AGENT [--json]",
			summary: "show one agent with its revision",
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print {kind, reference, revision, data, ...} as JSON")
				return func(ctx context.Context, e *env, args []string) error {
					return showResource(ctx, e, resource.KindAgent, args[0], *asJSON)
				}
			},
		},
		{
			name: "list", aliases: []string{"ls"}, min: 0, max: 0, args: "[--category C] [--json]",
			summary: "list the agents",
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print a JSON array of resources")
				category := fs.String("category", "", "only references in category `C` (C/name)")
				return func(ctx context.Context, e *env, args []string) error {
					return agentList(ctx, e, *category, *asJSON)
				}
			},
		},
		{
			name: "update", min: 1, max: 1,
			args:    "AGENT [--add-mcp REF]... [--remove-mcp REF]... [--mcps R1,R2 | --clear-mcps] [--enabled=BOOL] [--manager=BOOL] [--capabilities C1,C2] [--expected-revision N]",
			summary: "change an agent's mounts or settings; what is not given is kept",
			help: `--mcps replaces the whole mount list, --clear-mcps empties it, --add-mcp and
--remove-mcp add or remove single references atomically (adding a present one
or removing an absent one changes nothing, and is reported). Every mounted
reference must exist as an MCP resource. A running Run of the agent does not
change: the next Run loads the new mounts.

--expected-revision N refuses the write unless the stored revision is N.`,
			define: func(fs *flag.FlagSet) action {
				af := defineAgentFlags(fs, true)
				return func(ctx context.Context, e *env, args []string) error {
					return agentUpdate(ctx, e, fs, af, args[0])
				}
			},
		},
		{
			name: "delete", aliases: []string{"remove", "rm"}, min: 1, max: 1, args: "AGENT [--expected-revision N]",
			summary: "remove an agent (the MCP servers it mounted stay registered)",
			define: func(fs *flag.FlagSet) action {
				rev := fs.Int64("expected-revision", 0, "refuse unless the stored revision is `N` (0: no check)")
				return func(ctx context.Context, e *env, args []string) error {
					return deleteResource(ctx, e, resource.KindAgent, args[0], *rev)
				}
			},
		},
		{
			name: "mcps", min: 1, max: 1, args: "AGENT [--json]",
			summary: "list the MCP servers mounted on an agent, and whether each resolves",
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the mounted references as JSON")
				return func(ctx context.Context, e *env, args []string) error {
					return agentMCPs(ctx, e, args[0], *asJSON)
				}
			},
		},
		{
			name: "check", min: 1, max: 1, args: "AGENT [--probe [--strict]] [--json] [--timeout DURATION]",
			summary: "check an agent before work: identity, enabled, every mount resolves and is startable",
			help: `Without --probe the check is static and starts nothing. With --probe every
mounted server is also started (or contacted) and listed, as 'agt mcp probe'
does, and the tools a Run would leave out are named with a short reason.
Exit status 1 when the agent is not ready: it is missing or disabled, a
mount fails its static check, or, with --probe, a server cannot be started,
connected or listed, or none of the tools it offers is usable. Tools left
out beside usable ones are a warning ("ready, but a Run leaves out ..."),
unless --strict, which makes any tool left out fail the check.`,
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the report as JSON")
				probe := fs.Bool("probe", false, "also probe every mounted server (starts them)")
				strict := fs.Bool("strict", false, "with --probe: not ready when a Run would leave any tool out")
				timeout := fs.Duration("timeout", 60*time.Second, "give up after this `DURATION`, the servers' shutdown included")
				return func(ctx context.Context, e *env, args []string) error {
					if *strict && !*probe {
						return usagef("agent check", "--strict judges the probes: give --probe too")
					}
					return agentCheck(ctx, e, args[0], *probe, *strict, *timeout, *asJSON)
				}
			},
		},
		{
			name: "tools", min: 1, max: 1, args: "AGENT [--json] [--timeout DURATION] [--root DIR]... [--sampling-command COMMAND]",
			summary: "start a Run of the agent and list the tools its model would see, then stop",
			help: `This starts every mounted server (as a Run does), lists and compiles their
tools, prints the snapshot, and closes everything. Mounts that fail to load
are reported, and the rest are listed. Exit status 1 if any mount failed.

agt offers the servers what 'agt agent call' offers (elicitation, roots,
and sampling when a command answers it), so that the list is the one a
call sees: some servers list tools only for a client that offers them.`,
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the tools (name, description, input_schema, source) as JSON")
				timeout := fs.Duration("timeout", 60*time.Second, "give up after this `DURATION`, the servers' shutdown included")
				af := defineAnswerFlags(fs)
				return func(ctx context.Context, e *env, args []string) error {
					return agentTools(ctx, e, args[0], af, *timeout, *asJSON)
				}
			},
		},
		{
			name: "call", min: 3, max: 3, args: "AGENT TOOL (JSON | - | @FILE) [--yes] [--timeout DURATION] [--root DIR]... [--sampling-command COMMAND]",
			summary: "make one tool call through the whole pipeline: validate, permission, execute",
			help: `TOOL is a name from 'agt agent tools AGENT' (mcp__REF__TOOL). JSON is the
arguments object; - reads it from stdin, @FILE from a file (at most 1 MiB).
With -, stdin cannot also answer the question: give --yes. The call is validated against the tool's schema (an error
prints the ToolError with the failing paths, and nothing is called), then
permission is asked on the terminal: answer y to allow. Without a terminal
on stdin the call is denied unless --yes, which allows it explicitly.

On success the result is printed as JSON; on failure the ToolError JSON
({"error":{"code","message","violations"}}) is printed and the exit status
is 1.

A tool its server runs as an MCP task (a long-running call, in either
protocol era) is followed to its end: each new status of the task is a
line on stderr ("task working: step 1 of 3", the server's message cut and
made safe), and stdout gets the result as for any call. A call still
running at --timeout ends deadline_exceeded, agt says the call timed out,
and asks the server to cancel the task.

What a server asks during the call (MCP client features, either protocol
era):
  elicitation  a form is asked field by field on the terminal (stderr, and
               stdin for the answers); each answer is checked against the
               field's schema and asked again, at most 3 times. A URL is
               shown for you to open. With --yes, without a terminal on
               stdin, or with the arguments on stdin (-), agt declines and
               says so on stderr.
  roots        the directories of --root (repeatable), else the current
               directory, as file:// roots.
  sampling     offered only with --sampling-command COMMAND (or
               $AGT_SAMPLING_COMMAND): COMMAND (split at spaces, no shell)
               gets the request JSON on stdin and writes the result JSON
               ({"role":"assistant","content":{"type":"text","text":"..."},
               "model":"..."}) on stdout, at most 1 MiB, within
               --sampling-timeout; its process group is killed at the end.
               Without it a request is refused and stderr says how to
               answer it.
  progress     a line on stderr rewritten in place while the call runs,
               when stderr is a terminal; nothing on a pipe.`,
			define: func(fs *flag.FlagSet) action {
				yes := fs.Bool("yes", false, "allow the call without asking (explicit auto-allow); questions of the server are declined")
				timeout := fs.Duration("timeout", 2*time.Minute, "give up after this `DURATION` (start, call and shutdown)")
				af := defineAnswerFlags(fs)
				return func(ctx context.Context, e *env, args []string) error {
					return agentCall(ctx, e, args, af, *yes, *timeout)
				}
			},
		},
	}
}

// agentFlags are the flags of agent create and agent update.
type agentFlags struct {
	manager, enabled optionalBool
	disabled         bool
	capabilities     commaList
	capability       stringList
	mcps             commaList
	mcp              stringList
	addMCP, rmMCP    stringList
	clearMCPs        bool
	expectedRevision int64
}

func defineAgentFlags(fs *flag.FlagSet, update bool) *agentFlags {
	af := &agentFlags{}
	fs.Var(&af.manager, "manager", "the agent is a manager: it sees the framework tools")
	if update {
		fs.Var(&af.enabled, "enabled", "enable (true) or disable (false) the agent's binding")
		fs.Var(&af.capabilities, "capabilities", "replace the capabilities with this comma-separated `LIST` (empty clears)")
		fs.Var(&af.mcps, "mcps", "replace the whole mount list with these comma-separated `REFS`")
		fs.BoolVar(&af.clearMCPs, "clear-mcps", false, "unmount everything")
		fs.Var(&af.addMCP, "add-mcp", "mount one MCP server by `REF`; repeat for more")
		fs.Var(&af.rmMCP, "remove-mcp", "unmount one MCP server by `REF`; repeat for more")
		fs.Int64Var(&af.expectedRevision, "expected-revision", 0, "refuse unless the stored revision is `N` (0: no check)")
	} else {
		fs.BoolVar(&af.disabled, "disabled", false, "create the agent with its binding disabled")
		fs.Var(&af.capability, "capability", "grant one capability `C` (resource_management); repeat for more")
		fs.Var(&af.mcp, "mcp", "mount one MCP server by `REF` at creation; repeat for more")
	}
	return af
}

// agentChange is what agent create or update asks the service to write.
type agentChange struct {
	data   map[string]any
	add    []string
	remove []string
}

// createChange builds the document of a new agent from the flags.
func (af *agentFlags) createChange(ref resource.Ref) (agentChange, error) {
	const cmd = "agent create"
	mcps, err := parseRefList(cmd, "--mcp", af.mcp)
	if err != nil {
		return agentChange{}, err
	}
	data := map[string]any{"name": ref.String(), "enabled": !af.disabled, "mcps": mcps}
	if af.manager.set {
		data["manager"] = af.manager.value
	}
	if len(af.capability) > 0 {
		data["capabilities"] = []string(af.capability)
	}
	return agentChange{data: data}, nil
}

// updateChange builds the patch and the list edits of agent update.
func (af *agentFlags) updateChange() (agentChange, error) {
	const cmd = "agent update"
	ch := agentChange{data: map[string]any{}}
	switch {
	case af.mcps.set && af.clearMCPs:
		return ch, usagef(cmd, "give --mcps (replace the list) or --clear-mcps (empty it), not both")
	case (af.mcps.set || af.clearMCPs) && (len(af.addMCP) > 0 || len(af.rmMCP) > 0):
		return ch, usagef(cmd, "--mcps and --clear-mcps replace the whole list; use them without --add-mcp and --remove-mcp")
	case af.mcps.set:
		refs, err := parseRefList(cmd, "--mcps", af.mcps.items)
		if err != nil {
			return ch, err
		}
		ch.data["mcps"] = refs
	case af.clearMCPs:
		ch.data["mcps"] = []string{}
	}
	var err error
	if ch.add, err = parseRefList(cmd, "--add-mcp", af.addMCP); err != nil {
		return ch, err
	}
	if ch.remove, err = parseRefList(cmd, "--remove-mcp", af.rmMCP); err != nil {
		return ch, err
	}
	if af.enabled.set {
		ch.data["enabled"] = af.enabled.value
	}
	if af.manager.set {
		ch.data["manager"] = af.manager.value
	}
	if af.capabilities.set {
		ch.data["capabilities"] = af.capabilities.items
	}
	if len(ch.data) == 0 && len(ch.add) == 0 && len(ch.remove) == 0 {
		return ch, usagef(cmd, "nothing to change: give --add-mcp, --remove-mcp, --mcps, --clear-mcps, --enabled, --manager or --capabilities")
	}
	return ch, nil
}

// parseRefList checks every reference of a flag; the result is never nil.
func parseRefList(cmd, flagName string, items []string) ([]string, error) {
	out := make([]string, 0, len(items))
	for _, s := range items {
		if _, err := resource.ParseRef(s); err != nil {
			return nil, usagef(cmd, "%s: %s", flagName, strings.TrimPrefix(err.Error(), "resource: "))
		}
		out = append(out, s)
	}
	return out, nil
}
