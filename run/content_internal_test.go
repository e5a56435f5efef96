package run

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn"
)

// appendJSONString, which writes the Notice's text block, must say what
// encoding/json says.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "hello", `quote " and \ backslash`, "tab\t nl\n cr\r bell\a nul\x00 del\x7f",
		"<html> & </html>", "ünïcödé ✓ 𝄞", "bad utf8 \xff\xfe end", "line\u2028sep\u2029para", "\x1f\x01"} {
		checkAppendJSONString(t, text)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("hello")
	f.Add("\xff\u2028")
	f.Fuzz(checkAppendJSONString)
}

func checkAppendJSONString(t *testing.T, s string) {
	t.Helper()
	got := appendJSONString(nil, s)
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var g, w string
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("appendJSONString wrote invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if g != w {
		t.Errorf("appendJSONString(%q) reads back %q; encoding/json's %q", s, g, w)
	}
}

// withNotice keeps the blocks' bytes and adds one text block; content
// that is not an array is kept whole as the first element.
func TestWithNotice(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ content, want string }{
		{``, `[{"type":"text","text":"n <1>"}]`},
		{`[]`, `[{"type":"text","text":"n <1>"}]`},
		{` [ ] `, `[ {"type":"text","text":"n <1>"}]`},
		{`[{"type":"image","data":"AA==","mimeType":"image/png"} ]`, `[{"type":"image","data":"AA==","mimeType":"image/png"} ,{"type":"text","text":"n <1>"}]`},
		{`{"k":1}`, `[{"k":1},{"type":"text","text":"n <1>"}]`},
		{`not json`, `["not json",{"type":"text","text":"n <1>"}]`},
	} {
		got := withNotice(json.RawMessage(tt.content), "n <1>")
		if !json.Valid(got) {
			t.Errorf("withNotice(%s) = %s: invalid JSON", tt.content, got)
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("withNotice(%s) (-want +got):\n%s", tt.content, diff)
		}
	}
}

// The Message of a failed MCP result is its text blocks, bounded, valid
// UTF-8 even when the bound cuts a character; no text says so.
func TestToolErrorText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 1<<20)
	cr := &mcpconn.CallResult{Content: []content.Block{&content.Text{Text: "x"},
		&content.Image{Data: "AA=="}, &content.Text{Text: long}}}
	msg := toolErrorText(cr)
	if len(msg) > maxMessage+len(" ...") || !utf8.ValidString(msg) || !strings.HasPrefix(msg, "x\né") {
		t.Errorf("message of %d bytes, valid %v, starts %q", len(msg), utf8.ValidString(msg), msg[:8])
	}
	if got := toolErrorText(&mcpconn.CallResult{Content: []content.Block{&content.Image{}}}); got != "the tool reported an error" {
		t.Errorf("no text: %q", got)
	}
}
