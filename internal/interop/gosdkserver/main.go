// Command gosdkserver is an MCP server written with the go-sdk
// (github.com/modelcontextprotocol/go-sdk) the way a server author
// configures it, with none of the fake server's (mcpconn/mcptest) fault
// modes or era shims, for agt's interoperability tests and benchmarks
// (internal/interop, internal/bench).
//
//	gosdkserver                     serve MCP on stdio
//	gosdkserver -http 127.0.0.1:0   serve streamable HTTP at /mcp, stateless
//	                                (StreamableHTTPOptions.Stateless); the first
//	                                stdout line is "listening on URL"; ends on
//	                                SIGTERM, SIGINT or the end of stdin
//	-era modern|dual|legacy         the protocol revisions it speaks
//	                                (ServerOptions.SupportedProtocolVersions):
//	                                2026-07-28 only, every version the go-sdk
//	                                speaks (the default), or 2025-11-25 and
//	                                earlier
//	-call-log FILE                  append "TOOL VERSION" for every tools/call
//	                                the server receives to FILE: the tool name
//	                                and the protocol version of the request
//
// Its tools are those of the mcp-go server (internal/interop/mcpgo): echo
// (a bounded string), add (two numbers), set_level (an enum), open_ticket
// (a pattern, an optional enum and a bounded title) and server_info (no
// arguments).
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
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name and Version are what the server reports as its identity.
const (
	Name    = "agt-interop-gosdk"
	Version = "1.0.0"
)

// ModernVersion is the one protocol version of -era modern.
const ModernVersion = "2026-07-28"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gosdkserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	httpAddr := fs.String("http", "", "serve stateless streamable HTTP on this address")
	era := fs.String("era", "dual", "the protocol revisions to speak: modern, dual or legacy")
	callLog := fs.String("call-log", "", `append "TOOL VERSION" of each tools/call to this file`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	versions, err := eraVersions(*era)
	if err != nil {
		fmt.Fprintln(stderr, "gosdkserver:", err)
		return 2
	}
	var logCall func(tool, version string)
	if *callLog != "" {
		f, err := os.OpenFile(*callLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "gosdkserver: call log:", err)
			return 1
		}
		defer f.Close()
		var mu sync.Mutex
		logCall = func(tool, version string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(f, tool, version)
		}
	}
	s := newServer(versions, logCall)
	if *httpAddr == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "gosdkserver: stdio:", err)
			return 1
		}
		return 0
	}
	return serveHTTP(s, *httpAddr, stdin, stdout, stderr)
}

// eraVersions is the ServerOptions.SupportedProtocolVersions of an era.
func eraVersions(era string) ([]string, error) {
	switch era {
	case "modern":
		return []string{ModernVersion}, nil
	case "dual":
		return nil, nil // every version the go-sdk speaks
	case "legacy":
		return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= ModernVersion }), nil
	}
	return nil, fmt.Errorf("-era %q: want modern, dual or legacy", era)
}

// Arguments of the tools; the jsonschema tags give their schemas the
// same constraints as the mcp-go server's.
type (
	echoArgs struct {
		Text string `json:"text" jsonschema:"the text to return"`
	}
	addArgs struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	levelArgs struct {
		Level string `json:"level"`
	}
	ticketArgs struct {
		ID       string `json:"id" jsonschema:"project key and number, as ABC-123"`
		Priority string `json:"priority,omitempty"`
		Title    string `json:"title,omitempty"`
	}
)

// TicketPattern is the pattern of open_ticket's id.
const TicketPattern = `^[A-Z]{2,5}-[0-9]{1,6}$`

// schema infers T's input schema and lets edit add what tags cannot say.
func schema[T any](edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	if edit != nil {
		edit(s.Properties)
	}
	return s
}

func text(t string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
}

// newServer returns the server with its tools; logCall, if not nil, gets
// the tool name and protocol version of every tools/call before the tool
// runs.
func newServer(versions []string, logCall func(tool, version string)) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: Version},
		&mcp.ServerOptions{SupportedProtocolVersions: versions})
	tool := func(name, desc string, in *jsonschema.Schema) *mcp.Tool {
		return &mcp.Tool{Name: name, Description: desc, InputSchema: in}
	}
	logged := func(req *mcp.CallToolRequest) {
		if logCall != nil {
			logCall(req.Params.Name, req.ProtocolVersion())
		}
	}
	mcp.AddTool(s, tool("echo", "Returns its text.", schema[echoArgs](func(p map[string]*jsonschema.Schema) {
		p["text"].MaxLength = jsonschema.Ptr(200)
	})), func(_ context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		logged(req)
		return text(a.Text), nil, nil
	})
	mcp.AddTool(s, tool("add", "Adds two numbers.", schema[addArgs](nil)),
		func(_ context.Context, req *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
			logged(req)
			return text(strconv.FormatFloat(a.A+a.B, 'g', -1, 64)), nil, nil
		})
	mcp.AddTool(s, tool("set_level", "Sets a log level.", schema[levelArgs](func(p map[string]*jsonschema.Schema) {
		p["level"].Enum = []any{"debug", "info", "warn", "error"}
	})), func(_ context.Context, req *mcp.CallToolRequest, a levelArgs) (*mcp.CallToolResult, any, error) {
		logged(req)
		return text("level " + a.Level), nil, nil
	})
	mcp.AddTool(s, tool("open_ticket", "Opens a ticket.", schema[ticketArgs](func(p map[string]*jsonschema.Schema) {
		p["id"].Pattern = TicketPattern
		p["priority"].Enum = []any{"low", "normal", "high"}
		p["title"].MinLength, p["title"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(80)
	})), func(_ context.Context, req *mcp.CallToolRequest, a ticketArgs) (*mcp.CallToolResult, any, error) {
		logged(req)
		if a.Priority == "" {
			a.Priority = "normal"
		}
		return text(fmt.Sprintf("opened %s (%s)", a.ID, a.Priority)), nil, nil
	})
	mcp.AddTool(s, tool("server_info", "Names the server.", schema[struct{}](nil)),
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			logged(req)
			return text(Name + " " + Version), nil, nil
		})
	return s
}

// serveHTTP serves s over stateless streamable HTTP at /mcp on addr until
// SIGTERM, SIGINT or the end of stdin.
func serveHTTP(s *mcp.Server, addr string, stdin io.Reader, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "gosdkserver: listen:", err)
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "listening on http://%s/mcp\n", ln.Addr())
	// The end of stdin ends the server, as a signal does.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() { _, _ = io.Copy(io.Discard, stdin); stop() }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "gosdkserver: serve:", err)
		return 1
	}
	<-done
	return 0
}
