// Package anthropic converts between an agt Run and the Anthropic Messages
// API, on the official SDK's own types (github.com/anthropics/anthropic-sdk-go/v2):
// the Run's tools to tool definitions, the tool_use blocks of one response
// to one run.Batch, and the run.Outcome to the tool_result blocks of the
// next user message. It only converts: every check, policy and limit stays
// in the Run. It is its own Go module, so agt's core module does not depend
// on the SDK.
//
// One step of a host's model loop (the SDK's package imported as sdk):
//
//	msg, err := client.Messages.New(ctx, sdk.MessageNewParams{
//		Model: model, MaxTokens: 1024, Messages: history,
//		Tools: agtanthropic.Tools(r.Tools()),
//	})
//	if err != nil { return err }
//	history = append(history, msg.ToParam())
//	if msg.StopReason != sdk.StopReasonToolUse { return nil } // the model is done
//	out, err := r.Execute(ctx, agtanthropic.Batch(msg.ID, agent, msg))
//	if errors.As(err, new(*run.BatchError)) { err = nil } // rejected whole: out still answers every call
//	if err != nil { return err }
//	history = append(history, sdk.NewUserMessage(agtanthropic.Results(out)...))
//
// # What each conversion loses, and why
//
// Tools: name, description and the input schema go over; the schema is
// sent as the bytes the server declared (key order, large integers and
// tiny numbers kept; encoding/json compacts the whitespace and escapes
// <, > and & as \u003c, \u003e and \u0026: the same JSON), not rebuilt from
// a map. The title, the annotations and the output schema
// are left out: a Messages API tool definition has no field for them. A
// tool without a schema gets {"type":"object"}, since the API requires one.
//
// Batch: only tool_use blocks become calls, with their IDs, names and
// input bytes as the model wrote them. Text, thinking and server tool
// blocks (server_tool_use: tools the API runs itself) are not agt's to
// run and are skipped; the host keeps them in its history with
// msg.ToParam(). The Run checks the IDs, names and arguments.
//
// Results: one tool_result per Result, in call order, after
// run.Result.ForModel's rule. A failed call is its ToolError JSON as text
// with is_error set; a failed MCP result's own blocks are not sent (they
// stay in Result.Content for the host), as ForModel does. A success whose
// blocks are all text and that has structured content sends the
// structured JSON as text. Otherwise the content blocks go over: text as
// text, images of a type the API takes (JPEG, PNG, GIF, WebP) as base64
// image blocks, unchanged. The API takes no audio, no resource links and
// no MCP embedded resources in a tool_result, so those blocks, an image of
// another type, and a block of a type agt does not know, reach the model
// as their JSON in a text block (what ForModel would send), not dropped
// silently. Block annotations and _meta do not go over as fields (the API
// has none for them); the text of such a JSON block keeps them. Content a
// host tool set that is not an array of blocks is sent as ForModel's JSON,
// as text. The Result's own Notice is a last text block of its
// tool_result; the Outcome's refresh notice (Outcome.Notice) is a text
// block after the tool_results, so the model reads that its configuration
// was saved but did not load, unless a tool_result already ends with the
// same text (the Run puts it on the write that caused the refresh, too).
//
// # Limits
//
// None of its own: it converts values the Run has already bounded (the
// message size and block count of a tool result, the arguments the Run
// checks before a call) and the Message the SDK has already read.
package anthropic
