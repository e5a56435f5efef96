package agtresponses_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/agtopenai/agtresponses"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/run"
)

// A Run's server asks the host's model for a text (MCP sampling): Sampler
// sends the request through the host's client, the server asking for 100
// tokens and the host allowing 64, and the model's text is the server's
// answer. A scripted Responses API on 127.0.0.1 stands in for OpenAI, and
// the bundled fake server for the MCP server.
func ExampleSampler() {
	ctx := context.Background()
	api := convtest.NewAPI(convtest.Answer{Body: `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-test","status":"completed",
		"output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"a short poem","annotations":[]}]}]}`})
	defer api.Close()
	client := openai.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("test"))

	r, done, err := convtest.ExampleRun(ctx, run.Options{
		ClientFeatures: &run.ClientFeatures{Sample: agtresponses.Sampler(client, "gpt-test", 64)},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer done()

	// The model calls the server's tool "sample", which asks the model.
	out, err := r.Execute(ctx, run.Batch{ID: "step-1", Agent: r.Agent(), Calls: []run.Call{
		{ID: "call-1", Name: "mcp__notes__sample", Arguments: json.RawMessage(`{}`)},
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", out.Results[0].Content)

	var sent struct {
		Model           string `json:"model"`
		MaxOutputTokens int    `json:"max_output_tokens"`
		Store           bool   `json:"store"`
	}
	if err := json.Unmarshal(api.Requests()[0], &sent); err != nil {
		log.Fatal(err)
	}
	fmt.Println(sent.Model, sent.MaxOutputTokens, sent.Store)
	// Output:
	// [{"type":"text","text":"model said: a short poem"}]
	// gpt-test 64 false
}

// A model loop with the conversation kept by the API
// (previous_response_id): Execute runs the function_call items of each
// response as one batch and returns the function_call_output items that
// answer them; a response without function calls ends the loop. A
// scripted Responses API on 127.0.0.1 stands in for OpenAI: it calls the
// fake server's echo tool, then answers.
func ExampleExecute() {
	ctx := context.Background()
	api := convtest.NewAPI(
		convtest.Answer{Body: `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-test","status":"completed",
			"output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"mcp__notes__echo","arguments":"{\"text\":\"hi\"}","status":"completed"}]}`},
		convtest.Answer{Body: `{"id":"resp_2","object":"response","created_at":2,"model":"gpt-test","status":"completed",
			"output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"The server said hi.","annotations":[]}]}]}`},
	)
	defer api.Close()
	client := openai.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("test"))

	r, done, err := convtest.ExampleRun(ctx, run.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer done()

	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Ask the server to echo hi.", responses.EasyInputMessageRoleUser)}
	var prev param.Opt[string]
	for {
		resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
			Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
			PreviousResponseID: prev, Tools: agtresponses.Tools(r.Tools()),
		})
		if err != nil {
			log.Fatal(err)
		}
		out, reply, err := agtresponses.Execute(ctx, r, resp) // a rejected batch is no error: reply answers every call
		if err != nil {
			log.Fatal(err) // the Run is closed, or ctx ended
		}
		if len(reply) == 0 {
			fmt.Println("model:", resp.OutputText())
			break
		}
		for _, res := range out.Results {
			fmt.Printf("%s: %s\n", res.CallID, res.Content)
		}
		prev, input = param.NewOpt(resp.ID), reply
	}
	// Output:
	// call_1: [{"type":"text","text":"hi"}]
	// model: The server said hi.
}
