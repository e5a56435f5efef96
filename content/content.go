package content

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Block is one content block of a tool result: a *Text, *Image, *Audio,
// *ResourceLink, *EmbeddedResource, or an *Unknown for a type this
// package does not know, kept as sent. Every block keeps its exact bytes
// (JSON), so a block can be passed on as the server wrote it whatever its
// type.
type Block interface {
	// Type returns the block's "type" as sent: "text", "image", "audio",
	// "resource_link", "resource", or another name.
	Type() string
	// JSON returns the block exactly as the server sent it (see
	// mcpconn.CallResult for the one exception, text that is not valid
	// Unicode).
	JSON() json.RawMessage
	isBlock()
}

// Text is a "text" block.
type Text struct {
	Text string
	// Annotations and Meta are the block's "annotations" and "_meta" as
	// sent, nil when absent or null.
	Annotations json.RawMessage
	Meta        json.RawMessage
	// Raw is the whole block as sent.
	Raw json.RawMessage
}

// Image is an "image" block.
type Image struct {
	// Data is the image, base64-encoded as sent. It is neither decoded
	// nor checked: Decode does both.
	Data     string
	MIMEType string
	// Annotations and Meta are the block's "annotations" and "_meta" as
	// sent, nil when absent or null.
	Annotations json.RawMessage
	Meta        json.RawMessage
	// Raw is the whole block as sent.
	Raw json.RawMessage
}

// Decode returns the image's bytes, or an error if Data is not standard
// base64.
func (c *Image) Decode() ([]byte, error) { return decodeBase64("image data", c.Data) }

// Audio is an "audio" block.
type Audio struct {
	// Data is the audio, base64-encoded as sent. It is neither decoded
	// nor checked: Decode does both.
	Data     string
	MIMEType string
	// Annotations and Meta are the block's "annotations" and "_meta" as
	// sent, nil when absent or null.
	Annotations json.RawMessage
	Meta        json.RawMessage
	// Raw is the whole block as sent.
	Raw json.RawMessage
}

// Decode returns the audio's bytes, or an error if Data is not standard
// base64.
func (c *Audio) Decode() ([]byte, error) { return decodeBase64("audio data", c.Data) }

// ResourceLink is a "resource_link" block: a resource the client may read,
// not its contents.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Size is the resource's size in bytes, nil when not given.
	Size *int64
	// Annotations and Meta are the block's "annotations" and "_meta" as
	// sent, nil when absent or null; Raw holds the rest (icons).
	Annotations json.RawMessage
	Meta        json.RawMessage
	// Raw is the whole block as sent.
	Raw json.RawMessage
}

// EmbeddedResource is a "resource" block: a resource's contents, text or
// binary.
type EmbeddedResource struct {
	Resource ResourceContents
	// Annotations and Meta are the block's "annotations" and "_meta" as
	// sent, nil when absent or null.
	Annotations json.RawMessage
	Meta        json.RawMessage
	// Raw is the whole block as sent.
	Raw json.RawMessage
}

// ResourceContents is the contents of an embedded resource: text, or a
// blob when IsBlob.
type ResourceContents struct {
	URI      string
	MIMEType string
	// Text is the contents of a text resource.
	Text string
	// Blob is the contents of a binary resource, base64-encoded as sent
	// (not decoded nor checked: DecodeBlob does both).
	Blob string
	// IsBlob says the server sent "blob" (a binary resource), not "text".
	IsBlob bool
	// Meta is the resource's "_meta" as sent, nil when absent or null.
	Meta json.RawMessage
}

// DecodeBlob returns the bytes of a binary resource, or an error if Blob
// is not standard base64.
func (r *ResourceContents) DecodeBlob() ([]byte, error) { return decodeBase64("resource blob", r.Blob) }

// Unknown is a block of a type this package does not know (a newer
// protocol's, or a server's own), kept as sent rather than failing the
// result.
type Unknown struct {
	// Kind is the block's "type".
	Kind string
	// Annotations and Meta are the block's "annotations" and "_meta" as
	// sent, nil when absent or null.
	Annotations json.RawMessage
	Meta        json.RawMessage
	// Raw is the whole block as sent.
	Raw json.RawMessage
}

func (c *Text) Type() string             { return "text" }
func (c *Image) Type() string            { return "image" }
func (c *Audio) Type() string            { return "audio" }
func (c *ResourceLink) Type() string     { return "resource_link" }
func (c *EmbeddedResource) Type() string { return "resource" }
func (c *Unknown) Type() string          { return c.Kind }

func (c *Text) JSON() json.RawMessage             { return c.Raw }
func (c *Image) JSON() json.RawMessage            { return c.Raw }
func (c *Audio) JSON() json.RawMessage            { return c.Raw }
func (c *ResourceLink) JSON() json.RawMessage     { return c.Raw }
func (c *EmbeddedResource) JSON() json.RawMessage { return c.Raw }
func (c *Unknown) JSON() json.RawMessage          { return c.Raw }

func (*Text) isBlock()             {}
func (*Image) isBlock()            {}
func (*Audio) isBlock()            {}
func (*ResourceLink) isBlock()     {}
func (*EmbeddedResource) isBlock() {}
func (*Unknown) isBlock()          {}

func decodeBase64(what, s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("content: the %s is not valid base64", what)
	}
	return b, nil
}
