package mcptest

import (
	"bufio"
	"context"
	"fmt"
	gobuild "go/build"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PackagePath is the import path of the fake server's main package.
const PackagePath = "github.com/agtsdk/agt/mcpconn/mcptest/cmd/fakemcp"

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Command returns the absolute path of the fake server binary, building it
// with `go build` the first time it is called in a test process (never `go
// run`, whose child would be orphaned on kill). Select fault modes with its
// arguments (see Main). It fails tb if the build fails.
//
// The binary lives in a temporary directory that RemoveBuilt deletes; call
// it from TestMain if the leftover matters to you.
func Command(tb testing.TB) string {
	tb.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "agt-fakemcp-")
		if build.err != nil {
			return
		}
		name := "fakemcp"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		build.path = filepath.Join(build.dir, name)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goTool(), "build", "-o", build.path, PackagePath)
		out, err := cmd.CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build %s: %v\n%s", PackagePath, err, out)
		}
	})
	if build.err != nil {
		tb.Fatalf("mcptest: building the fake server: %v", build.err)
	}
	return build.path
}

// RemoveBuilt deletes the binary built by Command, if any. Later calls to
// Command in the same process fail.
func RemoveBuilt() {
	build.once.Do(func() { build.err = fmt.Errorf("mcptest: RemoveBuilt was called before Command") })
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
		build.err = fmt.Errorf("mcptest: the fake server binary was removed by RemoveBuilt")
	}
}

// goTool finds the go command: the one of the running toolchain if it is
// there, else the first in PATH.
func goTool() string {
	p := filepath.Join(gobuild.Default.GOROOT, "bin", "go")
	if runtime.GOOS == "windows" {
		p += ".exe"
	}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return p
	}
	return "go"
}

// Dial returns a function usable as mcpconn.ConnectorOptions.Dial: each
// call starts a fresh in-process fake server (NewServer(opts)) on an
// in-memory transport and returns the client's end. Process faults do not
// apply in-process; with FaultCrashOnCall and no ServerOptions.Crash, the
// crash tool ends the connection of its call.
//
// With FaultTasks, the servers of one Dial share one task store: a task
// created on one connection can be read and ended on another, as a
// server process keeps its tasks across sessions.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
func Dial(opts *ServerOptions) func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
	if opts.has(FaultTasks) && opts.tasks == nil {
		c := *opts
		c.tasks = newTaskStore()
		opts = &c
	}
	serverTransport := func(t mcp.Transport) mcp.Transport {
		if opts.has(FaultTasks) {
			return taskTransport{t}
		}
		return t
	}
	return func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
		if (opts.has(FaultCrashOnCall) || opts.has(FaultContractDrift)) && opts.Crash == nil {
			// The crash tool ends this connection, as a server process
			// that exits ends its pipes.
			serverConn, clientConn := net.Pipe()
			c := *opts
			c.Crash = func() { _ = serverConn.Close() }
			if _, err := NewServer(&c).Connect(context.WithoutCancel(ctx), serverTransport(&mcp.IOTransport{Reader: serverConn, Writer: serverConn}), nil); err != nil {
				_ = clientConn.Close()
				return nil, err
			}
			return &mcp.IOTransport{Reader: clientConn, Writer: clientConn}, nil
		}
		server := NewServer(opts)
		serverEnd, clientEnd := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.WithoutCancel(ctx), serverTransport(serverEnd), nil); err != nil {
			return nil, err
		}
		return clientEnd, nil
	}
}

// ServeHTTP serves NewServer(opts) over streamable HTTP in this process,
// on 127.0.0.1, as the binary does with -http and -era opts.Era, and
// returns its endpoint URL; the server ends when the test finishes.
// Unlike StartHTTP, its Counters and hooks are the test's own.
func ServeHTTP(tb testing.TB, opts *ServerOptions) string {
	tb.Helper()
	era := defaultEra
	if opts != nil && opts.Era != "" {
		era = opts.Era
	}
	mux := http.NewServeMux()
	h := streamableHandler(NewServer(opts), era, false)
	if opts.has(FaultTasks) {
		h = taskHTTP(h)
	}
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	tb.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// StartHTTP starts the fake server binary serving streamable HTTP on
// 127.0.0.1 with the extra arguments args (for example "-require-header",
// "Authorization: Bearer t", or "-sse") and returns its endpoint URL. The
// process is ended when the test finishes.
func StartHTTP(tb testing.TB, args ...string) string {
	tb.Helper()
	return StartHTTPCommand(tb, exec.Command(Command(tb), append([]string{"-http", "127.0.0.1:0"}, args...)...))
}

// StartHTTPCommand starts cmd, an HTTP server that writes "listening on
// URL" as its first line on stdout and ends when its stdin closes (as the
// fake server does with -http), and returns the URL. It fails tb when the
// server does not report its URL within 60 s, with the server's stderr.
// When the test finishes, the server's stdin is closed; a server still
// running 5 s later is killed. cmd's Stdin, Stdout and Stderr must be
// unset.
func StartHTTPCommand(tb testing.TB, cmd *exec.Cmd) string {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stderr := &syncWriter{}
	cmd.Stderr = stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close() // the server shuts down when stdin closes
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		for sc.Scan() { // drain, so the server never blocks on stdout
		}
	}()
	select {
	case l, ok := <-line:
		url, found := strings.CutPrefix(l, "listening on ")
		if !ok || !found {
			tb.Fatalf("mcptest: the HTTP server %s did not start; stderr:\n%s", filepath.Base(cmd.Path), stderr.String())
		}
		return url
	case <-time.After(60 * time.Second):
		tb.Fatalf("mcptest: the HTTP server %s did not report its address within 60 s; stderr:\n%s", filepath.Base(cmd.Path), stderr.String())
		return ""
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 64<<10 {
		return len(p), nil // enough to explain a failed start
	}
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
