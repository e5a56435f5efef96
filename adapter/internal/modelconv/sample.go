//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 as a server request; agt still answers it from legacy servers, and a modern server asks for it inside input_required results
package modelconv

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
)

// The stop reasons MCP names (CreateMessageResult.StopReason). A model
// API's own reasons map to these where they mean the same.
const (
	StopEndTurn      = "endTurn"
	StopStopSequence = "stopSequence"
	StopMaxTokens    = "maxTokens"
	StopToolUse      = "toolUse"
)

// Sample is a server's sampling request (sampling/createMessage) checked
// and reduced to what every model API takes: the adapters' SampleRequest
// builds its API's request from it.
//
// What is not here is left out on purpose: includeContext (the host
// decides what its model sees; MCP deprecates the field), metadata
// (provider-specific, and a server must not set what the host sends its
// provider, such as the user the request is billed to), modelPreferences
// (the host chooses its model) and _meta.
type Sample struct {
	// Messages are the server's messages, in order.
	Messages []SampleMessage
	// System is the server's systemPrompt; "" when it set none or only
	// whitespace (the APIs refuse an empty system text).
	System string
	// MaxTokens is what the request may generate: the server's maxTokens,
	// at most the host's cap (SampleMaxTokens).
	MaxTokens int64
	// StopSequences are the server's, as they are.
	StopSequences []string
	// Temperature is the server's; 0 means it set none (MCP's JSON omits
	// a zero, so 0 and unset read the same). Never negative.
	Temperature float64
}

// SampleMessage is one message of a sampling request: a text or an image
// (an MCP sampling message holds one content block).
type SampleMessage struct {
	// Assistant is true for the role "assistant", false for "user".
	Assistant bool
	// Text is the message's text, never blank; "" when it is an image.
	Text string
	// ImageType is an image's media type, the one its bytes show (JPEG,
	// PNG, GIF or WebP), and ImageData its standard base64, at most
	// MaxImageBase64 characters; both "" for a text.
	ImageType, ImageData string
}

// SampleParams checks a server's sampling request and returns what the
// adapters send, with maxTokens the host's cap on the tokens one request
// may generate. A request the model APIs cannot take is refused, so the
// server learns why: the error is an *mcpconn.RefusedError (it wraps
// mcpconn.ErrRefused) whose Reason names the field and the rule, never a
// value (SampleMessages, SampleMaxTokens). A cap below 1 is the host's
// mistake: a plain error.
func SampleParams(params *mcp.CreateMessageParams, maxTokens int64) (Sample, error) {
	if maxTokens < 1 {
		return Sample{}, errHostCap
	}
	if params == nil {
		return Sample{}, refuse("the request has no params")
	}
	n, err := SampleMaxTokens(params.MaxTokens, maxTokens)
	if err != nil {
		return Sample{}, err
	}
	if params.Temperature < 0 {
		return Sample{}, refuse("temperature is negative; set it from 0 up, or leave it out")
	}
	msgs, err := SampleMessages(params.Messages)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{Messages: msgs, MaxTokens: n, StopSequences: params.StopSequences, Temperature: params.Temperature}
	if strings.TrimSpace(params.SystemPrompt) != "" {
		s.System = params.SystemPrompt
	}
	return s, nil
}

// errHostCap: the host's cap on maxTokens is below 1.
var errHostCap = errors.New("maxTokens, the host's cap on the tokens a server's sampling request may generate, is below 1: pass at least 1 to SampleRequest or Sampler")

// SampleMaxTokens is the maxTokens a request is sent with: the server's
// asked, at most limit (the host's cap: a server is not trusted with the
// host's bill, and MCP lets the client sample fewer tokens than asked).
// A server's maxTokens below 1 is refused (an *mcpconn.RefusedError):
// MCP requires the field, a zero means the server left it out, and
// answering with the host's whole cap would spend what nobody asked for.
// A limit below 1 is the host's mistake: a plain error.
func SampleMaxTokens(asked, limit int64) (int64, error) {
	if limit < 1 {
		return 0, errHostCap
	}
	if asked < 1 {
		return 0, refuse("maxTokens is below 1; set the most tokens the answer may have")
	}
	return min(asked, limit), nil
}

// SampleMessages checks a sampling request's messages and returns them as
// the model APIs take them. It refuses (an *mcpconn.RefusedError naming
// the message by its index) no messages, a nil message, a role other than
// user or assistant, a blank text (the APIs refuse it), audio (no model
// API agt converts for takes audio in a prompt), an image that is not a
// JPEG, PNG, GIF or WebP of at most MaxImageBase64 characters of base64
// (SampleImageType), tool use and tool results (the Run offers sampling
// without tools), and any other content.
func SampleMessages(msgs []*mcp.SamplingMessage) ([]SampleMessage, error) {
	if len(msgs) == 0 {
		return nil, refuse("messages is empty; send at least one message")
	}
	out := make([]SampleMessage, 0, len(msgs))
	for i, m := range msgs {
		if m == nil {
			return nil, refuse(fmt.Sprintf("messages[%d] is null", i))
		}
		var sm SampleMessage
		switch m.Role {
		case "user":
		case "assistant":
			sm.Assistant = true
		default:
			return nil, refuse(fmt.Sprintf("messages[%d].role is neither user nor assistant", i))
		}
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			if c == nil || strings.TrimSpace(c.Text) == "" {
				return nil, refuse(fmt.Sprintf("messages[%d] is a blank text; the model APIs take no empty text", i))
			}
			sm.Text = c.Text
		case *mcp.ImageContent:
			mt, ok := "", false
			if c != nil {
				mt, ok = SampleImageType(c.MIMEType, c.Data)
			}
			if !ok {
				return nil, refuse(fmt.Sprintf("messages[%d] is an image the model APIs do not take: send a JPEG, PNG, GIF or WebP of at most %d MiB of base64", i, MaxImageBase64>>20))
			}
			sm.ImageType, sm.ImageData = mt, base64.StdEncoding.EncodeToString(c.Data)
		case *mcp.AudioContent:
			return nil, refuse(fmt.Sprintf("messages[%d] is audio; the model API takes no audio: send text or an image", i))
		case *mcp.ToolUseContent, *mcp.ToolResultContent:
			return nil, refuse(fmt.Sprintf("messages[%d] is a tool use or tool result; this client samples without tools: send text or an image", i))
		case nil:
			return nil, refuse(fmt.Sprintf("messages[%d] has no content", i))
		default:
			return nil, refuse(fmt.Sprintf("messages[%d] holds content sampling does not take: send text or an image", i))
		}
		out = append(out, sm)
	}
	return out, nil
}

// SampleImageType is ImageType's rule for an image held as its bytes (an
// mcp.ImageContent, whose Data the MCP SDK has decoded from base64): the
// type its bytes show, when the server labelled it as an image type the
// APIs take, the bytes are one (JPEG, PNG, GIF or WebP), and their base64
// is at most MaxImageBase64 characters; else ok is false.
func SampleImageType(mimeType string, data []byte) (mediaType string, ok bool) {
	if !imageTypes[strings.ToLower(mimeType)] || base64.StdEncoding.EncodedLen(len(data)) > MaxImageBase64 {
		return "", false
	}
	if mt := http.DetectContentType(data); imageTypes[mt] {
		return mt, true
	}
	return "", false
}

// SampleResult is the answer to a server's sampling request: the model's
// texts joined with nothing between them (an API splits one answer into
// several blocks, at a citation for one) as one text block, role
// assistant, the model that answered and stopReason (one of the Stop
// constants, or an API's own reason MCP does not name; "" for none). The
// caller passes only the text of the model's answer, leaving out
// thinking and any other block. An answer without text (none, or all
// empty) is an error: MCP's result holds one content block, and an empty
// text would read as an answer. Its error holds no text of the answer.
func SampleResult(model, stopReason string, texts []string) (*mcp.CreateMessageResult, error) {
	text := strings.Join(texts, "")
	if text == "" {
		return nil, errNoText
	}
	return &mcp.CreateMessageResult{
		Content:    &mcp.TextContent{Text: text},
		Model:      model,
		Role:       "assistant",
		StopReason: stopReason,
	}, nil
}

// errNoText: the model's answer to a sampling request held no text.
var errNoText = errors.New("the model's answer to the sampling request holds no text")

// SampleRefusal refuses a sampling request with a reason the server
// reads (an *mcpconn.RefusedError, "sampling: " and reason): an adapter's
// own rule, in agt's words, never a value of the request.
func SampleRefusal(reason string) error {
	return &mcpconn.RefusedError{Reason: "sampling: " + reason}
}

func refuse(reason string) error { return SampleRefusal(reason) }
