package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	agtrun "github.com/agtsdk/agt/run"
)

// serveFakeMCP is the first argument that turns this program into the
// bundled fake MCP server.
const serveFakeMCP = "serve-fake-mcp"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// serveFake runs this program as the bundled fake MCP server: the example
// starts itself again with serveFakeMCP as its first argument, so nothing is
// built by hand. The default signal behaviour comes back first, so that a
// Run's Close stops it with SIGTERM as it stops any server.
func serveFake(args []string, stdout io.Writer) error {
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	if code := mcptest.Main(args, os.Stdin, stdout, os.Stderr); code != 0 {
		return fmt.Errorf("the fake MCP server exited with status %d", code)
	}
	return nil
}

// The names used in the walk-through.
const (
	notesRef   = resource.Ref("notes")   // the first registration of the fake server
	archiveRef = resource.Ref("archive") // a second one, added by the model itself
	agentRef   = resource.Ref("assistant")
)

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == serveFakeMCP {
		return serveFake(args[1:], stdout)
	}
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments")
	}
	p := &printer{w: stdout}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program to start it as the fake server: %w", err)
	}

	// A throwaway store: a bbolt file in a temporary directory.
	dir, err := os.MkdirTemp("", "agt-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	host, err := agt.Open(ctx, dir, nil)
	if err != nil {
		return err
	}
	defer host.Close()
	svc := host.Resources()
	p.title("agt quickstart: register, test, probe, mount, run, with the bundled fake MCP server")
	p.line("store: a bbolt file in a temporary directory, deleted at exit")

	// 1. Register: store how to start the server. Nothing starts yet (SPEC
	// R2.1). A stdio server needs an absolute command and cwd (R2.2).
	// The fake server appends the name of every tool call it receives to
	// calls.log (in its cwd): the proof of which calls reached it.
	callLog := filepath.Join(dir, "calls.log")
	fake := func(cwd string) *resource.MCPServer {
		return &resource.MCPServer{Command: self, Args: []string{serveFakeMCP, "-call-log", "calls.log"}, Cwd: cwd}
	}
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Ref: notesRef, Create: true, Server: fake(dir), // stored as {"mcpServers": {"notes": {...}}}
	}); err != nil {
		return err
	}
	p.step("register", "mcp %q: the fake server (this program, argument %s), cwd = the store's directory", notesRef, serveFakeMCP)

	// 2. Test: static checks only (R3.1).
	tr, err := svc.Test(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: notesRef})
	if err != nil {
		return err
	}
	p.step("test", "static check ok=%t, %d findings (nothing was started)", tr.OK, len(tr.Findings))

	// 3. Probe: start it exactly as a Run would, list and compile (R3.2).
	pr, err := host.Prober().Probe(ctx, notesRef)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	p.step("probe", "%s %s, protocol %s, %d tools, every schema compiles: %t",
		pr.Server.Name, pr.Server.Version, pr.ProtocolVersion, len(pr.Tools), pr.OK)

	// 4. Mount: the agent's mcps list is its assembly (R3.3). The agent may
	// manage resources, so its Runs also get the framework tools (R3.6).
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Ref: agentRef, Create: true, Agent: &resource.AgentDocument{
			Capabilities: []string{resource.CapabilityResourceManagement}, MCPs: []resource.Ref{notesRef}},
	}); err != nil {
		return err
	}
	p.step("mount", "agent %q mounts [%s] and may manage resources", agentRef, notesRef)

	// 5. Run: connect the mounts, list, compile, snapshot (R5.1). The
	// permission policy is explicit: here, allow everything.
	r, err := host.NewRun(ctx, agentRef, &agtrun.Options{Permission: policy.AutoAllow()})
	if err != nil {
		return err
	}
	defer r.Close()
	p.step("run", "a Run of %q sees %d tools: %s", agentRef, len(r.Tools()), toolNames(r, ""))

	// 6. The scripted model. First a bad call: the Run refuses it with the
	// failing paths; no permission is asked and the server is not called
	// (R5.3).
	model := &scriptedModel{r: r, p: p}
	if err := model.batch(ctx, "a bad call", agtrun.Call{ID: "c1", Name: "mcp__notes__search",
		Arguments: json.RawMessage(`{"query": "", "limit": 0}`)}); err != nil {
		return err
	}
	p.line("   tool calls the server has received so far: %d", countLines(callLog))
	// 7. The model corrects it from the violations.
	if err := model.batch(ctx, "the corrected call", agtrun.Call{ID: "c2", Name: "mcp__notes__search",
		Arguments: json.RawMessage(`{"query": "alpha", "limit": 3}`)}); err != nil {
		return err
	}
	p.line("   tool calls the server has received so far: %d", countLines(callLog))
	// 8. The model registers a second server through the framework tool:
	// a model writes the document as JSON, in data.
	archive := resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"archive": *fake(dir)}}
	if err := model.batch(ctx, "register another server", agtrun.Call{ID: "c3", Name: "resource_write",
		Arguments: mustJSON(map[string]any{"kind": "mcp", "reference": archiveRef, "create": true, "data": archive})}); err != nil {
		return err
	}
	// 9. It mounts it on itself. Calls in this batch still use the old
	// snapshot (the echo below); the Run refreshes after the batch (R7.1).
	if err := model.batch(ctx, "mount it on itself, and echo in the same batch",
		agtrun.Call{ID: "c4", Name: "resource_write", Arguments: mustJSON(map[string]any{
			"kind": "agent", "reference": agentRef, "add": map[string]any{"mcps": []resource.Ref{archiveRef}}})},
		agtrun.Call{ID: "c5", Name: "mcp__notes__echo", Arguments: json.RawMessage(`{"text": "still the old snapshot"}`)},
	); err != nil {
		return err
	}
	p.line("   the Run now also sees: %s", toolNames(r, "mcp__archive__"))
	// 10. The new tools work in the next batch.
	if err := model.batch(ctx, "use a tool of the new mount", agtrun.Call{ID: "c6", Name: "mcp__archive__echo",
		Arguments: json.RawMessage(`{"text": "hello from archive"}`)}); err != nil {
		return err
	}
	// 11. It unmounts the first server: at the boundary its tools go and its
	// process is stopped (R7.5). The host asks the server for its process ID
	// first, to show that afterwards.
	pid, err := serverPID(ctx, r, "mcp__notes__environment")
	if err != nil {
		return err
	}
	if err := model.batch(ctx, "unmount the first server", agtrun.Call{ID: "c7", Name: "resource_write",
		Arguments: mustJSON(map[string]any{"kind": "agent", "reference": agentRef, "remove": map[string]any{"mcps": []resource.Ref{notesRef}}})}); err != nil {
		return err
	}
	p.line("   the Run now sees %d tools; none is left from %s: %t", len(r.Tools()), notesRef, toolNames(r, "mcp__notes__") == "")
	p.line("   the %s server process has exited: %t", notesRef, exited(pid))
	p.title("done: every step above ran through the same services the agt CLI uses")
	return nil
}

// serverPID asks the fake server's environment tool, through the Run, for
// the server's process ID.
func serverPID(ctx context.Context, r *agtrun.Run, tool string) (int, error) {
	out, err := r.Execute(ctx, agtrun.Batch{ID: "host-pid", Agent: r.Agent(), Calls: []agtrun.Call{{ID: "pid", Name: tool, Arguments: json.RawMessage(`{}`)}}})
	if err != nil {
		return 0, err
	}
	res := out.Results[0]
	if res.Failed() {
		return 0, fmt.Errorf("%s: %s", tool, res.ToolError())
	}
	var env struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(res.Structured, &env); err != nil || env.PID <= 0 {
		return 0, fmt.Errorf("%s: no process ID in its answer", tool)
	}
	return env.PID, nil
}

// exited reports whether process pid is gone: signal 0 checks without
// sending anything.
func exited(pid int) bool {
	proc, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	return proc.Signal(syscall.Signal(0)) != nil
}

// scriptedModel plays the model: it sends batches and prints what a real
// model would get back.
type scriptedModel struct {
	r *agtrun.Run
	p *printer
	n int
}

func (m *scriptedModel) batch(ctx context.Context, what string, calls ...agtrun.Call) error {
	m.n++
	var names []string
	for _, c := range calls {
		names = append(names, c.Name+" "+compact(c.Arguments))
	}
	m.p.step(fmt.Sprintf("batch %d", m.n), "%s: %s", what, strings.Join(names, " + "))
	out, err := m.r.Execute(ctx, agtrun.Batch{ID: fmt.Sprintf("b%d", m.n), Agent: agentRef, Calls: calls})
	var be *agtrun.BatchError
	if errors.As(err, &be) {
		m.p.line("   -> whole batch rejected: %s", be.ToolError())
		return nil
	}
	if err != nil {
		return err
	}
	for _, res := range out.Results {
		if !res.Failed() {
			m.p.line("   -> %s ok: %s", res.CallID, compact(res.ForModel()))
			continue
		}
		// What the model gets is res.ToolError(), one JSON format for
		// every failure; here it is spelled out.
		m.p.line("   -> %s failed: %s: %s", res.CallID, res.Code, res.Message)
		for _, v := range res.Violations {
			m.p.line("        %-8s %s  (schema %s)", v.Path, v.Message, v.SchemaPath)
		}
	}
	if rep := out.Refresh; rep != nil {
		if rep.OK {
			m.p.line("   -> refreshed at the batch boundary: added %v, removed %v", rep.Added, rep.Removed)
		} else {
			m.p.line("   -> %s", out.Notice())
		}
	}
	return nil
}

// printer writes the walk-through.
type printer struct{ w io.Writer }

func (p *printer) title(s string) { fmt.Fprintf(p.w, "\n== %s\n\n", s) }
func (p *printer) line(format string, args ...any) {
	fmt.Fprintf(p.w, format+"\n", args...)
}
func (p *printer) step(name, format string, args ...any) {
	fmt.Fprintf(p.w, "%-9s %s\n", name, fmt.Sprintf(format, args...))
}

func toolNames(r *agtrun.Run, prefix string) string {
	var names []string
	for _, t := range r.Tools() {
		if strings.HasPrefix(t.Name, prefix) {
			names = append(names, t.Name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// countLines counts the lines of a file; a missing file has none.
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// compact prints JSON on one line, cut when long.
func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	s := buf.String()
	if len(s) > 120 {
		cut := 120
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never inside a character
		}
		s = s[:cut] + "..."
	}
	return s
}
