package agtresponses

import (
	"encoding/json"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// MaxImageBase64 is the most base64 an input_image carries: 5 MiB, the
// bound agtanthropic keeps too, well under the API's bound on a
// request. A larger image goes as its JSON, its base64 left out.
const MaxImageBase64 = modelconv.MaxImageBase64

// Tools converts the Run's tools (Run.Tools) to Responses API function
// tools: name, description, and the parameters schema exactly as the
// server declared it (its bytes are sent as they are, not rebuilt from a
// map) but for the keywords OpenAI refuses at its root, with strict set
// to false. Title, annotations and the output schema are left out.
func Tools(tools []run.ToolInfo) []responses.ToolUnionParam {
	out := make([]responses.ToolUnionParam, 0, len(tools))
	for _, t := range tools {
		// Strict false, said: an omitted strict makes the API rewrite a
		// schema it can into strict mode (every property required,
		// no other property allowed), which changes what MCP tools take.
		fn := responses.FunctionToolParam{Name: t.Name, Strict: param.NewOpt(false)}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		// Parameters is a map: filling it would reorder keys and round
		// large integers through float64. An extra field of the same name
		// replaces it with the server's own bytes.
		fn.SetExtraFields(map[string]any{"parameters": modelconv.InputSchema(t.InputSchema, modelconv.OpenAIRootRefused...)})
		out = append(out, responses.ToolUnionParam{OfFunction: &fn})
	}
	return out
}

// Batch converts the output items of one response (Response.Output) to
// one run.Batch for Run.Execute: each function_call item's call_id, name
// and arguments (the string the model wrote, as raw JSON) become a
// run.Call, in the items' order. Other items (messages, reasoning,
// built-in and custom tool calls) are not agt's and are skipped: the host
// answers the calls of tools it declared itself.
func Batch(batchID string, agent resource.Ref, items []responses.ResponseOutputItemUnion) run.Batch {
	b := run.Batch{ID: batchID, Agent: agent}
	for _, it := range items {
		if it.Type != "function_call" {
			continue
		}
		b.Calls = append(b.Calls, run.Call{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(it.Arguments.OfString)})
	}
	return b
}

// Results converts an Outcome to the input items of the next request: one
// function_call_output per Result, in call order, then the Outcome's
// refresh notice (Outcome.Notice) as a last user message when there is
// one and no output already ends with it (the Run puts the notice of a
// failed refresh on the successful write that caused it, too: the model
// reads it once).
func Results(out run.Outcome) []responses.ResponseInputItemUnionParam {
	return modelconv.Results(out, func(r run.Result) responses.ResponseInputItemUnionParam {
		o := FunctionCallOutput(r)
		return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &o}
	}, func(n string) responses.ResponseInputItemUnionParam {
		return responses.ResponseInputItemParamOfMessage(n, responses.EasyInputMessageRoleUser)
	})
}

// FunctionCallOutput converts one Result to a function_call_output item,
// after run.Result.ForModel's rule: a failed call is its ToolError JSON
// as a string; a success with structured content and text blocks only is
// the structured JSON; else one part per content block, a text block as
// input_text, an image (JPEG, PNG, GIF or WebP, by its bytes) as an
// input_image data URL, and any other block as its JSON in input_text,
// the base64 of an image, audio or binary resource left out; the
// Result's own Notice is a last input_text.
func FunctionCallOutput(r run.Result) responses.ResponseInputItemFunctionCallOutputParam {
	o := responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt(r.CallID)}
	if r.Failed() {
		o.Output.OfString = param.NewOpt(string(r.ToolError()))
		return o
	}
	blocks, err := r.Blocks()
	if err != nil || (r.Notice == "" && len(blocks) == 0) || modelconv.StructuredStands(r, blocks) {
		// Content that is not an array of blocks (a host tool's choice),
		// no blocks, or structured content the blocks only repeat:
		// ForModel's bytes as text.
		o.Output.OfString = param.NewOpt(string(r.ForModel()))
		return o
	}
	parts := make(responses.ResponseFunctionCallOutputItemListParam, 0, len(blocks)+1)
	for _, b := range blocks {
		parts = append(parts, outputPart(b))
	}
	if r.Notice != "" {
		parts = append(parts, responses.ResponseFunctionCallOutputItemParamOfInputText(r.Notice))
	}
	o.Output.OfResponseFunctionCallOutputItemArray = parts
	return o
}

// outputPart converts one MCP content block: an image the API takes to an
// input_image, with the type its bytes show (modelconv.ImageType); any
// other block to input_text (modelconv.BlockText).
func outputPart(c content.Block) responses.ResponseFunctionCallOutputItemUnionParam {
	why := "a function_call_output takes no audio or binary resource"
	if img, ok := c.(*content.Image); ok {
		if mt, ok := modelconv.ImageType(img); ok {
			return responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
				ImageURL: param.NewOpt("data:" + mt + ";base64," + img.Data),
			}}
		}
		why = modelconv.NotAnImage
	}
	return responses.ResponseFunctionCallOutputItemParamOfInputText(modelconv.BlockText(c, why))
}
