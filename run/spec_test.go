package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// SPEC R5.1: a tool's schema is part of the resume fingerprint: the same
// tool under the same name with a changed inputSchema fails Resume.
func TestChangedSchemaFailsResume(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	putMCP(t, repo, "shifty", inMemoryServer(t))
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{"shifty"}})
	var maxLen atomic.Int64
	maxLen.Store(5)
	dial := func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "shifty", Version: "1"}, nil)
		schema := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string", "maxLength": maxLen.Load()}}}
		s.AddTool(&mcp.Tool{Name: "find", InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		serverEnd, clientEnd := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.WithoutCancel(ctx), serverEnd, nil); err != nil {
			return nil, err
		}
		return clientEnd, nil
	}
	opts := func() *run.Options {
		return &run.Options{Agent: testAgent, Repository: repo, Permission: policy.AutoAllow(),
			Connector: mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial})}
	}
	r := newRun(t, opts())
	cp := r.Checkpoint()
	if again, err := run.Resume(context.Background(), cp, opts()); err != nil {
		t.Fatalf("resume with the same schema: %v", err)
	} else {
		_ = again.Close()
	}
	maxLen.Store(10)
	_, err := run.Resume(context.Background(), cp, opts())
	if !errors.Is(err, run.ErrFingerprintMismatch) {
		t.Errorf("resume after the schema changed: %v; want ErrFingerprintMismatch", err)
	}
}

// SPEC R5.5: a host tool's arguments are validated before its handler: an
// invalid call gets invalid_arguments and the handler never runs.
func TestHostToolHandlerSkippedOnInvalidArguments(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		var ran atomic.Int64
		ht := run.HostTool{Name: "greet",
			Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`),
			Handler: func(context.Context, run.Request) (run.Result, error) {
				ran.Add(1)
				return run.Result{Content: json.RawMessage(`[]`)}, nil
			}}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{ht}})
		for _, args := range []string{`{}`, `{"name":""}`, `{"name":7}`, `{"name":"a","extra":1}`, `[]`} {
			out, err := r.Execute(context.Background(), batch(call("g", "greet", args)))
			if err != nil || out.Results[0].Code != run.CodeInvalidArguments {
				t.Errorf("greet %s: %v %+v; want invalid_arguments", args, err, out.Results)
			}
		}
		if n := ran.Load(); n != 0 {
			t.Errorf("the handler ran %d times on invalid arguments", n)
		}
		if out, err := r.Execute(context.Background(), batch(call("g", "greet", `{"name":"a"}`))); err != nil || out.Results[0].Failed() || ran.Load() != 1 {
			t.Errorf("a valid call: %v %+v, handler ran %d times", err, out.Results, ran.Load())
		}
	})
}

// SPEC R7.2: after a failed refresh the Run does not retry on its own:
// batches that write nothing start no server and refresh nothing.
func TestNoAutomaticRetryAfterAFailedRefresh(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, broken := resource.Ref("a"), resource.Ref("broken")
		repo, mem := setupEra(t, e, a)
		putMCP(t, repo, broken, inMemoryServer(t))
		var failDial atomic.Bool
		failDial.Store(true)
		var dials atomic.Int64
		inner := mcptest.Dial(&mem.opts)
		conn := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
			dials.Add(1)
			if ref == broken && failDial.Load() {
				return nil, errors.New("not startable yet")
			}
			return inner(ctx, ref, srv)
		}})
		r := newRun(t, &run.Options{Repository: repo, Connector: conn, HostTools: []run.HostTool{mountTool(repo)}})
		out, err := r.Execute(context.Background(), batch(setMounts(a, broken)))
		if err != nil || out.Refresh == nil || out.Refresh.OK {
			t.Fatalf("failed refresh: %v %+v", err, out.Refresh)
		}
		failDial.Store(false) // startable now, but nothing asks for a retry
		before := dials.Load()
		for range 3 {
			out, err := r.Execute(context.Background(), batch(call("e", run.Alias(a, mcptest.ToolEcho), `{"text":"x"}`)))
			if err != nil || out.Results[0].Failed() || out.Refresh != nil {
				t.Errorf("a batch without writes: %v %+v %+v; want no refresh", err, out.Results, out.Refresh)
			}
		}
		if n := dials.Load() - before; n != 0 {
			t.Errorf("%d connections were attempted without a write", n)
		}
		if hasTool(r, run.Alias(broken, mcptest.ToolEcho)) {
			t.Error("the failed mount loaded without a retry")
		}
	})
}
