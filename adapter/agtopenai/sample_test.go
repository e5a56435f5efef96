//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, where a server still asks for it inside an input_required result; agt answers it in both eras
package agtopenai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agtsdk/agt/adapter/agtopenai"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/run"
)

// secret is in every text of the requests and answers below: no error may
// hold it.
const secret = convtest.SampleSecret

func TestSampleRequest(t *testing.T) {
	t.Parallel()
	text, image, audio := convtest.SampleText, convtest.SampleImage, convtest.SampleAudio
	png := base64.StdEncoding.EncodeToString(convtest.PNGBytes)
	wav := base64.StdEncoding.EncodeToString(convtest.WAVBytes)
	mp3 := base64.StdEncoding.EncodeToString(convtest.MP3Bytes)
	frame := []byte{0xFF, 0xFB, 0x90, 0x64, 0, 0, 0, 0}
	big := append(append([]byte(nil), convtest.PNGBytes...), make([]byte, modelconv.MaxImageBase64/4*3)...)
	params := func(msgs ...*mcp.SamplingMessage) *mcp.CreateMessageParams {
		return &mcp.CreateMessageParams{MaxTokens: 100, Messages: msgs}
	}
	user := text("user", "hi "+secret)
	for _, tc := range []struct {
		name    string
		params  *mcp.CreateMessageParams
		cap     int64
		want    string // the request's JSON, or
		refused string // a part of the refusal's reason, or
		hostErr string // a part of the host's error
		noModel bool   // the model is ""
	}{
		{name: "every field", cap: 4096, params: &mcp.CreateMessageParams{
			MaxTokens: 100, SystemPrompt: "be brief " + secret, Temperature: 0.5, StopSequences: []string{"END"},
			Messages: []*mcp.SamplingMessage{user, text("assistant", "hello "+secret), text("user", "more")},
		}, want: `{"model":"gpt-test","max_completion_tokens":100,"store":false,"temperature":0.5,"stop":["END"],"messages":[
			{"role":"system","content":"be brief SECRET-7731"},{"role":"user","content":"hi SECRET-7731"},
			{"role":"assistant","content":"hello SECRET-7731"},{"role":"user","content":"more"}]}`},
		{name: "left out: includeContext, metadata, model preferences, blank system prompt", cap: 4096, params: &mcp.CreateMessageParams{
			MaxTokens: 10, Messages: []*mcp.SamplingMessage{user}, IncludeContext: "allServers", SystemPrompt: " \n",
			Metadata: map[string]any{"user": "someone-else", "store": true}, ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: "o1"}}},
		}, want: `{"model":"gpt-test","max_completion_tokens":10,"store":false,"messages":[{"role":"user","content":"hi SECRET-7731"}]}`},
		{name: "the host's cap bounds a huge maxTokens", cap: 64, params: &mcp.CreateMessageParams{MaxTokens: 1 << 62, Messages: []*mcp.SamplingMessage{user}},
			want: `{"model":"gpt-test","max_completion_tokens":64,"store":false,"messages":[{"role":"user","content":"hi SECRET-7731"}]}`},
		{name: "an image by its bytes: PNG labelled JPEG", cap: 64, params: params(image("user", "image/jpeg", convtest.PNGBytes)),
			want: `{"model":"gpt-test","max_completion_tokens":64,"store":false,"messages":[{"role":"user","content":[
				{"type":"image_url","image_url":{"url":"data:image/png;base64,` + png + `"}}]}]}`},
		{name: "WAV audio", cap: 64, params: params(audio("user", "audio/wav", convtest.WAVBytes), user),
			want: `{"model":"gpt-test","max_completion_tokens":64,"store":false,"messages":[{"role":"user","content":[
				{"type":"input_audio","input_audio":{"data":"` + wav + `","format":"wav"}}]},{"role":"user","content":"hi SECRET-7731"}]}`},
		{name: "MP3 audio with an ID3 tag", cap: 64, params: params(audio("user", "audio/mpeg", convtest.MP3Bytes)),
			want: `{"model":"gpt-test","max_completion_tokens":64,"store":false,"messages":[{"role":"user","content":[
				{"type":"input_audio","input_audio":{"data":"` + mp3 + `","format":"mp3"}}]}]}`},
		{name: "MP3 audio from a frame header", cap: 64, params: params(audio("user", "audio/mp3", frame)),
			want: `{"model":"gpt-test","max_completion_tokens":64,"store":false,"messages":[{"role":"user","content":[
				{"type":"input_audio","input_audio":{"data":"` + base64.StdEncoding.EncodeToString(frame) + `","format":"mp3"}}]}]}`},

		{name: "no params", cap: 64, params: nil, refused: "no params"},
		{name: "a resource link", cap: 64, params: params(&mcp.SamplingMessage{Role: "user", Content: &mcp.ResourceLink{URI: "file:///" + secret, Name: secret}}),
			refused: "messages[0] holds content sampling does not take"},
		{name: "no messages", cap: 64, params: params(), refused: "messages is empty"},
		{name: "a nil message", cap: 64, params: params(user, nil), refused: "messages[1] is null"},
		{name: "a system role", cap: 64, params: params(text("system", secret)), refused: "messages[0].role"},
		{name: "a blank text", cap: 64, params: params(text("user", " \t")), refused: "messages[0] is a blank text"},
		{name: "no content", cap: 64, params: params(&mcp.SamplingMessage{Role: "user"}), refused: "messages[0] has no content"},
		{name: "tool use", cap: 64, params: params(&mcp.SamplingMessage{Role: "assistant", Content: &mcp.ToolUseContent{ID: "t", Name: secret}}), refused: "messages[0] is a tool use"},
		{name: "an image that is not one", cap: 64, params: params(user, image("user", "image/png", []byte(secret))), refused: "messages[1] is an image the model APIs do not take"},
		{name: "an SVG", cap: 64, params: params(image("user", "image/svg+xml", []byte("<svg/>"))), refused: "messages[0] is an image"},
		{name: "an image past 5 MiB of base64", cap: 64, params: params(image("user", "image/png", big)), refused: "messages[0] is an image"},
		{name: "an image from the assistant", cap: 64, params: params(user, image("assistant", "image/png", convtest.PNGBytes)), refused: "messages[1] is an image in an assistant message"},
		{name: "audio from the assistant", cap: 64, params: params(audio("assistant", "audio/wav", convtest.WAVBytes)), refused: "messages[0] is audio in an assistant message"},
		{name: "MP3 labelled WAV", cap: 64, params: params(audio("user", "audio/wav", convtest.MP3Bytes)), refused: "messages[0] is audio the model API does not take"},
		{name: "Ogg audio", cap: 64, params: params(audio("user", "audio/ogg", []byte("OggS"+secret))), refused: "messages[0] is audio the model API does not take"},
		{name: "audio of no bytes", cap: 64, params: params(audio("user", "audio/wav", nil)), refused: "messages[0] is audio"},
		{name: "maxTokens 0", cap: 64, params: &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{user}}, refused: "maxTokens is below 1"},
		{name: "a negative temperature", cap: 64, params: &mcp.CreateMessageParams{MaxTokens: 1, Temperature: -1, Messages: []*mcp.SamplingMessage{user}}, refused: "temperature is negative"},
		{name: "a temperature above 2", cap: 64, params: &mcp.CreateMessageParams{MaxTokens: 1, Temperature: 2.5, Messages: []*mcp.SamplingMessage{user}}, refused: "temperature is above 2"},
		{name: "five stop sequences", cap: 64, params: &mcp.CreateMessageParams{MaxTokens: 1, StopSequences: []string{"a", "b", "c", "d", secret}, Messages: []*mcp.SamplingMessage{user}}, refused: "stopSequences has 5 sequences; the model API takes at most 4"},
		{name: "no model", cap: 64, params: params(user), noModel: true, hostErr: "the model is empty"},
		{name: "the host's cap 0", cap: 0, params: params(user), hostErr: "the host's cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			model := "gpt-test"
			if tc.noModel {
				model = ""
			}
			req, err := agtopenai.SampleRequest(tc.params, model, tc.cap)
			if tc.want == "" {
				convtest.SampleError(t, err, tc.refused, tc.hostErr)
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			convtest.SameJSON(t, convtest.JSON(t, req), tc.want)
		})
	}
}

// completion is a Chat Completions answer of one choice.
func completion(finish, message string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test-2026","choices":[
		{"index":0,"finish_reason":"` + finish + `","message":` + message + `}]}`
}

func TestSampleResult(t *testing.T) {
	t.Parallel()
	say := `{"role":"assistant","content":"a poem ` + secret + `"}`
	for _, tc := range []struct {
		name, body string
		stop       string // the stop reason of an answer, or
		refused    string // a part of the refusal the server reads, or
		err        string // a part of another error
	}{
		{name: "stop", body: completion("stop", say), stop: "endTurn"},
		{name: "length", body: completion("length", say), stop: "maxTokens"},
		{name: "tool_calls", body: completion("tool_calls", say), stop: "toolUse"},
		{name: "function_call", body: completion("function_call", say), stop: "toolUse"},
		{name: "content_filter, as it is", body: completion("content_filter", say), stop: "content_filter"},
		{name: "an unknown reason left out", body: completion("sleepy", say), stop: ""},
		{name: "a refusal", body: completion("stop", `{"role":"assistant","content":null,"refusal":"I will not: `+secret+`"}`), refused: "the model refused to answer"},
		{name: "a refusal with text", body: completion("stop", `{"role":"assistant","content":"partial `+secret+`","refusal":"no `+secret+`"}`), refused: "the model refused to answer"},
		{name: "no text", body: completion("stop", `{"role":"assistant","content":null}`), err: "holds no text"},
		{name: "no choices", body: `{"id":"c","object":"chat.completion","model":"m","choices":[]}`, err: "no choices"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var c sdk.ChatCompletion
			if err := json.Unmarshal([]byte(tc.body), &c); err != nil {
				t.Fatal(err)
			}
			res, err := agtopenai.SampleResult(&c)
			if tc.refused+tc.err != "" {
				convtest.SampleError(t, err, tc.refused, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "a poem " + secret}, Model: "gpt-test-2026", Role: "assistant", StopReason: tc.stop}
			if d := cmp.Diff(want, res); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
	if _, err := agtopenai.SampleResult(nil); err == nil {
		t.Error("no error for a nil completion")
	}
}

// A server's sampling request through a Run, in both eras: Sampler sends
// it to the API (the server's maxTokens 100 capped at 40), and the
// model's text is the server's answer; a model's refusal reaches the
// server as a refusal, without its text.
func TestSamplerInRun(t *testing.T) {
	t.Parallel()
	convtest.SamplerInRun(t, [2]string{
		completion("stop", `{"role":"assistant","content":"hello"}`),
		completion("stop", `{"role":"assistant","content":null,"refusal":"no: `+secret+`"}`),
	}, `{"model":"gpt-test","max_completion_tokens":40,"store":false,"messages":[{"role":"user","content":"xxxxx"}]}`, func(url string) convtest.SampleFunc {
		return agtopenai.Sampler(sdk.NewClient(option.WithBaseURL(url), option.WithAPIKey("test"), option.WithMaxRetries(0)), "gpt-test", 40)
	})
}

// A model that refuses the server's temperature or stop sequences (a
// reasoning model) is asked again without them, once each; another
// error is not retried, and no error holds the API's message.
func TestSamplerRetriesWithoutUnsupported(t *testing.T) {
	t.Parallel()
	unsupported := func(p, code string) convtest.Answer {
		return convtest.Answer{Status: 400, Body: `{"error":{"message":"Unsupported value: '` + p + `' ` + secret + `","type":"invalid_request_error","param":"` + p + `","code":"` + code + `"}}`}
	}
	ok := convtest.Answer{Body: completion("stop", `{"role":"assistant","content":"fine"}`)}
	params := &mcp.CreateMessageParams{MaxTokens: 10, Temperature: 0.7, StopSequences: []string{"END"}, Messages: []*mcp.SamplingMessage{convtest.SampleText("user", "hi")}}
	type sent struct {
		Temperature *float64 `json:"temperature"`
		Stop        []string `json:"stop"`
	}
	temp := 0.7
	for _, tc := range []struct {
		name    string
		answers []convtest.Answer
		want    []sent
		err     bool
	}{
		{"temperature, then stop", []convtest.Answer{unsupported("temperature", "unsupported_value"), unsupported("stop", "unsupported_parameter"), ok},
			[]sent{{&temp, []string{"END"}}, {nil, []string{"END"}}, {nil, nil}}, false},
		{"stop", []convtest.Answer{unsupported("stop", "unsupported_parameter"), ok}, []sent{{&temp, []string{"END"}}, {&temp, nil}}, false},
		{"another parameter", []convtest.Answer{unsupported("max_completion_tokens", "unsupported_parameter"), ok}, []sent{{&temp, []string{"END"}}}, true},
		{"another code", []convtest.Answer{unsupported("temperature", "invalid_value"), ok}, []sent{{&temp, []string{"END"}}}, true},
		{"no third try", []convtest.Answer{unsupported("temperature", "unsupported_value"), unsupported("temperature", "unsupported_value"), unsupported("stop", "unsupported_value"), ok},
			[]sent{{&temp, []string{"END"}}, {nil, []string{"END"}}, {nil, []string{"END"}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := convtest.NewAPI(tc.answers...)
			defer api.Close()
			client := sdk.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
			res, err := agtopenai.Sampler(client, "o-test", 100)(context.Background(), run.Origin{}, params)
			if tc.err != (err != nil) {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("the error holds the API's message: %v", err)
			}
			if err == nil && res.Content.(*mcp.TextContent).Text != "fine" {
				t.Errorf("answer %+v", res)
			}
			var got []sent
			for _, b := range api.Requests() {
				var s sent
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatal(err)
				}
				got = append(got, s)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
		})
	}
}
