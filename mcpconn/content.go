package mcpconn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agtsdk/agt/content"
)

// maxContentBlocks bounds the content blocks of one tool result (fixed).
// The message bound (ConnectorOptions.Limits.MaxMessageBytes) bounds their bytes;
// this bounds the values built for them: a 16 MiB message of empty text
// blocks would otherwise decode into some 700,000 of them.
const maxContentBlocks = 10000

// DecodeContent decodes a JSON array of content blocks (a tool result's
// "content") into typed blocks, each keeping its exact bytes, by the same
// rules CallTool reads a result with: a known type whose fields have the
// wrong JSON types is an error, an unknown type is kept as
// content.Unknown, and at most 10000 blocks are read. Empty
// input and null give no blocks.
func DecodeContent(raw json.RawMessage) ([]content.Block, error) {
	return decodeContent(bytes.TrimSpace(validText(raw)))
}

// errMalformed says how a result or a block is malformed. Its text names
// the field, never a value.
type errMalformed string

func (e errMalformed) Error() string { return string(e) }

func decodeContent(raw []byte) ([]content.Block, error) {
	if len(raw) == 0 || isNull(raw) {
		return []content.Block{}, nil
	}
	if raw[0] != '[' {
		return nil, errMalformed("content is not an array")
	}
	out := make([]content.Block, 0, 1)
	err := arrayElements(raw, func(i int, elem []byte) error {
		if i >= maxContentBlocks {
			return &LimitError{Option: "MaxContentBlocks (fixed)", What: "the content blocks of a tool result",
				Limit: maxContentBlocks, Unit: "blocks"}
		}
		c, err := decodeBlock(elem)
		if err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// blockFields are the spans of the members of a block that any known type
// reads; nil when absent.
type blockFields struct {
	typ, text, data, mimeType, uri, name, title, description, size, resource, annotations, meta []byte
}

func decodeBlock(raw []byte) (content.Block, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errMalformed("the block is not an object")
	}
	var f blockFields
	err := objectMembers(raw, func(key, val []byte) error {
		switch string(key) { // no allocation: the compiler matches in place
		case "type":
			f.typ = val
		case "text":
			f.text = val
		case "data":
			f.data = val
		case "mimeType":
			f.mimeType = val
		case "uri":
			f.uri = val
		case "name":
			f.name = val
		case "title":
			f.title = val
		case "description":
			f.description = val
		case "size":
			f.size = val
		case "resource":
			f.resource = val
		case "annotations":
			f.annotations = val
		case "_meta":
			f.meta = val
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if f.typ == nil || f.typ[0] != '"' {
		return nil, errMalformed("the block has no type")
	}
	typ, err := jsonString(f.typ, "type")
	if err != nil || typ == "" {
		return nil, errMalformed("the block has no type")
	}
	ann, meta := optional(f.annotations), optional(f.meta)
	raw = raw[:len(raw):len(raw)]
	var d stringDecoder
	switch typ {
	case "text":
		c := &content.Text{Text: d.str(f.text, "text"), Annotations: ann, Meta: meta, Raw: raw}
		return c, d.err
	case "image":
		c := &content.Image{Data: d.str(f.data, "data"), MIMEType: d.str(f.mimeType, "mimeType"), Annotations: ann, Meta: meta, Raw: raw}
		return c, d.err
	case "audio":
		c := &content.Audio{Data: d.str(f.data, "data"), MIMEType: d.str(f.mimeType, "mimeType"), Annotations: ann, Meta: meta, Raw: raw}
		return c, d.err
	case "resource_link":
		c := &content.ResourceLink{URI: d.str(f.uri, "uri"), Name: d.str(f.name, "name"), Title: d.str(f.title, "title"),
			Description: d.str(f.description, "description"), MIMEType: d.str(f.mimeType, "mimeType"),
			Annotations: ann, Meta: meta, Raw: raw}
		if f.size != nil && !isNull(f.size) {
			var n int64
			if json.Unmarshal(f.size, &n) != nil {
				return nil, errMalformed("size is not an integer")
			}
			c.Size = &n
		}
		return c, d.err
	case "resource":
		c := &content.EmbeddedResource{Annotations: ann, Meta: meta, Raw: raw}
		if f.resource != nil && !isNull(f.resource) {
			if err := decodeResourceContents(f.resource, &c.Resource); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	return &content.Unknown{Kind: typ, Annotations: ann, Meta: meta, Raw: raw}, nil
}

func decodeResourceContents(raw []byte, r *content.ResourceContents) error {
	if raw[0] != '{' {
		return errMalformed("resource is not an object")
	}
	var uri, mimeType, text, blob, meta []byte
	err := objectMembers(raw, func(key, val []byte) error {
		switch string(key) {
		case "uri":
			uri = val
		case "mimeType":
			mimeType = val
		case "text":
			text = val
		case "blob":
			blob = val
		case "_meta":
			meta = val
		}
		return nil
	})
	if err != nil {
		return err
	}
	d := stringDecoder{prefix: "resource."}
	r.URI, r.MIMEType = d.str(uri, "uri"), d.str(mimeType, "mimeType")
	r.Text, r.Blob = d.str(text, "text"), d.str(blob, "blob")
	r.IsBlob = blob != nil && !isNull(blob)
	r.Meta = optional(meta)
	return d.err
}

// stringDecoder decodes optional string members, keeping the first error.
type stringDecoder struct {
	prefix string
	err    error
}

// str decodes a string member; absent and null are "".
func (d *stringDecoder) str(val []byte, field string) string {
	if val == nil || d.err != nil || isNull(val) {
		return ""
	}
	s, err := jsonString(val, field)
	if err != nil {
		d.err = errMalformed(d.prefix + field + " is not a string")
	}
	return s
}

// jsonString decodes the JSON string val. Strings without escapes, by far
// the most common, are copied as they are (validText made them valid
// UTF-8).
func jsonString(val []byte, field string) (string, error) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", errMalformed(field + " is not a string")
	}
	inner := val[1 : len(val)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(val, &s); err != nil {
		return "", errMalformed(field + " is not a string")
	}
	return s, nil
}

// optional returns a member's exact bytes, capacity capped so that an
// append by the caller cannot write over the rest of the result; nil when
// absent or null.
func optional(val []byte) json.RawMessage {
	if val == nil || isNull(val) {
		return nil
	}
	return val[:len(val):len(val)]
}

func isNull(b []byte) bool { return string(b) == "null" }

// validText returns b with the text no JSON decoder would keep replaced
// by U+FFFD, as every decoder reads it: each byte that is not part of
// valid UTF-8, and each \u escape of a lone surrogate. Anything else is
// left byte for byte, and b itself is returned when it holds neither (the
// common case, checked in one pass). A host embeds these bytes in its
// requests to a model, whose API may refuse invalid text.
func validText(b []byte) []byte {
	if utf8.Valid(b) && !hasSurrogateEscape(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		c := b[i]
		if c == '\\' && i+1 < len(b) && b[i+1] < utf8.RuneSelf {
			if b[i+1] != 'u' {
				out = append(out, b[i], b[i+1])
				i += 2
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok || !utf16.IsSurrogate(r) {
				out = append(out, b[i], b[i+1])
				i += 2
				continue
			}
			if r < 0xDC00 && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if lo, ok := hex4(b, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					out = append(out, b[i:i+12]...) // a valid pair
					i += 12
					continue
				}
			}
			out = append(out, `\ufffd`...)
			i += 6
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// hasSurrogateEscape reports a \u escape of a surrogate half (valid pairs
// included; validText keeps those).
func hasSurrogateEscape(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u`))
		if i < 0 {
			return false
		}
		if i+2 < len(b) && (b[i+2] == 'd' || b[i+2] == 'D') {
			if r, ok := hex4(b, i+2); ok && utf16.IsSurrogate(r) {
				return true
			}
		}
		b = b[i+2:]
	}
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
