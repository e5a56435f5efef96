//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, where a server still asks for it inside an input_required result; agt answers it in both eras
package agtopenai

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/agtsdk/agt/adapter/agtopenai/internal/oaiconv"
	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/run"
)

// SampleRequest converts a mounted server's sampling request
// (sampling/createMessage) to a Chat Completions request for model,
// after the rules every adapter shares (modelconv.SampleParams):
//
//   - The system prompt is a first system message (OpenAI reads it as a
//     developer message on the models that have them; OpenAI-compatible
//     servers know system messages).
//   - A user message's text, image and audio go as its text, an
//     image_url part (a data URL: a JPEG, PNG, GIF or WebP by its bytes,
//     at most 5 MiB of base64) and an input_audio part (WAV or MP3,
//     labelled and made so); an assistant message's text as its content.
//     The API takes no image or audio in an assistant message.
//   - temperature (when above 0, at most 2) and stop (at most 4) go over
//     as they are.
//   - max_completion_tokens is the least of the server's maxTokens and
//     maxTokens, the host's cap: a server's maxTokens is only a request.
//
// includeContext, modelPreferences and metadata are not sent: the model
// is the host's choice, and metadata is provider-specific (a server must
// not set, say, the request's user). The request is not stored (store
// false): it is a server's, not the host's conversation.
//
// What the API cannot take refuses the whole request with an
// *mcpconn.RefusedError (wrapped) whose reason, safe to send to the server, names
// the message or field and the rule, never the request's text. A cap
// below 1 or an empty model is the host's error.
func SampleRequest(params *mcp.CreateMessageParams, model sdk.ChatModel, maxTokens int64) (sdk.ChatCompletionNewParams, error) {
	if model == "" {
		return sdk.ChatCompletionNewParams{}, errNoModel
	}
	checked, audio, err := withoutAudio(params)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, fmt.Errorf("agtopenai: %w", err)
	}
	s, err := modelconv.SampleParams(checked, maxTokens)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, fmt.Errorf("agtopenai: %w", err)
	}
	if s.Temperature > maxTemperature {
		return sdk.ChatCompletionNewParams{}, fmt.Errorf("agtopenai: %w", modelconv.SampleRefusal("temperature is above 2, the most the model API takes"))
	}
	if n := len(s.StopSequences); n > maxStop {
		return sdk.ChatCompletionNewParams{}, fmt.Errorf("agtopenai: %w", modelconv.SampleRefusal(fmt.Sprintf("stopSequences has %d sequences; the model API takes at most %d", n, maxStop)))
	}
	req := sdk.ChatCompletionNewParams{
		Model:               model,
		MaxCompletionTokens: sdk.Int(s.MaxTokens),
		Store:               sdk.Bool(false),
		Messages:            make([]sdk.ChatCompletionMessageParamUnion, 0, len(s.Messages)+1),
	}
	if s.System != "" {
		req.Messages = append(req.Messages, sdk.SystemMessage(s.System))
	}
	for i, m := range s.Messages {
		switch {
		case audio[i] != nil:
			req.Messages = append(req.Messages, sdk.UserMessage([]sdk.ChatCompletionContentPartUnionParam{sdk.InputAudioContentPart(*audio[i])}))
		case m.ImageData != "":
			req.Messages = append(req.Messages, sdk.UserMessage([]sdk.ChatCompletionContentPartUnionParam{
				sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: "data:" + m.ImageType + ";base64," + m.ImageData}),
			}))
		case m.Assistant:
			req.Messages = append(req.Messages, sdk.AssistantMessage(m.Text))
		default:
			req.Messages = append(req.Messages, sdk.UserMessage(m.Text))
		}
	}
	if s.Temperature > 0 {
		req.Temperature = sdk.Float(s.Temperature)
	}
	if len(s.StopSequences) > 0 {
		req.Stop.OfStringArray = append([]string(nil), s.StopSequences...)
	}
	return req, nil
}

// errNoModel: SampleRequest or Sampler without a model.
var errNoModel = errors.New("agtopenai: the model is empty: pass the model that answers sampling requests to SampleRequest or Sampler")

const (
	// maxStop is the most stop sequences Chat Completions takes.
	maxStop = 4
	// maxTemperature is the highest temperature it takes.
	maxTemperature = 2
)

// withoutAudio is params for modelconv.SampleParams, which refuses audio
// (no other API it converts for takes audio in a prompt): each audio
// message of the user that Chat Completions takes is replaced, in a copy,
// by a stand-in text, and returned by its index as the input_audio it is
// sent as. An image in an assistant message, which the API refuses, is
// refused here; audio in one, or audio that is not WAV or MP3, too.
func withoutAudio(params *mcp.CreateMessageParams) (*mcp.CreateMessageParams, map[int]*sdk.ChatCompletionContentPartInputAudioInputAudioParam, error) {
	if params == nil {
		return nil, nil, nil
	}
	var audio map[int]*sdk.ChatCompletionContentPartInputAudioInputAudioParam
	var msgs []*mcp.SamplingMessage
	for i, m := range params.Messages {
		if m == nil || m.Role != "user" && m.Role != "assistant" {
			continue // SampleParams refuses it
		}
		switch c := m.Content.(type) {
		case *mcp.ImageContent:
			if m.Role == "assistant" {
				return nil, nil, modelconv.SampleRefusal(fmt.Sprintf("messages[%d] is an image in an assistant message; the model API takes images from the user only", i))
			}
		case *mcp.AudioContent:
			if m.Role == "assistant" {
				return nil, nil, modelconv.SampleRefusal(fmt.Sprintf("messages[%d] is audio in an assistant message; the model API takes audio from the user only", i))
			}
			format, ok := "", false
			if c != nil {
				format, ok = audioFormat(c)
			}
			if !ok {
				return nil, nil, modelconv.SampleRefusal(fmt.Sprintf("messages[%d] is audio the model API does not take: send WAV or MP3, labelled as such", i))
			}
			if msgs == nil {
				msgs = slices.Clone(params.Messages)
				audio = map[int]*sdk.ChatCompletionContentPartInputAudioInputAudioParam{}
			}
			msgs[i] = &mcp.SamplingMessage{Role: "user", Content: &mcp.TextContent{Text: "audio"}}
			audio[i] = &sdk.ChatCompletionContentPartInputAudioInputAudioParam{Data: base64.StdEncoding.EncodeToString(c.Data), Format: format}
		}
	}
	if msgs == nil {
		return params, nil, nil
	}
	p := *params
	p.Messages = msgs
	return &p, audio, nil
}

// audioFormats are the audio media types Chat Completions takes, by the
// input_audio format they are sent as.
var audioFormats = map[string]string{
	"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/vnd.wave": "wav",
	"audio/mpeg": "mp3", "audio/mp3": "mp3",
}

// audioFormat is the input_audio format of c: "wav" or "mp3", when the
// server labelled it so and its bytes are one (a RIFF WAVE header; an ID3
// tag or an MPEG audio frame header). The label is not trusted alone:
// the API refuses a whole request whose audio it cannot decode.
func audioFormat(c *mcp.AudioContent) (string, bool) {
	want, ok := audioFormats[strings.ToLower(c.MIMEType)]
	if !ok {
		return "", false
	}
	got := ""
	switch b := c.Data; {
	case http.DetectContentType(b) == "audio/wave":
		got = "wav"
	case len(b) >= 3 && string(b[:3]) == "ID3", len(b) >= 2 && b[0] == 0xFF && b[1]&0xE0 == 0xE0:
		got = "mp3"
	}
	return got, got == want
}

// SampleResult converts the first choice of a completion to the answer of
// a sampling request (modelconv.SampleResult): its text, the model that
// wrote it, the role assistant, and the stop reason: finish_reason stop is
// endTurn (Chat Completions does not say whether a stop sequence ended
// it), length maxTokens, tool_calls and function_call toolUse,
// content_filter "content_filter", as it is (MCP names no such reason; the
// text is what the filter left); any other is left out.
//
// A refusal (message.refusal) is an error that says the model refused,
// without its text (an *mcpconn.RefusedError, which the server reads): a
// server must not read a refusal as the model's answer. A completion
// without choices or without text is an error too.
func SampleResult(resp *sdk.ChatCompletion) (*mcp.CreateMessageResult, error) {
	if resp == nil || len(resp.Choices) == 0 {
		return nil, errors.New("agtopenai: the completion has no choices")
	}
	ch := resp.Choices[0]
	if ch.Message.Refusal != "" {
		return nil, oaiconv.ErrModelRefused
	}
	reason := ""
	switch ch.FinishReason {
	case "stop":
		reason = modelconv.StopEndTurn
	case "length":
		reason = modelconv.StopMaxTokens
	case "tool_calls", "function_call":
		reason = modelconv.StopToolUse
	case "content_filter":
		reason = oaiconv.StopContentFilter
	}
	res, err := modelconv.SampleResult(resp.Model, reason, []string{ch.Message.Content})
	if err != nil {
		return nil, fmt.Errorf("agtopenai: %w", err)
	}
	return res, nil
}

// Sampler returns a run.ClientFeatures.Sample that answers a mounted
// server's sampling requests with model through client: SampleRequest
// (maxTokens caps what a server asks for), the API, SampleResult. When the
// model refuses the server's temperature or stop sequences (reasoning
// models take neither), it asks once more without them. An error wraps
// the SDK's (it holds the API's status, never the request's text);
// one SampleRequest or SampleResult returns is a refusal the server reads.
func Sampler(client sdk.Client, model sdk.ChatModel, maxTokens int64) func(ctx context.Context, from run.Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, _ run.Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		req, err := SampleRequest(params, model, maxTokens)
		if err != nil {
			return nil, err
		}
		resp, err := client.Chat.Completions.New(ctx, req)
		for range 2 {
			switch oaiconv.UnsupportedParam(err) {
			case "temperature":
				req.Temperature = param.Opt[float64]{}
			case "stop":
				req.Stop = sdk.ChatCompletionNewParamsStopUnion{}
			default:
				continue
			}
			resp, err = client.Chat.Completions.New(ctx, req)
		}
		if err != nil {
			return nil, fmt.Errorf("agtopenai: the Chat Completions API did not answer a sampling request: %w", err)
		}
		return SampleResult(resp)
	}
}
