package mcpconn_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// scriptedServer is a stdio-style MCP server written by hand, JSON-RPC
// line by line, so a test can send bytes no SDK server would: duplicate
// keys, keys in other letter cases, late answers. It answers initialize
// itself; every other request goes to answer, which returns the raw lines
// to write (each a whole JSON-RPC message), possibly none.
type scriptedServer struct {
	answer func(method string, id json.RawMessage, n int) []string

	mu    sync.Mutex
	calls map[string]int // requests seen per method
	lines []string       // the requests seen, as sent
}

// dial returns a ConnectorOptions.Dial serving this script over pipes.
func (s *scriptedServer) dial(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	go s.serve(toServerR, toClientW)
	return &mcp.IOTransport{Reader: toClientR, Writer: toServerW}, nil
}

func (s *scriptedServer) serve(in *io.PipeReader, out *io.PipeWriter) {
	defer out.Close()
	defer in.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		s.mu.Lock()
		if s.calls == nil {
			s.calls = map[string]int{}
		}
		s.calls[req.Method]++
		n := s.calls[req.Method]
		s.lines = append(s.lines, sc.Text())
		s.mu.Unlock()
		var lines []string
		switch req.Method {
		case "initialize":
			lines = []string{result(req.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"0"}}`)}
		case "server/discover":
			// A legacy server, as they answer the era probe.
			lines = []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)}
		default:
			lines = s.answer(req.Method, req.ID, n)
		}
		for _, l := range lines {
			if _, err := io.WriteString(out, l+"\n"); err != nil {
				return
			}
		}
	}
}

func result(id json.RawMessage, res string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
}

// The wire's keys match exactly, as in the go-sdk's decoding: a tool that
// also carries "InputSchema" or "NAME" keeps the name and inputSchema the
// go-sdk saw, and the tools the go-sdk leaves out stay out (issue 4 §1:
// the inputSchema is the exact bytes the server sent as inputSchema).
func TestToolsWireKeysMatchExactly(t *testing.T) {
	t.Parallel()
	const page = `{"tools":[` +
		`{"name":"a","inputSchema":{"type":"object","required":["x"]},"InputSchema":{"type":"object"},"NAME":"b"},` +
		`null,` +
		`{"name":"c","inputSchema":{"type":"object"},"outputSchema":{"type":"object","title":"o"}}]}`
	script := &scriptedServer{answer: func(method string, id json.RawMessage, n int) []string {
		return []string{result(id, page)}
	}}
	tools := listTools(t, mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: script.dial}), resource.MCPServer{})
	type got struct{ Name, In, Out string }
	var gots []got
	for _, tl := range tools {
		gots = append(gots, got{tl.Name, string(tl.InputSchema), string(tl.OutputSchema)})
	}
	want := []got{
		{"a", `{"type":"object","required":["x"]}`, ""},
		{"c", `{"type":"object"}`, `{"type":"object","title":"o"}`},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// A late answer to a tools/list that timed out must never pass for the
// answer of the next one: the server answers the second request and then,
// at once, the first; the page returned is the second's.
func TestToolsIgnoreLateAnswer(t *testing.T) {
	t.Parallel()
	var firstID json.RawMessage
	script := &scriptedServer{answer: func(method string, id json.RawMessage, n int) []string {
		if method != "tools/list" {
			return nil
		}
		if n == 1 {
			firstID = id // never answered in time
			return nil
		}
		return []string{
			result(id, `{"tools":[{"name":"fresh","inputSchema":{"type":"object","title":"fresh"}}]}`),
			result(firstID, `{"tools":[{"name":"fresh","inputSchema":{"type":"object","title":"stale"}}]}`),
		}
	}}
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: script.dial})
	s, err := c.Connect(context.Background(), "late", resource.MCPServer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The first listing ends by the caller's deadline, never answered; the
	// later ones have the default tool timeout, so a slow machine only
	// makes them slower.
	first, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Tools(first); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first Tools = %v; want the caller's deadline", err)
	}
	for range 20 { // the late answer races the current one: try often
		tools, err := s.Tools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 1 || string(tools[0].InputSchema) != `{"type":"object","title":"fresh"}` {
			t.Fatalf("tools = %s; want the fresh page", fmt.Sprint(tools))
		}
	}
}
