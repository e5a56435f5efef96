package run

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agtsdk/agt/mcpconn"
)

// The content block types of a tool result, as mcpconn reads them: see
// mcpconn.Content. Result.Blocks returns them.
type (
	Content          = mcpconn.Content
	TextContent      = mcpconn.TextContent
	ImageContent     = mcpconn.ImageContent
	AudioContent     = mcpconn.AudioContent
	ResourceLink     = mcpconn.ResourceLink
	EmbeddedResource = mcpconn.EmbeddedResource
	ResourceContents = mcpconn.ResourceContents
	UnknownContent   = mcpconn.UnknownContent
)

// Blocks decodes Content into typed blocks (text, image, audio,
// resource_link, resource, and *UnknownContent for other types, each with
// its exact bytes), by mcpconn.DecodeContent's rules. It decodes on every
// call. An empty Content gives no blocks; Content that is not an array of
// blocks (a host tool may set anything) is an error.
func (r Result) Blocks() ([]Content, error) { return mcpconn.DecodeContent(r.Content) }

// mcpResult is the Result of an MCP tool's answer: its content and
// structured content as the server sent them, and for isError the text of
// its text blocks as the Message (every block stays in Content).
func mcpResult(cr *mcpconn.CallResult) Result {
	res := Result{Content: cr.ContentJSON, Structured: cr.Structured}
	if cr.IsError {
		res.Code = CodeToolError
		res.Message = toolErrorText(cr)
	}
	return res
}

// toolErrorText is the Message of a failed MCP result: its text blocks,
// one per line (as CallResult.Text), bounded; it stops reading once past
// the bound.
func toolErrorText(cr *mcpconn.CallResult) string {
	var b strings.Builder
	for _, c := range cr.Content {
		if tc, ok := c.(*TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(tc.Text[:min(len(tc.Text), maxMessage+1)])
			if b.Len() > maxMessage {
				break
			}
		}
	}
	if b.Len() == 0 {
		return "the tool reported an error"
	}
	return boundMessage(b.String())
}

// textOnly reports whether the content blocks are all text blocks (none
// included). Content that is not an array of blocks counts as text only,
// so ForModel keeps its rule for it.
func textOnly(content json.RawMessage) bool {
	if len(content) == 0 {
		return true
	}
	blocks, err := mcpconn.DecodeContent(content)
	if err != nil {
		return true
	}
	for _, b := range blocks {
		if _, ok := b.(*TextContent); !ok {
			return false
		}
	}
	return true
}

// withNotice appends a text block holding notice to the content blocks,
// keeping their bytes.
func withNotice(content json.RawMessage, notice string) json.RawMessage {
	block := appendJSONString([]byte(`{"type":"text","text":`), notice)
	block = append(block, '}')
	c := bytes.TrimSpace(content)
	switch {
	case len(c) == 0:
		return append(append([]byte{'['}, block...), ']')
	case c[0] == '[' && c[len(c)-1] == ']' && json.Valid(c):
		inner := bytes.TrimSpace(c[1 : len(c)-1])
		out := make([]byte, 0, len(c)+len(block)+2)
		out = append(out, c[:len(c)-1]...)
		if len(inner) > 0 {
			out = append(out, ',')
		}
		out = append(out, block...)
		return append(out, ']')
	}
	// Not an array (a host tool's choice): keep it whole, as a block.
	var out []byte
	out = append(out, '[')
	if json.Valid(c) {
		out = append(out, c...)
	} else {
		out = appendJSONString(out, string(c))
	}
	out = append(out, ',')
	out = append(out, block...)
	return append(out, ']')
}

// appendJSONString appends s as a JSON string, as encoding/json writes
// it but without HTML escaping (so a Notice's "<" stays readable): invalid
// UTF-8 becomes U+FFFD, and U+2028 and U+2029 are escaped. Notices are
// rare, so the encoder's allocations do not matter.
func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
