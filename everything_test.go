//lint:file-ignore SA1019 sampling, roots and logging are current in protocol 2025-11-25

package agt_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingServer returns the Node binary and the script of the pinned
// @modelcontextprotocol/server-everything that CI installs (package.json,
// npm ci). Outside CI the test is skipped when they are missing; in CI it
// fails.
func everythingServer(t *testing.T) (node, script string) {
	t.Helper()
	return runtest.Node(t, ".", "@modelcontextprotocol/server-everything/dist/index.js")
}

// auditLog keeps the audit records of a Run.
type auditLog struct {
	mu   sync.Mutex
	recs []run.Record
}

func (a *auditLog) Audit(_ context.Context, rec run.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, rec)
}

func (a *auditLog) serverRequests() []run.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []run.Record
	for _, r := range a.recs {
		if r.Event == "server_request" {
			out = append(out, r)
		}
	}
	return out
}

// hostSide records what the Run's handlers received.
type hostSide struct {
	mu       sync.Mutex
	elicited []run.Origin
	sampled  []run.Origin
	notes    []run.Notification
	gotLog   chan struct{}
	logOnce  sync.Once
}

func (h *hostSide) elicit(_ context.Context, from run.Origin, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	h.mu.Lock()
	h.elicited = append(h.elicited, from)
	h.mu.Unlock()
	if props, _ := p.RequestedSchema.(map[string]any)["properties"].(map[string]any); props["interpretation"] != nil {
		// simulate-research-query's clarification, inside its task.
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "programming"}}, nil
	}
	// Only the required field: agt fills in the schema's defaults.
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace"}}, nil
}

func (h *hostSide) sample(_ context.Context, from run.Origin, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	h.mu.Lock()
	h.sampled = append(h.sampled, from)
	h.mu.Unlock()
	return &mcp.CreateMessageResult{Role: "assistant", Model: "scripted", Content: &mcp.TextContent{Text: "a scripted answer"}}, nil
}

func (h *hostSide) observe(_ context.Context, n run.Notification) {
	h.mu.Lock()
	h.notes = append(h.notes, n)
	h.mu.Unlock()
	if n.Log != nil {
		h.logOnce.Do(func() { close(h.gotLog) })
	}
}

// tasksOf counts the task statuses observed for the call.
func (h *hostSide) tasksOf(callID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, note := range h.notes {
		if c, ok := note.From.Call(); ok && note.Task != nil && c.CallID == callID {
			n++
		}
	}
	return n
}

func (h *hostSide) progressOf(callID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, note := range h.notes {
		if note.Progress == nil {
			continue
		}
		if c, ok := note.From.Call(); ok && c.CallID == callID {
			n++
		}
	}
	return n
}

// TestServerEverything drives the reference server of the MCP project
// (server-everything, pinned in package.json) through a Run with every
// host handler: elicitation (with the schema's defaults filled in),
// sampling, roots, progress, logging, an image and structured content,
// and a tool that requires tasks left out with its reason.
func TestServerEverything(t *testing.T) {
	t.Parallel()
	node, script := everythingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	h, err := agt.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{
		"command": node, "args": []string{script, "stdio"}, "cwd": t.TempDir(),
	}}})
	write(t, h, resource.KindMCP, "everything", string(doc))
	write(t, h, resource.KindAgent, "tester", `{"mcps":["everything"]}`)

	host := &hostSide{gotLog: make(chan struct{})}
	audit := &auditLog{}
	rootURI := "file:///srv/agt-e2e"
	r, err := h.NewRun(ctx, "tester", &run.Options{
		Permission:     policy.AutoAllow(),
		Logger:         slog.New(slog.DiscardHandler), // the server's log lines: the observer checks them
		Auditor:        audit,
		RunID:          "e2e",
		ClientFeatures: &run.ClientFeatures{Elicit: host.elicit, Sample: host.sample, Roots: []*mcp.Root{{URI: rootURI, Name: "e2e"}}, Observe: host.observe},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if errs := r.MountErrors(); len(errs) > 0 {
		t.Fatalf("mount errors: %v", errs)
	}

	alias := func(tool string) string { return run.Alias("everything", tool) }
	names := toolNames(r)
	for _, want := range []string{"get-tiny-image", "get-structured-content", "trigger-long-running-operation",
		"toggle-simulated-logging", "get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"} {
		if !slices.Contains(names, alias(want)) {
			t.Fatalf("tool %s not offered; the Run has %v", want, names)
		}
	}
	// The research tool requires tasks (issue 26 items 1 and 7): called
	// as a task, polled to its end, its clarification asked through the
	// Run's Elicit inside the task, its status messages observed.
	if !slices.Contains(names, alias("simulate-research-query")) {
		t.Fatalf("simulate-research-query not offered; skipped: %v", r.SkippedTools())
	}
	out, err := r.Execute(ctx, run.Batch{ID: "research", Agent: "tester", Calls: []run.Call{
		{ID: "research", Name: alias("simulate-research-query"), Arguments: json.RawMessage(`{"topic":"python","ambiguous":true}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Results[0]; res.Failed() {
		t.Fatalf("simulate-research-query failed: %s %s", res.Code, res.Message)
	} else if text := runtest.Text(t, res); !strings.Contains(text, "# Research Report: python (programming)") {
		t.Errorf("simulate-research-query = %.300q, want the report on the clarified topic", text)
	}
	if n := host.tasksOf("research"); n < 2 {
		t.Errorf("task statuses observed for the research call = %d, want at least 2", n)
	}
	// server-everything is built on the TypeScript SDK v1, which speaks
	// only the legacy era: agt, preferring the modern one, negotiates
	// 2025-11-25 (issue 25 item 9); the probe reports the era the Run's
	// connect found.
	if rep, err := h.Prober().Probe(ctx, "everything"); err != nil {
		t.Errorf("probe: %v", err)
	} else if rep.ProtocolVersion != mcpconn.LegacyProtocolVersion {
		t.Errorf("protocol version negotiated = %q, want %s", rep.ProtocolVersion, mcpconn.LegacyProtocolVersion)
	}
	if ins := r.Instructions(); len(ins) != 1 || ins[0].Text == "" {
		t.Errorf("Instructions() = %v, want the server's instructions", ins)
	}

	calls := []run.Call{
		{ID: "image", Name: alias("get-tiny-image"), Arguments: json.RawMessage(`{}`)},
		{ID: "weather", Name: alias("get-structured-content"), Arguments: json.RawMessage(`{"location":"Chicago"}`)},
		{ID: "long", Name: alias("trigger-long-running-operation"), Arguments: json.RawMessage(`{"duration":1,"steps":3}`)},
		{ID: "roots", Name: alias("get-roots-list"), Arguments: json.RawMessage(`{}`)},
		{ID: "sample", Name: alias("trigger-sampling-request"), Arguments: json.RawMessage(`{"prompt":"say hi","maxTokens":20}`)},
		{ID: "elicit", Name: alias("trigger-elicitation-request"), Arguments: json.RawMessage(`{}`)},
		{ID: "logging", Name: alias("toggle-simulated-logging"), Arguments: json.RawMessage(`{}`)},
	}
	results := map[string]run.Result{}
	// One call per batch: a server request then has exactly one call in
	// flight, so its attribution is exact.
	for i, c := range calls {
		out, err := r.Execute(ctx, run.Batch{ID: "b" + string(rune('0'+i)), Agent: "tester", Calls: []run.Call{c}})
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		res := out.Results[0]
		if res.Failed() {
			t.Fatalf("%s failed: %s %s", c.ID, res.Code, res.Message)
		}
		results[c.ID] = res
	}

	// The image stays a block, for the host and for the model.
	blocks, err := results["image"].Blocks()
	if err != nil {
		t.Fatal(err)
	}
	var image *content.Image
	for _, b := range blocks {
		if im, ok := b.(*content.Image); ok {
			image = im
		}
	}
	if image == nil || image.MIMEType != "image/png" {
		t.Fatalf("image blocks = %v, want an image/png block", blocks)
	}
	if png, err := image.Decode(); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("image data: %v, not a PNG", err)
	}
	var forModel []map[string]any
	if err := json.Unmarshal(results["image"].ForModel(), &forModel); err != nil || len(forModel) != 3 || forModel[1]["type"] != "image" {
		t.Errorf("ForModel of the image = %.200s, want the three blocks with the image as a block", results["image"].ForModel())
	}

	// Structured content byte for byte, as the server wrote it.
	if got, want := string(results["weather"].Structured), `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`; got != want {
		t.Errorf("structured content = %s, want %s", got, want)
	}

	// Progress reached the observer with its call.
	if n := host.progressOf("long"); n < 1 {
		t.Errorf("progress notifications of the long call = %d, want at least 1", n)
	}

	// Roots: the server listed the Run's root.
	if text := runtest.Text(t, results["roots"]); !strings.Contains(text, rootURI) {
		t.Errorf("get-roots-list = %q, want it to name %s", text, rootURI)
	}

	// Sampling and elicitation reached the host with their call.
	host.mu.Lock()
	sampled, elicited := slices.Clone(host.sampled), slices.Clone(host.elicited)
	host.mu.Unlock()
	if len(sampled) != 1 || len(sampled[0].Calls) != 1 || sampled[0].Calls[0].CallID != "sample" || sampled[0].Calls[0].RunID != "e2e" {
		t.Errorf("sampling origins = %+v, want the call \"sample\" of run e2e", sampled)
	}
	if text := runtest.Text(t, results["sample"]); !strings.Contains(text, "a scripted answer") {
		t.Errorf("trigger-sampling-request = %q, want the host's answer", text)
	}
	// The research task's clarification came with its task's id (_meta
	// related-task): it names its call exactly.
	if len(elicited) != 2 || len(elicited[0].Calls) != 1 || elicited[0].Calls[0].CallID != "research" ||
		len(elicited[1].Calls) != 1 || elicited[1].Calls[0].CallID != "elicit" {
		t.Errorf("elicitation origins = %+v, want the calls \"research\" and \"elicit\"", elicited)
	}
	// The host gave only the name: the schema's default reached the server.
	if text := runtest.Text(t, results["elicit"]); !strings.Contains(text, "Ada Lovelace") || !strings.Contains(text, "It was a dark and stormy night.") {
		t.Errorf("trigger-elicitation-request = %q, want the name and the default first line", text)
	}

	// Logging: the server logs every few seconds once toggled on.
	select {
	case <-host.gotLog:
	case <-time.After(45 * time.Second):
		t.Error("no server log line reached the observer within 45 s")
	}
	if _, err := r.Execute(ctx, run.Batch{ID: "stop-logging", Agent: "tester", Calls: []run.Call{
		{ID: "logging-off", Name: alias("toggle-simulated-logging"), Arguments: json.RawMessage(`{}`)},
	}}); err != nil {
		t.Fatal(err)
	}

	// Every server request was audited with its call and outcome, no value.
	seen := map[string]bool{}
	for _, rec := range audit.serverRequests() {
		seen[rec.Request] = true
		if rec.Request != mcpconn.MethodListRoots && (rec.CallID == "" || rec.Outcome != mcpconn.OutcomeAccepted) {
			t.Errorf("audit record %+v: want its call and outcome accepted", rec)
		}
		if strings.Contains(rec.Message, "Ada") || strings.Contains(rec.Message, "scripted") {
			t.Errorf("audit record holds a value: %+v", rec)
		}
	}
	for _, k := range []string{mcpconn.MethodElicit, mcpconn.MethodCreateMessage, mcpconn.MethodListRoots} {
		if !seen[k] {
			t.Errorf("no audit record of a %s request", k)
		}
	}
}
