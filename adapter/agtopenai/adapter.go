package agtopenai

import (
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
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
		fn.SetExtraFields(map[string]any{"parameters": modelconv.InputSchema(t.InputSchema, modelconv.OpenAIRootRefused...)})
		out = append(out, sdk.ChatCompletionFunctionTool(fn))
	}
	return out
}

// Batch converts the tool_calls of one assistant message to one run.Batch
// for Run.Execute: each function call's ID, name and arguments (the string
// the model wrote, as raw JSON) become a run.Call, in the message's order.
// A call without a type (some OpenAI-compatible servers leave it out) is
// a function call when it names a function. Custom tool calls (free text,
// not JSON) are not agt's and are skipped: the host answers them itself.
func Batch(batchID string, agent resource.Ref, msg sdk.ChatCompletionMessage) run.Batch {
	b := run.Batch{ID: batchID, Agent: agent}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "function" && (tc.Type != "" || tc.Function.Name == "") {
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
	return modelconv.Results(out, func(r run.Result) sdk.ChatCompletionMessageParamUnion {
		tm := ToolMessage(r)
		return sdk.ChatCompletionMessageParamUnion{OfTool: &tm}
	}, sdk.UserMessage[string])
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
	if err != nil || (r.Notice == "" && len(blocks) == 0) || modelconv.StructuredStands(r, blocks) {
		// Content that is not an array of blocks (a host tool's choice),
		// no blocks, or structured content the blocks only repeat:
		// ForModel's bytes as text.
		tm.Content.OfString = sdk.String(string(r.ForModel()))
		return tm
	}
	for _, b := range blocks {
		tm.Content.OfArrayOfContentParts = append(tm.Content.OfArrayOfContentParts, textPart(modelconv.BlockText(b, "a tool message takes text only")))
	}
	if r.Notice != "" {
		tm.Content.OfArrayOfContentParts = append(tm.Content.OfArrayOfContentParts, textPart(r.Notice))
	}
	return tm
}

func textPart(s string) sdk.ChatCompletionContentPartTextParam {
	return sdk.ChatCompletionContentPartTextParam{Text: s}
}
