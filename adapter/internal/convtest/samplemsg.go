//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, where a server still asks for it inside an input_required result; agt answers it in both eras
package convtest

import "github.com/modelcontextprotocol/go-sdk/mcp"

// Bytes that http.DetectContentType (and so modelconv) reads as what
// their names say, for sampling messages.
var (
	PNGBytes  = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 24)...)
	JPEGBytes = append([]byte("\xff\xd8\xff\xe0"), make([]byte, 24)...)
	WAVBytes  = append([]byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00"), make([]byte, 16)...)
	MP3Bytes  = append([]byte("ID3\x03\x00\x00\x00\x00\x00\x00"), make([]byte, 16)...)
)

// SampleText is a sampling message of role with text.
func SampleText(role, text string) *mcp.SamplingMessage {
	return &mcp.SamplingMessage{Role: mcp.Role(role), Content: &mcp.TextContent{Text: text}}
}

// SampleImage is a sampling message of role with an image of mimeType
// and data (its bytes).
func SampleImage(role, mimeType string, data []byte) *mcp.SamplingMessage {
	return &mcp.SamplingMessage{Role: mcp.Role(role), Content: &mcp.ImageContent{MIMEType: mimeType, Data: data}}
}

// SampleAudio is a sampling message of role with audio of mimeType and
// data (its bytes).
func SampleAudio(role, mimeType string, data []byte) *mcp.SamplingMessage {
	return &mcp.SamplingMessage{Role: mcp.Role(role), Content: &mcp.AudioContent{MIMEType: mimeType, Data: data}}
}
