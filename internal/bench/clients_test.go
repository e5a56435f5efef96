package bench_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/internal/interop/servers"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// The call every client makes, and the text its result must hold.
const (
	tool     = "echo"
	argsJSON = `{"text":"hello, bench"}`
	wantText = "hello, bench"
)

var args = json.RawMessage(argsJSON)

func TestMain(m *testing.M) {
	code := m.Run()
	servers.GoSDK.Remove()
	os.Exit(code)
}

// target is one server the clients connect to: a command (stdio) or a
// URL (streamable HTTP).
type target struct {
	command []string // stdio: the program and its arguments
	url     string   // streamable HTTP
}

// gosdkTarget starts (HTTP) or describes (stdio) the go-sdk server of an
// era ("modern", "dual" or "legacy").
func gosdkTarget(tb testing.TB, transport, era string) target {
	tb.Helper()
	bin := servers.GoSDK.Binary(tb)
	if transport == "stdio" {
		return target{command: []string{bin, "-era", era}}
	}
	return target{url: mcptest.StartHTTPCommand(tb, exec.Command(bin, "-era", era, "-http", "127.0.0.1:0"))}
}

// mcpServer is the target as agt's MCP document entry.
func (tg target) mcpServer(tb testing.TB) resource.MCPServer {
	if tg.url != "" {
		return resource.MCPServer{Type: resource.TransportHTTP, URL: tg.url}
	}
	return resource.MCPServer{Command: tg.command[0], Args: tg.command[1:], Cwd: tb.TempDir()}
}

// client is one MCP client on one open connection to a target.
type client interface {
	// rounds makes n rounds of c calls at once (the round waits for its
	// c calls) and returns the time they took by the client's own clock.
	rounds(n, c int) (time.Duration, error)
	// version is the protocol version the client negotiated.
	version() string
	close()
}

// clientNames are the clients of a comparison, the baseline first.
var clientNames = []string{"go-sdk", "go-sdk-deadline", "agt-session", "agt-run", "mcp-go", "ts-v2"}

// openClient connects the client named to tg, pinned to no version.
func openClient(tb testing.TB, name string, tg target) client {
	tb.Helper()
	var c client
	var err error
	switch name {
	case "go-sdk":
		c, err = openGoSDK(tg, false)
	case "go-sdk-deadline":
		c, err = openGoSDK(tg, true)
	case "agt-session":
		c, err = openSession(tb, tg)
	case "agt-run":
		c, err = openRun(tb, tg)
	case "mcp-go":
		c, err = openMCPGo(tg)
	case "ts-v2":
		c, err = openTSv2(tb, tg)
	default:
		tb.Fatalf("no client %q", name)
	}
	if err != nil {
		tb.Fatalf("%s: connect: %v", name, err)
	}
	tb.Cleanup(c.close)
	return c
}

// concurrently runs n rounds of c calls of call, timing them.
func concurrently(n, c int, call func() error) (time.Duration, error) {
	errs := make([]error, c)
	t0 := time.Now()
	for range n {
		if c == 1 {
			if err := call(); err != nil {
				return 0, err
			}
			continue
		}
		var wg sync.WaitGroup
		for i := range c {
			wg.Go(func() { errs[i] = call() })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// ownHTTPClient is an HTTP client with a connection pool of its own, as
// agt's Connector gives each session: clients that shared
// http.DefaultTransport would take each other's idle connections (it
// keeps two per host).
func ownHTTPClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// goSDK is the go-sdk's own client, as its documentation shows it. With
// deadline, each call has a context with a deadline of its own, cancelled
// when the call returns, as a host bounds a call (agt does: its
// tool_timeout_ms): over streamable HTTP, the go-sdk reads the rest of a
// call's response body after it handed the result on, with that context,
// so a cancel that comes first loses the connection (it is not reused).
type goSDK struct {
	cs       *mcp.ClientSession
	deadline bool
}

func openGoSDK(tg target, deadline bool) (*goSDK, error) {
	var t mcp.Transport
	if tg.url != "" {
		t = &mcp.StreamableClientTransport{Endpoint: tg.url, HTTPClient: ownHTTPClient()}
	} else {
		t = &mcp.CommandTransport{Command: exec.Command(tg.command[0], tg.command[1:]...)}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-go-sdk", Version: "1"}, nil).Connect(context.Background(), t, nil)
	if err != nil {
		return nil, err
	}
	return &goSDK{cs: cs, deadline: deadline}, nil
}

func (g *goSDK) rounds(n, c int) (time.Duration, error) {
	return concurrently(n, c, func() error {
		ctx := context.Background()
		if g.deadline {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Minute)
			defer cancel()
		}
		res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return err
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); res.IsError || !ok || tc.Text != wantText {
			return fmt.Errorf("go-sdk: unexpected result %+v", res)
		}
		return nil
	})
}

func (g *goSDK) version() string { return g.cs.InitializeResult().ProtocolVersion }
func (g *goSDK) close()          { _ = g.cs.Close() }

// session is agt's connection layer alone: an mcpconn.Session.
type session struct{ s *mcpconn.Session }

func openSession(tb testing.TB, tg target) (*session, error) {
	s, err := mcpconn.NewConnector(nil).Connect(context.Background(), "bench", tg.mcpServer(tb), nil)
	if err != nil {
		return nil, err
	}
	return &session{s}, nil
}

func (s *session) rounds(n, c int) (time.Duration, error) {
	ctx := context.Background()
	return concurrently(n, c, func() error {
		res, err := s.s.CallTool(ctx, tool, args)
		if err != nil {
			return err
		}
		if res.IsError || !strings.Contains(string(res.Raw), wantText) {
			return fmt.Errorf("agt-session: unexpected result %s", res.Raw)
		}
		return nil
	})
}

func (s *session) version() string { return s.s.ProtocolVersion() }
func (s *session) close()          { _ = s.s.Close() }

// runClient is agt through its whole pipeline, as a host uses it: a Host
// and a Run whose agent mounts the server; a round is one batch of c
// calls (alias, argument validation against the compiled schema,
// permission, execution, result), the Run's MaxConcurrency set to c's
// largest use (64) so that a batch runs all its calls at once as the
// other clients do.
type runClient struct {
	h   *agt.Host
	r   *run.Run
	ver string
}

func openRun(tb testing.TB, tg target) (*runClient, error) {
	ctx := context.Background()
	h, err := agt.Open(ctx, tb.TempDir(), nil)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"bench": tg.mcpServer(tb)}})
	if err != nil {
		return nil, err
	}
	for _, w := range []resource.WriteRequest{
		{Kind: resource.KindMCP, Ref: "bench", Create: true, Data: doc},
		{Kind: resource.KindAgent, Ref: "bencher", Create: true, Data: []byte(`{"mcps":["bench"]}`)},
	} {
		if _, err := h.Resources().Write(ctx, resource.Direct(), w); err != nil {
			h.Close()
			return nil, err
		}
	}
	r, err := h.NewRun(ctx, "bencher", &run.Options{
		Permission:       policy.AutoAllow(),
		Logger:           slog.New(slog.DiscardHandler),
		FailOnMountError: true,
		Limits:           &run.Limits{MaxConcurrency: 64},
	})
	if err != nil {
		h.Close()
		return nil, err
	}
	// The version the Run's connect negotiated, which the Connector
	// cached: a probe of the same Host reports it.
	rep, err := h.Prober().Probe(ctx, "bench")
	if err != nil {
		r.Close()
		h.Close()
		return nil, err
	}
	return &runClient{h: h, r: r, ver: rep.ProtocolVersion}, nil
}

func (rc *runClient) rounds(n, c int) (time.Duration, error) {
	ctx := context.Background()
	b := run.Batch{ID: "bench", Agent: "bencher"}
	for i := range c {
		b.Calls = append(b.Calls, run.Call{ID: strconv.Itoa(i), Name: run.Alias("bench", tool), Arguments: args})
	}
	t0 := time.Now()
	for range n {
		out, err := rc.r.Execute(ctx, b)
		if err != nil {
			return 0, err
		}
		for _, res := range out.Results {
			if res.Failed() || !strings.Contains(string(res.ForModel()), wantText) {
				return 0, fmt.Errorf("agt-run: unexpected result %s %s %s", res.Code, res.Message, res.ForModel())
			}
		}
	}
	return time.Since(t0), nil
}

func (rc *runClient) version() string { return rc.ver }
func (rc *runClient) close()          { rc.r.Close(); rc.h.Close() }

// mcpGo is github.com/mark3labs/mcp-go's client (v1.2.1: it negotiates
// 2026-07-28 with server/discover, and falls back to initialize).
type mcpGo struct {
	c   *mcpgoclient.Client
	ver string
}

func openMCPGo(tg target) (*mcpGo, error) {
	ctx := context.Background()
	var c *mcpgoclient.Client
	var err error
	if tg.url != "" {
		if c, err = mcpgoclient.NewStreamableHttpClient(tg.url, transport.WithHTTPBasicClient(ownHTTPClient())); err == nil {
			err = c.Start(ctx)
		}
	} else {
		c, err = mcpgoclient.NewStdioMCPClient(tg.command[0], nil, tg.command[1:]...)
	}
	if err != nil {
		return nil, err
	}
	init, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "bench-mcp-go", Version: "1"}}})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &mcpGo{c: c, ver: init.ProtocolVersion}, nil
}

func (m *mcpGo) rounds(n, c int) (time.Duration, error) {
	ctx := context.Background()
	return concurrently(n, c, func() error {
		res, err := m.c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: tool, Arguments: args}})
		if err != nil {
			return err
		}
		if tc, ok := res.Content[0].(mcpgo.TextContent); res.IsError || !ok || tc.Text != wantText {
			return fmt.Errorf("mcp-go: unexpected result %+v", res)
		}
		return nil
	})
}

func (m *mcpGo) version() string { return m.ver }
func (m *mcpGo) close()          { _ = m.c.Close() }

// tsv2 is the TypeScript SDK v2 client (@modelcontextprotocol/client),
// driven by testdata/tsv2client.mjs under the pinned Node 22: a round
// trip on its stdin and stdout per rounds, the time by its own clock.
type tsv2 struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
	ver   string
}

func openTSv2(tb testing.TB, tg target) (*tsv2, error) {
	node := servers.Node(tb)
	servers.NodeFile(tb, "@modelcontextprotocol", "client", "package.json")
	script, err := filepath.Abs(filepath.Join("testdata", "tsv2client.mjs"))
	if err != nil {
		return nil, err
	}
	a := []string{script, "--stdio"}
	if tg.url != "" {
		a = []string{script, "--http", tg.url}
	} else {
		a = append(a, tg.command...)
	}
	cmd := exec.Command(node, a...)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &tsv2{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	line, err := t.line()
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.close()
		return nil, fmt.Errorf("ts-v2 client: %q %v", line, err)
	}
	t.ver = strings.TrimPrefix(line, "ready ")
	return t, nil
}

func (t *tsv2) line() (string, error) {
	if !t.out.Scan() {
		return "", fmt.Errorf("ts-v2 client ended: %v", t.out.Err())
	}
	return t.out.Text(), nil
}

func (t *tsv2) rounds(n, c int) (time.Duration, error) {
	if _, err := fmt.Fprintf(t.stdin, "%d %d %s %s\n", n, c, tool, argsJSON); err != nil {
		return 0, err
	}
	line, err := t.line()
	if err != nil {
		return 0, err
	}
	ns, err := strconv.ParseInt(line, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("ts-v2 client: %s", line)
	}
	return time.Duration(ns), nil
}

func (t *tsv2) version() string { return t.ver }
func (t *tsv2) close() {
	_ = t.stdin.Close()
	_ = t.cmd.Wait()
}
