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
//	b := agtresponses.Batch(resp.ID, agent, resp.Output)
//	if len(b.Calls) == 0 { return nil } // the model is done
//	out, err := r.Execute(ctx, b)
//	if errors.As(err, new(*run.BatchError)) { err = nil } // rejected whole: out still answers every call
//	if err != nil { return err }
//	prev, input = param.NewOpt(resp.ID), agtresponses.Results(out)
//
// A host that keeps the conversation itself (store false, no
// previous_response_id) appends the response's output items to its input
// before the Results instead: the API wants each function_call, and the
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
// Its functions return no error: what does not convert goes to the model
// as text that says what was left out, and a call the model named wrongly
// is the Run's to refuse. They keep no state and are safe for concurrent
// use.
package agtresponses
