package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	agtrun "github.com/agtsdk/agt/run"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "durable-tasks:", err)
		os.Exit(1)
	}
}

// The names the host registers, and the IDs of its one batch and call: a
// host started again executes the same batch, and the call of the same ID
// resumes the task stored for it.
const (
	serverRef = resource.Ref("tasks")
	agentRef  = resource.Ref("durable")
	batchID   = "batch-1"
	callID    = "call-1"
)

// config is what the flags say.
type config struct {
	dir, url, runID, tool string
	args                  json.RawMessage
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("durable-tasks", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var cfg config
	var callArgs string
	fs.StringVar(&cfg.dir, "dir", "", "the agt data directory (a bbolt store); with -url, required")
	fs.StringVar(&cfg.url, "url", "", "an MCP server over streamable HTTP with a task tool; none: the bundled fake server, in this process")
	fs.StringVar(&cfg.runID, "run-id", "run-1", "the Run's ID: a host started again with it resumes its tasks")
	fs.StringVar(&cfg.tool, "tool", mcptest.ToolTaskWork, "the server's tool to call")
	fs.StringVar(&callArgs, "args", `{"text":"the report is ready","steps":20,"step_ms":200}`, "the call's arguments, a JSON object")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q: every input is a flag", fs.Arg(0))
	case !runIDPattern.MatchString(cfg.runID):
		return errors.New("-run-id must be 1 to 64 letters, digits, '.', '_' or '-' (it names the checkpoint file)")
	case cfg.tool == "":
		return errors.New("-tool must not be empty")
	case !json.Valid([]byte(callArgs)):
		return errors.New("-args is not valid JSON: give the call's arguments as a JSON object")
	}
	cfg.args = json.RawMessage(callArgs)
	p := &printer{w: stdout}
	if cfg.url == "" {
		return demo(ctx, cfg, p)
	}
	if cfg.dir == "" {
		return errors.New("-dir is required with -url: the task's handle must outlive this process")
	}
	return host(ctx, cfg, p)
}

// host is one start of the host: it executes the batch and prints the
// call's result. A signal (ctx ends) closes the Run, which keeps the
// task's handle: cancelling the call would cancel the task on the server.
func host(ctx context.Context, cfg config, p *printer) error {
	h, err := agt.Open(ctx, cfg.dir, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := register(ctx, h.Resources(), cfg.url); err != nil {
		return err
	}
	if ts, ok := h.Repository().(resource.TaskStore); ok {
		stored, err := ts.Tasks(ctx, cfg.runID)
		if err != nil {
			return err
		}
		p.line("run %s: %d stored task handle(s)", cfg.runID, len(stored))
		for _, t := range stored {
			p.line("  call %s: a task of %s on %s, created %s", t.Call, t.Tool, t.Server, t.Created.Format("15:04:05"))
		}
	}
	r, err := startRun(ctx, h, cfg, p, &agtrun.Options{
		RunID:      cfg.runID,
		Permission: policy.AutoAllow(),
		ClientFeatures: &agtrun.ClientFeatures{Observe: func(_ context.Context, n agtrun.Notification) {
			if n.Task == nil {
				return
			}
			if n.Task.Message == "" {
				p.line("task %s", n.Task.Status)
			} else {
				p.line("task %s: %s", n.Task.Status, n.Task.Message)
			}
		}},
	})
	if err != nil {
		return err
	}
	defer r.Close()
	stop := context.AfterFunc(ctx, func() { _ = r.Close() })
	defer stop()
	out, err := r.Execute(context.WithoutCancel(ctx), agtrun.Batch{ID: batchID, Agent: agentRef,
		Calls: []agtrun.Call{{ID: callID, Name: agtrun.Alias(serverRef, cfg.tool), Arguments: cfg.args}}})
	if err == nil && out.Results[0].Failed() && ctx.Err() != nil {
		p.line("stopped: the task's handle stays stored; start again with the same -dir and -run-id to collect its result")
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if err != nil {
		return err
	}
	// The batch has its result, printed even if a signal came too: its
	// handle is gone, this is the one time it is collected. The Run is
	// done: its checkpoint goes, a next start is a new Run.
	if res := out.Results[0]; res.Failed() {
		err = fmt.Errorf("the call failed: %s: %s", res.Code, res.Message)
	} else {
		err = printText(p, res)
	}
	return errors.Join(err, os.Remove(checkpointFile(cfg)))
}

// printText prints the text blocks of a result.
func printText(p *printer, res agtrun.Result) error {
	blocks, err := res.Blocks()
	if err != nil {
		return err
	}
	for _, b := range blocks {
		if t, ok := b.(*content.Text); ok {
			p.line("result: %s", t.Text)
		}
	}
	return nil
}

// runIDPattern is what -run-id may be.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// checkpointFile is where the host keeps the Run's checkpoint.
func checkpointFile(cfg config) string {
	return filepath.Join(cfg.dir, "checkpoint-"+cfg.runID+".json")
}

// startRun resumes the Run from the checkpoint an earlier start left
// (Resume refuses, with ErrFingerprintMismatch, when the agent's tools
// changed since), or starts it and writes its checkpoint: either way the
// Run loads the task handles stored under its RunID.
func startRun(ctx context.Context, h *agt.Host, cfg config, p *printer, opts *agtrun.Options) (*agtrun.Run, error) {
	path := checkpointFile(cfg)
	raw, err := os.ReadFile(path)
	if err == nil {
		var cp agtrun.Checkpoint
		if err := json.Unmarshal(raw, &cp); err != nil {
			return nil, fmt.Errorf("the checkpoint of run %s: %w", cfg.runID, err)
		}
		p.line("run %s: resumed from its checkpoint", cfg.runID)
		return h.Resume(ctx, cp, opts)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	r, err := h.NewRun(ctx, agentRef, opts)
	if err != nil {
		return nil, err
	}
	if raw, err = json.Marshal(r.Checkpoint()); err == nil {
		err = writeFile(path, raw)
	}
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// writeFile writes a file whole or not at all (a kill midway leaves no
// half file): a temporary file renamed into place.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// register stores the server and the agent that mounts it, or updates
// them: a write that changes nothing keeps the revision, so a stored
// task handle (bound to the registration's revision) stays valid.
func register(ctx context.Context, svc *resource.Service, url string) error {
	for _, req := range []resource.WriteRequest{
		{Ref: serverRef, Server: &resource.MCPServer{Type: resource.TransportHTTP, URL: url}},
		{Ref: agentRef, Agent: &resource.AgentDocument{MCPs: []resource.Ref{serverRef}}},
	} {
		req.Create = true
		_, err := svc.Write(ctx, resource.Direct(), req)
		if errors.Is(err, resource.ErrExists) {
			req.Create = false
			_, err = svc.Write(ctx, resource.Direct(), req)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// demo serves the bundled fake MCP server over HTTP in this process and
// starts the host twice on one store: the first stops at the task's first
// status, as a host that is stopped mid-task; the second collects it.
func demo(ctx context.Context, cfg config, p *printer) error {
	if cfg.dir == "" {
		dir, err := os.MkdirTemp("", "agt-durable-tasks-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.dir = dir
	}
	url, stopServer, err := serveFake()
	if err != nil {
		return err
	}
	defer stopServer()
	cfg.url = url

	p.line("== the first host calls %s; it stops at the task's first status", cfg.tool)
	first, stop := context.WithCancel(ctx)
	defer stop()
	err = host(first, cfg, &printer{w: p.w, onTask: stop})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil:
		return fmt.Errorf("the call of %s ended without a task: the demo needs a tool its server runs as a task", cfg.tool)
	case !errors.Is(err, context.Canceled):
		return err
	}
	p.line("== the second host, same store and Run ID, collects the task")
	return host(ctx, cfg, p)
}

// serveFake serves the fake MCP server with its task tools over
// streamable HTTP on 127.0.0.1, in this process, until stop.
func serveFake() (url string, stop func(), err error) {
	stdinR, stdinW := io.Pipe() // the server stops when its stdin closes
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- mcptest.Main([]string{"-http", "127.0.0.1:0", "-fault", string(mcptest.FaultTasks)}, stdinR, stdoutW, os.Stderr)
		_ = stdoutW.Close()
	}()
	sc := bufio.NewScanner(stdoutR)
	if !sc.Scan() {
		_ = stdinW.Close()
		return "", nil, fmt.Errorf("the fake MCP server did not start (exit status %d)", <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, stdoutR) }()
	url, ok := strings.CutPrefix(sc.Text(), "listening on ")
	stop = func() { _ = stdinW.Close(); <-done }
	if !ok {
		stop()
		return "", nil, errors.New("the fake MCP server did not say where it listens")
	}
	return url, stop, nil
}

// printer writes lines, one Write each (a pipe reader sees whole lines),
// from the Run's Observe and from the host. onTask, when set, is called
// after a task status line (the demo stops its first host there).
type printer struct {
	mu     sync.Mutex
	w      io.Writer
	onTask func()
}

func (p *printer) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	fmt.Fprintln(p.w, line)
	if p.onTask != nil && strings.HasPrefix(line, "task ") {
		p.onTask()
	}
}
