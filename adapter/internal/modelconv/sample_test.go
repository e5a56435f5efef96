//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 as a server request; agt still answers it from legacy servers, and a modern server asks for it inside input_required results
package modelconv_test

import (
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn"
)

func TestSampleMaxTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		asked, limit, want int64
		refused, hostErr   bool
	}{
		{asked: 100, limit: 1000, want: 100},
		{asked: 1000, limit: 1000, want: 1000},
		{asked: math.MaxInt64, limit: 1000, want: 1000},
		{asked: 1, limit: 1, want: 1},
		{asked: 0, limit: 1000, refused: true},
		{asked: math.MinInt64, limit: 1000, refused: true},
		{asked: 100, limit: 0, hostErr: true},
		{asked: 0, limit: -1, hostErr: true},
	} {
		got, err := modelconv.SampleMaxTokens(tc.asked, tc.limit)
		switch {
		case tc.refused:
			if !errors.Is(err, mcpconn.ErrRefused) {
				t.Errorf("(%d, %d): %v, want a refusal", tc.asked, tc.limit, err)
			}
		case tc.hostErr:
			if err == nil || errors.Is(err, mcpconn.ErrRefused) {
				t.Errorf("(%d, %d): %v, want a plain error", tc.asked, tc.limit, err)
			}
		case err != nil || got != tc.want:
			t.Errorf("(%d, %d) = %d, %v; want %d", tc.asked, tc.limit, got, err, tc.want)
		}
	}
}

// SampleImageType is ImageType's rule for an image's bytes: both take
// and refuse the same images, with the same type.
func TestSampleImageTypeIsImageType(t *testing.T) {
	t.Parallel()
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
	atBound := make([]byte, 3*modelconv.MaxImageBase64/4)
	copy(atBound, png)
	over := make([]byte, len(atBound)+1)
	copy(over, png)
	for _, tc := range []struct {
		name, label string
		data        []byte
		want        string // "" when refused
	}{
		{"png", "image/png", png, "image/png"},
		{"label case", "Image/PNG", png, "image/png"},
		{"jpeg labelled png", "image/png", []byte("\xff\xd8\xff\xe0"), "image/jpeg"},
		{"gif", "image/gif", []byte("GIF87a...."), "image/gif"},
		{"webp", "image/webp", []byte("RIFF\x00\x00\x00\x00WEBPVP8 "), "image/webp"},
		{"at the bound", "image/png", atBound, "image/png"},
		{"over the bound", "image/png", over, ""},
		{"not an image", "image/png", []byte("plain text"), ""},
		{"empty", "image/png", nil, ""},
		{"svg label", "image/svg+xml", png, ""},
		{"no label", "", png, ""},
		{"bmp", "image/bmp", []byte("BM\x00\x00"), ""},
	} {
		got, ok := modelconv.SampleImageType(tc.label, tc.data)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("%s: SampleImageType = %q, %t; want %q", tc.name, got, ok, tc.want)
		}
		b64 := base64.StdEncoding.EncodeToString(tc.data)
		if len(tc.data) > 0 && len(tc.data) < 1<<10 {
			mt, ok2 := modelconv.ImageType(&content.Image{MIMEType: tc.label, Data: b64})
			if mt != got || ok2 != ok {
				t.Errorf("%s: ImageType = %q, %t; SampleImageType %q, %t", tc.name, mt, ok2, got, ok)
			}
		}
	}
}

func TestSampleParams(t *testing.T) {
	t.Parallel()
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
	got, err := modelconv.SampleParams(&mcp.CreateMessageParams{
		MaxTokens: 500, SystemPrompt: "Be brief.", StopSequences: []string{"END"}, Temperature: 0.7,
		IncludeContext: "thisServer", Metadata: map[string]any{"user_id": "x"},
		Messages: []*mcp.SamplingMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Describe"}},
			{Role: "user", Content: &mcp.ImageContent{MIMEType: "image/png", Data: png}},
			{Role: "assistant", Content: &mcp.TextContent{Text: "It is"}},
		},
	}, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := modelconv.Sample{
		System: "Be brief.", MaxTokens: 100, StopSequences: []string{"END"}, Temperature: 0.7,
		Messages: []modelconv.SampleMessage{
			{Text: "Describe"},
			{ImageType: "image/png", ImageData: base64.StdEncoding.EncodeToString(png)},
			{Assistant: true, Text: "It is"},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Sample (-want +got):\n%s", d)
	}
	if _, err := modelconv.SampleParams(&mcp.CreateMessageParams{MaxTokens: 1}, 0); err == nil || errors.Is(err, mcpconn.ErrRefused) {
		t.Errorf("a cap of 0: %v, want a plain error first", err)
	}
}

func TestSampleResult(t *testing.T) {
	t.Parallel()
	got, err := modelconv.SampleResult("m", modelconv.StopEndTurn, []string{"The capital ", "is Paris."})
	want := &mcp.CreateMessageResult{Model: "m", Role: "assistant", StopReason: "endTurn", Content: &mcp.TextContent{Text: "The capital is Paris."}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("SampleResult = %+v, %v", got, err)
	}
	for _, texts := range [][]string{nil, {}, {"", ""}} {
		if _, err := modelconv.SampleResult("m", "", texts); err == nil || errors.Is(err, mcpconn.ErrRefused) {
			t.Errorf("%q: %v, want an error that is not a refusal", texts, err)
		}
	}
}

func TestSampleRefusal(t *testing.T) {
	t.Parallel()
	err := modelconv.SampleRefusal("messages[0] is an assistant's image")
	var refused *mcpconn.RefusedError
	if !errors.As(err, &refused) || !errors.Is(err, mcpconn.ErrRefused) || !strings.HasPrefix(refused.Reason, "sampling: messages[0]") {
		t.Errorf("SampleRefusal = %#v", err)
	}
}
