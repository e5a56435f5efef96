package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// rawSchema has keys out of alphabetical order and an integer above 2^53:
// a map round trip would change both.
const rawSchema = `{"type":"object","properties":{"zeta":{"type":"integer","maximum":12345678901234567890},"alpha":{"type":"string","pattern":"^a+$"}},"required":["zeta"]}`

func rawSchemaServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "0"}, &mcp.ServerOptions{PageSize: 2})
	for i := range 5 {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("raw_%d", i), InputSchema: json.RawMessage(rawSchema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	return s
}

// Tools returns each inputSchema as the exact bytes the server sent, over
// every transport, across pages (issue 4 §1).
func TestToolsKeepExactSchemaBytes(t *testing.T) {
	t.Parallel()
	server := rawSchemaServer()
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer streamable.Close()
	jsonResp := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true}))
	defer jsonResp.Close()
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer sse.Close()

	dial := func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
		if srv.Type != "" {
			return nil, nil // by the document
		}
		st, ct := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	tests := []struct {
		name string
		srv  resource.MCPServer
	}{
		{name: "in-memory (Dial)", srv: resource.MCPServer{}},
		{name: "streamable HTTP, event stream", srv: resource.MCPServer{Type: "http", URL: streamable.URL}},
		{name: "streamable HTTP, JSON responses", srv: resource.MCPServer{Type: "http", URL: jsonResp.URL}},
		{name: "SSE", srv: resource.MCPServer{Type: "sse", URL: sse.URL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := listTools(t, mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: dial}), tt.srv)
			if len(tools) != 5 {
				t.Fatalf("got %d tools over pages of 2; want 5", len(tools))
			}
			for _, tool := range tools {
				if string(tool.InputSchema) != rawSchema {
					t.Errorf("%s: inputSchema\n got %s\nwant %s", tool.Name, tool.InputSchema, rawSchema)
				}
			}
		})
	}
}

// All pages of a server with 5,000 tools (fault many-tools) over stdio.
func TestToolsAllPages(t *testing.T) {
	t.Parallel()
	srv, tag := fakeStdio(t, "-fault", "many-tools")
	s, err := quickConnector(nil).Connect(context.Background(), "many", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.Tools(context.Background())
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
	}
	if len(names) != mcptest.ManyToolsCount+8 || !names["bulk_0000"] || !names["bulk_4999"] || !names[mcptest.ToolSearch] {
		t.Errorf("got %d distinct tools; want %d, all pages", len(names), mcptest.ManyToolsCount+8)
	}
	assertNoLeftovers(t, tag)

	// MaxTools bounds a hostile server.
	srv2, tag2 := fakeStdio(t, "-fault", "many-tools")
	s, err = quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxTools: 100}}).Connect(context.Background(), "many", srv2, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Tools(context.Background())
	s.Close()
	if !errors.Is(err, mcpconn.ErrLimit) || !strings.Contains(err.Error(), "exceeds 100 tools (ConnectorOptions.Limits.MaxTools)") {
		t.Errorf("Tools with MaxTools 100 = %v; want a bound error", err)
	}
	assertNoLeftovers(t, tag2)
}

// Tool metadata comes through: title, description, annotations.
func TestToolsMetadata(t *testing.T) {
	t.Parallel()
	tools := listTools(t, mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)}), resource.MCPServer{})
	var del *mcpconn.Tool
	for i := range tools {
		if tools[i].Name == mcptest.ToolNoteDelete {
			del = &tools[i]
		}
	}
	if del == nil {
		t.Fatalf("no %s in %d tools", mcptest.ToolNoteDelete, len(tools))
	}
	if del.Title != "Delete note" || del.Description == "" || del.Annotations == nil ||
		del.Annotations.DestructiveHint == nil || !*del.Annotations.DestructiveHint {
		t.Errorf("note_delete = %+v; want title, description and destructive annotation", del)
	}
}

// The CallTool error contract (issue 4 §1).
func TestCallToolErrorContract(t *testing.T) {
	t.Parallel()
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)})
	s, err := c.Connect(context.Background(), "calls", resource.MCPServer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// A tool failure (business rule) is a result, not an error (SPEC R1.4).
	res, err := s.CallTool(ctx, mcptest.ToolNoteDelete, []byte(`{"id":"n1","caller":"bob"}`))
	if err != nil || !res.IsError {
		t.Errorf("delete of a missing note = %v, %v; want an isError result", res, err)
	}
	// Schema-invalid arguments are refused by the server as a result too.
	res, err = s.CallTool(ctx, mcptest.ToolSearch, []byte(`{"query":"a","limit":0}`))
	if err != nil || !res.IsError {
		t.Errorf("limit 0 = %v, %v; want an isError result", res, err)
	}
	// An unknown tool is a JSON-RPC protocol error.
	_, err = s.CallTool(ctx, "no_such_tool", []byte(`{}`))
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || errors.Is(err, mcpconn.ErrUnavailable) {
		t.Errorf("unknown tool = %v; want a *jsonrpc.Error with code %d", err, jsonrpc.CodeInvalidParams)
	}
	// Arguments that are not JSON never reach the server, and are not echoed.
	_, err = s.CallTool(ctx, mcptest.ToolEcho, []byte(`{"text":"secret-value`))
	if err == nil || strings.Contains(err.Error(), "secret-value") {
		t.Errorf("invalid JSON arguments = %v; want an error without the value", err)
	}
	// nil arguments mean {}.
	res, err = s.CallTool(ctx, mcptest.ToolNoteList, nil)
	if err != nil || res.IsError {
		t.Errorf("note_list with nil args = %v, %v", res, err)
	}

	// After Close: ErrUnavailable; Close is idempotent.
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.CallTool(ctx, mcptest.ToolEcho, []byte(`{"text":"x"}`)); !errors.Is(err, mcpconn.ErrUnavailable) {
		t.Errorf("call after Close = %v; want ErrUnavailable", err)
	}
	if _, err := s.Tools(ctx); !errors.Is(err, mcpconn.ErrUnavailable) {
		t.Errorf("Tools after Close = %v; want ErrUnavailable", err)
	}
}

// A Close during a call in flight fails the call with ErrUnavailable.
func TestCloseDuringCall(t *testing.T) {
	t.Parallel()
	srv, tag := fakeStdio(t, "-call-log", "calls.log")
	s, err := quickConnector(nil).Connect(context.Background(), "closing", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), mcptest.ToolSleep, []byte(`{"ms":600000}`))
		errc <- err
	}()
	// Close only once the server has the call: a Close before it would
	// test a call on a closed session instead.
	poll.Until(t, "the server to receive the call", func() bool {
		log, _ := os.ReadFile(filepath.Join(srv.Cwd, "calls.log"))
		return strings.Contains(string(log), mcptest.ToolSleep)
	})
	s.Close()
	if err := <-errc; !errors.Is(err, mcpconn.ErrUnavailable) {
		t.Errorf("call cut by Close = %v; want ErrUnavailable", err)
	}
	assertNoLeftovers(t, tag)
}

// Many concurrent calls over one session all get their own answers.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	srv, tag := fakeStdio(t)
	s, err := quickConnector(nil).Connect(context.Background(), "conc", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]string, 32)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.CallTool(context.Background(), mcptest.ToolEcho, []byte(fmt.Sprintf(`{"text":"m%d"}`, i)))
			if err == nil {
				got[i] = resultText(res)
			}
		}()
	}
	wg.Wait()
	s.Close()
	for i, g := range got {
		if want := fmt.Sprintf("m%d", i); g != want {
			t.Errorf("call %d = %q; want %q", i, g, want)
		}
	}
	assertNoLeftovers(t, tag)
}

// The stderr ring keeps only the tail.
func TestStderrTail(t *testing.T) {
	t.Parallel()
	srv, tag := fakeStdio(t)
	s, err := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{StderrTailBytes: 16}}).Connect(context.Background(), "tail", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	// stderr is read concurrently with the handshake: wait for the line.
	var tail string
	poll.Until(t, "the server's stderr line", func() bool {
		tail = s.StderrTail()
		return strings.Contains(tail, "stdio")
	})
	s.Close()
	if len(tail) > 16+len("[...]\n") || !strings.Contains(tail, "stdio") {
		t.Errorf("StderrTail = %q; want at most the last 16 bytes", tail)
	}
	assertNoLeftovers(t, tag)
	if diff := cmp.Diff("", (&mcpconn.Session{}).StderrTail()); diff != "" {
		t.Error(diff)
	}
}
