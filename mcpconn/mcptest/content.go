package mcptest

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolContent is the tool FaultContentKinds adds: it answers with the
// result ContentResult(kind) names, byte for byte.
const ToolContent = "content"

// ContentIn is the input of the content tool.
type ContentIn struct {
	Kind string `json:"kind" jsonschema:"which result to answer with (ContentKinds)"`
}

// The kinds of result the content tool answers with.
const (
	// ContentImage: an image block with annotations and _meta, beside a
	// structuredContent that holds the same base64 (as server-filesystem's
	// read_media_file answers).
	ContentImage = "image"
	// ContentAudio: an audio block.
	ContentAudio = "audio"
	// ContentResourceLink: a resource_link block with every field, icons
	// and a size past 2^32.
	ContentResourceLink = "resource_link"
	// ContentResource: two embedded resources, one text and one blob.
	ContentResource = "resource"
	// ContentUnknown: a text block, then a block of a type no protocol
	// version defines.
	ContentUnknown = "unknown"
	// ContentStructured: structuredContent with unsorted keys,
	// 12345678901234567890 and 1e-400, which a decode into float64 loses.
	ContentStructured = "structured"
	// ContentError: an isError result with text, an image, and text.
	ContentError = "error"
	// ContentLoneSurrogate: a text block whose text holds a lone
	// surrogate escape.
	ContentLoneSurrogate = "lone_surrogate"
	// ContentMalformed: "content" is an object, not an array.
	ContentMalformed = "malformed"
	// ContentManyBlocks: ContentManyBlocksCount empty text blocks.
	ContentManyBlocks = "many_blocks"
)

// ContentManyBlocksCount is how many blocks ContentManyBlocks holds: one
// more than a client that keeps to 10000 accepts.
const ContentManyBlocksCount = 10001

// ContentKinds lists the kinds, in documentation order.
var ContentKinds = []string{ContentImage, ContentAudio, ContentResourceLink, ContentResource, ContentUnknown,
	ContentStructured, ContentError, ContentLoneSurrogate, ContentMalformed, ContentManyBlocks}

// Compact JSON without <, > or &: the bytes a client receives are these
// exactly (a JSON encoder would escape those three).
var contentResults = map[string]string{
	ContentImage: `{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":"v"}}],` +
		`"structuredContent":{"path":"/tmp/x.png","data":"iVBORw0KGgo="}}`,
	ContentAudio: `{"content":[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]}`,
	ContentResourceLink: `{"content":[{"type":"resource_link","uri":"file:///tmp/a.txt","name":"a.txt","title":"A","description":"a file",` +
		`"mimeType":"text/plain","size":12345678901,"icons":[{"src":"https://example.com/i.png"}]}]}`,
	ContentResource: `{"content":[{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"hello"}},` +
		`{"type":"resource","resource":{"uri":"file:///b.bin","mimeType":"application/octet-stream","blob":"AAEC","_meta":{"m":1}},"annotations":{"priority":1}}]}`,
	ContentUnknown: `{"content":[{"type":"text","text":"before"},{"type":"hologram","frames":[1,2,3],"annotations":{"priority":1},"_meta":{"x":true}}],"_meta":{"trace":"t1"}}`,
	ContentStructured: `{"content":[{"type":"text","text":"{\"z\":1,\"big\":12345678901234567890,\"tiny\":1e-400,\"a\":[1.0,2.50]}"}],` +
		`"structuredContent":{"z":1,"big":12345678901234567890,"tiny":1e-400,"a":[1.0,2.50]}}`,
	ContentError: `{"content":[{"type":"text","text":"render failed"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},` +
		`{"type":"text","text":"see the screenshot"}],"isError":true}`,
	ContentLoneSurrogate: `{"content":[{"type":"text","text":"a\ud800b"}]}`,
	ContentMalformed:     `{"content":{"type":"text","text":"not in an array"}}`,
	ContentManyBlocks:    `{"content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":""},`, ContentManyBlocksCount), ",") + `]}`,
}

// ContentResult returns the exact result the content tool answers kind
// with, or nil for an unknown kind.
func ContentResult(kind string) json.RawMessage {
	r, ok := contentResults[kind]
	if !ok {
		return nil
	}
	return json.RawMessage(r)
}

func addContentTool(s *mcp.Server) {
	kinds := make([]any, len(ContentKinds))
	for i, k := range ContentKinds {
		kinds[i] = k
	}
	schema := schemaFor[ContentIn](nil)
	schema.Properties["kind"].Enum = kinds
	mcp.AddTool(s, &mcp.Tool{Name: ToolContent, Title: "Content",
		Description: "Answers with a result of the kind asked for: every content block type, exact structured content, an error with several blocks.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest, in ContentIn) (*mcp.CallToolResult, any, error) {
			return textResult("unreachable: the middleware answers"), nil, nil
		})
}

// contentAnswer returns the raw result of a content tool call, if req is
// one.
func contentAnswer(req mcp.Request) (mcp.Result, bool) {
	p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
	if !ok || p.Name != ToolContent {
		return nil, false
	}
	var in ContentIn
	if json.Unmarshal(p.Arguments, &in) != nil {
		return nil, false
	}
	raw := ContentResult(in.Kind)
	if raw == nil {
		return nil, false // the schema check refuses it
	}
	return &rawResult{raw: raw}, true
}
