package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

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

// inputSchema makes the SDK send schema's own bytes. An empty schema
// becomes {"type":"object"}, the schema of a tool without arguments.
func inputSchema(schema json.RawMessage) sdk.ToolInputSchemaParam {
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return param.Override[sdk.ToolInputSchemaParam](schema)
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
	blocks := make([]sdk.ContentBlockParamUnion, 0, len(out.Results)+1)
	for _, r := range out.Results {
		tr := ToolResult(r)
		blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: &tr})
	}
	if n := out.Notice(); n != "" && !noticeCarried(out.Results, n) {
		blocks = append(blocks, sdk.NewTextBlock(n))
	}
	return blocks
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
	if r.Notice == "" && len(r.Structured) > 0 && textOnly(blocks) {
		tr.Content = []sdk.ToolResultBlockParamContentUnion{textPart(string(r.Structured))}
		return tr
	}
	for _, b := range blocks {
		tr.Content = append(tr.Content, contentPart(b))
	}
	if r.Notice != "" {
		tr.Content = append(tr.Content, textPart(r.Notice))
	}
	return tr
}

// imageTypes are the media types the Messages API takes in an image block.
var imageTypes = map[string]sdk.Base64ImageSourceMediaType{
	"image/jpeg": sdk.Base64ImageSourceMediaTypeImageJPEG,
	"image/png":  sdk.Base64ImageSourceMediaTypeImagePNG,
	"image/gif":  sdk.Base64ImageSourceMediaTypeImageGIF,
	"image/webp": sdk.Base64ImageSourceMediaTypeImageWebP,
}

// contentPart converts one MCP content block. Text and images of a type
// the API takes convert; any other block (audio, a resource link, an
// embedded resource, an image of another type, an unknown type) reaches
// the model as its JSON in a text block, as ForModel would send it.
func contentPart(c run.Content) sdk.ToolResultBlockParamContentUnion {
	switch b := c.(type) {
	case *run.TextContent:
		return textPart(b.Text)
	case *run.ImageContent:
		if mt, ok := imageTypes[strings.ToLower(b.MIMEType)]; ok {
			return sdk.ToolResultBlockParamContentUnion{OfImage: &sdk.ImageBlockParam{
				Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{Data: b.Data, MediaType: mt}},
			}}
		}
	}
	return textPart(string(c.JSON()))
}

func textPart(s string) sdk.ToolResultBlockParamContentUnion {
	return sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: s}}
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
