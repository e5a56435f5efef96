// Package modelconv holds the rules the model API adapters
// (agtanthropic, agtopenai and agtresponses, all in the module
// github.com/agtsdk/agt/adapter) share, so
// that each rule has one implementation: the root of a tool's input
// schema as the model APIs take it, when a result's structured content
// stands for its blocks, an Outcome's items in call order with its
// refresh notice last when no result carried it (Results), the text of
// a block an API takes only as text, the type an image is sent with, and
// a server's sampling request checked and reduced to what every model API
// takes, with its answer built back (sample.go: SampleParams, SampleResult).
//
//	schema := modelconv.InputSchema(tool.InputSchema, modelconv.OpenAIRootRefused...)
//	if modelconv.StructuredStands(res, blocks) {
//		text = string(res.Structured) // the text blocks repeat it
//	}
//	if mt, ok := modelconv.ImageType(img); ok {
//		sendImage(mt, img.Data) // at most MaxImageBase64 of base64
//	} else {
//		sendText(modelconv.BlockText(img, "not an image the API takes"))
//	}
//	if n := modelconv.UnsentNotice(out); n != "" {
//		sendText(n) // no successful result carried the notice
//	}
//
// It is internal to the adapters, which document what each API loses in
// the conversion; its functions for tool results never fail: what does
// not convert is sent as text that says so. A sampling request the APIs
// cannot take is refused instead (an *mcpconn.RefusedError whose reason
// the server reads): it is the server's prompt, not a result to report.
//
// It belongs to the adapter module, not to agt's root module, so the
// adapters are always built with the version of it they were written
// for, whatever version of the root a host selects; from the root they
// use only its public API (run, mcpconn, resource).
//
// # Limits
//
// MaxImageBase64 (5 MiB, fixed): an image with more base64 is sent as
// text, its base64 left out.
package modelconv
