package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// contentTransports are the ways a session reaches the fake server with
// its content tool: every transport, and both answers of streamable HTTP
// (an event stream, the go-sdk server's default, and application/json).
func contentTransports(t *testing.T) []struct {
	name string
	conn *mcpconn.Connector
	srv  resource.MCPServer
} {
	fault := []string{"-fault", string(mcptest.FaultContentKinds)}
	stdio, _ := fakeStdio(t, fault...)
	dial := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultContentKinds}})})
	return []struct {
		name string
		conn *mcpconn.Connector
		srv  resource.MCPServer
	}{
		{"stdio", quickConnector(nil), stdio},
		{"streamable HTTP, event stream", mcpconn.NewConnector(nil), resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, fault...)}},
		{"streamable HTTP, JSON", mcpconn.NewConnector(nil), resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, append(fault, "-json-response")...)}},
		{"SSE", mcpconn.NewConnector(nil), resource.MCPServer{Type: resource.TransportSSE, URL: mcptest.StartHTTP(t, append(fault, "-sse")...)}},
		{"dial", dial, resource.MCPServer{Type: resource.TransportStdio, Command: "unused", Cwd: "/"}},
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func size(n int64) *int64 { return &n }

// wantResults is what CallTool returns for each kind of the fake server's
// content tool: the exact bytes, and typed blocks that keep theirs.
var wantResults = map[string]*mcpconn.CallResult{
	mcptest.ContentImage: {
		Content: []content.Block{&content.Image{Data: "iVBORw0KGgo=", MIMEType: "image/png",
			Annotations: raw(`{"audience":["user"],"priority":0.5}`), Meta: raw(`{"k":"v"}`),
			Raw: raw(`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":"v"}}`)}},
		ContentJSON: raw(`[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":"v"}}]`),
		Structured:  raw(`{"path":"/tmp/x.png","data":"iVBORw0KGgo="}`),
	},
	mcptest.ContentAudio: {
		Content:     []content.Block{&content.Audio{Data: "UklGRg==", MIMEType: "audio/wav", Raw: raw(`{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`)}},
		ContentJSON: raw(`[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]`),
	},
	mcptest.ContentResourceLink: {
		Content: []content.Block{&content.ResourceLink{URI: "file:///tmp/a.txt", Name: "a.txt", Title: "A", Description: "a file",
			MIMEType: "text/plain", Size: size(12345678901),
			Raw: raw(`{"type":"resource_link","uri":"file:///tmp/a.txt","name":"a.txt","title":"A","description":"a file","mimeType":"text/plain","size":12345678901,"icons":[{"src":"https://example.com/i.png"}]}`)}},
		ContentJSON: raw(`[{"type":"resource_link","uri":"file:///tmp/a.txt","name":"a.txt","title":"A","description":"a file","mimeType":"text/plain","size":12345678901,"icons":[{"src":"https://example.com/i.png"}]}]`),
	},
	mcptest.ContentResource: {
		Content: []content.Block{
			&content.EmbeddedResource{Resource: content.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "hello"},
				Raw: raw(`{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"hello"}}`)},
			&content.EmbeddedResource{Resource: content.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: "AAEC", IsBlob: true, Meta: raw(`{"m":1}`)},
				Annotations: raw(`{"priority":1}`),
				Raw:         raw(`{"type":"resource","resource":{"uri":"file:///b.bin","mimeType":"application/octet-stream","blob":"AAEC","_meta":{"m":1}},"annotations":{"priority":1}}`)},
		},
		ContentJSON: raw(`[{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"hello"}},{"type":"resource","resource":{"uri":"file:///b.bin","mimeType":"application/octet-stream","blob":"AAEC","_meta":{"m":1}},"annotations":{"priority":1}}]`),
	},
	mcptest.ContentUnknown: {
		Content: []content.Block{
			&content.Text{Text: "before", Raw: raw(`{"type":"text","text":"before"}`)},
			&content.Unknown{Kind: "hologram", Annotations: raw(`{"priority":1}`), Meta: raw(`{"x":true}`),
				Raw: raw(`{"type":"hologram","frames":[1,2,3],"annotations":{"priority":1},"_meta":{"x":true}}`)},
		},
		ContentJSON: raw(`[{"type":"text","text":"before"},{"type":"hologram","frames":[1,2,3],"annotations":{"priority":1},"_meta":{"x":true}}]`),
		Meta:        raw(`{"trace":"t1"}`),
	},
	mcptest.ContentStructured: {
		Content: []content.Block{&content.Text{Text: `{"z":1,"big":12345678901234567890,"tiny":1e-400,"a":[1.0,2.50]}`,
			Raw: raw(`{"type":"text","text":"{\"z\":1,\"big\":12345678901234567890,\"tiny\":1e-400,\"a\":[1.0,2.50]}"}`)}},
		ContentJSON: raw(`[{"type":"text","text":"{\"z\":1,\"big\":12345678901234567890,\"tiny\":1e-400,\"a\":[1.0,2.50]}"}]`),
		Structured:  raw(`{"z":1,"big":12345678901234567890,"tiny":1e-400,"a":[1.0,2.50]}`),
	},
	mcptest.ContentError: {
		Content: []content.Block{
			&content.Text{Text: "render failed", Raw: raw(`{"type":"text","text":"render failed"}`)},
			&content.Image{Data: "iVBORw0KGgo=", MIMEType: "image/png", Raw: raw(`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`)},
			&content.Text{Text: "see the screenshot", Raw: raw(`{"type":"text","text":"see the screenshot"}`)},
		},
		ContentJSON: raw(`[{"type":"text","text":"render failed"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"text","text":"see the screenshot"}]`),
		IsError:     true,
	},
	// The one change to the bytes: a lone surrogate is read as every JSON
	// decoder reads it.
	mcptest.ContentLoneSurrogate: {
		Content:     []content.Block{&content.Text{Text: "a\uFFFDb", Raw: raw(`{"type":"text","text":"a\ufffdb"}`)}},
		ContentJSON: raw(`[{"type":"text","text":"a\ufffdb"}]`),
		Raw:         raw(`{"content":[{"type":"text","text":"a\ufffdb"}]}`),
	},
}

// Issue 15 (3): every block type reaches the host typed and byte for byte,
// structuredContent keeps its exact bytes, an unknown block type is kept
// (not "connection lost"), an error keeps all its blocks; a malformed
// result or one of too many blocks fails the call with ErrBadResult and
// the session stays usable. In every transport.
func TestCallToolContentFidelity(t *testing.T) {
	t.Parallel()
	for _, tr := range contentTransports(t) {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := tr.conn.Connect(ctx, "content", tr.srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, kind := range mcptest.ContentKinds {
				res, err := s.CallTool(ctx, mcptest.ToolContent, json.RawMessage(`{"kind":"`+kind+`"}`))
				want := wantResults[kind]
				if want == nil {
					// malformed, many_blocks
					if !errors.Is(err, mcpconn.ErrBadResult) || errors.Is(err, mcpconn.ErrUnavailable) {
						t.Errorf("%s: CallTool = %v, %v; want ErrBadResult", kind, res, err)
					}
					if kind == mcptest.ContentManyBlocks && !errors.Is(err, mcpconn.ErrLimit) {
						t.Errorf("%s: %v does not wrap ErrLimit", kind, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: CallTool: %v", kind, err)
					continue
				}
				w := *want
				if w.Raw == nil {
					w.Raw = mcptest.ContentResult(kind)
				}
				if diff := cmp.Diff(&w, res); diff != "" {
					t.Errorf("%s: result (-want +got):\n%s", kind, diff)
				}
			}
			// The session survived the malformed answers.
			res, err := s.CallTool(ctx, mcptest.ToolEcho, json.RawMessage(`{"text":"still here"}`))
			if err != nil || res.Text() != "still here" || s.Lost() {
				t.Errorf("echo after the malformed results = %v, %v (lost %v)", res, err, s.Lost())
			}
		})
	}
}

// The error of a malformed result says what is wrong without the
// server's data.
func TestCallToolBadResultError(t *testing.T) {
	t.Parallel()
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultContentKinds}})})
	s, err := c.Connect(context.Background(), "content", resource.MCPServer{Type: resource.TransportStdio, Command: "unused", Cwd: "/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.CallTool(context.Background(), mcptest.ToolContent, json.RawMessage(`{"kind":"malformed"}`))
	if msg := err.Error(); !strings.Contains(msg, "malformed") || !strings.Contains(msg, "content is not an array") || strings.Contains(msg, "not in an array") {
		t.Errorf("error = %q; want the field named, not the server's text", msg)
	}
}

// A call whose event stream the server ends early is resumed with a GET
// (SEP-1699): the result on the resumed stream is captured as exactly as
// any other.
func TestCallToolContentOnResumedStream(t *testing.T) {
	t.Parallel()
	server := mcptest.NewServer(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultContentKinds}})
	target := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	defer target.Close()
	proxy := &cutProxy{target: target.URL, retry: "10"}
	ts := httptest.NewServer(proxy)
	defer ts.Close()
	s, err := mcpconn.NewConnector(nil).Connect(context.Background(), "cut", resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.Close()
		for ss := range server.Sessions() {
			ss.Close()
		}
	}()
	for _, kind := range []string{mcptest.ContentStructured, mcptest.ContentUnknown} {
		res, err := s.CallTool(context.Background(), mcptest.ToolContent, json.RawMessage(`{"kind":"`+kind+`"}`))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if diff := cmp.Diff(string(mcptest.ContentResult(kind)), string(res.Raw)); diff != "" {
			t.Errorf("%s over a resumed stream (-sent +got):\n%s", kind, diff)
		}
	}
	if proxy.resumed.Load() < 2 {
		t.Errorf("%d resumed GETs; the streams were not cut", proxy.resumed.Load())
	}
}
