//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, where a server still asks for it inside an input_required result; agt answers it in both eras
package agtresponses

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/agtopenai/internal/oaiconv"
	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/run"
)

// MinOutputTokens is the least max_output_tokens the Responses API takes:
// a request for fewer asks for this many, and a Sampler's cap must be at
// least this.
const MinOutputTokens = 16

// SampleRequest converts a mounted server's sampling request
// (sampling/createMessage) to a Responses API request for model, after
// the rules every adapter shares (modelconv.SampleParams):
//
//   - The system prompt is the instructions.
//   - Each message is an input message of its role: a user message's text
//     and image as its text and an input_image (a data URL: a JPEG, PNG,
//     GIF or WebP by its bytes, at most MaxImageBase64 of base64), an
//     assistant message's text as its content. The API takes no audio
//     input and no image in an assistant message.
//   - temperature goes over when above 0 (at most 2). The Responses API
//     has no stop sequences: stopSequences are not sent, and the model may
//     write past them (a server that needs them cut cuts the text).
//   - max_output_tokens is the least of the server's maxTokens and
//     maxTokens, the host's cap (a server's maxTokens is only a request),
//     and at least MinOutputTokens, the API's least.
//
// includeContext, modelPreferences and metadata are not sent: the model
// is the host's choice, and metadata is provider-specific (a server must
// not set, say, the request's user). The response is not stored (store
// false): it is a server's request, not the host's conversation.
//
// What the API cannot take refuses the whole request with an
// *mcpconn.RefusedError (wrapped) whose reason, safe to send to the server, names
// the message or field and the rule, never the request's text. A cap
// below MinOutputTokens or an empty model is the host's error.
func SampleRequest(params *mcp.CreateMessageParams, model responses.ResponsesModel, maxTokens int64) (responses.ResponseNewParams, error) {
	if model == "" {
		return responses.ResponseNewParams{}, errNoModel
	}
	if maxTokens < MinOutputTokens {
		return responses.ResponseNewParams{}, fmt.Errorf("agtresponses: maxTokens, the host's cap on the tokens a server's sampling request may generate, is below %d (MinOutputTokens, the API's least): pass at least that to SampleRequest or Sampler", MinOutputTokens)
	}
	if params != nil {
		for i, m := range params.Messages {
			if m == nil || m.Role != "assistant" {
				continue
			}
			if _, ok := m.Content.(*mcp.ImageContent); ok {
				return responses.ResponseNewParams{}, fmt.Errorf("agtresponses: %w", modelconv.SampleRefusal(fmt.Sprintf("messages[%d] is an image in an assistant message; the model API takes images from the user only", i)))
			}
		}
	}
	s, err := modelconv.SampleParams(params, maxTokens)
	if err != nil {
		return responses.ResponseNewParams{}, fmt.Errorf("agtresponses: %w", err)
	}
	if s.Temperature > maxTemperature {
		return responses.ResponseNewParams{}, fmt.Errorf("agtresponses: %w", modelconv.SampleRefusal("temperature is above 2, the most the model API takes"))
	}
	req := responses.ResponseNewParams{
		Model:           model,
		MaxOutputTokens: param.NewOpt(max(s.MaxTokens, MinOutputTokens)),
		Store:           param.NewOpt(false),
	}
	if s.System != "" {
		req.Instructions = param.NewOpt(s.System)
	}
	input := make(responses.ResponseInputParam, 0, len(s.Messages))
	for _, m := range s.Messages {
		role := responses.EasyInputMessageRoleUser
		if m.Assistant {
			role = responses.EasyInputMessageRoleAssistant
		}
		if m.ImageData == "" {
			input = append(input, responses.ResponseInputItemParamOfMessage(m.Text, role))
			continue
		}
		img := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
		img.OfInputImage.ImageURL = param.NewOpt("data:" + m.ImageType + ";base64," + m.ImageData)
		input = append(input, responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{img}, role))
	}
	req.Input.OfInputItemList = input
	if s.Temperature > 0 {
		req.Temperature = param.NewOpt(s.Temperature)
	}
	return req, nil
}

// errNoModel: SampleRequest or Sampler without a model.
var errNoModel = errors.New("agtresponses: the model is empty: pass the model that answers sampling requests to SampleRequest or Sampler")

// maxTemperature is the highest temperature the API takes.
const maxTemperature = 2

// SampleResult converts a response to the answer of a sampling request
// (modelconv.SampleResult): the text of its output_text parts, in order,
// the model that wrote it, the role assistant, and the stop reason: a
// completed response is endTurn, or toolUse when it holds a function
// call; an incomplete one is maxTokens when it ran out of
// max_output_tokens, "content_filter" as it is when a filter cut it (MCP
// names no such reason; the text is what the filter left), else without
// a reason.
//
// A refusal part is an error that says the model refused, without its
// text (an *mcpconn.RefusedError, which the server reads): a server must
// not read a refusal as the model's answer. A response that failed (the
// error names the API's code, not its message), that is not finished (a
// background response: queued, in_progress, cancelled) or that holds no
// text is an error too.
func SampleResult(resp *responses.Response) (*mcp.CreateMessageResult, error) {
	if resp == nil {
		return nil, errors.New("agtresponses: no response")
	}
	reason := ""
	switch resp.Status {
	case responses.ResponseStatusCompleted, "":
		reason = modelconv.StopEndTurn
	case responses.ResponseStatusIncomplete:
		switch resp.IncompleteDetails.Reason {
		case "max_output_tokens":
			reason = modelconv.StopMaxTokens
		case "content_filter":
			reason = oaiconv.StopContentFilter
		}
	case responses.ResponseStatusFailed:
		return nil, fmt.Errorf("agtresponses: the response failed (code %q)", resp.Error.Code)
	default:
		return nil, fmt.Errorf("agtresponses: the response is not finished (status %q)", resp.Status)
	}
	var texts []string
	for _, it := range resp.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					texts = append(texts, c.Text)
				case "refusal":
					return nil, oaiconv.ErrModelRefused
				}
			}
		case "function_call":
			if reason == modelconv.StopEndTurn {
				reason = modelconv.StopToolUse
			}
		}
	}
	res, err := modelconv.SampleResult(resp.Model, reason, texts)
	if err != nil {
		return nil, fmt.Errorf("agtresponses: %w", err)
	}
	return res, nil
}

// Sampler returns a run.ClientFeatures.Sample that answers a mounted
// server's sampling requests with model through client: SampleRequest
// (maxTokens caps what a server asks for: at least MinOutputTokens), the
// API, SampleResult. When the model refuses the server's temperature
// (reasoning models take only the default), it asks once more without it.
// An error wraps the SDK's (it holds the API's status, never the
// request's text); one SampleRequest or SampleResult returns is a refusal
// the server reads.
func Sampler(client openai.Client, model responses.ResponsesModel, maxTokens int64) func(ctx context.Context, from run.Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, _ run.Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		req, err := SampleRequest(params, model, maxTokens)
		if err != nil {
			return nil, err
		}
		resp, err := client.Responses.New(ctx, req)
		if oaiconv.UnsupportedParam(err) == "temperature" {
			req.Temperature = param.Opt[float64]{}
			resp, err = client.Responses.New(ctx, req)
		}
		if err != nil {
			return nil, fmt.Errorf("agtresponses: the Responses API did not answer a sampling request: %w", err)
		}
		return SampleResult(resp)
	}
}
