//lint:file-ignore SA1019 roots and sampling are deprecated from protocol 2026-07-28 as server requests; agt still answers them in both eras (a modern server asks inside input_required results)

package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/run"
)

// What agent call and agent tools offer the mounted servers, as a host
// does through run.ClientFeatures: elicitation answered on the terminal
// (form.go), roots from --root or the current directory, sampling by a
// command only when one is given (sampler.go), and the progress of a call
// on a terminal's stderr. agent tools declares the same, so that it lists
// the tools a call would see.

// samplingCommandVar names the variable that gives the sampling command
// when --sampling-command is not given.
const samplingCommandVar = "AGT_SAMPLING_COMMAND"

// answerFlags are the flags of agent tools and agent call that say what
// agt offers the servers.
type answerFlags struct {
	roots           stringList
	samplingCommand string
	samplingTimeout time.Duration
}

func defineAnswerFlags(fs *flag.FlagSet) *answerFlags {
	af := &answerFlags{}
	fs.Var(&af.roots, "root", "offer the servers this `DIR` as a root (roots/list); repeat for more (default: the current directory)")
	fs.StringVar(&af.samplingCommand, "sampling-command", "", "answer the servers' sampling requests with this `COMMAND` (program and arguments, split at spaces, no shell): it reads the request JSON on stdin and writes the result JSON on stdout (default $"+samplingCommandVar+"; none: sampling is not offered)")
	fs.DurationVar(&af.samplingTimeout, "sampling-timeout", time.Minute, "kill the sampling command after this `DURATION`")
	return af
}

// clientFeatures are the run.ClientFeatures of agent call (call true) and
// agent tools: the same declarations, so both see the same tools.
func (e *env) clientFeatures(cmd string, af *answerFlags, yes, call bool) (*run.ClientFeatures, error) {
	roots, err := rootsOf(cmd, af.roots)
	if err != nil {
		return nil, err
	}
	f := &run.ClientFeatures{Roots: roots, Elicit: e.elicitOnTerminal(yes)}
	command := af.samplingCommand
	flagName := "--sampling-command"
	if command == "" {
		command, flagName = os.Getenv(samplingCommandVar), "$"+samplingCommandVar
	}
	if command != "" {
		argv := strings.Fields(command)
		if len(argv) == 0 {
			return nil, usagef(cmd, "%s is blank: give a program, or leave it unset to offer no sampling", flagName)
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			return nil, usagef(cmd, "%s: the program %s is not found or not executable: give its absolute path or a name in PATH", flagName, clip(argv[0]))
		}
		if af.samplingTimeout <= 0 {
			return nil, usagef(cmd, "--sampling-timeout must be positive")
		}
		s := &sampler{argv: argv, timeout: af.samplingTimeout, e: e}
		f.Sample = s.sample
	}
	if call {
		e.sampling = f.Sample != nil
		f.Observe = e.observe
	}
	return f, nil
}

// rootsOf turns --root flags (default: the current directory) into
// roots: absolute, existing directories, as file:// URIs.
func rootsOf(cmd string, dirs []string) ([]*mcp.Root, error) {
	if len(dirs) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			// No root rather than a wrong one; --root gives them.
			return []*mcp.Root{}, nil
		}
		dirs = []string{wd}
	}
	roots := make([]*mcp.Root, 0, len(dirs))
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, usagef(cmd, "--root %s: %v", clip(d), err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, usagef(cmd, "--root %s: not a directory", clip(d))
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
		roots = append(roots, &mcp.Root{URI: u.String(), Name: filepath.Base(abs)})
	}
	return roots, nil
}

// maxProgressMessage bounds the server's message in the progress line,
// so that the line stays one line of a terminal, which a carriage return
// rewrites.
const maxProgressMessage = 60

// terminal is what agent call keeps for its questions and its progress
// line: one person answers one question at a time.
type terminal struct {
	mu       sync.Mutex // held while a question is on the terminal
	input    termInput
	status   statusLine
	declined int // requests declined without a person to ask (under mu)
}

// observe is agent call's run.ClientFeatures.Observe: the progress of the
// call on a terminal's stderr (one line, rewritten; nothing on a pipe),
// and the status of a task it runs.
func (e *env) observe(ctx context.Context, n run.Notification) {
	switch {
	case n.Progress != nil:
		p := n.Progress
		line := fmt.Sprintf("progress %g", p.Progress)
		if p.Total > 0 {
			line = fmt.Sprintf("progress %g/%g", p.Progress, p.Total)
		}
		if p.Message != "" {
			line += ": " + shown(oneLine(p.Message, maxProgressMessage), maxProgressMessage)
		}
		e.term.status.set(line)
	case n.Task != nil:
		e.term.status.clear()
		e.tasks.observe(ctx, n)
	}
}

// serverAuditor is agent call's run.Auditor: it tells the operator about
// a sampling request agt refused because no command answers it.
type serverAuditor struct {
	e    *env
	once sync.Once
}

func (a *serverAuditor) Audit(_ context.Context, rec run.Record) {
	if rec.Event != "server_request" || rec.Request != mcpconn.MethodCreateMessage || rec.Outcome != mcpconn.OutcomeRefused || a.e.sampling {
		return
	}
	a.once.Do(func() {
		a.e.term.status.clear()
		fmt.Fprintf(a.e.err, "server %s asked for sampling (an answer of a model), which agt refused: it answers sampling only with --sampling-command COMMAND (or $%s), a program that reads the request JSON on stdin and writes the result JSON\n",
			shown(string(rec.Source.Ref), maxCellWidth), samplingCommandVar)
	})
}
