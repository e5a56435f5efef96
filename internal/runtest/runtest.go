package runtest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// The resources Repository creates.
const (
	// Agent is the agent Repository creates, and the one New and HostRun
	// run when run.Options.Agent is empty.
	Agent = resource.Ref("writer")
	// Notes is the MCP resource Agent mounts: the fake server.
	Notes = resource.Ref("notes")
	// Broken is an MCP resource registered but not mounted whose server
	// never starts (Dial fails): mounting it is a load failure.
	Broken = resource.Ref("broken")
)

// DialFunc is the type of mcpconn.ConnectorOptions.Dial.
type DialFunc = func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error)

// errBroken is what Dial returns for Broken (no caller tells it apart:
// a load failure is all they see).
var errBroken = errors.New("runtest: the broken server does not start")

// Dial returns a Dial hook that serves each MCP resource but Broken a new
// mcptest.NewServer(opts) in process, whatever its document says; for
// Broken it fails with errBroken, as a server that does not start.
func Dial(opts *mcptest.ServerOptions) DialFunc {
	return func(ctx context.Context, ref resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
		if ref == Broken {
			return nil, errBroken
		}
		return Serve(ctx, mcptest.NewServer(opts))
	}
}

// Serve connects server to one end of a new in-memory transport pair and
// returns the other, for a Dial hook that builds its own server (one with
// a middleware, say). The server's session outlives ctx: it ends when the
// client closes its end.
func Serve(ctx context.Context, server *mcp.Server) (mcp.Transport, error) {
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	if _, err := server.Connect(context.WithoutCancel(ctx), serverEnd, nil); err != nil {
		return nil, err
	}
	return clientEnd, nil
}

// fakeServer is the document of an MCP resource with one stdio server,
// "fake", whose command does not exist: Dial ignores the document, which
// has only to pass the Connector's checks (its working directory is a
// new t.TempDir()).
func fakeServer(t testing.TB) resource.MCPDocument {
	return resource.MCPDocument{MCPServers: map[string]resource.MCPServer{
		"fake": {Type: resource.TransportStdio, Command: "fakemcp", Cwd: t.TempDir()},
	}}
}

// Repository opens a bbolt repository in t.TempDir() (NoSync: the file
// does not outlive the test), closed in t.Cleanup, and creates in it the
// MCP resources Notes and Broken, each fakeServer(t), and Agent, which
// mounts Notes and has capabilities (resource.CapabilityResourceManagement
// to give its Runs from a Host the framework tools).
func Repository(t testing.TB, capabilities ...string) resource.Repository {
	t.Helper()
	repo, err := boltrepo.Open(filepath.Join(t.TempDir(), agt.StoreFile), &boltrepo.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Close() })
	put := func(kind resource.Kind, ref resource.Ref, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Create(context.Background(), resource.Key{Kind: kind, Ref: ref}, data); err != nil {
			t.Fatalf("create %s %s: %v", kind, ref, err)
		}
	}
	put(resource.KindMCP, Notes, fakeServer(t))
	put(resource.KindMCP, Broken, fakeServer(t))
	put(resource.KindAgent, Agent, resource.AgentDocument{Capabilities: capabilities, MCPs: []resource.Ref{Notes}})
	return repo
}

// New starts a Run with opts (run.New), closed in t.Cleanup, over repo
// with a Connector that dials with dial. An empty opts.Agent is Agent. It
// sets FailOnMountError, so that a fake server that does not mount fails
// the test here rather than in a later assertion, and a nil Logger
// discards.
func New(t testing.TB, repo resource.Repository, dial DialFunc, opts run.Options) *run.Run {
	t.Helper()
	opts.Repository = repo
	opts.Connector = mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial})
	return start(t, func(o *run.Options) (*run.Run, error) { return run.New(context.Background(), o) }, opts)
}

// HostRun starts a Run from a Host over repo (agt.New and
// Host.NewRun, so it has the framework tools when the agent may manage
// resources) whose Connector dials with dial; the Run and the Host are
// closed in t.Cleanup. It completes opts as New does.
func HostRun(t testing.TB, repo resource.Repository, dial DialFunc, opts run.Options) *run.Run {
	t.Helper()
	host, err := agt.New(repo, &agt.Options{Connector: &mcpconn.ConnectorOptions{Dial: dial}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Close() })
	return start(t, func(o *run.Options) (*run.Run, error) { return host.NewRun(context.Background(), o.Agent, o) }, opts)
}

// start completes opts as New documents and starts the Run with newRun.
func start(t testing.TB, newRun func(*run.Options) (*run.Run, error), opts run.Options) *run.Run {
	t.Helper()
	if opts.Agent == "" {
		opts.Agent = Agent
	}
	opts.FailOnMountError = true
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r, err := newRun(&opts)
	if err != nil {
		t.Fatalf("start the Run: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// Text returns the text blocks of res joined by newlines; it fails t when
// res's content does not decode.
func Text(t testing.TB, res run.Result) string {
	t.Helper()
	blocks, err := res.Blocks()
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, b := range blocks {
		if tc, ok := b.(*content.Text); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
