package convtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/run"
)

// JSON marshals v with encoding/json, and so through an SDK type's own
// MarshalJSON: the bytes the SDK sends.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// Quote is s as a JSON string.
func Quote(t testing.TB, s string) string {
	t.Helper()
	return string(JSON(t, s))
}

// SameJSON compares two JSON texts as values (key order and spacing do
// not count) and reports a difference as an error of t. The got text in
// the report is cut at 600 bytes: an image's base64 would drown the rest.
func SameJSON(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%.600s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s\ngot: %.600s", d, got)
	}
}

// ImageCase is a Result of one PNG image and whether an adapter is to
// send it as an image.
type ImageCase struct {
	Name   string
	Data   string // the image's base64
	Result run.Result
	Image  bool
}

// ImagesAtBound are the Results, of call callID, of an image of bound
// characters of base64, which an adapter whose bound that is sends as an
// image, and of one 4 characters longer, which it does not.
func ImagesAtBound(callID string, bound int) []ImageCase {
	var cases []ImageCase
	for _, c := range []struct {
		name  string
		n     int
		image bool
	}{{"at the bound", bound, true}, {"past the bound", bound + 4, false}} {
		data := pngBase64(c.n)
		cases = append(cases, ImageCase{Name: c.name, Data: data, Image: c.image, Result: run.Result{CallID: callID,
			Content: json.RawMessage(`[{"type":"image","data":"` + data + `","mimeType":"image/png"}]`)}})
	}
	return cases
}

// pngBase64 is n characters of base64 (n-12 a multiple of 4) whose bytes
// start with the PNG signature, then zeros.
func pngBase64(n int) string {
	return "iVBORw0KGgoA" + strings.Repeat("AAAA", (n-12)/4)
}

// SchemaRoot is a tool's input schema and the one an adapter sends.
type SchemaRoot struct{ Name, Schema, Want string }

// SchemaRoots are the roots every adapter sends alike
// (modelconv.InputSchema): a root without "type" gets "type": "object",
// the rest of its bytes kept; a root that is not an object (the schema
// true) is {"type":"object"}, as for a tool without a schema; a keyword
// below the root is kept, whatever it is.
func SchemaRoots() []SchemaRoot {
	return []SchemaRoot{
		{"no type", `{"properties":{"n":{"type":"integer","maximum":12345678901234567890}},"required":["n"]}`,
			`{"type":"object","properties":{"n":{"type":"integer","maximum":12345678901234567890}},"required":["n"]}`},
		{"empty object", ` { } `, `{"type":"object"}`},
		{"true", `true`, `{"type":"object"}`},
		{"type kept", `{"required":[],"type":"object"}`, `{"required":[],"type":"object"}`},
		{"nested anyOf kept", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`},
	}
}

// Call is a run.Call as the adapters' tests compare it: its arguments as
// text.
type Call struct{ ID, Name, Args string }

// Calls returns the calls of b as Calls, in order.
func Calls(b run.Batch) []Call {
	var out []Call
	for _, c := range b.Calls {
		out = append(out, Call{c.ID, c.Name, string(c.Arguments)})
	}
	return out
}

// ContentGolden checks an adapter's conversion of one Result (convert)
// on every content kind and path runtest.ContentResults covers: the JSON
// the SDK sends for each must be byte for byte the golden file's
// (runtest.Golden, written with -update-golden).
func ContentGolden(t *testing.T, path string, convert func(run.Result) any) {
	t.Helper()
	got := map[string]string{}
	for _, nr := range runtest.ContentResults(t) {
		got[nr.Name] = runtest.GoldenText(JSON(t, convert(nr.Result)))
	}
	runtest.Golden(t, path, got)
}
