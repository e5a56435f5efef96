package openai

import (
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// Tools converts the Run's tools (Run.Tools) to Chat Completions function
// tools: name, description, and the parameters schema exactly as the
// server declared it (its bytes are sent as they are, not rebuilt from a
// map). Title, annotations and the output schema have no place in a
// function definition and are left out.
func Tools(tools []run.ToolInfo) []sdk.ChatCompletionToolUnionParam {
	out := make([]sdk.ChatCompletionToolUnionParam, 0, len(tools))
	for _, t := range tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		// FunctionParameters is a map: filling it would reorder keys and
		// round large integers through float64. An extra field of the same
		// name replaces it with the server's own bytes.
		fn.SetExtraFields(map[string]any{"parameters": parameters(t.InputSchema)})
		out = append(out, sdk.ChatCompletionFunctionTool(fn))
	}
	return out
}

// parameters is schema, or {"type":"object"} for a tool without one, the
// schema of a tool without arguments.
func parameters(schema json.RawMessage) json.RawMessage {
	if len(schema) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return schema
}

// Batch converts the tool_calls of one assistant message to one run.Batch
// for Run.Execute: each function call's ID, name and arguments (the string
// the model wrote, as raw JSON) become a run.Call, in the message's order.
// Custom tool calls (free text, not JSON) are not agt's and are skipped.
func Batch(batchID string, agent resource.Ref, msg sdk.ChatCompletionMessage) run.Batch {
	b := run.Batch{ID: batchID, Agent: agent}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "function" {
			continue
		}
		b.Calls = append(b.Calls, run.Call{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
	}
	return b
}

// Results converts an Outcome to the messages that follow the assistant
// message: one tool message per Result, in call order, then the Outcome's
// refresh notice (Outcome.Notice) as a last user message when there is
// one and no tool message already ends with it (the Run puts the notice
// of a failed refresh on the successful write that caused it, too: the
// model reads it once). Append them to the history as they are.
func Results(out run.Outcome) []sdk.ChatCompletionMessageParamUnion {
	msgs := make([]sdk.ChatCompletionMessageParamUnion, 0, len(out.Results)+1)
	for _, r := range out.Results {
		tm := ToolMessage(r)
		msgs = append(msgs, sdk.ChatCompletionMessageParamUnion{OfTool: &tm})
	}
	if n := out.Notice(); n != "" && !noticeCarried(out.Results, n) {
		msgs = append(msgs, sdk.UserMessage(n))
	}
	return msgs
}

// ToolMessage converts one Result to a tool message, text only (the API
// takes no other content in a tool message), after run.Result.ForModel's
// rule: a failed call is its ToolError JSON; a success with structured
// content and text blocks only is the structured JSON; else one text part
// per content block, a text block as its text and any other block (an
// image, audio, a resource) as its JSON, with the Result's own Notice as
// a last text part.
func ToolMessage(r run.Result) sdk.ChatCompletionToolMessageParam {
	tm := sdk.ChatCompletionToolMessageParam{ToolCallID: r.CallID}
	if r.Failed() {
		tm.Content.OfString = sdk.String(string(r.ToolError()))
		return tm
	}
	blocks, err := r.Blocks()
	if err != nil || (r.Notice == "" && (len(blocks) == 0 || len(r.Structured) > 0 && textOnly(blocks))) {
		// Content that is not an array of blocks (a host tool's choice),
		// no blocks, or structured content the blocks only repeat:
		// ForModel's bytes as text.
		tm.Content.OfString = sdk.String(string(r.ForModel()))
		return tm
	}
	for _, b := range blocks {
		tm.Content.OfArrayOfContentParts = append(tm.Content.OfArrayOfContentParts, textPart(blockText(b)))
	}
	if r.Notice != "" {
		tm.Content.OfArrayOfContentParts = append(tm.Content.OfArrayOfContentParts, textPart(r.Notice))
	}
	return tm
}

// blockText is a text block's text, or any other block's JSON, as
// ForModel would send it.
func blockText(c run.Content) string {
	if t, ok := c.(*run.TextContent); ok {
		return t.Text
	}
	return string(c.JSON())
}

func textPart(s string) sdk.ChatCompletionContentPartTextParam {
	return sdk.ChatCompletionContentPartTextParam{Text: s}
}

func textOnly(blocks []run.Content) bool {
	for _, b := range blocks {
		if _, ok := b.(*run.TextContent); !ok {
			return false
		}
	}
	return true
}

// noticeCarried reports whether a successful Result already has notice as
// its own Notice, which its converted result ends with.
func noticeCarried(results []run.Result, notice string) bool {
	for _, r := range results {
		if !r.Failed() && r.Notice == notice {
			return true
		}
	}
	return false
}
