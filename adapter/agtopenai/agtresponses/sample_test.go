//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, where a server still asks for it inside an input_required result; agt answers it in both eras
package agtresponses_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/agtopenai/agtresponses"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/run"
)

// secret is in every text of the requests and answers below: no error may
// hold it.
const secret = convtest.SampleSecret

func TestSampleRequest(t *testing.T) {
	t.Parallel()
	text, image, audio := convtest.SampleText, convtest.SampleImage, convtest.SampleAudio
	png := base64.StdEncoding.EncodeToString(convtest.PNGBytes)
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
		{name: "every field; stop sequences not sent", cap: 4096, params: &mcp.CreateMessageParams{
			MaxTokens: 100, SystemPrompt: "be brief " + secret, Temperature: 0.5, StopSequences: []string{"END"},
			Messages: []*mcp.SamplingMessage{user, text("assistant", "hello "+secret), text("user", "more")},
		}, want: `{"model":"gpt-test","max_output_tokens":100,"store":false,"temperature":0.5,"instructions":"be brief SECRET-7731","input":[
			{"role":"user","content":"hi SECRET-7731"},{"role":"assistant","content":"hello SECRET-7731"},{"role":"user","content":"more"}]}`},
		{name: "left out: includeContext, metadata, model preferences, blank system prompt", cap: 4096, params: &mcp.CreateMessageParams{
			MaxTokens: 20, Messages: []*mcp.SamplingMessage{user}, IncludeContext: "allServers", SystemPrompt: " \n",
			Metadata: map[string]any{"user": "someone-else", "store": true}, ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: "o1"}}},
		}, want: `{"model":"gpt-test","max_output_tokens":20,"store":false,"input":[{"role":"user","content":"hi SECRET-7731"}]}`},
		{name: "the host's cap bounds a huge maxTokens", cap: 64, params: &mcp.CreateMessageParams{MaxTokens: 1 << 62, Messages: []*mcp.SamplingMessage{user}},
			want: `{"model":"gpt-test","max_output_tokens":64,"store":false,"input":[{"role":"user","content":"hi SECRET-7731"}]}`},
		{name: "fewer than the API's least asks for the least", cap: 64, params: &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{user}},
			want: `{"model":"gpt-test","max_output_tokens":16,"store":false,"input":[{"role":"user","content":"hi SECRET-7731"}]}`},
		{name: "an image by its bytes: PNG labelled JPEG", cap: 64, params: params(image("user", "image/jpeg", convtest.PNGBytes)),
			want: `{"model":"gpt-test","max_output_tokens":64,"store":false,"input":[{"role":"user","content":[
				{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,` + png + `"}]}]}`},

		{name: "no params", cap: 64, params: nil, refused: "no params"},
		{name: "a resource link", cap: 64, params: params(&mcp.SamplingMessage{Role: "user", Content: &mcp.ResourceLink{URI: "file:///" + secret, Name: secret}}),
			refused: "messages[0] holds content sampling does not take"},
		{name: "no messages", cap: 64, params: params(), refused: "messages is empty"},
		{name: "a nil message", cap: 64, params: params(user, nil), refused: "messages[1] is null"},
		{name: "a system role", cap: 64, params: params(text("system", secret)), refused: "messages[0].role"},
		{name: "a blank text", cap: 64, params: params(text("user", "")), refused: "messages[0] is a blank text"},
		{name: "tool result", cap: 64, params: params(&mcp.SamplingMessage{Role: "user", Content: &mcp.ToolResultContent{ToolUseID: secret}}), refused: "messages[0] is a tool use or tool result"},
		{name: "an image that is not one", cap: 64, params: params(user, image("user", "image/png", []byte(secret))), refused: "messages[1] is an image the model APIs do not take"},
		{name: "an image from the assistant", cap: 64, params: params(user, image("assistant", "image/png", convtest.PNGBytes)), refused: "messages[1] is an image in an assistant message"},
		{name: "audio", cap: 64, params: params(audio("user", "audio/wav", convtest.WAVBytes)), refused: "messages[0] is audio; the model API takes no audio"},
		{name: "maxTokens 0", cap: 64, params: &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{user}}, refused: "maxTokens is below 1"},
		{name: "a temperature above 2", cap: 64, params: &mcp.CreateMessageParams{MaxTokens: 1, Temperature: 3, Messages: []*mcp.SamplingMessage{user}}, refused: "temperature is above 2"},
		{name: "the host's cap below the API's least", cap: 15, params: params(user), hostErr: "below 16 (MinOutputTokens"},
		{name: "no model", cap: 64, params: params(user), noModel: true, hostErr: "the model is empty"},
		{name: "the host's cap 0", cap: 0, params: params(user), hostErr: "below 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			model := "gpt-test"
			if tc.noModel {
				model = ""
			}
			req, err := agtresponses.SampleRequest(tc.params, model, tc.cap)
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

// response is a Responses API answer with status, its incomplete_details
// (JSON, or "null") and its output items (a JSON array).
func response(status, incomplete, output string) string {
	return `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-test-2026","status":"` + status + `",
		"incomplete_details":` + incomplete + `,"output":` + output + `}`
}

// message is an output message item of the content parts (JSON).
func message(parts ...string) string {
	return `{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[` + strings.Join(parts, ",") + `]}`
}

func outputText(s string) string {
	return `{"type":"output_text","text":"` + s + `","annotations":[]}`
}

func TestSampleResult(t *testing.T) {
	t.Parallel()
	say := "[" + `{"type":"reasoning","id":"rs_1","summary":[]},` + message(outputText("a poem "), outputText(secret)) + "]"
	call := `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}","status":"completed"}`
	for _, tc := range []struct {
		name, body string
		stop       string // the stop reason of an answer, or
		refused    string // a part of the refusal the server reads, or
		err        string // a part of another error
	}{
		{name: "completed", body: response("completed", "null", say), stop: "endTurn"},
		{name: "a function call", body: response("completed", "null", "["+message(outputText("a poem "+secret))+","+call+"]"), stop: "toolUse"},
		{name: "out of tokens", body: response("incomplete", `{"reason":"max_output_tokens"}`, say), stop: "maxTokens"},
		{name: "content_filter, as it is", body: response("incomplete", `{"reason":"content_filter"}`, say), stop: "content_filter"},
		{name: "another reason left out", body: response("incomplete", `{"reason":"steered"}`, say), stop: ""},
		{name: "a refusal", body: response("completed", "null", "["+message(`{"type":"refusal","refusal":"no: `+secret+`"}`)+"]"), refused: "the model refused to answer"},
		{name: "a refusal after text", body: response("completed", "null", "["+message(outputText(secret), `{"type":"refusal","refusal":"no"}`)+"]"), refused: "the model refused to answer"},
		{name: "no text", body: response("completed", "null", "["+call+"]"), err: "holds no text"},
		{name: "failed", body: `{"id":"r","object":"response","model":"m","status":"failed","output":[],"error":{"code":"server_error","message":"` + secret + `"}}`, err: `failed (code "server_error")`},
		{name: "queued", body: response("queued", "null", "[]"), err: `not finished (status "queued")`},
		{name: "cancelled", body: response("cancelled", "null", say), err: `not finished (status "cancelled")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var resp responses.Response
			if err := json.Unmarshal([]byte(tc.body), &resp); err != nil {
				t.Fatal(err)
			}
			res, err := agtresponses.SampleResult(&resp)
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
	if _, err := agtresponses.SampleResult(nil); err == nil {
		t.Error("no error for a nil response")
	}
}

// A server's sampling request through a Run, in both eras: Sampler sends
// it to the API (the server's maxTokens 100 capped at 40), and the
// model's text is the server's answer; a model's refusal reaches the
// server as a refusal, without its text.
func TestSamplerInRun(t *testing.T) {
	t.Parallel()
	convtest.SamplerInRun(t, [2]string{
		response("completed", "null", "["+message(outputText("hello"))+"]"),
		response("completed", "null", "["+message(`{"type":"refusal","refusal":"no: `+secret+`"}`)+"]"),
	}, `{"model":"gpt-test","max_output_tokens":40,"store":false,"input":[{"role":"user","content":"xxxxx"}]}`, func(url string) convtest.SampleFunc {
		return agtresponses.Sampler(openai.NewClient(option.WithBaseURL(url), option.WithAPIKey("test"), option.WithMaxRetries(0)), "gpt-test", 40)
	})
}

// A model that refuses the server's temperature (a reasoning model) is
// asked again without it, once; another error is not retried, and no
// error holds the API's message.
func TestSamplerRetriesWithoutTemperature(t *testing.T) {
	t.Parallel()
	unsupported := func(p, code string) convtest.Answer {
		return convtest.Answer{Status: 400, Body: `{"error":{"message":"Unsupported value: '` + p + `' ` + secret + `","type":"invalid_request_error","param":"` + p + `","code":"` + code + `"}}`}
	}
	ok := convtest.Answer{Body: response("completed", "null", "["+message(outputText("fine"))+"]")}
	params := &mcp.CreateMessageParams{MaxTokens: 10, Temperature: 0.7, Messages: []*mcp.SamplingMessage{convtest.SampleText("user", "hi")}}
	temp := 0.7
	for _, tc := range []struct {
		name    string
		answers []convtest.Answer
		want    []*float64 // the temperature of each request
		err     bool
	}{
		{"temperature", []convtest.Answer{unsupported("temperature", "unsupported_parameter"), ok}, []*float64{&temp, nil}, false},
		{"another parameter", []convtest.Answer{unsupported("top_p", "unsupported_parameter"), ok}, []*float64{&temp}, true},
		{"no third try", []convtest.Answer{unsupported("temperature", "unsupported_value"), unsupported("temperature", "unsupported_value"), ok}, []*float64{&temp, nil}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := convtest.NewAPI(tc.answers...)
			defer api.Close()
			client := openai.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
			res, err := agtresponses.Sampler(client, "o-test", 100)(context.Background(), run.Origin{}, params)
			if tc.err != (err != nil) {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("the error holds the API's message: %v", err)
			}
			if err == nil && res.Content.(*mcp.TextContent).Text != "fine" {
				t.Errorf("answer %+v", res)
			}
			var got []*float64
			for _, b := range api.Requests() {
				var s struct {
					Temperature *float64 `json:"temperature"`
				}
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatal(err)
				}
				got = append(got, s.Temperature)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("temperatures sent (-want +got):\n%s", d)
			}
		})
	}
}
