package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
)

var goodTools = []string{
	mcptest.ToolEcho, mcptest.ToolEnvironment, mcptest.ToolNoteCreate, mcptest.ToolNoteDelete,
	mcptest.ToolNoteList, mcptest.ToolSearch, mcptest.ToolSleep, mcptest.ToolTree,
}

// SPEC R3.2: the report for a good server over stdio: server, protocol,
// every tool compiled, and no tool called (the server's call log stays
// empty). Issue 25: in both eras, the report names the version spoken.
func TestProbeGoodServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		era  mcptest.Era
		want string
	}{{mcptest.EraLegacy, mcpconn.LegacyProtocolVersion}, {mcptest.EraModern, mcpconn.ModernProtocolVersion}} {
		t.Run(string(tc.era), func(t *testing.T) {
			t.Parallel()
			probeGoodServer(t, tc.era, tc.want)
		})
	}
}

func probeGoodServer(t *testing.T, era mcptest.Era, wantVersion string) {
	srv, tag := fakeStdio(t, "-call-log", "calls.log", "-era", string(era))
	repo := newMemRepo()
	repo.store(t, "tools/fake", srv)
	p := mcpconn.NewProber(repo, quickConnector(nil), nil)

	rep, err := p.Probe(context.Background(), "tools/fake")
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if !rep.OK || rep.Error != "" || rep.Server == nil || rep.Server.Name != mcptest.ServerName ||
		rep.Server.Version != mcptest.ServerVersion || rep.ProtocolVersion != wantVersion ||
		rep.Transport != "stdio" || rep.Entry != "fake" || rep.Revision != 1 {
		t.Errorf("report = %+v", rep)
	}
	var names []string
	for _, tr := range rep.Tools {
		names = append(names, tr.Name)
		if !tr.OK || tr.Error != "" {
			t.Errorf("tool %s: %+v", tr.Name, tr)
		}
	}
	sort.Strings(names)
	if diff := cmp.Diff(goodTools, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if log, err := os.ReadFile(filepath.Join(srv.Cwd, "calls.log")); err != nil || len(log) != 0 {
		t.Errorf("the probe called tools: log %q, %v", log, err)
	}
	assertNoLeftovers(t, tag)

	// The JSON form serves `agt mcp probe --json`.
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]any
	if err := json.Unmarshal(raw, &shape); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"reference", "server", "protocol_version", "tools", "duration_ms", "ok"} {
		if _, ok := shape[key]; !ok {
			t.Errorf("report JSON lacks %q: %s", key, raw)
		}
	}
	server, _ := shape["server"].(map[string]any)
	if server["name"] != mcptest.ServerName || server["version"] != mcptest.ServerVersion {
		t.Errorf("report JSON server = %v", server)
	}
	first, _ := shape["tools"].([]any)[0].(map[string]any)
	if _, ok := first["name"]; !ok || first["ok"] != true {
		t.Errorf("report JSON tool = %v", first)
	}
}

// Each bad-schema fault: that tool fails to load with its reason, the
// others load, the report is not OK, the error is nil, and the counter in
// the fake server proves no tool was called.
func TestProbeBadSchemas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault mcptest.Fault
		tool  string
		want  error
	}{
		{mcptest.FaultInvalidSchema, "bad_invalid_schema", toolschema.ErrInvalidSchema},
		{mcptest.FaultRootString, "bad_root_string", toolschema.ErrNotObject},
		{mcptest.FaultExternalRef, "bad_external_ref", toolschema.ErrExternalRef},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			t.Parallel()
			counters := &mcptest.Counters{}
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
				Dial: mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{tt.fault}, Counters: counters}),
			})
			repo := newMemRepo()
			repo.store(t, "bad", resource.MCPServer{Command: "unused-with-dial", Cwd: "/"})
			rep, err := mcpconn.NewProber(repo, c, nil).Probe(context.Background(), "bad")
			if err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if rep.OK {
				t.Errorf("report OK with a bad schema")
			}
			seen := false
			for _, tr := range rep.Tools {
				if tr.Name == tt.tool {
					seen = true
					// The reason is the toolschema error's message.
					_, cerr := toolschema.Compile(badSchemaOf(t, c, tt.tool), nil)
					if tr.OK || !errors.Is(cerr, tt.want) || tr.Error != cerr.Error() {
						t.Errorf("%s: %+v; want not ok with %v (%v)", tt.tool, tr, tt.want, cerr)
					}
				} else if !tr.OK {
					t.Errorf("good tool %s failed: %s", tr.Name, tr.Error)
				}
			}
			if !seen {
				t.Errorf("tool %s missing from the report", tt.tool)
			}
			if n := counters.Calls(); n != 0 {
				t.Errorf("the probe made %d tool calls; want none", n)
			}
		})
	}
}

// Issue 18 §2: a Prober keeps what it compiled in its SchemaCache, so a
// second probe of an unchanged server compiles nothing new and reports
// the same; a schema that fails is not kept and fails again. With
// ConnectorOptions.Schema set the cache is not used.
func TestProbeKeepsCompiledSchemas(t *testing.T) {
	t.Parallel()
	dial := mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultInvalidSchema}})
	repo := newMemRepo()
	repo.store(t, "bad", resource.MCPServer{Command: "unused-with-dial", Cwd: "/"})
	var compiled atomic.Int64
	cache := mcpconn.CountingSchemaCache(&compiled)
	p := mcpconn.NewProber(repo, mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial}), &mcpconn.ProberOptions{SchemaCache: cache})
	first, err := p.Probe(context.Background(), "bad")
	if err != nil || first.OK {
		t.Fatalf("Probe: %v, OK %v; want a report not OK", err, first.OK)
	}
	if n := cache.Len(); n != len(goodTools) {
		t.Errorf("the cache holds %d schemas after a probe; want the %d that compiled", n, len(goodTools))
	}
	afterFirst := compiled.Load()
	failing := afterFirst - int64(len(goodTools)) // failures are not kept
	second, err := p.Probe(context.Background(), "bad")
	if err != nil {
		t.Fatal(err)
	}
	if again := compiled.Load() - afterFirst; again != failing {
		t.Errorf("the second probe compiled %d schemas; want only the %d that failed", again, failing)
	}
	// Err is compiled again for a failing schema: its text is compared.
	if diff := cmp.Diff(first.Tools, second.Tools, cmpopts.IgnoreFields(mcpconn.ToolReport{}, "Err")); diff != "" {
		t.Errorf("the second probe reports otherwise (-first +second):\n%s", diff)
	}
	if n := cache.Len(); n != len(goodTools) {
		t.Errorf("the cache holds %d schemas after a second probe; want %d", n, len(goodTools))
	}

	unused := new(mcpconn.SchemaCache)
	withOptions := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial, Schema: &toolschema.Options{}})
	if _, err := mcpconn.NewProber(repo, withOptions, &mcpconn.ProberOptions{SchemaCache: unused}).Probe(context.Background(), "bad"); err != nil {
		t.Fatal(err)
	}
	if n := unused.Len(); n != 0 {
		t.Errorf("with ConnectorOptions.Schema the cache holds %d schemas; want none", n)
	}
}

// badSchemaOf lists the tools through c and returns tool's schema.
func badSchemaOf(t *testing.T, c *mcpconn.Connector, tool string) json.RawMessage {
	t.Helper()
	for _, tl := range listTools(t, c, resource.MCPServer{}) {
		if tl.Name == tool {
			return tl.InputSchema
		}
	}
	t.Fatalf("no tool %s", tool)
	return nil
}

// SPEC R2.4: probing a legacy record (no absolute cwd) fails before
// anything starts, saying how to fix it; a missing resource is
// resource.ErrNotFound; a failed start carries the stderr tail.
func TestProbeFailures(t *testing.T) {
	t.Parallel()
	repo := newMemRepo()
	repo.store(t, "legacy", resource.MCPServer{Command: "node", Args: []string{"server.js"}})
	exits, tag := fakeStdio(t, "-fault", "exit-at-start")
	repo.store(t, "exits", exits)
	p := mcpconn.NewProber(repo, quickConnector(nil), nil)

	rep, err := p.Probe(context.Background(), "legacy")
	if !errors.Is(err, mcpconn.ErrNoAbsoluteCwd) || rep == nil || !strings.Contains(rep.Error, `set "cwd"`) || rep.OK {
		t.Errorf("legacy probe = %+v, %v; want ErrNoAbsoluteCwd with the fix", rep, err)
	}

	rep, err = p.Probe(context.Background(), "missing")
	if !errors.Is(err, resource.ErrNotFound) || rep != nil {
		t.Errorf("missing probe = %+v, %v; want ErrNotFound", rep, err)
	}

	rep, err = p.Probe(context.Background(), "exits")
	if !errors.Is(err, mcpconn.ErrHandshake) || rep == nil || !strings.Contains(rep.StderrTail, "exiting at start") ||
		strings.Contains(rep.Error, "exiting at start") || rep.Server != nil {
		t.Errorf("exits probe = %+v, %v; want ErrHandshake with the tail in its own field", rep, err)
	}
	assertNoLeftovers(t, tag)
}

// Many probes at once are independent.
func TestProbeConcurrent(t *testing.T) {
	t.Parallel()
	srv, tag := fakeStdio(t)
	repo := newMemRepo()
	repo.store(t, "fake", srv)
	p := mcpconn.NewProber(repo, quickConnector(nil), nil)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := p.Probe(context.Background(), "fake")
			if err == nil && (!rep.OK || len(rep.Tools) != len(goodTools)) {
				err = errors.New("report not OK")
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("probe %d: %v", i, err)
		}
	}
	assertNoLeftovers(t, tag)
}
