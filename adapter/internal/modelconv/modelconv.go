package modelconv

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/run"
)

// objectType is the schema of a tool without arguments, and the root every
// model API requires of a tool's input schema.
const objectType = `{"type":"object"}`

// OpenAIRootRefused are the keywords OpenAI refuses at the root of a
// function's parameters ("schema must have type 'object' and not have
// 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level"), Chat
// Completions and Responses alike, and the whole request with them: every
// turn of the conversation would fail for one server's tool. The adapters
// leave them out (InputSchema); the model sees the rest of the schema and
// the Run still checks the whole of it.
var OpenAIRootRefused = []string{"oneOf", "anyOf", "allOf", "enum", "not"}

// InputSchema returns schema as the model APIs take it: the Messages API
// and Chat Completions both refuse a whole request when one tool's schema
// has no "type": "object" at its root. A root object without "type" gets
// it as its first key, every other byte kept (key order, large integers,
// tiny numbers); a schema that is empty or not an object (true) is
// {"type":"object"}. A root with a "type" is sent as it is. The keys
// named in drop (those an API refuses at the root) are removed from the
// root; the root's other values then keep their bytes, its keys go in
// the order of their names. The Run still checks every call's arguments
// against the server's own schema.
func InputSchema(schema json.RawMessage, drop ...string) json.RawMessage {
	var root map[string]json.RawMessage
	if len(schema) == 0 || json.Unmarshal(schema, &root) != nil || root == nil {
		return json.RawMessage(objectType)
	}
	n := len(root)
	for _, k := range drop {
		delete(root, k)
	}
	if len(root) != n {
		if _, ok := root["type"]; !ok {
			root["type"] = json.RawMessage(`"object"`)
		}
		out, err := json.Marshal(root)
		if err != nil { // cannot happen: values that were valid JSON
			return json.RawMessage(objectType)
		}
		return out
	}
	if _, ok := root["type"]; ok {
		return schema
	}
	// A valid JSON object: it starts with "{" after any whitespace.
	inner := bytes.TrimLeft(bytes.TrimSpace(schema)[1:], " \t\r\n")
	if inner[0] == '}' {
		return json.RawMessage(objectType)
	}
	out := make([]byte, 0, len(objectType)+1+len(inner))
	out = append(out, objectType[:len(objectType)-1]...)
	out = append(out, ',')
	return append(out, inner...)
}

// StructuredStands reports whether a successful result with these blocks
// is sent as its structured content, after run.Result.ForModel's rule:
// no Notice, structured content present, and text blocks only (the text
// repeats the structured content).
func StructuredStands(r run.Result, blocks []content.Block) bool {
	if r.Notice != "" || len(r.Structured) == 0 {
		return false
	}
	for _, b := range blocks {
		if _, ok := b.(*content.Text); !ok {
			return false
		}
	}
	return true
}

// Results converts an Outcome the one way every adapter does: one item
// per Result (result), in call order, then the refresh notice as a last
// item (notice) when no result carried it already (UnsentNotice).
func Results[T any](out run.Outcome, result func(run.Result) T, notice func(string) T) []T {
	items := make([]T, 0, len(out.Results)+1)
	for _, r := range out.Results {
		items = append(items, result(r))
	}
	if n := UnsentNotice(out); n != "" {
		items = append(items, notice(n))
	}
	return items
}

// UnsentNotice is the Outcome's refresh notice when the model has not read
// it in a result already, else "". The Run puts the notice of a failed
// refresh on each successful write that caused it, too (a failed result
// sends only its ToolError); the model reads it once.
func UnsentNotice(out run.Outcome) string {
	n := out.Notice()
	if n == "" {
		return ""
	}
	for _, r := range out.Results {
		if !r.Failed() && r.Notice == n {
			return ""
		}
	}
	return n
}

// BlockText is the text a model reads for a content block its API takes
// only as text: a text block's text; an image, an audio block or a binary
// embedded resource as its JSON with the base64 left out and said so
// ("(N characters of base64 left out: why)"), as a model reads no
// picture or sound in base64 text and one screenshot sent whole would
// fill its context window, after which the API refuses every request of
// the conversation; any other block (a resource link, a text resource, a
// type agt does not know) as its JSON, unchanged. Where the base64 is
// left out, the block's other fields keep their bytes, its keys go in the
// order of their names.
func BlockText(c content.Block, why string) string {
	switch b := c.(type) {
	case *content.Text:
		return b.Text
	case *content.Image:
		return string(withoutBase64(b.Raw, "data", len(b.Data), why))
	case *content.Audio:
		return string(withoutBase64(b.Raw, "data", len(b.Data), why))
	case *content.EmbeddedResource:
		if b.Resource.IsBlob {
			var block map[string]json.RawMessage
			if json.Unmarshal(b.Raw, &block) == nil {
				block["resource"] = withoutBase64(block["resource"], "blob", len(b.Resource.Blob), why)
				if out, err := json.Marshal(block); err == nil {
					return string(out)
				}
			}
		}
	}
	return string(c.JSON())
}

// withoutBase64 is the JSON object obj with its key replaced by a note of
// how many characters of base64 were left out and why.
func withoutBase64(obj json.RawMessage, key string, n int, why string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return obj // cannot happen: a block the Run decoded
	}
	note, err := json.Marshal(fmt.Sprintf("(%d characters of base64 left out: %s)", n, why))
	if err != nil {
		return obj
	}
	m[key] = note
	out, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return out
}

// MaxImageBase64 is the most base64 an image is sent with: 5 MiB, the
// Messages API's bound on one image, past which it refuses the whole
// request, and well under the OpenAI APIs' bounds on a request. A larger
// image goes as its JSON, its base64 left out (BlockText).
const MaxImageBase64 = 5 << 20

// imageTypes are the media types every model API agt converts for takes
// in an image: JPEG, PNG, GIF and WebP.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// NotAnImage is BlockText's why for an image ImageType refuses: its rule,
// said to the model.
const NotAnImage = "not a JPEG, PNG, GIF or WebP image in base64 on one line of at most 5 MiB"

// ImageType is the media type img is sent with as an image: the type its
// bytes show, when the server labelled it as an image type the APIs take
// and its bytes are one (JPEG, PNG, GIF or WebP) in standard base64 on
// one line of at most MaxImageBase64 characters; else ok is false and
// the block goes as text. The APIs check the bytes against the media type
// and refuse the whole request on a mismatch or on bad base64, and the
// history holding such an image could never be sent again: so the label
// is not trusted (a JPEG labelled image/png is sent as image/jpeg).
func ImageType(img *content.Image) (mediaType string, ok bool) {
	// Two IndexByte, not ContainsAny: each runs at memory speed, where
	// ContainsAny looks at the bytes one at a time.
	if !imageTypes[strings.ToLower(img.MIMEType)] || len(img.Data) > MaxImageBase64 ||
		strings.IndexByte(img.Data, '\n') >= 0 || strings.IndexByte(img.Data, '\r') >= 0 {
		return "", false
	}
	if mt, ok := sniffBase64(img.Data); ok && imageTypes[mt] {
		return mt, true
	}
	return "", false
}

// sniffBase64 is http.DetectContentType of the bytes the standard base64
// s holds, and whether s is standard base64 (as
// base64.StdEncoding.DecodeString reads s without line breaks), found
// without holding all its bytes: an image of MaxImageBase64 would cost
// 3.75 MiB for each conversion. It decodes s a few kB at a time; the
// first piece holds the 512 bytes DetectContentType reads.
func sniffBase64(s string) (mediaType string, ok bool) {
	if len(s)%4 != 0 {
		return "", false
	}
	var src [4 << 10]byte
	var buf [3 << 10]byte // what src decodes to, at most
	for i := 0; i < len(s); i += len(src) {
		p := src[:copy(src[:], s[i:])]
		if i+len(p) < len(s) && bytes.IndexByte(p, '=') >= 0 {
			return "", false // padding before the end
		}
		n, err := base64.StdEncoding.Decode(buf[:], p)
		if err != nil {
			return "", false
		}
		if i == 0 {
			// A copy of what it reads: buf, passed to it, would be
			// allocated on the heap.
			mediaType = http.DetectContentType(bytes.Clone(buf[:min(n, 512)]))
		}
	}
	if len(s) == 0 {
		mediaType = http.DetectContentType(nil)
	}
	return mediaType, true
}
