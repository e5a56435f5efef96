//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, where a server still asks for it inside an input_required result; agt answers it in both eras
package convtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
)

// Bytes that http.DetectContentType (and so modelconv) reads as what
// their names say, for sampling messages.
var (
	PNGBytes  = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 24)...)
	JPEGBytes = append([]byte("\xff\xd8\xff\xe0"), make([]byte, 24)...)
	WAVBytes  = append([]byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00"), make([]byte, 16)...)
	MP3Bytes  = append([]byte("ID3\x03\x00\x00\x00\x00\x00\x00"), make([]byte, 16)...)
)

// SampleText is a sampling message of role with text.
func SampleText(role, text string) *mcp.SamplingMessage {
	return &mcp.SamplingMessage{Role: mcp.Role(role), Content: &mcp.TextContent{Text: text}}
}

// SampleImage is a sampling message of role with an image of mimeType
// and data (its bytes).
func SampleImage(role, mimeType string, data []byte) *mcp.SamplingMessage {
	return &mcp.SamplingMessage{Role: mcp.Role(role), Content: &mcp.ImageContent{MIMEType: mimeType, Data: data}}
}

// SampleAudio is a sampling message of role with audio of mimeType and
// data (its bytes).
func SampleAudio(role, mimeType string, data []byte) *mcp.SamplingMessage {
	return &mcp.SamplingMessage{Role: mcp.Role(role), Content: &mcp.AudioContent{MIMEType: mimeType, Data: data}}
}

// SampleSecret is in the texts of the sampling requests and answers the
// adapters' tests make: no error may hold it.
const SampleSecret = "SECRET-7731"

// SampleError checks the error of a sampling conversion that must fail:
// a refusal the server reads (mcpconn.ErrRefused) saying refused, or,
// with refused "", the host's error saying hostErr; neither holding
// SampleSecret.
func SampleError(t testing.TB, err error, refused, hostErr string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("no error, want one saying %q", refused+hostErr)
	case strings.Contains(err.Error(), SampleSecret):
		t.Errorf("the error holds the request's text: %v", err)
	}
	if got := errors.Is(err, mcpconn.ErrRefused); got != (refused != "") {
		t.Errorf("%v: a refusal (mcpconn.ErrRefused): %v, want %v", err, got, refused != "")
	}
	if !strings.Contains(err.Error(), refused+hostErr) {
		t.Errorf("error %q, want it to say %q", err, refused+hostErr)
	}
}

// SampleFunc is the type of run.ClientFeatures.Sample.
type SampleFunc = func(ctx context.Context, from run.Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)

// SamplerInRun checks an adapter's Sampler through a Run, in each of
// Eras: the fake server's sampling tool is called twice, and sampler
// (the adapter's Sampler on a client of the API at baseURL, its cap 40)
// answers from an API scripted with answers: first "hello", which the
// server must get, with a request (JSON) matching wantRequest; then a
// refusal holding SampleSecret, which must fail the call saying the model
// refused, without the refusal's text.
func SamplerInRun(t *testing.T, answers [2]string, wantRequest string, sampler func(baseURL string) SampleFunc) {
	t.Helper()
	for _, e := range Eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			api := NewAPI(Answer{Body: answers[0]}, Answer{Body: answers[1]})
			defer api.Close()
			r := FeaturesRun(t, e, run.Options{ClientFeatures: &run.ClientFeatures{Sample: sampler(api.URL)}})
			sample := func(id string) run.Result {
				out, err := r.Execute(context.Background(), run.Batch{ID: "b-" + id, Agent: r.Agent(), Calls: []run.Call{
					{ID: id, Name: run.Alias(runtest.Notes, mcptest.ToolSample), Arguments: json.RawMessage(`{}`)}}})
				if err != nil {
					t.Fatal(err)
				}
				return out.Results[0]
			}
			if res := sample("c1"); runtest.Text(t, res) != "model said: hello" {
				t.Errorf("the server's answer: %q (%s %s)", runtest.Text(t, res), res.Code, res.Message)
			}
			SameJSON(t, api.Requests()[0], wantRequest)
			res := sample("c2")
			said := string(res.Content) + res.Message
			if !res.Failed() || !strings.Contains(said, "the model refused to answer") || strings.Contains(said, SampleSecret) {
				t.Errorf("after a refusal the call is %s %q %s, want a failure saying the model refused, without its text", res.Code, res.Message, res.Content)
			}
		})
	}
}
