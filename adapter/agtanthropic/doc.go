// Package agtanthropic converts between an agt Run and the Anthropic
// Messages API, on the official SDK's own types
// (github.com/anthropics/anthropic-sdk-go/v2, package anthropic): the
// Run's tools to tool definitions, the tool_use blocks of one response to
// one run.Batch, the run.Outcome to the tool_result blocks of the next
// user message (Execute does the three steps), and a mounted server's
// sampling requests to Messages API requests and back (Sampler). It only
// converts: every check, policy and limit stays in the Run. It lives in
// the module github.com/agtsdk/agt/adapter, with agtopenai, so agt's core
// module does not depend on the SDKs.
//
// One step of a host's model loop (the SDK imported as anthropic, beside
// this package: neither needs an alias):
//
//	msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
//		Model: model, MaxTokens: 1024, Messages: history,
//		Tools: agtanthropic.Tools(r.Tools()),
//	})
//	if err != nil { return err }
//	history = append(history, msg.ToParam())
//	out, reply, err := agtanthropic.Execute(ctx, r, msg)
//	if err != nil { return err }            // the Run closed or ctx ended
//	if len(out.Results) == 0 { return nil } // no tool_use: the model is done
//	history = append(history, reply)        // answers every tool_use
//
// Execute is Batch, run.Run.Execute and Results in one: a batch the Run
// rejects whole is no error there, as its Outcome answers every call (see
// run.Run.Execute). The Run answers its servers' sampling requests with
// the host's model when its options say so:
//
//	ClientFeatures: &run.ClientFeatures{
//		Sample: agtanthropic.Sampler(client, model, 1024), // at most 1024 tokens a request
//	},
//
// # What each conversion loses, and why
//
// Tools: name, description and the input schema go over; the schema is
// sent as the bytes the server declared (key order, large integers and
// tiny numbers kept; encoding/json compacts the whitespace and escapes
// <, > and & as \u003c, \u003e and \u0026: the same JSON), not rebuilt from
// a map. The title, the annotations and the output schema
// are left out: a Messages API tool definition has no field for them. The
// API refuses the whole request when one schema's root has no "type":
// "object", so a root without "type" gets it as its first key (its other
// bytes kept), and a tool without a schema, or with one whose root is not
// an object (true), gets {"type":"object"}. The API also refuses oneOf,
// anyOf and allOf at the root: they are left out (the root's keys then go
// in the order of their names), and the model sees the rest. The Run
// still checks the arguments against the server's whole schema.
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
// structured JSON as text. Otherwise the content blocks go over, and
// where ForModel's bytes would make the API refuse the request (and with
// it every later one, as the history holds the block) or fill the
// model's context, the block changes:
//
//   - A text block goes as text; one that is empty or only whitespace is
//     left out (the API refuses it; it says nothing).
//   - An image of a type the API takes (JPEG, PNG, GIF, WebP) goes as a
//     base64 image block, its data unchanged, with the type its bytes
//     show: the API checks the bytes against the type, so a JPEG a
//     server labelled image/png goes as image/jpeg.
//   - The API takes no audio, resource link or MCP embedded resource in a
//     tool_result: those blocks, an image whose data is not standard
//     base64 on one line, larger than MaxImageBase64 or not an image the
//     API takes, and a block of a type agt does not know reach the model
//     as their JSON in a text block, not dropped silently. The base64 of
//     an image, audio or binary resource is left out of that JSON and
//     said so ("(N characters of base64 left out: why)"): a model reads
//     no picture or sound in base64 text, and one screenshot sent whole
//     would fill its context. Block annotations and _meta do not go over
//     as fields (the API has none for them); the JSON text keeps them.
//
// Content a host tool set that is not an array of blocks is sent as
// ForModel's JSON, as text. The Result's own Notice is a last text block
// of its tool_result; the Outcome's refresh notice (Outcome.Notice) is a
// text block after the tool_results, so the model reads that its
// configuration was saved but did not load, unless a tool_result already
// ends with the same text (the Run puts it on the write that caused the
// refresh, too).
//
// # Sampling
//
// SampleRequest sends a server's messages in order, each as a user or an
// assistant message of one block: a text, or a base64 image of the type
// its bytes show (JPEG, PNG, GIF, WebP, at most MaxImageBase64 of
// base64, from the user: the API takes no image from the assistant). The
// systemPrompt is the system text; stopSequences go as they are.
// maxTokens is the server's, at most the host's cap: a server is not
// trusted with the host's bill, and MCP lets a client sample fewer tokens
// than asked. A last assistant message is the start of the answer the
// model continues (the API's prefill); its trailing whitespace, which the
// API refuses, is left out.
//
// What is left out, on purpose: temperature (the SDK's request has no
// such field: the API deprecated it), includeContext (the host decides
// what its model sees; MCP deprecates the field), modelPreferences (the
// host chooses its model) and metadata: it is provider-specific, and the
// Messages API's metadata carries the user the request is on behalf of,
// which is the host's to set, never a server's.
//
// Refused, so the server learns why (an *mcpconn.RefusedError, in agt's
// words, never a value of the request): no messages, a role other than
// user or assistant, a blank text, audio (the API takes none), an image
// of another type, with bad data or over the bound, tool use and tool
// results (the Run samples without tools), content of another kind, and
// a maxTokens below 1 (MCP requires the field: a zero means the server
// left it out, and the host's whole cap would be spent on a request that
// asked for nothing).
//
// SampleResult answers with the text of the response's text blocks,
// joined, as one text block; thinking and other blocks are left out, and
// a response without text is an error (the server is told only that the
// client could not answer). The stop reason goes in MCP's names: end_turn
// is endTurn, stop_sequence stopSequence, max_tokens maxTokens, tool_use
// toolUse; the API's other reasons (refusal, pause_turn) go as the API
// names them.
//
// # Limits
//
// None of its own but the API's: an image block carries at most
// MaxImageBase64 (5 MiB) of base64, the most the API takes in one image;
// a larger image goes as its JSON with the base64 left out. Otherwise it
// converts values the Run has already bounded (the message size and block
// count of a tool result, the arguments the Run checks before a call) and
// the Message the SDK has already read.
//
// # Errors and concurrency
//
// Its tool conversions return no error: what does not convert goes to the
// model as text that says what was left out, and a call the model named
// wrongly is the Run's to refuse. Execute fails only when the loop must
// stop (run.ErrClosed, ctx ended). The sampling functions refuse what the
// API cannot take (see Sampling) and wrap the API's errors; no error
// holds text or values of the messages. They keep no state and are safe
// for concurrent use.
package agtanthropic
