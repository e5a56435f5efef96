package convtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// PNGBase64 is n characters of base64 (n-12 a multiple of 4) whose bytes
// start with the PNG signature, then zeros: an image of a chosen size for
// the adapters' image bounds.
func PNGBase64(n int) string {
	return "iVBORw0KGgoA" + strings.Repeat("AAAA", (n-12)/4)
}
