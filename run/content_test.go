package run_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// contentSpan returns the exact bytes of one member of a content tool
// result, as the fake server sent them.
func contentSpan(t *testing.T, kind, member string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(mcptest.ContentResult(kind), &m); err != nil {
		t.Fatal(err)
	}
	return string(m[member])
}

// Issue 15 (3), through a Run, in memory and over stdio: an image stays a
// block for the model (not base64 inside the structured content), exact
// structured content reaches the model byte for byte, an unknown block
// type is a success with the block kept (not "connection lost", and the
// mount is not restarted), an error keeps all its blocks while the model
// gets the ToolError, and a malformed result is the tool's error.
func TestRunContentFidelity(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		const ref = resource.Ref("media")
		for _, transport := range []string{"in-memory", "stdio"} {
			t.Run(transport, func(t *testing.T) {
				t.Parallel()
				repo, mem := setupEra(t, e, ref)
				mem.opts.Faults = []mcptest.Fault{mcptest.FaultContentKinds}
				opts := &run.Options{Repository: repo, Connector: mem.connector()}
				if transport == "stdio" {
					putMCP(t, repo, ref, stdioServerEra(t, e, "-fault", string(mcptest.FaultContentKinds)))
					opts.Connector = nil
				}
				r := newRun(t, opts)
				alias := run.Alias(ref, mcptest.ToolContent)
				execute := func(kind string) run.Result {
					t.Helper()
					out, err := r.Execute(context.Background(), batch(call("c", alias, `{"kind":"`+kind+`"}`)))
					if err != nil || len(out.Results) != 1 {
						t.Fatalf("%s: Execute = %+v, %v", kind, out, err)
					}
					return out.Results[0]
				}

				img := execute(mcptest.ContentImage)
				if img.Failed() || string(img.Content) != contentSpan(t, mcptest.ContentImage, "content") ||
					string(img.Structured) != contentSpan(t, mcptest.ContentImage, "structuredContent") {
					t.Errorf("image: %+v", img)
				}
				if got := string(img.ForModel()); got != string(img.Content) {
					t.Errorf("image: ForModel = %s; want the content blocks (the image as a block)", got)
				}
				blocks, err := img.Blocks()
				if err != nil || len(blocks) != 1 {
					t.Fatalf("image: Blocks = %v, %v", blocks, err)
				}
				if b, ok := blocks[0].(*content.Image); !ok || b.MIMEType != "image/png" || b.Data != "iVBORw0KGgo=" {
					t.Errorf("image: block %#v", blocks[0])
				}

				st := execute(mcptest.ContentStructured)
				want := `{"z":1,"big":12345678901234567890,"tiny":1e-400,"a":[1.0,2.50]}`
				if st.Failed() || string(st.Structured) != want || string(st.ForModel()) != want {
					t.Errorf("structured: Structured %s, ForModel %s; want %s", st.Structured, st.ForModel(), want)
				}

				unk := execute(mcptest.ContentUnknown)
				if unk.Failed() || string(unk.ForModel()) != contentSpan(t, mcptest.ContentUnknown, "content") {
					t.Errorf("unknown block type: %s %s; want success with the blocks", unk.Code, unk.ForModel())
				}
				blocks, _ = unk.Blocks()
				if len(blocks) != 2 || blocks[1].Type() != "hologram" || string(blocks[1].JSON()) != `{"type":"hologram","frames":[1,2,3],"annotations":{"priority":1},"_meta":{"x":true}}` {
					t.Errorf("unknown block type: blocks %v", blocks)
				}

				fail := execute(mcptest.ContentError)
				if fail.Code != run.CodeToolError || fail.Message != "render failed\nsee the screenshot" ||
					string(fail.Content) != contentSpan(t, mcptest.ContentError, "content") {
					t.Errorf("error result: %+v", fail)
				}
				if diff := cmp.Diff(string(fail.ToolError()), string(fail.ForModel())); diff != "" {
					t.Errorf("error result: ForModel is not the ToolError:\n%s", diff)
				}

				bad := execute(mcptest.ContentMalformed)
				if bad.Code != run.CodeToolError {
					t.Errorf("malformed result: %s %q; want tool_error", bad.Code, bad.Message)
				}
				// The connection was fine all along: the mount was never lost,
				// so nothing restarted.
				if ok := execute(mcptest.ContentAudio); ok.Failed() || refreshOf(r) != nil {
					t.Errorf("after the malformed result: %+v, refresh %+v", ok, refreshOf(r))
				}
			})
		}
	})
}

// refreshOf runs an echo batch and returns its refresh report: a lost
// mount would be restarted at its start.
func refreshOf(r *run.Run) *run.RefreshReport {
	o, _ := r.Execute(context.Background(), batch(call("e", run.Alias("media", mcptest.ToolEcho), `{"text":"x"}`)))
	return o.Refresh
}

// ForModel's rule, on host tool results: structured content when the
// blocks are text only, the blocks when any is not text.
func TestForModelRule(t *testing.T) {
	t.Parallel()
	text := `[{"type":"text","text":"{\"a\":1}"}]`
	image := `[{"type":"text","text":"x"},{"type":"image","data":"AA==","mimeType":"image/png"}]`
	for _, tt := range []struct {
		name    string
		res     run.Result
		want    string
		blocksN int
	}{
		{"structured beside text", run.Result{Content: json.RawMessage(text), Structured: json.RawMessage(`{"a":1}`)}, `{"a":1}`, 1},
		{"structured beside an image", run.Result{Content: json.RawMessage(image), Structured: json.RawMessage(`{"a":1}`)}, image, 2},
		{"structured alone", run.Result{Structured: json.RawMessage(`{"a":1}`)}, `{"a":1}`, 0},
		{"blocks alone", run.Result{Content: json.RawMessage(image)}, image, 2},
		{"nothing", run.Result{}, `[]`, 0},
		{"not an array", run.Result{Content: json.RawMessage(`{"k":1}`), Structured: json.RawMessage(`{"a":1}`)}, `{"a":1}`, -1},
	} {
		if got := string(tt.res.ForModel()); got != tt.want {
			t.Errorf("%s: ForModel = %s; want %s", tt.name, got, tt.want)
		}
		blocks, err := tt.res.Blocks()
		if (err != nil) != (tt.blocksN < 0) || (tt.blocksN >= 0 && len(blocks) != tt.blocksN) {
			t.Errorf("%s: Blocks = %d blocks, %v; want %d", tt.name, len(blocks), err, tt.blocksN)
		}
	}
}

var _ content.Block = (*content.Unknown)(nil)
