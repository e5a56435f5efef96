// Package agtresponses converts between an agt Run and the OpenAI
// Responses API (function calling), on the official SDK's own types
// (github.com/openai/openai-go/v3/responses, package responses): the Run's
// tools to function tools, the function_call items of one response to one
// run.Batch, and the run.Outcome to the function_call_output items that
// answer them. It only converts: every check, policy and limit stays in
// the Run. It lives in the module github.com/agtsdk/agt/adapter; package
// agtopenai does the same for Chat Completions.
//
// One step of a host's model loop (the SDK's responses package imported
// beside this one: neither needs an alias), with the conversation kept by
// the API (previous_response_id):
//
//	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
//		Model: model, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
//		PreviousResponseID: prev, Tools: agtresponses.Tools(r.Tools()),
//	})
//	if err != nil { return err }
//	_, reply, err := agtresponses.Execute(ctx, r, resp) // a rejected batch is no error: reply answers every call
//	if err != nil { return err }                     // the Run is closed, or ctx ended
//	if len(reply) == 0 { return nil }                // no function call: the model is done
//	prev, input = param.NewOpt(resp.ID), reply
//
// Execute is Batch, [run.Run.Execute] and Results in one, with the
// Execute contract applied (a *run.BatchError still answers every call,
// so it is not an error to the loop); a host that needs the batch itself (another
// agent, its own calls added) uses the three.
//
// The Run's servers may ask the host's model to write something for them
// (MCP sampling). Sampler answers them through the same client, at most
// 4096 tokens each here whatever a server asks:
//
//	opts.ClientFeatures = &run.ClientFeatures{Sample: agtresponses.Sampler(client, model, 4096)}
//
// A host that keeps the conversation itself (store false, no
// previous_response_id) appends the response's output items to its input
// before the reply instead: the API wants each function_call, and the
// reasoning item before it, ahead of its output. An item goes back as
// it came: param.Override[responses.ResponseInputItemUnionParam](json.RawMessage(item.RawJSON())).
//
// # What each conversion loses, and why
//
// Tools: name, description and the parameters schema go over; the schema
// is sent as the bytes the server declared (key order, large integers and
// tiny numbers kept; encoding/json compacts the whitespace and escapes
// <, > and & as \u003c, \u003e and \u0026: the same JSON), not rebuilt from
// the SDK's map type: it is set as an extra field, so the Parameters map
// of a returned tool stays empty. The title and the annotations are left
// out: a function tool has no field for them. So is the output schema,
// though output_schema exists: it describes an output string that is the
// JSON value, and an output is that only when the structured content
// stands for the blocks (else parts, text or an error). Strict is sent as
// false: where it is left out, the Responses API (unlike Chat
// Completions) rewrites every schema it can into strict mode, every
// property required and no other property allowed, so the model would
// have to fill optional arguments the server does not want; and strict
// mode takes only a subset of JSON Schema, which most MCP schemas leave. The API refuses the whole request when one schema's root has no
// "type": "object", or has oneOf, anyOf, allOf, enum or not: a root
// without "type" gets it as its first key (its other bytes kept), those
// keywords are left out (the root's keys then go in the order of their
// names, the values keep their bytes), and a tool without a schema, or
// with one whose root is not an object (true), gets {"type":"object"}.
// The model sees the rest; the Run still checks the arguments against the
// server's whole schema.
//
// Batch: only function_call items become calls, with their call_id,
// name and arguments string as the model wrote it, taken as raw JSON; the
// Run checks that it is JSON and matches the schema. Messages, reasoning,
// built-in tool calls (web search, file search, code interpreter, remote
// MCP: the API runs them itself) and the calls of tools the host declared
// itself (custom tools, computer use, shell) are not agt's to run and are
// skipped: the host answers what it declared. A response of such items
// only gives a batch without calls, which the Run rejects; the loop above
// stops first.
//
// Results: one function_call_output per Result, in call order, after
// run.Result.ForModel's rule. A failed call is its ToolError JSON as the
// output string (the API has no error flag: the "error" key says it); a
// failed MCP result's own blocks are not sent (they stay in
// Result.Content for the host), as ForModel does. A success whose blocks
// are all text and that has structured content sends the structured JSON
// as the string. Otherwise the output is a list of parts, one per block:
//
//   - A text block goes as input_text.
//   - An image labelled and made as JPEG, PNG, GIF or WebP goes as an
//     input_image with a data URL (data:TYPE;base64,DATA), its data
//     unchanged and TYPE the type its bytes show (a JPEG labelled
//     image/png goes as image/jpeg). An image whose data is not standard
//     base64 on one line, is larger than MaxImageBase64 or is not one of
//     those types goes as text, as below: the API may refuse a request
//     for an image it cannot read, and then every later turn, as the
//     history holds it.
//   - Any other block (audio, a resource link, an embedded resource, a
//     type agt does not know) goes as its MCP JSON in input_text, as
//     ForModel would send it, not dropped silently, except that the
//     base64 of an image, audio or binary resource is left out and said
//     so ("(N characters of base64 left out: why)"): a model reads no
//     picture or sound in base64 text, and one file sent whole would
//     fill its context. The API's input_file part is not used: a
//     resource's bytes are the server's, of any type, and the model
//     reads its URI and text in the JSON.
//
// Content a host tool set that is not an array of blocks, or no blocks,
// is sent as ForModel's JSON, as the string. The Result's own Notice is a
// last input_text of its output; the Outcome's refresh notice
// (Outcome.Notice) is a user message item after the outputs, so the model
// reads that its configuration was saved but did not load, unless an
// output already ends with the same text (the Run puts it on the write
// that caused the refresh, too).
//
// Sampling (SampleRequest, SampleResult, Sampler): a server's request
// becomes one response request. Its system prompt is the instructions;
// each message is an input message of its role (user or assistant); a
// user message's text and image go as input_text and input_image (a data
// URL, the image checked as a tool result's is: JPEG, PNG, GIF or WebP by
// its bytes, at most MaxImageBase64 of base64); an assistant message
// takes text only, as the API wants. temperature goes over when above 0
// (at most 2).
// The API has no stop sequences: stopSequences are not sent, and the
// model may write past them. max_output_tokens is the least of the
// server's maxTokens and the host's cap, and at least MinOutputTokens
// (16, the API's least). includeContext, modelPreferences and metadata
// are not sent: the model is the host's choice, and metadata is
// provider-specific (a server must not set the request's user, say).
// store is false. What the API cannot take (a blank text; audio: it
// takes no audio input; an image in an assistant message; tool_use
// content; a maxTokens below 1) refuses the
// request whole, with a reason that names the message and not its text:
// a model answering part of a request would mislead the server. The
// answer is the text of the output_text parts, the model and a stop
// reason (completed is endTurn, or toolUse with a function call;
// incomplete for max_output_tokens is maxTokens, for content_filter
// "content_filter" as it is); a refusal part is an error that says the
// model refused, without its text, and so is a failed or unfinished
// response. When a model refuses the server's temperature (reasoning
// models do), Sampler asks once more without it.
//
// # Limits
//
// None of its own but one: an input_image carries at most MaxImageBase64
// (5 MiB) of base64, the bound agtanthropic keeps, well under the
// API's bound on a request; a larger image goes as its JSON with the
// base64 left out. Otherwise it converts values the Run has already
// bounded (the message size and block count of a tool result, the
// arguments the Run checks before a call) and the response the SDK has
// already read.
//
// # Errors and concurrency
//
// Tools, Batch, Results and FunctionCallOutput return no error: what does
// not convert goes to the model as text that says what was left out, and
// a call the model named wrongly is the Run's to refuse. Execute fails
// only when the loop must stop (the Run is closed, ctx ended).
// SampleRequest refuses what the API cannot take with an
// *mcpconn.RefusedError, whose reason the server reads; SampleResult
// fails on a refusal and on a failed or unfinished response or one
// without text. No error
// holds a message's text or an argument's value. They keep no state and
// are safe for concurrent use.
package agtresponses
