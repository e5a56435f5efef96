// Package content holds the typed content blocks of an MCP tool result:
// text, image, audio, resource links and embedded resources, each with
// the exact bytes the server sent, and Unknown for a block type this
// package does not know.
//
//	out, err := r.Execute(ctx, batch) // r is a *run.Run
//	blocks, err := out.Results[0].Blocks() // decoded once, by mcpconn
//	for _, b := range blocks {
//		switch b := b.(type) {
//		case *content.Text:
//			fmt.Println(b.Text)
//		case *content.Image:
//			png, err := b.Decode() // base64 checked here, not before
//		default:
//			forward(b.JSON()) // exact bytes, whatever the type
//		}
//	}
//
// It is a leaf package shared by mcpconn, which decodes the blocks from
// the wire (mcpconn.DecodeContent), run, whose Result carries them, and
// the model adapters, which turn them into a model's message parts.
//
// # Concurrency
//
// Blocks are values: safe to read from any goroutine, never to modify
// once shared (a run.Result's blocks are shared by its copies).
package content
