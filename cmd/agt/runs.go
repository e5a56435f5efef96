package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agtsdk/agt/internal/text"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// The commands that start a Run, exactly as a host does (agt.Host.NewRun).

// listOnly is the Permission of agent tools: that command makes no call,
// and a Run needs an explicit policy.
var listOnly run.Permission = listOnlyPolicy{}

type listOnlyPolicy struct{}

func (listOnlyPolicy) Check(context.Context, run.Request) (run.Decision, error) {
	return run.Decision{Verdict: run.Deny, By: "agt agent tools", Reason: "listing only"}, nil
}

// toolsReport is agent tools --json: the snapshot a Run of the agent gets.
type toolsReport struct {
	Agent        resource.Ref     `json:"agent"`
	Fingerprint  string           `json:"fingerprint"`
	Tools        []run.ToolInfo   `json:"tools"`
	MountErrors  []mountFailure   `json:"mount_errors"`
	SkippedTools []skippedFailure `json:"skipped_tools"`
}

type mountFailure struct {
	Ref        resource.Ref `json:"reference"`
	Error      string       `json:"error"`
	StdoutHead string       `json:"stdout_head,omitempty"`
	StderrTail string       `json:"stderr_tail,omitempty"`
	missing    bool         // the mounted reference is not registered
	err        error        // for agt's hint
}

type skippedFailure struct {
	Name   string     `json:"name"`
	Source run.Source `json:"source"`
	Error  string     `json:"error"`
}

func agentTools(ctx context.Context, e *env, refArg string, af *answerFlags, timeout time.Duration, asJSON bool) (err error) {
	features, err := e.clientFeatures("agent tools", af, true, false)
	if err != nil {
		return err
	}
	ref, h, work, err := e.hostForTimed(ctx, "agent tools", refArg, timeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, work)
	defer cancel()
	defer func() { err = withTimeoutHint(ctx, e, err, timeout) }()
	e.progress("starting a Run of %s: connecting its mounted servers, listing and compiling their tools...", ref)
	r, err := h.NewRun(ctx, ref, &run.Options{Permission: listOnly, ClientFeatures: features})
	if err != nil {
		return runError(ctx, e, ref, err)
	}
	defer r.Close()

	rep := toolsReport{Agent: ref, Fingerprint: r.Fingerprint(), Tools: r.Tools(),
		MountErrors: []mountFailure{}, SkippedTools: []skippedFailure{}}
	if rep.Tools == nil {
		rep.Tools = []run.ToolInfo{}
	}
	for _, m := range r.MountErrors() {
		// The server's output has its own fields, as in the probe report.
		merr := e.withSecretHelp(ctx, m.Err)
		f := mountFailure{Ref: m.Ref, Error: mountErrorText(merr), StderrTail: m.StderrTail,
			missing: errors.Is(m.Err, resource.ErrNotFound), err: merr}
		if ce := (*mcpconn.Error)(nil); errors.As(m.Err, &ce) {
			f.StdoutHead = ce.StdoutHead
		}
		rep.MountErrors = append(rep.MountErrors, f)
	}
	for _, s := range r.SkippedTools() {
		rep.SkippedTools = append(rep.SkippedTools, skippedFailure{Name: s.Alias, Source: s.Source, Error: s.Err.Error()})
	}
	if asJSON {
		if err := writeJSON(e.out, rep); err != nil {
			return err
		}
	} else {
		writeTools(e, rep)
	}
	if len(rep.MountErrors) > 0 {
		return errReported
	}
	return nil
}

func writeTools(e *env, rep toolsReport) {
	switch {
	case len(rep.Tools) == 0 && len(rep.MountErrors) == 0:
		fmt.Fprintf(e.out, "agent %s: no tools (mount a server with 'agt agent update %s --add-mcp REF')\n", rep.Agent, rep.Agent)
	case len(rep.Tools) == 0:
		fmt.Fprintf(e.out, "agent %s: no tools: no mounted server loaded\n", rep.Agent)
	default:
		t := newTable(e.out)
		fmt.Fprintln(t, "TOOL\tSOURCE\tPROTOCOL\tDESCRIPTION")
		for _, tool := range rep.Tools {
			fmt.Fprintf(t, "%s\t%s\t%s\t%s\n", shown(tool.Name, maxCellWidth), shown(tool.Source.String(), maxCellWidth),
				cmp.Or(shown(tool.ProtocolVersion, maxCellWidth), "-"), oneLine(tool.Description, maxDescriptionWidth))
		}
		t.Flush()
	}
	for _, s := range rep.SkippedTools {
		fmt.Fprintf(e.out, "left out: %s (%s): %s\n", shown(s.Name, maxCellWidth), shown(s.Source.String(), maxCellWidth), oneLine(s.Error, 400))
	}
	for _, m := range rep.MountErrors {
		if m.missing {
			fmt.Fprintf(e.out, "mount %s failed to load: no MCP server is registered as %s\n", m.Ref, m.Ref)
			fmt.Fprintf(e.out, "  next: register it with 'agt mcp create %s ...', or unmount it with 'agt agent update %s --remove-mcp %s'\n", m.Ref, rep.Agent, m.Ref)
			continue
		}
		fmt.Fprintf(e.out, "mount %s failed to load: %s\n", m.Ref, shown(m.Error, maxLineWidth))
		writeServerOutput(e.out, "  ", m.StdoutHead, m.StderrTail)
		if h := commandHint(m.err, m.Error); h != "" && !strings.HasPrefix(h, "(") {
			fmt.Fprintf(e.out, "  %s\n", h)
		} else {
			fmt.Fprintf(e.out, "  next: 'agt mcp probe %s' shows more\n", m.Ref)
		}
	}
}

// withTimeoutHint adds what to do when a command ran out of its --timeout
// (ctx reached its deadline; Ctrl-C is not that): to the error, or, when
// the command already printed its report, on stderr after it.
func withTimeoutHint(ctx context.Context, e *env, err error, timeout time.Duration) error {
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	hint := fmt.Sprintf("next: agt gave up after --timeout %s; give a slow server a longer --timeout", timeout)
	if errors.Is(err, errReported) {
		fmt.Fprintln(e.err, hint)
		return err
	}
	return fmt.Errorf("%w\n%s", err, hint)
}

// runError explains why a Run could not start.
func runError(ctx context.Context, e *env, ref resource.Ref, err error) error {
	switch {
	case errors.Is(err, run.ErrAgentDisabled):
		return about(&markedError{msg: fmt.Sprintf("agent %s is disabled", ref), sentinel: run.ErrAgentDisabled}, resource.KindAgent, ref)
	case errors.Is(err, resource.ErrNotFound):
		return e.withRefSuggestion(ctx, resource.KindAgent, ref, &markedError{msg: fmt.Sprintf("agent %s is not registered", ref), sentinel: resource.ErrNotFound})
	}
	return err
}

// callArguments reads the JSON arguments of agent call: the argument
// itself, "-" for stdin, or "@FILE" for a file; at most maxJSONArg bytes.
func (e *env) callArguments(cmd, arg string) (string, error) {
	switch {
	case arg == "-":
		data, err := io.ReadAll(io.LimitReader(e.in, maxJSONArg+1))
		if err != nil {
			return "", fmt.Errorf("reading the arguments from stdin: %w", err)
		}
		if len(data) > maxJSONArg {
			return "", usagef(cmd, "the JSON on stdin is more than %d bytes", maxJSONArg)
		}
		e.stdinTaken = true
		return string(data), nil
	case strings.HasPrefix(arg, "@"):
		data, err := readBounded(arg[1:], maxJSONArg)
		if err != nil {
			return "", usagef(cmd, "JSON from %s: %s", clip(arg), strings.TrimPrefix(err.Error(), "open "))
		}
		return string(data), nil
	case len(arg) > maxJSONArg:
		return "", usagef(cmd, "JSON is %d bytes; the limit is %d", len(arg), maxJSONArg)
	}
	return arg, nil
}

func agentCall(ctx context.Context, e *env, args []string, af *answerFlags, yes bool, timeout time.Duration) (err error) {
	const cmd = "agent call"
	tool := args[1]
	arguments, err := e.callArguments(cmd, args[2])
	if err != nil {
		return err
	}
	e.term.status.raw = e.errRaw
	e.tasks = &taskWatch{w: e.err}
	features, err := e.clientFeatures(cmd, af, yes, true)
	if err != nil {
		return err
	}
	ref, h, work, err := e.hostForTimed(ctx, cmd, args[0], timeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, work)
	defer cancel()
	defer func() { err = withTimeoutHint(ctx, e, err, timeout) }()

	// --yes is the explicit auto-allow; otherwise a person decides, and
	// without a terminal nobody can: the call is denied.
	var perm run.Permission = policy.AutoAllow()
	if !yes {
		perm = policy.Human(e.askOnTerminal)
	}
	e.progress("starting a Run of %s...", ref)
	// The operator is who a server's stderr is for: the ToolError and the
	// notice show it, as to a model of a host that opted in.
	r, err := h.NewRun(ctx, ref, &run.Options{Permission: perm, ServerStderrToModel: true, ClientFeatures: features, Auditor: &serverAuditor{e: e}})
	if err != nil {
		return runError(ctx, e, ref, err)
	}
	defer r.Close()
	for _, m := range r.MountErrors() {
		merr := e.withSecretHelp(ctx, m.Err)
		text := mountErrorText(merr)
		fmt.Fprintf(e.err, "warning: mount %s failed to load; its tools are missing: %s\n", m.Ref, shown(text, maxLineWidth))
		if hint := commandHint(merr, text); hint != "" && !strings.HasPrefix(hint, "(") {
			fmt.Fprintf(e.err, "  %s\n", hint)
		}
	}

	out, err := r.Execute(ctx, run.Batch{ID: "agt-cli", Agent: ref, Calls: []run.Call{
		{ID: "call-1", Name: tool, Arguments: json.RawMessage(arguments)},
	}})
	e.term.status.clear()
	var be *run.BatchError
	if errors.As(err, &be) {
		writeRaw(e.out, be.ToolError())
		if be.Code == run.CodeUnknownTool {
			// A tool the registration excludes or the Run left out is
			// no misspelling: the message says why, and no other tool
			// is offered in its place.
			if !be.NotOffered {
				if near := toolSuggestion(tool, r.Tools()); near != "" {
					fmt.Fprintf(e.err, "did you mean %s?\n", shown(near, maxCellWidth))
				}
			}
			fmt.Fprintf(e.err, "'agt agent tools %s' lists the tools this agent can call\n", ref)
		}
		return errReported
	}
	if err != nil && (len(out.Results) != 1 || !errors.Is(err, ctx.Err())) {
		return err
	}
	if n := out.Notice(); n != "" {
		first, rest, _ := strings.Cut(n, "\n")
		fmt.Fprintf(e.err, "note: %s\n", shown(first, maxLineWidth))
		for _, line := range strings.Split(rest, "\n") {
			if line != "" {
				fmt.Fprintf(e.err, "  | %s\n", shown(line, maxLineWidth))
			}
		}
	}
	res := out.Results[0]
	if res.Failed() {
		writeRaw(e.out, res.ToolError())
		if err != nil { // the command's context ended: --timeout, or a signal
			what := "was interrupted"
			if errors.Is(err, context.DeadlineExceeded) {
				what = fmt.Sprintf("timed out: it did not finish within --timeout %s", timeout)
			}
			fmt.Fprintf(e.err, "the call %s\n", what)
		}
		if e.tasks.cancelled(res.Code) {
			fmt.Fprintln(e.err, "agt asked the server to cancel the task it was running for the call")
		}
		return errReported
	}
	writeRaw(e.out, res.ForModel())
	return nil
}

// taskWatch shows, on stderr, the status of the task a server runs for
// agent call's call (an MCP task): one line per new status, with the
// server's message made safe by shown.
type taskWatch struct {
	w    io.Writer
	mu   sync.Mutex
	last string // the last status seen, "" before any
}

func (tw *taskWatch) observe(_ context.Context, n run.Notification) {
	if n.Task == nil {
		return
	}
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.last = n.Task.Status
	fmt.Fprintln(tw.w, taskLine(*n.Task))
}

// taskLine is the line of a task's status: "task STATUS[: MESSAGE]",
// the server's text made safe by shown (the task's id is left out).
func taskLine(st mcpconn.TaskStatus) string {
	line := "task " + shown(st.Status, maxCellWidth)
	if st.Message != "" {
		line += ": " + shown(st.Message, maxLineWidth)
	}
	return line
}

// cancelled reports whether mcpconn cancelled the call's task (sent
// tasks/cancel) because the call ended with code: the call's time ran
// out or it was interrupted while the task was still running.
func (tw *taskWatch) cancelled(code run.Code) bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	running := tw.last == mcpconn.TaskWorking || tw.last == mcpconn.TaskInputRequired
	return running && (code == run.CodeDeadlineExceeded || code == run.CodeCanceled)
}

// writeRaw prints JSON indented, keeping its key order, with the
// characters controlFilter would replace escaped (the JSON stays exact),
// or, if it does not parse, as a quoted string.
func writeRaw(w io.Writer, raw json.RawMessage) {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		fmt.Fprintf(w, "%+q\n", raw)
		return
	}
	buf.WriteByte('\n')
	_, _ = w.Write(escapeUnsafe(buf.Bytes()))
}

// maxShownArguments bounds the arguments shown in a permission question.
const maxShownArguments = 4096

// askOnTerminal is the Human approver of agent call: it shows the call on
// stderr and reads the answer from stdin, which must be a terminal.
func (e *env) askOnTerminal(ctx context.Context, req run.Request) (bool, string, error) {
	if e.stdinTaken {
		return false, "stdin held the arguments (-), so nobody can approve the call there: pass --yes to allow it explicitly", nil
	}
	if !e.inIsTTY {
		return false, "stdin is not a terminal, so nobody can approve the call: pass --yes to allow it explicitly", nil
	}
	e.term.mu.Lock()
	defer e.term.mu.Unlock()
	e.term.status.pause()
	defer e.term.status.resume()
	args := text.Bound(string(req.Arguments), maxShownArguments)
	// The source holds the server's own tool name: it must not forge a
	// line of the question.
	fmt.Fprintf(e.err, "Tool call by agent %s:\n  tool       %s\n  source     %s\n", req.Agent, shown(req.Alias, maxCellWidth), shown(req.Source.String(), maxCellWidth))
	if req.Annotations != nil && req.Annotations.DestructiveHint != nil && *req.Annotations.DestructiveHint {
		fmt.Fprintf(e.err, "  the server marks this tool destructive\n")
	}
	fmt.Fprintf(e.err, "  arguments  %s\nAllow it? [y/N] ", args)
	line, err := e.term.input.readLine(ctx, e.in)
	if ctx.Err() != nil {
		fmt.Fprintln(e.err)
		return false, "no answer before the deadline", nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		if err == nil {
			return true, "approved on the terminal", nil
		}
	}
	return false, "refused on the terminal", nil
}
