//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 as a server request; agt still answers it from legacy servers, and a modern server asks for it inside input_required results
package agtanthropic

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/run"
)

// Sampler answers the Run's mounted servers' sampling requests with the
// Messages API: set it as run.ClientFeatures.Sample. Each request goes
// through SampleRequest (model, and maxTokens as the cap on what one
// request may generate), client.Messages.New and SampleResult.
//
// A request SampleRequest refuses is refused to the server with its
// reason (an *mcpconn.RefusedError). An API error is returned wrapped
// (the SDK's *anthropic.Error, for errors.As); the Run tells the server
// only that the client could not answer.
func Sampler(client sdk.Client, model sdk.Model, maxTokens int64) func(ctx context.Context, from run.Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, _ run.Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		req, err := SampleRequest(params, model, maxTokens)
		if err != nil {
			return nil, err
		}
		msg, err := client.Messages.New(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("agtanthropic: the Messages API did not answer a sampling request: %w", err)
		}
		return SampleResult(msg)
	}
}

// SampleRequest converts a server's sampling request to a Messages API
// request for model, generating at most maxTokens: the server's
// maxTokens is only a request, capped at maxTokens. See the package
// documentation (Sampling) for what goes over and what is refused.
//
// A request the API cannot take is refused: the error wraps an
// *mcpconn.RefusedError whose reason the server reads, naming the field
// and the rule, never a value. A maxTokens below 1 or an empty model is
// the host's mistake: a plain error.
func SampleRequest(params *mcp.CreateMessageParams, model sdk.Model, maxTokens int64) (sdk.MessageNewParams, error) {
	if model == "" {
		return sdk.MessageNewParams{}, errNoModel
	}
	s, err := modelconv.SampleParams(params, maxTokens)
	if err != nil {
		return sdk.MessageNewParams{}, fmt.Errorf("agtanthropic: %w", err)
	}
	req := sdk.MessageNewParams{Model: model, MaxTokens: s.MaxTokens, StopSequences: s.StopSequences}
	if s.System != "" {
		req.System = []sdk.TextBlockParam{{Text: s.System}}
	}
	req.Messages = make([]sdk.MessageParam, 0, len(s.Messages))
	for i, m := range s.Messages {
		switch {
		case m.ImageType != "" && m.Assistant:
			return sdk.MessageNewParams{}, fmt.Errorf("agtanthropic: %w", modelconv.SampleRefusal(fmt.Sprintf("messages[%d] is an assistant's image; the Messages API takes images from the user only", i)))
		case m.ImageType != "":
			req.Messages = append(req.Messages, sdk.NewUserMessage(sdk.NewImageBlockBase64(m.ImageType, m.ImageData)))
		case m.Assistant:
			text := m.Text
			if i == len(s.Messages)-1 {
				// A last assistant message is the start of the answer the
				// model continues; the API refuses one that ends in
				// whitespace.
				text = strings.TrimRight(text, " \t\r\n")
			}
			req.Messages = append(req.Messages, sdk.NewAssistantMessage(sdk.NewTextBlock(text)))
		default:
			req.Messages = append(req.Messages, sdk.NewUserMessage(sdk.NewTextBlock(m.Text)))
		}
	}
	return req, nil
}

// errNoModel: SampleRequest or Sampler without a model.
var errNoModel = errors.New("agtanthropic: the model is empty: pass the model that answers sampling requests to SampleRequest or Sampler")

// SampleResult converts the Messages API's answer to a sampling request
// to the result the server gets: the text of the answer's text blocks,
// joined with nothing between them, as one text block (thinking and
// other blocks are left out), Model msg.Model, Role assistant, and the
// stop reason in MCP's names: end_turn is endTurn, stop_sequence
// stopSequence, max_tokens maxTokens, tool_use toolUse; another reason
// (refusal, pause_turn, model_context_window_exceeded) is passed as the
// API names it, as MCP's stopReason is open and a server learns more
// from "refusal" than from nothing. An answer with no text (a nil msg
// too) is an error, which holds none of the answer.
func SampleResult(msg *sdk.Message) (*mcp.CreateMessageResult, error) {
	if msg == nil {
		return nil, errors.New("agtanthropic: SampleResult got a nil message")
	}
	var texts []string
	for _, b := range msg.Content {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	res, err := modelconv.SampleResult(msg.Model, stopReason(msg.StopReason), texts)
	if err != nil {
		return nil, fmt.Errorf("agtanthropic: %w", err)
	}
	return res, nil
}

// stopReason is the API's stop reason in MCP's names, where MCP has one.
func stopReason(r sdk.StopReason) string {
	switch r {
	case sdk.StopReasonEndTurn:
		return modelconv.StopEndTurn
	case sdk.StopReasonStopSequence:
		return modelconv.StopStopSequence
	case sdk.StopReasonMaxTokens:
		return modelconv.StopMaxTokens
	case sdk.StopReasonToolUse:
		return modelconv.StopToolUse
	}
	return string(r)
}
