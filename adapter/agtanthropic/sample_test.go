//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 as a server request; agt still answers it from legacy servers, and a modern server asks for it inside input_required results
package agtanthropic_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/adapter/agtanthropic"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
)

// secret is in every text a test sends: no error may hold it.
const secret = "SECRET-42"

var (
	pngBytes  = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
	jpegBytes = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00" + secret)
	gifBytes  = []byte("GIF89a\x01\x00\x01\x00" + secret)
	webpBytes = []byte("RIFF\x00\x00\x00\x00WEBPVP8 " + secret)
)

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func user(c mcp.Content) *mcp.SamplingMessage { return &mcp.SamplingMessage{Role: "user", Content: c} }

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func image(mimeType string, data []byte) *mcp.ImageContent {
	return &mcp.ImageContent{MIMEType: mimeType, Data: data}
}

func imageJSON(mediaType string, data []byte) string {
	return `{"type":"image","source":{"type":"base64","media_type":"` + mediaType + `","data":"` + base64.StdEncoding.EncodeToString(data) + `"}}`
}

// TestSampleRequest converts sampling requests: every content kind and
// role, the bounds, and what a hostile server may send. A request the
// API cannot take is refused with a reason the server reads, which holds
// no value of the request.
func TestSampleRequest(t *testing.T) {
	t.Parallel()
	const hi = `[{"type":"text","text":"hi ` + secret + `"}]`
	huge := make([]byte, 3*(5<<20)/4+1) // 4 characters of base64 over the bound
	copy(huge, pngBytes)
	for _, tc := range []struct {
		name    string
		params  *mcp.CreateMessageParams
		cap     int64
		want    string // the request's JSON; "" when refused
		refusal string // in the reason of a refusal
	}{
		{name: "text", params: &mcp.CreateMessageParams{MaxTokens: 100, Messages: []*mcp.SamplingMessage{user(text("hi " + secret))}},
			cap: 1000, want: `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":` + hi + `}]}`},
		{name: "server asks more than the cap", params: &mcp.CreateMessageParams{MaxTokens: math.MaxInt64, Messages: []*mcp.SamplingMessage{user(text("hi " + secret))}},
			cap: 1000, want: `{"model":"m","max_tokens":1000,"messages":[{"role":"user","content":` + hi + `}]}`},
		{name: "every field", params: &mcp.CreateMessageParams{
			MaxTokens: 50, SystemPrompt: "Be brief.", StopSequences: []string{"END"}, Temperature: 0.5,
			IncludeContext: "allServers", Metadata: map[string]any{"user_id": "someone-else"},
			ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: "gpt"}}},
			Messages: []*mcp.SamplingMessage{
				user(text("hi " + secret)),
				{Role: "assistant", Content: text("Hello.")},
				user(image("image/png", pngBytes)),
			}},
			cap: 1000, want: `{"model":"m","max_tokens":50,"system":[{"type":"text","text":"Be brief."}],"stop_sequences":["END"],"messages":[` +
				`{"role":"user","content":` + hi + `},{"role":"assistant","content":[{"type":"text","text":"Hello."}]},` +
				`{"role":"user","content":[` + imageJSON("image/png", pngBytes) + `]}]}`},
		{name: "blank system prompt", params: &mcp.CreateMessageParams{MaxTokens: 1, SystemPrompt: " \n", Messages: []*mcp.SamplingMessage{user(text("hi " + secret))}},
			cap: 1, want: `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":` + hi + `}]}`},
		{name: "images go with the type their bytes show", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{
			user(image("image/png", jpegBytes)), user(image("IMAGE/GIF", gifBytes)), user(image("image/webp", webpBytes))}},
			cap: 1, want: `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[` + imageJSON("image/jpeg", jpegBytes) + `]},` +
				`{"role":"user","content":[` + imageJSON("image/gif", gifBytes) + `]},{"role":"user","content":[` + imageJSON("image/webp", webpBytes) + `]}]}`},
		{name: "a last assistant message loses its trailing whitespace", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{
			user(text("hi " + secret)), {Role: "assistant", Content: text("The answer is \n")}}},
			cap: 1, want: `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":` + hi + `},{"role":"assistant","content":[{"type":"text","text":"The answer is"}]}]}`},

		{name: "nil params", params: nil, cap: 1, refusal: "no params"},
		{name: "no messages", params: &mcp.CreateMessageParams{MaxTokens: 1}, cap: 1, refusal: "messages is empty"},
		{name: "maxTokens left out", params: &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{user(text(secret))}}, cap: 1, refusal: "maxTokens is below 1"},
		{name: "negative maxTokens", params: &mcp.CreateMessageParams{MaxTokens: -1, Messages: []*mcp.SamplingMessage{user(text(secret))}}, cap: 1, refusal: "maxTokens is below 1"},
		{name: "negative temperature", params: &mcp.CreateMessageParams{MaxTokens: 1, Temperature: -1, Messages: []*mcp.SamplingMessage{user(text(secret))}}, cap: 1, refusal: "temperature is negative"},
		{name: "nil message", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(text(secret)), nil}}, cap: 1, refusal: "messages[1] is null"},
		{name: "system role", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "system", Content: text(secret)}}}, cap: 1, refusal: "messages[0].role is neither user nor assistant"},
		{name: "blank text", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(text(" \t\n"))}}, cap: 1, refusal: "messages[0] is a blank text"},
		{name: "no content", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(nil)}}, cap: 1, refusal: "messages[0] has no content"},
		{name: "audio", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte(secret)})}}, cap: 1, refusal: "messages[0] is audio"},
		{name: "tool use", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "assistant", Content: &mcp.ToolUseContent{ID: secret, Name: secret}}}}, cap: 1, refusal: "messages[0] is a tool use or tool result"},
		{name: "tool result", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(&mcp.ToolResultContent{ToolUseID: secret})}}, cap: 1, refusal: "messages[0] is a tool use or tool result"},
		{name: "unknown content", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(&mcp.ResourceLink{URI: "file:///" + secret, Name: secret})}}, cap: 1, refusal: "messages[0] holds content sampling does not take"},
		{name: "image data is not an image", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(image("image/png", []byte(secret)))}}, cap: 1, refusal: "messages[0] is an image the model APIs do not take"},
		{name: "image of another type", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(image("image/svg+xml", pngBytes))}}, cap: 1, refusal: "messages[0] is an image the model APIs do not take"},
		{name: "image over the bound", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(image("image/png", huge))}}, cap: 1, refusal: "messages[0] is an image the model APIs do not take"},
		{name: "empty image", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(image("image/png", nil))}}, cap: 1, refusal: "messages[0] is an image the model APIs do not take"},
		{name: "assistant image", params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user(text(secret)), {Role: "assistant", Content: image("image/png", pngBytes)}}}, cap: 1, refusal: "messages[1] is an assistant's image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := agtanthropic.SampleRequest(tc.params, "m", tc.cap)
			if tc.want != "" {
				if err != nil {
					t.Fatalf("SampleRequest: %v", err)
				}
				convtest.SameJSON(t, convtest.JSON(t, req), tc.want)
				return
			}
			var refused *mcpconn.RefusedError
			if !errors.As(err, &refused) || !errors.Is(err, mcpconn.ErrRefused) {
				t.Fatalf("SampleRequest = %v, want a refusal", err)
			}
			if !strings.HasPrefix(refused.Reason, "sampling: ") || !strings.Contains(refused.Reason, tc.refusal) {
				t.Errorf("reason %q, want one with %q", refused.Reason, tc.refusal)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "someone") {
				t.Errorf("the error holds a value of the request: %v", err)
			}
		})
	}
}

// The host's own mistakes are plain errors, not refusals: the server did
// nothing wrong.
func TestSampleRequestHostArguments(t *testing.T) {
	t.Parallel()
	params := &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{user(text(secret))}}
	for _, tc := range []struct {
		name  string
		model sdk.Model
		cap   int64
		want  string
	}{
		{"no model", "", 10, "the model is empty"},
		{"zero cap", "m", 0, "cap"},
		{"negative cap", "m", -5, "cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := agtanthropic.SampleRequest(params, tc.model, tc.cap)
			if err == nil || errors.Is(err, mcpconn.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SampleRequest = %v, want a plain error with %q", err, tc.want)
			}
		})
	}
}

// TestSampleResult converts Messages API responses (their JSON, as the
// SDK decodes them) to the server's result.
func TestSampleResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		response string // the Message's JSON
		want     *mcp.CreateMessageResult
	}{
		{"end_turn", `{"model":"claude-x","stop_reason":"end_turn","content":[{"type":"text","text":"Paris."}]}`,
			&mcp.CreateMessageResult{Model: "claude-x", Role: "assistant", StopReason: "endTurn", Content: &mcp.TextContent{Text: "Paris."}}},
		{"stop_sequence", `{"model":"m","stop_reason":"stop_sequence","content":[{"type":"text","text":"a"}]}`,
			&mcp.CreateMessageResult{Model: "m", Role: "assistant", StopReason: "stopSequence", Content: &mcp.TextContent{Text: "a"}}},
		{"max_tokens", `{"model":"m","stop_reason":"max_tokens","content":[{"type":"text","text":"a"}]}`,
			&mcp.CreateMessageResult{Model: "m", Role: "assistant", StopReason: "maxTokens", Content: &mcp.TextContent{Text: "a"}}},
		{"tool_use", `{"model":"m","stop_reason":"tool_use","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"n","input":{}}]}`,
			&mcp.CreateMessageResult{Model: "m", Role: "assistant", StopReason: "toolUse", Content: &mcp.TextContent{Text: "a"}}},
		{"refusal passes as the API names it", `{"model":"m","stop_reason":"refusal","content":[{"type":"text","text":"No."}]}`,
			&mcp.CreateMessageResult{Model: "m", Role: "assistant", StopReason: "refusal", Content: &mcp.TextContent{Text: "No."}}},
		{"no stop reason", `{"model":"m","content":[{"type":"text","text":"a"}]}`,
			&mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "a"}}},
		{"texts joined, thinking left out", `{"model":"m","stop_reason":"end_turn","content":[{"type":"thinking","thinking":"` + secret + `","signature":"s"},` +
			`{"type":"text","text":"The capital "},{"type":"redacted_thinking","data":"x"},{"type":"text","text":"is Paris."}]}`,
			&mcp.CreateMessageResult{Model: "m", Role: "assistant", StopReason: "endTurn", Content: &mcp.TextContent{Text: "The capital is Paris."}}},
		{"no text", `{"model":"m","stop_reason":"end_turn","content":[{"type":"thinking","thinking":"` + secret + `","signature":"s"}]}`, nil},
		{"no content", `{"model":"m","stop_reason":"refusal","content":[]}`, nil},
		{"only an empty text", `{"model":"m","stop_reason":"end_turn","content":[{"type":"text","text":""}]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var msg sdk.Message
			if err := json.Unmarshal([]byte(tc.response), &msg); err != nil {
				t.Fatal(err)
			}
			got, err := agtanthropic.SampleResult(&msg)
			if tc.want == nil {
				if err == nil || strings.Contains(err.Error(), secret) {
					t.Errorf("SampleResult = %v, want an error without the answer's text", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("SampleResult: %v", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
	if _, err := agtanthropic.SampleResult(nil); err == nil {
		t.Error("SampleResult(nil) gave no error")
	}
}

// The Sampler refuses what SampleRequest refuses without calling the API,
// and wraps an API error.
func TestSamplerErrors(t *testing.T) {
	t.Parallel()
	api := newScriptedAPI(t, func(req messagesRequest) (int, string) {
		return 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	})
	sample := agtanthropic.Sampler(api.client, "m", 10)
	if _, err := sample(context.Background(), runOrigin, &mcp.CreateMessageParams{MaxTokens: 10}); !errors.Is(err, mcpconn.ErrRefused) {
		t.Errorf("no messages: %v, want a refusal", err)
	}
	if n := api.requests(); n != 0 {
		t.Errorf("a refused request reached the API (%d requests)", n)
	}
	_, err := sample(context.Background(), runOrigin, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{user(text("hi " + secret))}})
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || errors.Is(err, mcpconn.ErrRefused) {
		t.Errorf("API error: %v, want the SDK's error, wrapped", err)
	}
}

// TestSamplerThroughRun answers the fake server's sampling requests with
// a scripted Messages API, through a Run, in both eras: the API gets the
// server's messages with the capped maxTokens and no tools, and the
// server gets the model's text.
func TestSamplerThroughRun(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			var (
				mu  sync.Mutex
				got []messagesRequest
			)
			api := newScriptedAPI(t, func(req messagesRequest) (int, string) {
				mu.Lock()
				got = append(got, req)
				mu.Unlock()
				return http.StatusOK, textAnswer("four")
			})
			r := featuresRun(t, era, run.Options{ClientFeatures: &run.ClientFeatures{
				Sample: agtanthropic.Sampler(api.client, "claude-test", 40),
			}})
			sample := toolName(t, r, mcptest.ToolSample)
			out, _, err := agtanthropic.Execute(context.Background(), r, toolUseMessage(t, sample, `{"messages":2,"bytes":7,"times":2}`))
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if res := out.Results[0]; res.Failed() || runtest.Text(t, res) != "model said: four | four" {
				t.Fatalf("the sample tool: %s %s %q", res.Code, res.Message, runtest.Text(t, res))
			}
			mu.Lock()
			defer mu.Unlock()
			xs := apiMessage{Role: "user", Content: []apiBlock{{Type: "text", Text: "xxxxxxx"}}}
			want := messagesRequest{Model: "claude-test", MaxTokens: 40, Messages: []apiMessage{xs, xs}} // the server asked 100
			if d := cmp.Diff([]messagesRequest{want, want}, got); d != "" {
				t.Errorf("the API's requests (-want +got):\n%s", d)
			}
		})
	}
}
