package run

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// encodeContent's fast path for text blocks must say what the SDK's own
// marshalling says.
func TestEncodeContentMatchesSDK(t *testing.T) {
	t.Parallel()
	texts := []string{"", "hello", `quote " and \ backslash`, "tab\t nl\n cr\r bell\a nul\x00 del\x7f",
		"<html> & </html>", "ünïcödé ✓ 𝄞", "bad utf8 \xff\xfe end", "line\u2028sep\u2029para", "\x1f\x01"}
	for _, text := range texts {
		checkEncodeContent(t, []mcp.Content{&mcp.TextContent{Text: text}})
	}
	checkEncodeContent(t, []mcp.Content{})
	checkEncodeContent(t, []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}})
	// Not plain text: the SDK path.
	checkEncodeContent(t, []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": "v"}}, &mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}})
}

func FuzzEncodeContent(f *testing.F) {
	f.Add("hello", "wor\"ld")
	f.Add("\xff", "\u2028")
	f.Fuzz(func(t *testing.T, a, b string) {
		checkEncodeContent(t, []mcp.Content{&mcp.TextContent{Text: a}, &mcp.TextContent{Text: b}})
	})
}

func checkEncodeContent(t *testing.T, content []mcp.Content) {
	t.Helper()
	got, err := encodeContent(content)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(content)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("encodeContent wrote invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("encodeContent differs from the SDK (-sdk +ours):\n%s", diff)
	}
}
