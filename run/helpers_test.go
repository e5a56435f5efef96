package run_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testAgent = resource.Ref("writer")

// newRepo opens a bbolt repository in a temporary directory.
func newRepo(tb testing.TB) *boltrepo.Repo {
	tb.Helper()
	// NoSync: tests need no durability, and an fsync per write would
	// dominate the refresh benchmarks.
	repo, err := boltrepo.Open(filepath.Join(tb.TempDir(), "agt.db"), &boltrepo.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = repo.Close() })
	return repo
}

// putMCP creates or replaces the MCP resource ref with one server.
func putMCP(tb testing.TB, repo resource.Repository, ref resource.Ref, srv resource.MCPServer) int64 {
	tb.Helper()
	data, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"fake": srv}})
	if err != nil {
		tb.Fatal(err)
	}
	key := resource.Key{Kind: resource.KindMCP, Ref: ref}
	res, err := repo.Create(context.Background(), key, data)
	if err != nil {
		res, err = repo.Update(context.Background(), key, data, resource.AnyRevision)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return res.Revision
}

// putAgent creates or replaces the agent document.
func putAgent(tb testing.TB, repo resource.Repository, ref resource.Ref, doc resource.AgentDocument) {
	tb.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		tb.Fatal(err)
	}
	key := resource.Key{Kind: resource.KindAgent, Ref: ref}
	if _, err := repo.Create(context.Background(), key, data); err != nil {
		if _, err := repo.Update(context.Background(), key, data, resource.AnyRevision); err != nil {
			tb.Fatal(err)
		}
	}
}

// inMemory is a fake server setup: every connect starts a fresh in-process
// fake server with the shared counters.
type inMemory struct {
	counters mcptest.Counters
	dials    atomic.Int64
	opts     mcptest.ServerOptions
}

func (m *inMemory) connector() *mcpconn.Connector {
	dial := mcptest.Dial(&m.opts)
	return mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		Dial: func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
			m.dials.Add(1)
			return dial(ctx, ref, srv)
		},
	})
}

// inMemoryServer is the document of an in-memory mount; the Dial hook
// ignores it, but it must pass the connector's checks.
func inMemoryServer(tb testing.TB) resource.MCPServer {
	return resource.MCPServer{Type: resource.TransportStdio, Command: "fakemcp", Cwd: tb.TempDir()}
}

// fakeBinary is the fake server binary this test process built, for the
// leak check in TestMain.
var fakeBinary atomic.Value

// stdioServer is the document of the fake server binary over stdio.
func stdioServer(tb testing.TB, args ...string) resource.MCPServer {
	tb.Helper()
	bin := mcptest.Command(tb)
	fakeBinary.Store(bin)
	return resource.MCPServer{Type: resource.TransportStdio, Command: bin, Args: args, Cwd: tb.TempDir()}
}

// stdioServerEra is stdioServer serving era e.
func stdioServerEra(tb testing.TB, e mcptest.Era, args ...string) resource.MCPServer {
	tb.Helper()
	return stdioServer(tb, append([]string{"-era", string(e)}, args...)...)
}

// crashyAndOther is a repository with the agent mounting two stdio
// servers of era e: crashy, whose crash tool ends its process, and other.
func crashyAndOther(tb testing.TB, e mcptest.Era, crashy, other resource.Ref) *boltrepo.Repo {
	tb.Helper()
	repo := newRepo(tb)
	putMCP(tb, repo, crashy, stdioServerEra(tb, e, "-fault", string(mcptest.FaultCrashOnCall)))
	putMCP(tb, repo, other, stdioServerEra(tb, e))
	putAgent(tb, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{crashy, other}})
	return repo
}

// mountedAndNot is a repository with two stdio servers of era e, a,
// which the agent mounts, and b, which it does not.
func mountedAndNot(tb testing.TB, e mcptest.Era) (repo *boltrepo.Repo, a, b resource.Ref) {
	tb.Helper()
	repo = newRepo(tb)
	a, b = "a", "b"
	putMCP(tb, repo, a, stdioServerEra(tb, e))
	putMCP(tb, repo, b, stdioServerEra(tb, e))
	putAgent(tb, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{a}})
	return repo, a, b
}

// setup is a repository with the agent mounting refs, all served in memory.
func setup(tb testing.TB, refs ...resource.Ref) (*boltrepo.Repo, *inMemory) {
	tb.Helper()
	repo := newRepo(tb)
	for _, ref := range refs {
		putMCP(tb, repo, ref, inMemoryServer(tb))
	}
	putAgent(tb, repo, testAgent, resource.AgentDocument{MCPs: refs})
	return repo, newInMemory()
}

// eras are the protocol eras a test of a main flow runs in, each a
// parallel subtest (issue 25): a legacy server, which agt speaks
// 2025-11-25 to, and a dual-era one, which it speaks 2026-07-28 to. A test
// that names no era runs in the dual one (the fake server's default).
var eras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraDual}

// The eras of the main flows' tests speak what they say: agt settles on
// 2025-11-25 with a legacy server and on 2026-07-28 with a dual-era one,
// in memory and over stdio, and each tool of the Run shows it.
func TestErasSpeakTheirVersion(t *testing.T) {
	t.Parallel()
	want := map[mcptest.Era]string{mcptest.EraLegacy: mcpconn.LegacyProtocolVersion, mcptest.EraDual: mcpconn.ModernProtocolVersion}
	for _, e := range eras {
		for _, transport := range []string{"in-memory", "stdio"} {
			t.Run(string(e)+"/"+transport, func(t *testing.T) {
				t.Parallel()
				const ref = resource.Ref("notes")
				repo, mem := setupEra(t, e, ref)
				opts := &run.Options{Repository: repo, Connector: mem.connector()}
				if transport == "stdio" {
					putMCP(t, repo, ref, stdioServerEra(t, e))
					opts.Connector = nil
				}
				tools := newRun(t, opts).Tools()
				if len(tools) == 0 {
					t.Fatal("no tools")
				}
				for _, ti := range tools {
					if ti.ProtocolVersion != want[e] {
						t.Errorf("%s: protocol version %q; want %q", ti.Name, ti.ProtocolVersion, want[e])
					}
				}
			})
		}
	}
}

// inEras runs f in each of eras, each a parallel subtest named by its
// era.
func inEras(t *testing.T, f func(t *testing.T, e mcptest.Era)) {
	t.Helper()
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			f(t, e)
		})
	}
}

// setupEra is setup with servers of era e.
func setupEra(tb testing.TB, e mcptest.Era, refs ...resource.Ref) (*boltrepo.Repo, *inMemory) {
	tb.Helper()
	repo, m := setup(tb, refs...)
	m.opts.Era = e
	return repo, m
}

func newInMemory() *inMemory {
	m := &inMemory{}
	m.opts.Counters = &m.counters
	return m
}

func newRun(tb testing.TB, opts *run.Options) *run.Run {
	tb.Helper()
	if opts.Agent == "" {
		opts.Agent = testAgent
	}
	if opts.Permission == nil {
		opts.Permission = policy.AutoAllow()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler) // panics are asserted where a test says so
	}
	r, err := run.New(context.Background(), opts)
	if err != nil {
		tb.Fatalf("run.New: %v", err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	for _, me := range r.MountErrors() {
		tb.Logf("mount error (expected only where a test says so): %v", me)
	}
	return r
}

func call(id, name, args string) run.Call {
	return run.Call{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func batch(calls ...run.Call) run.Batch {
	return run.Batch{ID: "b1", Agent: testAgent, Calls: calls}
}

// codes returns the results' codes ("" for success) in call order.
func codes(out run.Outcome) []run.Code {
	var cs []run.Code
	for _, r := range out.Results {
		cs = append(cs, r.Code)
	}
	return cs
}

// recorder is a log of pipeline events, safe for concurrent use.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// auditLog is an Auditor that keeps the records.
type auditLog struct {
	mu   sync.Mutex
	recs []run.Record
	// tags holds, for each record, the ctx value of tagKey the Auditor
	// was given (tagCalls puts it there).
	tags []any
}

func (a *auditLog) Audit(ctx context.Context, rec run.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, rec)
	a.tags = append(a.tags, ctx.Value(tagKey{}))
}

// tag returns the tagKey value the Auditor got with the records of ev.
func (a *auditLog) tag(ev string) []any {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []any
	for i, r := range a.recs {
		if r.Event == ev {
			out = append(out, a.tags[i])
		}
	}
	return out
}

type tagKey struct{}

// tagCalls is an interceptor that puts each call's ID in its context
// under tagKey.
var tagCalls = run.Before(func(ctx context.Context, req run.Request) (context.Context, error) {
	return context.WithValue(ctx, tagKey{}, req.CallID), nil
})

func (a *auditLog) records(ev string) []run.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []run.Record
	for _, r := range a.recs {
		if r.Event == ev {
			out = append(out, r)
		}
	}
	return out
}

// mountTool is a host tool that changes the agent's own mounts through the
// Repository and reports the change, as the framework's resource_write does.
func mountTool(repo resource.Repository) run.HostTool {
	return run.HostTool{
		Name:        "set_mounts",
		Description: "Replaces the agent's mcps list.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"mcps":{"type":"array","items":{"type":"string"}}},"required":["mcps"],"additionalProperties":false}`),
		Handler: func(ctx context.Context, req run.Request) (run.Result, error) {
			var in struct {
				MCPs []resource.Ref `json:"mcps"`
			}
			if err := json.Unmarshal(req.Arguments, &in); err != nil {
				return run.Result{}, err
			}
			key := resource.Key{Kind: resource.KindAgent, Ref: req.Agent}
			_, err := repo.Modify(ctx, key, resource.AnyRevision, func(cur resource.Resource) (json.RawMessage, error) {
				doc, err := resource.DecodeAgent(cur.Data)
				if err != nil {
					return nil, err
				}
				doc.MCPs = in.MCPs
				return json.Marshal(doc)
			})
			if err != nil {
				return run.Result{}, err
			}
			return run.Result{Content: json.RawMessage(`[]`), Changed: []resource.Key{key}}, nil
		},
	}
}

// writeMCPTool is a host tool that replaces an MCP resource's server
// document (command and args) and reports the change.
func writeMCPTool(repo resource.Repository) run.HostTool {
	return run.HostTool{
		Name:   "write_mcp",
		Schema: json.RawMessage(`{"type":"object","properties":{"ref":{"type":"string"},"server":{"type":"object"}},"required":["ref","server"]}`),
		Handler: func(ctx context.Context, req run.Request) (run.Result, error) {
			var in struct {
				Ref    resource.Ref       `json:"ref"`
				Server resource.MCPServer `json:"server"`
			}
			if err := json.Unmarshal(req.Arguments, &in); err != nil {
				return run.Result{}, err
			}
			data, _ := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"fake": in.Server}})
			key := resource.Key{Kind: resource.KindMCP, Ref: in.Ref}
			if _, err := repo.Update(ctx, key, data, resource.AnyRevision); err != nil {
				return run.Result{}, err
			}
			return run.Result{Content: json.RawMessage(`[]`), Changed: []resource.Key{key}}, nil
		},
	}
}

// serverPID asks a mount's fake server for its process ID.
func serverPID(tb testing.TB, r *run.Run, ref resource.Ref) int {
	tb.Helper()
	return serverEnv(tb, r, ref).PID
}

// serverEnv asks a mount's fake server about its process.
func serverEnv(tb testing.TB, r *run.Run, ref resource.Ref) mcptest.EnvironmentOut {
	tb.Helper()
	out, err := r.Execute(context.Background(), batch(call("pid", run.Alias(ref, mcptest.ToolEnvironment), `{}`)))
	if err != nil || out.Results[0].Failed() {
		tb.Fatalf("environment call: %v %+v", err, out.Results)
	}
	var env mcptest.EnvironmentOut
	if err := json.Unmarshal(out.Results[0].Structured, &env); err != nil {
		tb.Fatal(err)
	}
	return env
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// readLines reads a file's lines ("" file missing = none).
func readLines(tb testing.TB, path string) []string {
	tb.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// holdTool is a host tool "hold" whose call signals held and then waits
// until release is closed: a batch held by a person who has not answered.
func holdTool() (tool run.HostTool, held, release chan struct{}) {
	held, release = make(chan struct{}), make(chan struct{})
	tool = run.HostTool{Name: "hold", Schema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, run.Request) (run.Result, error) {
			close(held)
			<-release
			return run.Result{}, nil
		}}
	return tool, held, release
}

// interceptorFunc adapts a function to run.Interceptor.
type interceptorFunc func(ctx context.Context, req run.Request, next func(context.Context) run.Result) (run.Result, error)

func (f interceptorFunc) Intercept(ctx context.Context, req run.Request, next func(context.Context) run.Result) (run.Result, error) {
	return f(ctx, req, next)
}

// permissionFunc adapts a function to run.Permission.
type permissionFunc func(ctx context.Context, req run.Request) (run.Decision, error)

func (f permissionFunc) Check(ctx context.Context, req run.Request) (run.Decision, error) {
	return f(ctx, req)
}

// errorf returns a *run.Error with the code and a formatted message.
func errorf(code run.Code, format string, args ...any) *run.Error {
	return &run.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// notOffered reports whether err rejected a batch for naming a tool the
// Run does not offer.
func notOffered(err error) bool {
	var be *run.BatchError
	return errors.As(err, &be) && be.NotOffered
}

// ignoreCallView leaves out what Origin.Calls carries of the call beyond
// its identity (the tool's description and hints, the arguments).
var ignoreCallView = cmpopts.IgnoreFields(run.Request{}, "Description", "Annotations", "Arguments")
