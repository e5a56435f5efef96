package framework_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// host is what a host embedding agt wires: one repository, one service, one
// connector, one prober, and the framework tools over them.
type host struct {
	repo      *boltrepo.Repo
	svc       *resource.Service
	connector *mcpconn.Connector
	prober    *mcpconn.Prober
	audit     *auditLog
}

func newHost(t *testing.T, connOpts *mcpconn.ConnectorOptions) *host {
	t.Helper()
	repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Close() })
	conn := mcpconn.NewConnector(connOpts)
	return &host{
		repo:      repo,
		svc:       resource.NewService(repo, nil),
		connector: conn,
		prober:    mcpconn.NewProber(repo, conn, nil),
		audit:     &auditLog{},
	}
}

// write is a direct (admin) write that must succeed.
func (h *host) write(t *testing.T, req resource.WriteRequest) resource.WriteResult {
	t.Helper()
	res, err := h.svc.Write(context.Background(), resource.Direct(), req)
	if err != nil {
		t.Fatalf("write %s %s: %v", req.Kind, req.Ref, err)
	}
	return res
}

func (h *host) newRun(t *testing.T, agent resource.Ref, perm run.Permission) *run.Run {
	t.Helper()
	r, err := run.New(context.Background(), &run.Options{
		Agent:      agent,
		Repository: h.repo,
		Connector:  h.connector,
		Permission: perm,
		Auditor:    h.audit,
		HostTools:  framework.Tools(h.svc, h.prober, nil),
	})
	if err != nil {
		t.Fatalf("run.New(%s): %v", agent, err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// model plays a scripted model: one batch per step, calls named by alias.
type model struct {
	t     *testing.T
	r     *run.Run
	steps int
}

func (m *model) batch(calls ...run.Call) run.Outcome {
	m.t.Helper()
	out, err := m.try(calls...)
	if err != nil {
		m.t.Fatalf("batch %d rejected: %v", m.steps, err)
	}
	return out
}

func (m *model) try(calls ...run.Call) (run.Outcome, error) {
	m.steps++
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = "call-" + string(rune('a'+i))
		}
	}
	return m.r.Execute(context.Background(), run.Batch{ID: "step", Agent: m.r.Agent(), Calls: calls})
}

// one runs a single call and returns its result.
func (m *model) one(name, args string) run.Result {
	m.t.Helper()
	return m.batch(run.Call{Name: name, Arguments: json.RawMessage(args)}).Results[0]
}

func toolNames(r *run.Run) []string {
	var names []string
	for _, ti := range r.Tools() {
		names = append(names, ti.Name)
	}
	slices.Sort(names)
	return names
}

func hasTool(r *run.Run, name string) bool { return slices.Contains(toolNames(r), name) }

// structured decodes a successful result's structured content.
func structured[T any](t *testing.T, res run.Result) T {
	t.Helper()
	var v T
	if res.Failed() {
		t.Fatalf("%s failed: %s", res.Name, res.ToolError())
	}
	if err := json.Unmarshal(res.Structured, &v); err != nil {
		t.Fatalf("%s: structured content: %v", res.Name, err)
	}
	return v
}

func mustOK(t *testing.T, res run.Result) {
	t.Helper()
	if res.Failed() {
		t.Fatalf("%s failed: %s", res.Name, res.ToolError())
	}
}

func mustCode(t *testing.T, res run.Result, want run.Code) {
	t.Helper()
	if res.Code != want {
		t.Fatalf("%s: code %q, want %q (%s)", res.Name, res.Code, want, res.ToolError())
	}
}

func mustBatchCode(t *testing.T, err error, want run.Code) {
	t.Helper()
	var be *run.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("batch error = %v, want a *run.BatchError", err)
	}
	if be.Code != want {
		t.Fatalf("batch rejected with %q, want %q: %v", be.Code, want, err)
	}
}

// auditLog keeps every record, for asserting what the audit was told.
type auditLog struct {
	mu   sync.Mutex
	recs []run.Record
}

func (a *auditLog) Audit(_ context.Context, rec run.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, rec)
}

func (a *auditLog) messages(ev string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	for _, r := range a.recs {
		if r.Event == ev {
			b.WriteString(r.Message)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func mounts(t *testing.T, h *host, agent resource.Ref) []resource.Ref {
	t.Helper()
	res, err := h.svc.Read(context.Background(), resource.Direct(), resource.Key{Kind: resource.KindAgent, Ref: agent})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := resource.DecodeAgent(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	return doc.MCPs
}
