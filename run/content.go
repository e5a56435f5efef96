package run

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn"
)

// Blocks returns Content's typed blocks (text, image, audio,
// resource_link, resource, and *content.Unknown for other types, each with
// its exact bytes), by mcpconn.DecodeContent's rules. An empty Content
// gives no blocks; Content that is not an array of blocks (a host tool
// may set anything) is an error.
//
// Content is decoded once: the Result of an MCP call carries the blocks
// mcpconn read from the wire, and a host tool's Result, or one whose
// Content an interceptor replaced, decodes its Content at the first need
// (Blocks, ForModel, an adapter). The blocks are shared by every copy of
// the Result: do not modify them. A Content that is not the one the Run
// returned (a Result the host built, or gave new Content) is decoded on
// each call; change Content by assigning it, not by writing into its
// bytes, which the blocks would not follow.
func (r Result) Blocks() ([]content.Block, error) {
	if c := r.blocks; c != nil && c.of(r.Content) {
		return c.get()
	}
	return mcpconn.DecodeContent(r.Content)
}

// contentBlocks are the typed blocks of one Content, decoded once: given
// at once for an MCP call's (mcpconn decoded them), at the first get for
// a host tool's.
type contentBlocks struct {
	content json.RawMessage // the Content they are the blocks of
	once    sync.Once
	blocks  []content.Block
	err     error
}

// decodedBlocks are the blocks mcpconn decoded from content.
func decodedBlocks(content json.RawMessage, blocks []content.Block) *contentBlocks {
	c := &contentBlocks{content: content, blocks: blocks[:len(blocks):len(blocks)]}
	c.once.Do(func() {})
	return c
}

// withBlocks returns r carrying the blocks of its Content: those it
// carries already when they are of its Content, else blocks decoded at
// the first need (a host tool's Content, or one an interceptor replaced).
func (r Result) withBlocks() Result {
	if len(r.Content) > 0 && (r.blocks == nil || !r.blocks.of(r.Content)) {
		r.blocks = &contentBlocks{content: r.Content}
	}
	return r
}

// of reports whether content is the Content the blocks are of: the same
// bytes, not a copy (a Result's Content replaced by another slice, even
// of equal bytes, is decoded again).
func (c *contentBlocks) of(content json.RawMessage) bool {
	return len(content) == len(c.content) && (len(content) == 0 || &content[0] == &c.content[0])
}

func (c *contentBlocks) get() ([]content.Block, error) {
	c.once.Do(func() {
		c.blocks, c.err = mcpconn.DecodeContent(c.content)
		c.blocks = c.blocks[:len(c.blocks):len(c.blocks)]
	})
	return c.blocks, c.err
}

// mcpResult is the Result of an MCP tool's answer: its content and
// structured content as the server sent them, with the blocks mcpconn
// decoded from them, and for isError the text of its text blocks as the
// Message (every block stays in Content).
func mcpResult(cr *mcpconn.CallResult) Result {
	res := Result{Content: cr.ContentJSON, Structured: cr.Structured, blocks: decodedBlocks(cr.ContentJSON, cr.Content)}
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
		if tc, ok := c.(*content.Text); ok {
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
func (r Result) textOnly() bool {
	if len(r.Content) == 0 {
		return true
	}
	blocks, err := r.Blocks()
	if err != nil {
		return true
	}
	for _, b := range blocks {
		if _, ok := b.(*content.Text); !ok {
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
