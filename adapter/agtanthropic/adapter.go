package agtanthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// Tools converts the Run's tools (Run.Tools) to Messages API tool
// definitions: name, description, and the input schema exactly as the
// server declared it (its bytes are sent as they are, not rebuilt from a
// map). Title, annotations and the output schema have no place in a tool
// definition and are left out.
func Tools(tools []run.ToolInfo) []sdk.ToolUnionParam {
	out := make([]sdk.ToolUnionParam, 0, len(tools))
	for _, t := range tools {
		tp := sdk.ToolParam{
			Name:        t.Name,
			InputSchema: inputSchema(t.InputSchema),
		}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: &tp})
	}
	return out
}

// inputSchema makes the SDK send schema's own bytes, with a root "type":
// "object" the API requires and without the oneOf, anyOf and allOf it
// refuses at the root (see modelconv.InputSchema): the whole request
// would fail, and with it every turn of the conversation, for one
// server's tool. The model then sees the rest of the schema.
func inputSchema(schema json.RawMessage) sdk.ToolInputSchemaParam {
	return param.Override[sdk.ToolInputSchemaParam](modelconv.InputSchema(schema, "oneOf", "anyOf", "allOf"))
}

// Batch converts the tool_use blocks of one model response to one
// run.Batch for Run.Execute: each block's ID, name and input (its raw JSON)
// become a run.Call, in the response's order. Other blocks (text,
// thinking, server tool use) are not tool calls and are skipped. A nil
// msg gives a batch without calls.
func Batch(batchID string, agent resource.Ref, msg *sdk.Message) run.Batch {
	b := run.Batch{ID: batchID, Agent: agent}
	if msg == nil {
		return b
	}
	for _, block := range msg.Content {
		if block.Type != "tool_use" {
			continue
		}
		b.Calls = append(b.Calls, run.Call{ID: block.ID, Name: block.Name, Arguments: block.Input})
	}
	return b
}

// Results converts an Outcome to the content of the next user message:
// one tool_result block per Result, in call order, then the Outcome's
// refresh notice (Outcome.Notice) as a last text block when there is one
// and no tool_result already ends with it (the Run puts the notice of a
// failed refresh on the successful write that caused it, too: the model
// reads it once). Send it as sdk.NewUserMessage(Results(out)...).
//
// Each tool_result follows run.Result.ForModel's rule: a failed call is
// its ToolError JSON as text with is_error set; a success with structured
// content and text blocks only is the structured JSON as text; else the
// content blocks, text as text and images as image blocks, with the
// Result's own Notice as a last text block.
func Results(out run.Outcome) []sdk.ContentBlockParamUnion {
	return modelconv.Results(out, func(r run.Result) sdk.ContentBlockParamUnion {
		tr := ToolResult(r)
		return sdk.ContentBlockParamUnion{OfToolResult: &tr}
	}, sdk.NewTextBlock)
}

// ToolResult converts one Result to a tool_result block: see Results.
func ToolResult(r run.Result) sdk.ToolResultBlockParam {
	tr := sdk.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.Failed() {
		tr.IsError = sdk.Bool(true)
		tr.Content = []sdk.ToolResultBlockParamContentUnion{textPart(string(r.ToolError()))}
		return tr
	}
	blocks, err := r.Blocks()
	if err != nil {
		// Content that is not an array of blocks (a host tool's choice):
		// the model reads ForModel's bytes as text.
		tr.Content = []sdk.ToolResultBlockParamContentUnion{textPart(string(r.ForModel()))}
		return tr
	}
	if modelconv.StructuredStands(r, blocks) {
		tr.Content = []sdk.ToolResultBlockParamContentUnion{textPart(string(r.Structured))}
		return tr
	}
	for _, b := range blocks {
		if t, ok := b.(*content.Text); ok && strings.TrimSpace(t.Text) == "" {
			// The API refuses a text block that is empty or blank, and
			// with it the whole request: the block says nothing.
			continue
		}
		tr.Content = append(tr.Content, contentPart(b))
	}
	if r.Notice != "" {
		tr.Content = append(tr.Content, textPart(r.Notice))
	}
	return tr
}

// contentPart converts one MCP content block. Text and images the API
// takes convert; any other block (audio, a resource link, an embedded
// resource, an image the API does not take, an unknown type) reaches the
// model as its JSON in a text block, the base64 of an image, audio or
// binary resource left out and said so (modelconv.BlockText).
func contentPart(c content.Block) sdk.ToolResultBlockParamContentUnion {
	why := "a tool_result takes no audio or binary resource"
	if b, ok := c.(*content.Image); ok {
		// The type the bytes show, not the server's label: the API checks
		// the bytes against it (modelconv.ImageType).
		if mt, ok := modelconv.ImageType(b); ok {
			return sdk.ToolResultBlockParamContentUnion{OfImage: &sdk.ImageBlockParam{
				Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{Data: b.Data, MediaType: sdk.Base64ImageSourceMediaType(mt)}},
			}}
		}
		why = modelconv.NotAnImage
	}
	return textPart(modelconv.BlockText(c, why))
}

// MaxImageBase64 is the most base64 an image block carries: 5 MiB, the
// Messages API's own bound on one image, past which it refuses the whole
// request. A larger image goes as its JSON, its base64 left out.
const MaxImageBase64 = modelconv.MaxImageBase64

func textPart(s string) sdk.ToolResultBlockParamContentUnion {
	return sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: s}}
}
