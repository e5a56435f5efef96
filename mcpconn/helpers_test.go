package mcpconn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.RemoveBuilt()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak: goroutines left after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var tagSeq atomic.Int64

// fakeStdio returns a stdio document for the fake server with a fresh cwd
// and a unique -tag, so leftover processes can be found in /proc.
func fakeStdio(t testing.TB, args ...string) (resource.MCPServer, string) {
	t.Helper()
	tag := fmt.Sprintf("agt-test-%d-%d", os.Getpid(), tagSeq.Add(1))
	return resource.MCPServer{
		Type:             resource.TransportStdio,
		Command:          mcptest.Command(t),
		Args:             append([]string{"-tag", tag}, args...),
		Cwd:              t.TempDir(),
		StartupTimeoutMS: 20000,
	}, tag
}

// withEnviron returns a copy of env (nil: the zero LaunchEnv) that reads
// the host environment from environ.
func withEnviron(env *resource.LaunchEnv, environ func() []string) *resource.LaunchEnv {
	var e resource.LaunchEnv
	if env != nil {
		e = *env
	}
	e.Environ = environ
	return &e
}

// quickConnector ends processes after a short grace period, so fault tests
// that need SIGTERM or SIGKILL do not wait the default seconds.
func quickConnector(opts *mcpconn.ConnectorOptions) *mcpconn.Connector {
	o := mcpconn.ConnectorOptions{}
	if opts != nil {
		o = *opts
	}
	var lim mcpconn.Limits
	if o.Limits != nil {
		lim = *o.Limits
	}
	if lim.TerminateGrace == 0 {
		lim.TerminateGrace = 300 * time.Millisecond
	}
	o.Limits = &lim
	return mcpconn.NewConnector(&o)
}

// connectFake connects a quickConnector of its own to srv as
// "tools/fake"; the session, then the connector, close when the test ends.
func connectFake(t testing.TB, srv resource.MCPServer) *mcpconn.Session {
	t.Helper()
	c := quickConnector(nil)
	t.Cleanup(func() { c.Close() })
	s, err := c.Connect(context.Background(), "tools/fake", srv, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// processesWithTag lists the live processes whose command line holds tag.
func processesWithTag(t testing.TB, tag string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a zombie (no command line)
		}
		if bytes.Contains(cmdline, []byte(tag)) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return found
}

// zombieChildren lists zombie processes whose parent is the test process:
// a started server that was never reaped.
func zombieChildren(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	self := strconv.Itoa(os.Getpid())
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		f := strings.Fields(rest)
		if len(f) >= 2 && f[0] == "Z" && f[1] == self {
			found = append(found, e.Name())
		}
	}
	return found
}

// assertNoLeftovers fails t if a process with tag is alive or the test
// process has an unreaped child. Orphans of the group are killed by Close
// but reaped by init, so allow them time to disappear (poll.Until's
// bound: twelve parallel Closes on a loaded machine take seconds).
func assertNoLeftovers(t testing.TB, tag string) {
	t.Helper()
	var left []string
	defer func() {
		if len(left) > 0 {
			t.Errorf("processes left behind:\n%s", strings.Join(left, "\n"))
		}
	}()
	poll.Until(t, "the processes tagged "+tag+" to end", func() bool {
		left = processesWithTag(t, tag)
		return len(left) == 0
	})
	// Other parallel tests' servers are zombies for an instant before their
	// waiter reaps them; a leak is a zombie that stays.
	stay := zombieChildren(t)
	defer func() {
		if len(stay) > 0 {
			t.Errorf("unreaped children: %v", stay)
		}
	}()
	poll.Until(t, "the test process's children to be reaped", func() bool {
		now := map[string]bool{}
		for _, z := range zombieChildren(t) {
			now[z] = true
		}
		var still []string
		for _, z := range stay {
			if now[z] {
				still = append(still, z)
			}
		}
		stay = still
		return len(stay) == 0
	})
}

// listTools connects srv through c, lists its tools and closes the
// session; any failure fails t.
func listTools(t testing.TB, c *mcpconn.Connector, srv resource.MCPServer) []mcpconn.Tool {
	t.Helper()
	s, err := c.Connect(context.Background(), "list", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// environment calls the fake server's environment tool.
func environment(t testing.TB, s *mcpconn.Session, names ...string) mcptest.EnvironmentOut {
	t.Helper()
	args, _ := json.Marshal(mcptest.EnvironmentIn{Names: names})
	res, err := s.CallTool(context.Background(), mcptest.ToolEnvironment, args)
	if err != nil {
		t.Fatalf("environment: %v", err)
	}
	if res.IsError {
		t.Fatalf("environment: tool error: %v", resultText(res))
	}
	var out mcptest.EnvironmentOut
	raw := res.Structured
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func resultText(res *mcpconn.CallResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*content.Text); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// memRepo is a small in-memory resource.Repository for prober tests.
type memRepo struct {
	mu   sync.Mutex
	data map[resource.Key]resource.Resource
}

var _ resource.Repository = (*memRepo)(nil)

func newMemRepo() *memRepo { return &memRepo{data: map[resource.Key]resource.Resource{}} }

func (r *memRepo) Get(ctx context.Context, key resource.Key) (resource.Resource, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.data[key]
	if !ok {
		return resource.Resource{}, resource.ErrNotFound
	}
	res.Data = bytes.Clone(res.Data)
	return res, nil
}

func (r *memRepo) Create(ctx context.Context, key resource.Key, data json.RawMessage) (resource.Resource, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.data[key]; ok {
		return resource.Resource{}, resource.ErrExists
	}
	now := time.Now()
	res := resource.Resource{Kind: key.Kind, Ref: key.Ref, Revision: 1, Data: bytes.Clone(data), CreatedAt: now, UpdatedAt: now}
	r.data[key] = res
	return res, nil
}

func (r *memRepo) Update(ctx context.Context, key resource.Key, data json.RawMessage, expected int64) (resource.Resource, error) {
	return r.Modify(ctx, key, expected, func(resource.Resource) (json.RawMessage, error) { return data, nil })
}

func (r *memRepo) Modify(ctx context.Context, key resource.Key, expected int64, fn func(cur resource.Resource) (json.RawMessage, error)) (resource.Resource, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.data[key]
	if !ok {
		return resource.Resource{}, resource.ErrNotFound
	}
	if expected != resource.AnyRevision && expected != cur.Revision {
		return resource.Resource{}, &resource.ConflictError{Key: key, Expected: expected, Current: cur.Revision}
	}
	data, err := fn(cur)
	if err != nil || data == nil {
		return cur, err
	}
	cur.Data, cur.Revision, cur.UpdatedAt = bytes.Clone(data), cur.Revision+1, time.Now()
	r.data[key] = cur
	return cur, nil
}

func (r *memRepo) Delete(ctx context.Context, key resource.Key, expected int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.data[key]
	if !ok {
		return resource.ErrNotFound
	}
	if expected != resource.AnyRevision && expected != cur.Revision {
		return &resource.ConflictError{Key: key, Expected: expected, Current: cur.Revision}
	}
	delete(r.data, key)
	return nil
}

func (r *memRepo) List(ctx context.Context, kind resource.Kind, category string) ([]resource.Resource, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []resource.Resource
	for k, v := range r.data {
		if k.Kind == kind && (category == "" || k.Ref.Category() == category) {
			out = append(out, v)
		}
	}
	return out, nil
}

// store registers srv under ref as an MCP document.
func (r *memRepo) store(t testing.TB, ref resource.Ref, srv resource.MCPServer) {
	t.Helper()
	data, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"fake": srv}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Create(context.Background(), resource.Key{Kind: resource.KindMCP, Ref: ref}, data); err != nil {
		t.Fatal(err)
	}
}

// memHTTP serves h over in-memory connections (net.Pipe) rather than a
// socket, for a test in a synctest bubble: a wait on a socket is not
// durably blocking, so virtual time would not advance past it. It
// returns the URL to give the document (any: the RoundTripper ignores
// the address) and the RoundTripper that reaches h, for
// ConnectorOptions.HTTPTransport. Both close when the test ends.
func memHTTP(t *testing.T, h http.Handler) (string, http.RoundTripper) {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		client, server := net.Pipe()
		select {
		case l.conns <- server:
			return client, nil
		case <-l.done:
			return nil, net.ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
		<-served
	})
	return "http://127.0.0.1:1/mcp", tr
}

// pipeListener is the net.Listener of memHTTP: it accepts the server
// ends of the pipes the RoundTripper dials.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
