package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
)

// maxParallelProbes bounds the servers agent check --probe starts at once.
const maxParallelProbes = 4

// progress prints a line on stderr when stderr is a terminal: long
// operations say what they are doing, scripts get clean stderr.
func (e *env) progress(format string, args ...any) {
	if e.errIsTTY {
		fmt.Fprintf(e.err, format+"\n", args...)
	}
}

func mcpTest(ctx context.Context, e *env, refArg string, asJSON bool) error {
	ref, err := parseRefArg("mcp test", refArg)
	if err != nil {
		return err
	}
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	rep, err := h.Resources().Test(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: ref})
	if err != nil {
		return e.withRefSuggestion(ctx, resource.KindMCP, ref, err)
	}
	if asJSON {
		if err := writeJSON(e.out, rep); err != nil {
			return err
		}
	} else {
		verdict := "ok: the configuration looks startable (nothing was started; 'agt mcp probe' starts it)"
		if !rep.OK {
			verdict = "problems found"
		}
		fmt.Fprintf(e.out, "mcp %s (revision %d): %s\n", ref, rep.Revision, verdict)
		writeFindings(e, "  ", rep.Findings, "", ref)
		if note := loginNote(ctx, e, ref); note != "" {
			fmt.Fprintln(e.out, "  "+note)
		}
		if sf := e.secretAccount(ctx, ref); sf != nil {
			// Not a finding of the document: the references are
			// resolved at each start, from what agt has then.
			fmt.Fprintf(e.out, "  warning: %s\n  %s\n", sf.msg, sf.hint)
		}
	}
	if !rep.OK {
		return errReported
	}
	return nil
}

// writeFindings prints findings with agt's fix where it has one
// (findingFix) for the agent and the mount they are about.
func writeFindings(e *env, indent string, fs []resource.Finding, agent, ref resource.Ref) {
	for _, f := range fs {
		if fix := findingFix(f, agent, ref); fix != "" {
			f.Fix = fix
		}
		where := ""
		if f.Field != "" {
			where = f.Field + ": "
		}
		fmt.Fprintf(e.out, "%s%-7s %s%s\n", indent, f.Severity, where, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(e.out, "%s        fix: %s\n", indent, f.Fix)
		}
	}
}

func mcpProbe(ctx context.Context, e *env, refArg string, timeout time.Duration, asJSON, strict bool) (err error) {
	ref, h, work, err := e.hostForTimed(ctx, "mcp probe", refArg, timeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, work)
	defer cancel()
	defer func() { err = withTimeoutHint(ctx, e, err, timeout) }()
	e.progress("probing %s: starting or contacting the server, listing and compiling its tools...", ref)
	rep, err := h.Prober().Probe(ctx, ref)
	err = e.probeSecretHelp(ctx, rep, err)
	if rep == nil {
		return e.withRefSuggestion(ctx, resource.KindMCP, ref, err) // the document could not be read
	}
	if asJSON {
		if werr := writeJSON(e.out, newProbeJSON(rep)); werr != nil {
			return werr
		}
	} else {
		writeProbe(e, rep, err, strict)
	}
	if err != nil || probeFails(rep, strict) {
		return errReported
	}
	return nil
}

// usableTools counts the tools of rep that a Run would offer.
func usableTools(rep *mcpconn.ProbeReport) int {
	n := 0
	for _, t := range rep.Tools {
		if t.OK {
			n++
		}
	}
	return n
}

// probeFails reports whether a probe fails its command (exit status 1):
// the server could not be started, connected or listed; it offers tools
// and a Run could use none of them; or, with strict (--strict), a Run
// would leave one out. Otherwise the tools a Run leaves out are a warning.
// Tools the registration excludes are its choice, never a failure.
func probeFails(rep *mcpconn.ProbeReport, strict bool) bool {
	if rep.Error != "" {
		return true
	}
	usable := usableTools(rep)
	return len(rep.Tools) > 0 && usable == 0 || strict && usable < len(rep.Tools)
}

// Bounds of leftOutSummary: the reasons it names, and the tools per
// reason; the probe's table lists them all.
const (
	maxLeftOutReasons = 3
	maxLeftOutNames   = 5
)

// leftOutSummary names the tools a Run would leave out, grouped by a short
// reason (leftOutReason), in the server's order: "a, b (input schema
// does not compile); c (...)".
func leftOutSummary(rep *mcpconn.ProbeReport) string {
	var reasons []string
	names := map[string][]string{}
	for _, t := range rep.Tools {
		if t.OK {
			continue
		}
		why := leftOutReason(t)
		if _, ok := names[why]; !ok {
			reasons = append(reasons, why)
		}
		names[why] = append(names[why], shown(t.Name, maxCellWidth))
	}
	var b strings.Builder
	more := 0
	for i, why := range reasons {
		if i == maxLeftOutReasons {
			more += len(names[why])
			continue
		}
		if i > 0 {
			b.WriteString("; ")
		}
		ns := names[why]
		if len(ns) > maxLeftOutNames {
			b.WriteString(strings.Join(ns[:maxLeftOutNames], ", "))
			fmt.Fprintf(&b, " and %d more", len(ns)-maxLeftOutNames)
		} else {
			b.WriteString(strings.Join(ns, ", "))
		}
		b.WriteString(" (" + why + ")")
	}
	if more > 0 {
		fmt.Fprintf(&b, "; %s for other reasons", plural(more, "more tool", "more tools"))
	}
	return b.String()
}

// leftOutReason is why a Run would leave the tool out, in a few words;
// the probe's table has the whole reason.
func leftOutReason(t mcpconn.ToolReport) string {
	var se *toolschema.SchemaError
	switch {
	case errors.As(t.Err, &se):
		return "input schema does not compile"
	}
	return oneLine(t.Error, maxCellWidth)
}

// probeVerdict is the first words of a probe's report, after the server
// answered and listed: "ok", or how many of its tools a Run could use;
// leftOut names those it would leave out, and why (leftOutSummary), ""
// when none.
func probeVerdict(rep *mcpconn.ProbeReport) (verdict, leftOut string) {
	usable := usableTools(rep)
	switch {
	case len(rep.Tools) == 0 && rep.Excluded > 0:
		return fmt.Sprintf("ok, but the registration's enabled_tools/disabled_tools leave out all %s the server lists", plural(rep.Excluded, "tool", "tools")), ""
	case usable == len(rep.Tools):
		return "ok", ""
	case usable == 0:
		return fmt.Sprintf("no tool usable (0 of %d)", len(rep.Tools)), leftOutSummary(rep)
	}
	return fmt.Sprintf("%d of %d tools usable", usable, len(rep.Tools)), leftOutSummary(rep)
}

// probeJSON is the probe report as agt prints it (the command-line
// contract the README documents): the keys reference, server, protocol_version,
// tools[].name, .ok, .error and duration_ms are always present. server is
// null and protocol_version "" when no handshake happened; a tool's error
// is null when its schema compiled. usable counts the tools whose ok is
// true (what a Run would offer); ok stays mcpconn's: every tool usable.
// The other fields are mcpconn's, in its order.
type probeJSON struct {
	Reference       resource.Ref          `json:"reference"`
	Revision        int64                 `json:"revision"`
	Entry           string                `json:"entry,omitempty"`
	Transport       string                `json:"transport,omitempty"`
	Server          *mcpconn.ServerReport `json:"server"`
	ProtocolVersion string                `json:"protocol_version"`
	Capabilities    any                   `json:"capabilities,omitempty"`
	Tools           []probeToolJSON       `json:"tools"`
	Excluded        int                   `json:"excluded,omitempty"`
	Usable          int                   `json:"usable"`
	OK              bool                  `json:"ok"`
	Error           string                `json:"error,omitempty"`
	StdoutHead      string                `json:"stdout_head,omitempty"`
	StderrTail      string                `json:"stderr_tail,omitempty"`
	DurationMS      int64                 `json:"duration_ms"`
	ConnectMS       int64                 `json:"connect_ms"`
	ListMS          int64                 `json:"list_ms"`
	CompileMS       int64                 `json:"compile_ms"`
}

type probeToolJSON struct {
	Name  string  `json:"name"`
	OK    bool    `json:"ok"`
	Error *string `json:"error"`
}

func newProbeJSON(rep *mcpconn.ProbeReport) probeJSON {
	out := probeJSON{
		Reference: rep.Reference, Revision: rep.Revision, Entry: rep.Entry, Transport: rep.Transport,
		Server: rep.Server, ProtocolVersion: rep.ProtocolVersion,
		Tools: make([]probeToolJSON, len(rep.Tools)), Excluded: rep.Excluded, Usable: usableTools(rep),
		OK: rep.OK, Error: rep.Error, StdoutHead: rep.StdoutHead, StderrTail: rep.StderrTail,
		DurationMS: rep.DurationMS, ConnectMS: rep.ConnectMS, ListMS: rep.ListMS, CompileMS: rep.CompileMS,
	}
	if rep.Capabilities != nil {
		out.Capabilities = rep.Capabilities
	}
	for i, t := range rep.Tools {
		out.Tools[i] = probeToolJSON{Name: t.Name, OK: t.OK}
		if !t.OK {
			msg := t.Error
			out.Tools[i].Error = &msg
		}
	}
	return out
}

// writeProbe prints a probe report; err is the probe's error, for agt's
// hint.
func writeProbe(e *env, rep *mcpconn.ProbeReport, err error, strict bool) {
	server := "no server answered"
	if rep.Server != nil {
		server = strings.TrimSpace(shown(rep.Server.Name, maxCellWidth) + " " + shown(rep.Server.Version, maxCellWidth))
	}
	if rep.Error != "" {
		fmt.Fprintf(e.out, "probe %s: failed after %d ms: %s\n", rep.Reference, rep.DurationMS, shown(rep.Error, maxLineWidth))
		writeServerOutput(e.out, "", rep.StdoutHead, rep.StderrTail)
		hint := commandHint(err, rep.Error)
		if hint == "" || strings.HasPrefix(hint, "(") {
			hint = fmt.Sprintf("next: 'agt mcp test %s' checks the configuration; 'agt mcp update %s' fixes it", rep.Reference, rep.Reference)
		}
		fmt.Fprintln(e.out, hint)
		return
	}
	verdict, leftOut := probeVerdict(rep)
	if leftOut != "" {
		verdict += "; left out: " + leftOut
	}
	tools := plural(len(rep.Tools), "tool", "tools")
	if rep.Excluded > 0 {
		tools += fmt.Sprintf(" (%d more left out by enabled_tools/disabled_tools)", rep.Excluded)
	}
	fmt.Fprintf(e.out, "probe %s: %s\n  server %s, protocol %s, %s, %d ms (connect %d, list %d, compile %d)\n",
		rep.Reference, verdict, server, shown(rep.ProtocolVersion, maxCellWidth), tools, rep.DurationMS, rep.ConnectMS, rep.ListMS, rep.CompileMS)
	if len(rep.Tools) == 0 {
		return
	}
	t := newTable(e.out)
	fmt.Fprintln(t, "  TOOL\tSTATUS")
	for _, tool := range rep.Tools {
		status := "ok"
		if !tool.OK {
			status = "left out: " + oneLine(tool.Error, 400) // long enough for the fix the message ends with
		}
		fmt.Fprintf(t, "  %s\t%s\n", shown(tool.Name, maxCellWidth), status)
	}
	t.Flush()
	if usable := usableTools(rep); usable > 0 && usable < len(rep.Tools) {
		if strict {
			fmt.Fprintln(e.out, "failed: --strict fails the probe for a tool left out")
		} else {
			fmt.Fprintf(e.out, "warning: a Run leaves out %s and offers the others; --strict makes that fail\n", plural(len(rep.Tools)-usable, "tool", "tools"))
		}
	}
}

func agentMCPs(ctx context.Context, e *env, refArg string, asJSON bool) error {
	ref, err := parseRefArg("agent mcps", refArg)
	if err != nil {
		return err
	}
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	mounts, err := h.Resources().AgentMCPList(ctx, resource.Direct(), ref)
	if err != nil {
		return e.withRefSuggestion(ctx, resource.KindAgent, ref, err)
	}
	if mounts == nil {
		mounts = []resource.Mount{}
	}
	if asJSON {
		return writeJSON(e.out, mounts)
	}
	if len(mounts) == 0 {
		fmt.Fprintf(e.err, "agent %s has no MCP servers mounted; mount one with 'agt agent update %s --add-mcp REF'\n", ref, ref)
		return nil
	}
	t := newTable(e.out)
	fmt.Fprintln(t, "REFERENCE\tRESOLVES\tREVISION\tPROBLEM")
	for _, m := range mounts {
		rev := "-"
		if m.Resolves {
			rev = fmt.Sprint(m.Revision)
		}
		problem := m.Problem
		if problem == "" {
			problem = "-" // no trailing blanks on the line
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\n", m.Ref, yesNo(m.Resolves), rev, problem)
	}
	return t.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// checkReport is agent check's JSON: the static report, plus the probes
// when --probe was given.
type checkReport struct {
	resource.AgentReport
	Probes []probeJSON `json:"probes,omitempty"`
	probes []probed
	near   string // the registered agent nearest to a missing one
}

// probed is one probe of agent check --probe, with its error for the hint.
type probed struct {
	rep *mcpconn.ProbeReport
	err error
}

func agentCheck(ctx context.Context, e *env, refArg string, probe, strict bool, timeout time.Duration, asJSON bool) (err error) {
	ref, h, work, err := e.hostForTimed(ctx, "agent check", refArg, timeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, work)
	defer cancel()
	defer func() { err = withTimeoutHint(ctx, e, err, timeout) }()
	rep, err := h.Resources().CheckAgent(ctx, resource.Direct(), ref)
	if err != nil {
		return err
	}
	for i := range rep.Mounts {
		if rep.Mounts[i].Findings == nil {
			rep.Mounts[i].Findings = []resource.Finding{} // [] in JSON, as elsewhere
		}
	}
	out := checkReport{AgentReport: rep}
	ok := rep.OK
	if probe {
		out.probes = probeMounts(ctx, e, h.Prober(), rep.Mounts)
		for _, p := range out.probes {
			if probeFails(p.rep, strict) {
				ok = false
			}
			out.Probes = append(out.Probes, newProbeJSON(p.rep))
		}
	}
	if !rep.Exists {
		var se *suggestedError
		if errors.As(e.withRefSuggestion(ctx, resource.KindAgent, ref, resource.ErrNotFound), &se) {
			out.near = se.near
		}
	}
	if asJSON {
		if err := writeJSON(e.out, out); err != nil {
			return err
		}
	} else {
		writeCheck(e, out, ok)
	}
	if !ok {
		return errReported
	}
	return nil
}

// probeMounts probes every mount that resolves, a few at a time, and
// returns the reports in mount order.
func probeMounts(ctx context.Context, e *env, prober *mcpconn.Prober, mounts []resource.MountReport) []probed {
	reports := make([]probed, len(mounts))
	sem := make(chan struct{}, maxParallelProbes)
	var wg sync.WaitGroup
	for i, m := range mounts {
		if !m.Resolves {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			e.progress("probing %s...", m.Ref)
			rep, err := prober.Probe(ctx, m.Ref)
			if rep == nil {
				msg := "the probe failed"
				if err != nil {
					msg = err.Error()
				}
				rep = &mcpconn.ProbeReport{Reference: m.Ref, Tools: []mcpconn.ToolReport{}, Error: msg}
			}
			reports[i] = probed{rep: rep, err: e.probeSecretHelp(ctx, rep, err)}
		}()
	}
	wg.Wait()
	out := reports[:0]
	for _, r := range reports {
		if r.rep != nil {
			out = append(out, r)
		}
	}
	return out
}

func writeCheck(e *env, rep checkReport, ok bool) {
	if !rep.Exists {
		near := ""
		if rep.near != "" {
			near = " (did you mean " + rep.near + "?)"
		}
		fmt.Fprintf(e.out, "agent %s: not registered%s\n", rep.Agent, near)
	} else {
		fmt.Fprintf(e.out, "agent %s (revision %d): enabled %s, manages resources %s, %s\n",
			rep.Agent, rep.Revision, yesNo(rep.Enabled), yesNo(rep.CanManage), plural(len(rep.Mounts), "mount", "mounts"))
	}
	writeFindings(e, "  ", rep.Problems, rep.Agent, "")
	leftOut := 0 // the tools a Run would leave out, of the servers that answered
	probes := map[resource.Ref]probed{}
	for _, p := range rep.probes {
		probes[p.rep.Reference] = p
	}
	for _, m := range rep.Mounts {
		status := "registered, static checks ok"
		switch {
		case !m.Resolves:
			status = "missing: " + m.Problem
		case !m.OK:
			status = "registered, static checks found problems"
		}
		fmt.Fprintf(e.out, "  mount %s: %s\n", m.Ref, status)
		writeFindings(e, "    ", m.Findings, rep.Agent, m.Ref)
		p, probedMount := probes[m.Ref]
		switch {
		case !probedMount:
		case p.rep.Error != "":
			fmt.Fprintf(e.out, "    probe: failed after %d ms: %s\n", p.rep.DurationMS, shown(p.rep.Error, maxLineWidth))
			writeServerOutput(e.out, "    ", p.rep.StdoutHead, p.rep.StderrTail)
			if h := commandHint(p.err, p.rep.Error); h != "" && !strings.HasPrefix(h, "(") {
				fmt.Fprintf(e.out, "    %s\n", h)
			}
		case usableTools(p.rep) < len(p.rep.Tools):
			leftOut += len(p.rep.Tools) - usableTools(p.rep)
			verdict, why := probeVerdict(p.rep)
			fmt.Fprintf(e.out, "    probe: %s, %d ms; left out: %s\n", verdict, p.rep.DurationMS, why)
		case len(p.rep.Tools) == 0 && p.rep.Excluded > 0:
			verdict, _ := probeVerdict(p.rep)
			fmt.Fprintf(e.out, "    probe: %s, %d ms\n", verdict, p.rep.DurationMS)
		default:
			fmt.Fprintf(e.out, "    probe: ok, %s, %d ms\n", plural(len(p.rep.Tools), "tool", "tools"), p.rep.DurationMS)
		}
	}
	switch {
	case !ok:
		fmt.Fprintln(e.out, "not ready")
	case leftOut > 0:
		fmt.Fprintf(e.out, "ready, but a Run leaves out %s (named above; 'agt mcp probe' gives the whole reason; --strict makes that fail)\n", plural(leftOut, "tool", "tools"))
	default:
		fmt.Fprintln(e.out, "ready")
	}
}
