// Package agtopenai converts between an agt Run and the OpenAI Chat
// Completions API (function calling), on the official SDK's own types
// (github.com/openai/openai-go/v3, package openai): the Run's tools to
// function tools, the tool_calls of one assistant message to one
// run.Batch, and the run.Outcome to the tool messages that answer them.
// It only converts: every check, policy and limit stays in the Run. It
// lives in the module github.com/agtsdk/agt/adapter, with agtanthropic, so
// agt's core module does not depend on the SDKs. Its package agtresponses
// (adapter/agtopenai/agtresponses) does the same for the Responses API.
//
// One step of a host's model loop (the SDK imported as openai, beside
// this package: neither needs an alias):
//
//	c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
//		Model: model, Messages: history, Tools: agtopenai.Tools(r.Tools()),
//	})
//	if err != nil { return err }
//	history = append(history, c.Choices[0].Message.ToParam())
//	_, reply, err := agtopenai.Execute(ctx, r, c) // a rejected batch is no error: reply answers every call
//	if err != nil { return err }                // the Run is closed, or ctx ended
//	if len(reply) == 0 { return nil }           // no function call: the model is done
//	history = append(history, reply...)
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
//	opts.ClientFeatures = &run.ClientFeatures{Sample: agtopenai.Sampler(client, model, 4096)}
//
// # What each conversion loses, and why
//
// Tools: name, description and the parameters schema go over; the schema
// is sent as the bytes the server declared (key order, large integers and
// tiny numbers kept; encoding/json compacts the whitespace and escapes
// <, > and & as \u003c, \u003e and \u0026: the same JSON), not rebuilt from
// the SDK's map type: it is set as an extra field, so the
// Function.Parameters map of a returned tool stays empty. The title, the
// annotations and the output schema are left out: a function definition
// has no field for them. Strict mode is not set (most MCP schemas do not
// meet its subset). The API refuses the whole request when one schema's
// root has no "type": "object", so a root without "type" gets it as its
// first key (its other bytes kept), and a tool without a schema, or with
// one whose root is not an object (true), gets {"type":"object"}. It also
// refuses oneOf, anyOf, allOf, enum and not at the root, so those are left
// out there (nested ones stay). The Run still checks the arguments against
// the server's whole schema.
//
// Batch: only function tool calls become calls, with their IDs, names and
// arguments string as the model wrote it, taken as raw JSON; the Run
// checks that it is JSON and matches the schema. Custom tool calls (free
// text) are not agt's to run and are skipped: a host that declared custom
// tools answers their calls itself, as the API wants a tool message for
// every tool_call_id before the next request (a message of custom calls
// only gives a batch without calls, which the Run rejects). The message's
// text and refusal stay in the host's history with msg.ToParam().
//
// Results: one tool message per Result, in call order, after
// run.Result.ForModel's rule. This API accepts no image, audio or file in
// a tool message, only text. So a failed call is its ToolError JSON as
// the text (the API has no error flag: the "error" key says it); a failed
// MCP result's own blocks are not sent (they stay in Result.Content for
// the host), as ForModel does. A success whose blocks are all text and
// that has structured content sends the structured JSON. Otherwise each
// content block is one text part: a text block's text, and any other
// block (an image, audio, a resource link, an embedded resource, a type
// agt does not know) its MCP JSON, as ForModel would send it, except that
// the base64 of an image, audio or binary resource is left out and said
// so ("(N characters of base64 left out: a tool message takes text
// only)"): the model cannot see a picture in base64 text, and one
// screenshot sent whole would fill its context window, after which the
// API refuses every request of the conversation. A host that needs the
// model to see an image sends it itself in a user message (image_url
// with a data URL; Result.Blocks has it). Content
// a host tool set that is not an array of blocks, or no blocks, is sent
// as ForModel's JSON. The Result's own Notice is a last text part of its
// tool message; the Outcome's refresh notice (Outcome.Notice) is a user
// message after the tool messages (the API wants the tool messages right
// after the assistant message), so the model reads that its
// configuration was saved but did not load, unless a tool message
// already ends with the same text (the Run puts it on the write that
// caused the refresh, too).
//
// Sampling (SampleRequest, SampleResult, Sampler): a server's request
// becomes one completion request. Its system prompt is a first system
// message (OpenAI reads it as a developer message on models that have
// them); each message keeps its role (user or assistant); a user
// message's text, image and audio go as text, image_url (a data URL, the
// image checked as a tool result's is: JPEG, PNG, GIF or WebP by its
// bytes, at most 5 MiB of base64) and input_audio parts (WAV or
// MP3, labelled and made so); an assistant message takes text only, as
// the API wants. temperature (when above 0, at most 2) and stop (at most
// 4) go over; max_completion_tokens is the least of the server's
// maxTokens and the host's cap. includeContext, modelPreferences and metadata are not
// sent: the model is the host's choice, and metadata is provider-specific
// (a server must not set the request's user, say). store is false. What
// the API cannot take (a blank text, audio that is not WAV or MP3, an
// image in an assistant message, tool_use content, a fifth stop
// sequence, a maxTokens below 1) refuses the request
// whole, with a reason that names the message or field and not its text:
// a model answering part of a request would mislead the server. The
// answer is the first choice's text, its model and a stop reason (stop is
// endTurn, length maxTokens, tool_calls toolUse, content_filter as it
// is); a refusal is an error that says the model refused, without its
// text. When a model refuses the server's temperature or stop (reasoning
// models do), Sampler asks once more without them.
//
// # Limits
//
// None of its own: it converts values the Run has already bounded (the
// message size and block count of a tool result, the arguments the Run
// checks before a call) and the message the SDK has already read.
//
// # Errors and concurrency
//
// Tools, Batch, Results and ToolMessage return no error: what does not
// convert goes to the model as text that says what was left out, and a
// call the model named wrongly is the Run's to refuse. Execute fails only
// when the loop must stop (the Run is closed, ctx ended). SampleRequest
// refuses what the API cannot take with an *mcpconn.RefusedError, whose
// reason the server reads; SampleResult fails on a refusal and on a
// completion without choices or text. No error holds a message's text or an
// argument's value. They keep no state and are safe for concurrent use.
package agtopenai
