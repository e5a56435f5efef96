package run_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/agtsdk/agt/toolschema"
)

// Issue 11 §3: the tools of one Run are bounded across its mounts, in the
// agent's order: the mount that goes past the bound fails with ErrLimit,
// those before it load.
func TestRunWideListingBounds(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b, c := resource.Ref("a"), resource.Ref("b"), resource.Ref("c")
		repo, mem := setupEra(t, e, a, b, c)
		for _, tt := range []struct {
			name   string
			opts   run.Options
			loaded []resource.Ref
			want   string
		}{
			{"tools", run.Options{Limits: &run.Limits{MaxToolsPerRun: 20}}, []resource.Ref{a, b}, "exceeds 20 tools (run.Options.Limits.MaxToolsPerRun)"},
			{"bytes", run.Options{Limits: &run.Limits{MaxListBytesPerRun: 10}}, nil, "exceeds 10 bytes (run.Options.Limits.MaxListBytesPerRun)"},
		} {
			opts := tt.opts
			opts.Repository, opts.Connector = repo, mem.connector()
			r := newRun(t, &opts)
			var loaded []resource.Ref
			seen := map[resource.Ref]bool{}
			for _, ti := range r.Tools() {
				if !seen[ti.Source.Ref] {
					seen[ti.Source.Ref] = true
					loaded = append(loaded, ti.Source.Ref)
				}
			}
			if diff := cmp.Diff(tt.loaded, loaded); diff != "" {
				t.Errorf("%s: loaded mounts (-want +got):\n%s", tt.name, diff)
			}
			for _, me := range r.MountErrors() {
				if !errors.Is(me.Err, mcpconn.ErrLimit) || !strings.Contains(me.Error(), tt.want) {
					t.Errorf("%s: mount error %v; want %q", tt.name, me, tt.want)
				}
			}
			if got := len(r.MountErrors()) + len(loaded); got != 3 {
				t.Errorf("%s: %d mounts loaded or failed; want 3", tt.name, got)
			}
		}
	})
}

// Issue 11 §3: a tool whose name, title or description is over its bound
// is left out with the reason; the server's other tools load.
func TestOversizedToolTextIsSkipped(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	putMCP(t, repo, "wordy", inMemoryServer(t))
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{"wordy"}})
	dial := func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "wordy", Version: "1"}, nil)
		handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}
		schema := map[string]any{"type": "object"}
		s.AddTool(&mcp.Tool{Name: "fine", Description: "short", InputSchema: schema}, handler)
		// One past each fixed bound of a listed tool (docs/limits.md): a
		// description of 32 KiB, a title of 1 KiB, a name of 256 bytes.
		s.AddTool(&mcp.Tool{Name: "chatty", Description: strings.Repeat("d", 32<<10+1), InputSchema: schema}, handler)
		s.AddTool(&mcp.Tool{Name: "titled", Title: strings.Repeat("t", 1<<10+1), InputSchema: schema}, handler)
		s.AddTool(&mcp.Tool{Name: strings.Repeat("n", 256+1), InputSchema: schema}, handler)
		serverEnd, clientEnd := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.WithoutCancel(ctx), serverEnd, nil); err != nil {
			return nil, err
		}
		return clientEnd, nil
	}
	r := newRun(t, &run.Options{Repository: repo, Connector: mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial})})
	if got := r.Tools(); len(got) != 1 || got[0].Source.Tool != "fine" {
		t.Errorf("tools = %v; want only fine", got)
	}
	reasons := map[string]string{}
	for _, s := range r.SkippedTools() {
		reasons[s.Source.Tool] = s.Err.Error()
		if len(s.Source.Tool) > 256 { // the tool-name bound
			t.Errorf("skipped tool name of %d bytes", len(s.Source.Tool))
		}
	}
	for tool, want := range map[string]string{
		"chatty":                 "description is 32769 bytes, more than 32768",
		"titled":                 "title is 1025 bytes, more than 1024",
		strings.Repeat("n", 256): "name is 257 bytes, more than 256",
	} {
		if !strings.Contains(reasons[tool], want) {
			t.Errorf("skipped %q: %q; want %q", tool[:min(len(tool), 10)], reasons[tool], want)
		}
	}
}

// Issue 13 §2: a probe and a Run load a server's tools through one path
// (mcpconn.LoadTools) with the Connector's schema options: under a schema
// limit that some of the fake server's schemas exceed, the probe's failing
// tools are exactly the Run's skipped ones.
func TestProbeAndRunLoadTheSameTools(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		dial := mcptest.Dial(&mem.opts)
		conn := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
			Dial:   dial,
			Schema: &toolschema.Options{MaxSchemaBytes: 300},
		})
		rep, err := mcpconn.NewProber(repo, conn, nil).Probe(context.Background(), notes)
		if err != nil {
			t.Fatal(err)
		}
		var probeFailed []string
		for _, tr := range rep.Tools {
			if !tr.OK {
				probeFailed = append(probeFailed, tr.Name)
			}
		}
		if len(probeFailed) == 0 || len(probeFailed) == len(rep.Tools) {
			t.Fatalf("probe: %d of %d tools fail; want some", len(probeFailed), len(rep.Tools))
		}
		r := newRun(t, &run.Options{Repository: repo, Connector: conn})
		var runSkipped []string
		for _, s := range r.SkippedTools() {
			runSkipped = append(runSkipped, s.Source.Tool)
		}
		slices.Sort(probeFailed)
		slices.Sort(runSkipped)
		if diff := cmp.Diff(probeFailed, runSkipped); diff != "" {
			t.Errorf("probe failures vs Run skipped tools (-probe +run):\n%s", diff)
		}
		if len(r.Tools()) != len(rep.Tools)-len(probeFailed) {
			t.Errorf("the Run has %d tools; the probe found %d usable", len(r.Tools()), len(rep.Tools)-len(probeFailed))
		}
	})
}

// A SchemaCache given to several Runs holds their schemas, each compiled
// once.
func TestSchemaCacheOption(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, "notes")
		shared := new(mcpconn.SchemaCache)
		first := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), SchemaCache: shared})
		n := shared.Len()
		if n == 0 || n > len(first.Tools()) {
			t.Fatalf("shared cache holds %d schemas after one Run of %d tools", n, len(first.Tools()))
		}
		newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), SchemaCache: shared})
		if got := shared.Len(); got != n {
			t.Errorf("a second Run of the same tools left %d schemas in the shared cache; want %d (compiled once)", got, n)
		}
	})
}
