package anthropic_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agtanthropic "github.com/agtsdk/agt/adapter/anthropic"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// Run: cd adapter/anthropic && go test -run '^$' -bench . -benchmem -count 6
//
// BenchmarkWireToToolResult is an MCP call's result from the wire to the
// model's tool_result: Execute of one call over an in-memory session to a
// go-sdk server, then ToolResult. BenchmarkToolResult is ToolResult alone,
// of a Result Execute returned once. The server answers with the blocks a
// case names (benchCases).
//
// Issue 27 (3) measured both before and after the Result carried the
// blocks mcpconn decoded (ToolResult decoded the content again), as a
// ratio of medians of -count 6 on 2 shared cores: see the commit.
func BenchmarkWireToToolResult(b *testing.B) {
	r, ctx := benchRun(b), context.Background()
	for _, bc := range benchCases {
		bt := benchBatch(bc.name)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, err := r.Execute(ctx, bt)
				if err != nil || out.Results[0].Failed() {
					b.Fatal(err, out.Results[0].Code)
				}
				if tr := agtanthropic.ToolResult(out.Results[0]); len(tr.Content) != len(bc.blocks) {
					b.Fatalf("%d parts, want %d", len(tr.Content), len(bc.blocks))
				}
			}
		})
	}
}

func BenchmarkToolResult(b *testing.B) {
	r, ctx := benchRun(b), context.Background()
	for _, bc := range benchCases {
		out, err := r.Execute(ctx, benchBatch(bc.name))
		if err != nil || out.Results[0].Failed() {
			b.Fatal(err, out.Results[0].Code)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if tr := agtanthropic.ToolResult(out.Results[0]); len(tr.Content) != len(bc.blocks) {
					b.Fatalf("%d parts, want %d", len(tr.Content), len(bc.blocks))
				}
			}
		})
	}
}

// benchCases are the results the benchmark server answers with:
//
//	mixed      a text block, a 48 KiB PNG, a resource link, a text
//	           resource, and a text block (about 70 kB of JSON)
//	image-1MiB one 1 MiB PNG (1.4 MB of base64)
//	text       one short text block
var benchCases = []struct {
	name   string
	blocks []mcp.Content
}{
	{"mixed", []mcp.Content{
		&mcp.TextContent{Text: "Here is the chart you asked for, with the data behind it."},
		&mcp.ImageContent{Data: benchPNG(48 << 10), MIMEType: "image/png"},
		&mcp.ResourceLink{URI: "file:///tmp/chart.csv", Name: "chart.csv", MIMEType: "text/csv"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///tmp/notes.md", MIMEType: "text/markdown", Text: strings.Repeat("a line of notes\n", 64)}},
		&mcp.TextContent{Text: "Done."},
	}},
	{"image-1MiB", []mcp.Content{&mcp.ImageContent{Data: benchPNG(1 << 20), MIMEType: "image/png"}}},
	{"text", []mcp.Content{&mcp.TextContent{Text: "hello, benchmark"}}},
}

// benchPNG is n random bytes after a PNG signature.
func benchPNG(n int) []byte {
	data := make([]byte, n)
	_, _ = rand.Read(data)
	copy(data, "\x89PNG\r\n\x1a\n")
	return data
}

// benchRun is a Run mounting runtest.Notes, served by a go-sdk server
// whose tool "blocks" answers {"case":NAME} with benchCases' blocks.
func benchRun(b *testing.B) *run.Run {
	dial := func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "blocks", InputSchema: json.RawMessage(`{"type":"object","properties":{"case":{"type":"string"}}}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct{ Case string }
				_ = json.Unmarshal(req.Params.Arguments, &in)
				for _, bc := range benchCases {
					if bc.name == in.Case {
						return &mcp.CallToolResult{Content: bc.blocks}, nil
					}
				}
				return nil, errors.New("no such case")
			})
		return runtest.Serve(ctx, s)
	}
	return runtest.New(b, runtest.Repository(b), dial, run.Options{Permission: policy.AutoAllow()})
}

func benchBatch(name string) run.Batch {
	return run.Batch{ID: "b", Agent: runtest.Agent, Calls: []run.Call{
		{ID: "c", Name: run.Alias(runtest.Notes, "blocks"), Arguments: json.RawMessage(`{"case":"` + name + `"}`)},
	}}
}
