package modelconv_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/run"
)

func TestInputSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, schema, want string }{
		{"none", ``, `{"type":"object"}`},
		{"no type", "{\n  \"properties\": {\"n\": {\"maximum\": 1e-400}}\n}", "{\"type\":\"object\",\"properties\": {\"n\": {\"maximum\": 1e-400}}\n}"},
		{"empty object", " {\n} ", `{"type":"object"}`},
		{"true", `true`, `{"type":"object"}`},
		{"false", `false`, `{"type":"object"}`},
		{"null", `null`, `{"type":"object"}`},
		{"not JSON", `{"a":`, `{"type":"object"}`},
		{"type kept", `{"required":[],"type":"object"}`, `{"required":[],"type":"object"}`},
		{"escaped type kept", `{"typ\u0065":"object"}`, `{"typ\u0065":"object"}`},
	} {
		if got := string(modelconv.InputSchema(json.RawMessage(tc.schema))); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
		if got := modelconv.InputSchema(json.RawMessage(tc.schema)); !json.Valid(got) {
			t.Errorf("%s: %s is not JSON", tc.name, got)
		}
	}
}

func TestInputSchemaDrop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, schema, want string }{
		{"dropped, type added", `{"anyOf":[{"required":["a"]}],"properties":{"a":{"maximum":12345678901234567890}}}`,
			`{"properties":{"a":{"maximum":12345678901234567890}},"type":"object"}`},
		{"dropped, type kept", `{"type":["object"],"oneOf":[]}`, `{"type":["object"]}`},
		{"nothing to drop: bytes kept", `{"properties":{"a":{"anyOf":[]}}, "type":"object"}`, `{"properties":{"a":{"anyOf":[]}}, "type":"object"}`},
		{"escaped key dropped", `{"type":"object","any\u004ff":[]}`, `{"type":"object"}`},
	} {
		if got := string(modelconv.InputSchema(json.RawMessage(tc.schema), "oneOf", "anyOf", "allOf")); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestUnsentNotice(t *testing.T) {
	t.Parallel()
	const n = "configuration saved, but load failed: m"
	refresh := &run.RefreshReport{Notice: n}
	for _, tc := range []struct {
		name string
		out  run.Outcome
		want string
	}{
		{"no refresh", run.Outcome{}, ""},
		{"not carried", run.Outcome{Refresh: refresh, Results: []run.Result{{CallID: "a"}}}, n},
		{"carried by a success", run.Outcome{Refresh: refresh, Results: []run.Result{{CallID: "a"}, {CallID: "b", Notice: n}}}, ""},
		{"on a failure only", run.Outcome{Refresh: refresh, Results: []run.Result{{CallID: "a", Code: run.CodeToolError, Notice: n}}}, n},
	} {
		if got := modelconv.UnsentNotice(tc.out); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// StructuredStands is run.Result.ForModel's rule on blocks already
// decoded: each case is also checked against ForModel itself, so the two
// cannot drift apart.
func TestStructuredStands(t *testing.T) {
	t.Parallel()
	text := json.RawMessage(`[{"type":"text","text":"x"}]`)
	withImage := json.RawMessage(`[{"type":"text","text":"x"},{"type":"image","data":"AAAA","mimeType":"image/png"}]`)
	st := json.RawMessage(`{"n":1}`)
	for _, tc := range []struct {
		name string
		r    run.Result
		want bool
	}{
		{"text and structured", run.Result{Content: text, Structured: st}, true},
		{"no blocks and structured", run.Result{Structured: st}, true},
		{"no structured", run.Result{Content: text}, false},
		{"an image", run.Result{Content: withImage, Structured: st}, false},
		{"a notice", run.Result{Content: text, Structured: st, Notice: "n"}, false},
	} {
		blocks, err := tc.r.Blocks()
		if err != nil {
			t.Fatal(err)
		}
		if got := modelconv.StructuredStands(tc.r, blocks); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if byForModel := bytes.Equal(tc.r.ForModel(), st); byForModel != tc.want {
			t.Errorf("%s: ForModel sends the structured content: %v, want %v", tc.name, byForModel, tc.want)
		}
	}
}

func TestBlockText(t *testing.T) {
	t.Parallel()
	blocks, err := run.Result{Content: json.RawMessage(`[
		{"type":"text","text":"hi"},
		{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","_meta":{"k":12345678901234567890}},
		{"type":"resource","resource":{"uri":"file:///b","blob":"AAAA"}},
		{"type":"resource","resource":{"uri":"file:///t","text":"words"}},
		{"type":"resource_link","uri":"file:///l","name":"l"},
		{"type":"hologram","data":"AAAA"}]`)}.Blocks()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`hi`,
		`{"_meta":{"k":12345678901234567890},"data":"(12 characters of base64 left out: why)","mimeType":"image/png","type":"image"}`,
		`{"resource":{"blob":"(4 characters of base64 left out: why)","uri":"file:///b"},"type":"resource"}`,
		`{"type":"resource","resource":{"uri":"file:///t","text":"words"}}`,
		`{"type":"resource_link","uri":"file:///l","name":"l"}`,
		`{"type":"hologram","data":"AAAA"}`,
	}
	if len(blocks) != len(want) {
		t.Fatalf("%d blocks, want %d", len(blocks), len(want))
	}
	for i, b := range blocks {
		if got := modelconv.BlockText(b, "why"); got != want[i] {
			t.Errorf("block %d:\ngot  %s\nwant %s", i, got, want[i])
		}
	}
}

// The APIs refuse a whole request whose image bytes do not match its
// media type, are not base64, or are too large: ImageType sends the type
// the bytes show, and no type (text instead) for anything else.
func TestImageType(t *testing.T) {
	t.Parallel()
	const pngB64 = "iVBORw0KGgoAAAANSUhEUg==" // a PNG signature and IHDR start
	const jpegB64 = "/9j/4AAQSkZJRgABAQ=="    // a JPEG/JFIF start
	atBound := "iVBORw0KGgoA" + strings.Repeat("AAAA", (modelconv.MaxImageBase64-12)/4)
	for _, tc := range []struct {
		name, data, label, want string
		ok                      bool
	}{
		{"png", pngB64, "image/png", "image/png", true},
		{"label case", pngB64, "IMAGE/PNG", "image/png", true},
		{"jpeg labelled png", jpegB64, "image/png", "image/jpeg", true},
		{"text labelled png", "aGVsbG8gd29ybGQ=", "image/png", "", false},
		{"label not an image the APIs take", pngB64, "image/bmp", "", false},
		{"not base64", "%%%%", "image/png", "", false},
		{"base64 on two lines", "iVBORw0K\nGgoAAAANSUhEUg==", "image/png", "", false},
		{"at the bound", atBound, "image/png", "image/png", true},
		{"past the bound", atBound + "AAAA", "image/png", "", false},
	} {
		mt, ok := modelconv.ImageType(&content.Image{Data: tc.data, MIMEType: tc.label})
		if mt != tc.want || ok != tc.ok {
			t.Errorf("%s: ImageType = %q, %v; want %q, %v", tc.name, mt, ok, tc.want, tc.ok)
		}
	}
}
