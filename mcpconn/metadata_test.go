package mcpconn_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// A listed tool keeps its title, annotations, outputSchema and _meta (the
// last two as the exact bytes on the wire: key order, an integer past
// 2^64, 1e-400, 1.50) and its execution.taskSupport, over every
// transport.
func TestToolMetadataKept(t *testing.T) {
	t.Parallel()
	metaFault := []string{"-fault", string(mcptest.FaultToolMetadata)}
	for _, tc := range []struct {
		name string
		conn func(t *testing.T) (*mcpconn.Connector, resource.MCPServer)
	}{
		{"in-process", func(t *testing.T) (*mcpconn.Connector, resource.MCPServer) {
			return mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{
				Faults: []mcptest.Fault{mcptest.FaultToolMetadata}})}), resource.MCPServer{Command: "unused-with-dial", Cwd: "/"}
		}},
		{"stdio", func(t *testing.T) (*mcpconn.Connector, resource.MCPServer) {
			srv, _ := fakeStdio(t, metaFault...)
			return quickConnector(nil), srv
		}},
		{"streamable HTTP", func(t *testing.T) (*mcpconn.Connector, resource.MCPServer) {
			return mcpconn.NewConnector(nil), resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, metaFault...)}
		}},
		{"SSE", func(t *testing.T) (*mcpconn.Connector, resource.MCPServer) {
			return mcpconn.NewConnector(nil), resource.MCPServer{Type: resource.TransportSSE, URL: mcptest.StartHTTP(t, append(metaFault, "-sse")...)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, srv := tc.conn(t)
			byName := map[string]mcpconn.Tool{}
			for _, tl := range listTools(t, c, srv) {
				byName[tl.Name] = tl
			}
			rich := byName[mcptest.ToolMetaRich]
			if rich.Title != mcptest.MetaRichTitle || rich.Annotations == nil || rich.Annotations.Title != "Rich (annotations)" ||
				!rich.Annotations.ReadOnlyHint || rich.Annotations.OpenWorldHint == nil || *rich.Annotations.OpenWorldHint {
				t.Errorf("%s: title %q, annotations %+v", mcptest.ToolMetaRich, rich.Title, rich.Annotations)
			}
			if got := string(rich.OutputSchema); got != mcptest.MetaRichOutputSchema {
				t.Errorf("outputSchema = %s\nwant exactly %s", got, mcptest.MetaRichOutputSchema)
			}
			if got := string(rich.Meta); got != mcptest.MetaRichMeta {
				t.Errorf("_meta = %s\nwant exactly %s", got, mcptest.MetaRichMeta)
			}
			for name, want := range map[string]string{
				mcptest.ToolMetaRich:      "optional",
				mcptest.ToolTaskRequired:  "required",
				mcptest.ToolTaskOptional:  "optional",
				mcptest.ToolTaskForbidden: "forbidden",
				mcptest.ToolEcho:          "",
			} {
				if got := byName[name].TaskSupport; got != want {
					t.Errorf("%s TaskSupport = %q; want %q", name, got, want)
				}
			}
			if echo := byName[mcptest.ToolEcho]; echo.Meta != nil || echo.Title != "Echo" {
				t.Errorf("echo: _meta %s, title %q", echo.Meta, echo.Title)
			}
		})
	}
}

// A probe and a Run load the same way: the registration's enabled_tools
// and disabled_tools leave tools out (counted, not errors), and tools of
// every execution.taskSupport load: one that requires tasks is called as
// a task (issue 26 item 1).
func TestProbeToolSelection(t *testing.T) {
	t.Parallel()
	all := []string{mcptest.ToolEcho, mcptest.ToolEnvironment, mcptest.ToolMetaRich, mcptest.ToolNoteCreate, mcptest.ToolNoteDelete,
		mcptest.ToolNoteList, mcptest.ToolSearch, mcptest.ToolSleep, mcptest.ToolTaskForbidden, mcptest.ToolTaskOptional,
		mcptest.ToolTaskRequired, mcptest.ToolTree}
	for _, tc := range []struct {
		name              string
		enabled, disabled []string
		wantOK            []string
		wantExcluded      int
	}{
		{name: "all", wantOK: all},
		{name: "none", enabled: []string{}, wantExcluded: len(all)},
		{name: "globs", enabled: []string{"note_*", "task_*"}, disabled: []string{"*_delete", "task_required"},
			wantOK: []string{mcptest.ToolNoteCreate, mcptest.ToolNoteList, mcptest.ToolTaskForbidden, mcptest.ToolTaskOptional}, wantExcluded: 8},
		{name: "disabled only", disabled: []string{"task_re?uired", "s*"},
			wantOK: []string{mcptest.ToolEcho, mcptest.ToolEnvironment, mcptest.ToolMetaRich, mcptest.ToolNoteCreate, mcptest.ToolNoteDelete,
				mcptest.ToolNoteList, mcptest.ToolTaskForbidden, mcptest.ToolTaskOptional, mcptest.ToolTree}, wantExcluded: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			counters := &mcptest.Counters{}
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{
				Faults: []mcptest.Fault{mcptest.FaultToolMetadata}, Counters: counters})})
			repo := newMemRepo()
			repo.store(t, "sel", resource.MCPServer{Command: "unused-with-dial", Cwd: "/", EnabledTools: tc.enabled, DisabledTools: tc.disabled})
			rep, err := mcpconn.NewProber(repo, c, nil).Probe(context.Background(), "sel")
			if err != nil {
				t.Fatal(err)
			}
			var ok []string
			for _, tr := range rep.Tools {
				if !tr.OK {
					t.Errorf("%s failed: %s", tr.Name, tr.Error)
					continue
				}
				ok = append(ok, tr.Name)
			}
			slices.Sort(ok)
			if diff := cmp.Diff(tc.wantOK, ok); diff != "" {
				t.Errorf("usable tools (-want +got):\n%s", diff)
			}
			if rep.Excluded != tc.wantExcluded || !rep.OK {
				t.Errorf("excluded %d, OK %v; want %d, %v", rep.Excluded, rep.OK, tc.wantExcluded, true)
			}
			if n := counters.Calls(); n != 0 {
				t.Errorf("the probe made %d tool calls", n)
			}
		})
	}
}

// The server's instructions are kept up to MaxInstructionsBytes, cut at
// a UTF-8 boundary.
func TestInstructionsBounded(t *testing.T) {
	t.Parallel()
	long := "a" + strings.Repeat("é", mcpconn.MaxInstructionsBytes) // a rune starts at every odd byte
	for _, tc := range []struct {
		name, text string
		wantLen    int
		wantCut    bool
	}{
		{"short", "use search first", len("use search first"), false},
		{"at the bound", strings.Repeat("x", mcpconn.MaxInstructionsBytes), mcpconn.MaxInstructionsBytes, false},
		{"past the bound", long, mcpconn.MaxInstructionsBytes - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
				server := mcp.NewServer(&mcp.Implementation{Name: "instr", Version: "1"}, &mcp.ServerOptions{Instructions: tc.text})
				serverEnd, clientEnd := mcp.NewInMemoryTransports()
				if _, err := server.Connect(context.WithoutCancel(ctx), serverEnd, nil); err != nil {
					return nil, err
				}
				return clientEnd, nil
			}})
			s, err := c.Connect(context.Background(), "instr", resource.MCPServer{Command: "unused-with-dial", Cwd: "/"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := s.Instructions()
			if len(got) != tc.wantLen || !utf8.ValidString(got) || !strings.HasPrefix(tc.text, got) || s.InstructionsTruncated() != tc.wantCut {
				t.Errorf("Instructions: %d bytes, valid %v, prefix %v, truncated %v; want %d bytes, truncated %v",
					len(got), utf8.ValidString(got), strings.HasPrefix(tc.text, got), s.InstructionsTruncated(), tc.wantLen, tc.wantCut)
			}
		})
	}
}
