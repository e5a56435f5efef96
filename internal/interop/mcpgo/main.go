// Command mcpgo is an MCP server written with github.com/mark3labs/mcp-go,
// a third-party Go SDK, for agt's interoperability tests
// (internal/interop). It is a module of its own so that agt's go.mod does
// not depend on mcp-go.
//
//	mcpgo                     serve MCP on stdio
//	mcpgo -http 127.0.0.1:0   serve streamable HTTP at /mcp; the first
//	                          stdout line is "listening on URL"; ends on
//	                          SIGTERM, SIGINT or the end of stdin
//	-call-log FILE            append the tool name of every tools/call
//	                          request the server receives to FILE
//
// Its tools: echo (a bounded string), add (two numbers), set_level (an
// enum), open_ticket (a pattern, an optional enum and a bounded title)
// and server_info (no arguments).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Name and Version are what the server reports in its initialize result.
const (
	Name    = "agt-interop-mcpgo"
	Version = "1.0.0"
)

// TicketPattern is the pattern of open_ticket's id.
const TicketPattern = `^[A-Z]{2,5}-[0-9]{1,6}$`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpgo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	httpAddr := fs.String("http", "", "serve streamable HTTP on this address")
	callLog := fs.String("call-log", "", "append each tools/call tool name to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var logCall func(string)
	if *callLog != "" {
		f, err := os.OpenFile(*callLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "mcpgo: call log:", err)
			return 1
		}
		defer f.Close()
		var mu sync.Mutex
		logCall = func(name string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(f, name)
		}
	}
	s := newServer(logCall)
	if *httpAddr == "" {
		if err := server.NewStdioServer(s).Listen(context.Background(), stdin, stdout); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "mcpgo: stdio:", err)
			return 1
		}
		return 0
	}
	return serveHTTP(s, *httpAddr, stdin, stdout, stderr)
}

// newServer returns the server with its tools; logCall, if not nil, gets
// the tool name of every tools/call request before the tool runs.
func newServer(logCall func(string)) *server.MCPServer {
	hooks := &server.Hooks{}
	if logCall != nil {
		hooks.AddBeforeCallTool(func(_ context.Context, _ any, req *mcp.CallToolRequest) {
			logCall(req.Params.Name)
		})
	}
	s := server.NewMCPServer(Name, Version, server.WithToolCapabilities(false), server.WithHooks(hooks))

	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Returns its text."),
		mcp.WithString("text", mcp.Required(), mcp.MaxLength(200), mcp.Description("the text to return")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := req.RequireString("text")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(text), nil
	})
	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Adds two numbers."),
		mcp.WithNumber("a", mcp.Required()),
		mcp.WithNumber("b", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, errA := req.RequireFloat("a")
		b, errB := req.RequireFloat("b")
		if err := errors.Join(errA, errB); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(fmt.Sprint(a + b)), nil
	})
	s.AddTool(mcp.NewTool("set_level",
		mcp.WithDescription("Sets a log level."),
		mcp.WithString("level", mcp.Required(), mcp.Enum("debug", "info", "warn", "error")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("level " + req.GetString("level", "")), nil
	})
	s.AddTool(mcp.NewTool("open_ticket",
		mcp.WithDescription("Opens a ticket."),
		mcp.WithString("id", mcp.Required(), mcp.Pattern(TicketPattern), mcp.Description("project key and number, as ABC-123")),
		mcp.WithString("priority", mcp.Enum("low", "normal", "high")),
		mcp.WithString("title", mcp.MinLength(1), mcp.MaxLength(80)),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(fmt.Sprintf("opened %s (%s)", req.GetString("id", ""), req.GetString("priority", "normal"))), nil
	})
	s.AddTool(mcp.NewTool("server_info",
		mcp.WithDescription("Names the server."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(Name + " " + Version), nil
	})
	return s
}

// serveHTTP serves s over streamable HTTP at /mcp on addr until SIGTERM,
// SIGINT or the end of stdin.
func serveHTTP(s *server.MCPServer, addr string, stdin io.Reader, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "mcpgo: listen:", err)
		return 1
	}
	h := server.NewStreamableHTTPServer(s)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "listening on http://%s/mcp\n", ln.Addr())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		stdinClosed := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, stdin); close(stdinClosed) }()
		select {
		case <-sig:
		case <-stdinClosed:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "mcpgo: serve:", err)
		return 1
	}
	<-done
	return 0
}
