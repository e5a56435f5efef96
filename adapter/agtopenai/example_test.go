package agtopenai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agtsdk/agt/adapter/agtopenai"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/run"
)

// A Run's server asks the host's model for a text (MCP sampling): Sampler
// sends the request through the host's client, the server asking for 100
// tokens and the host allowing 64, and the model's text is the server's
// answer. A scripted Chat Completions API on 127.0.0.1 stands in for
// OpenAI, and the bundled fake server for the MCP server.
func ExampleSampler() {
	ctx := context.Background()
	api := convtest.NewAPI(convtest.Answer{Body: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test",
		"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"a short poem"}}]}`})
	defer api.Close()
	client := openai.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("test"))

	r, done, err := convtest.ExampleRun(ctx, run.Options{
		ClientFeatures: &run.ClientFeatures{Sample: agtopenai.Sampler(client, "gpt-test", 64)},
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
		Model               string `json:"model"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(api.Requests()[0], &sent); err != nil {
		log.Fatal(err)
	}
	fmt.Println(sent.Model, sent.MaxCompletionTokens)
	// Output:
	// [{"type":"text","text":"model said: a short poem"}]
	// gpt-test 64
}

// A model loop: Execute runs the function calls of each completion as one
// batch and returns the tool messages that answer them; a completion
// without function calls ends the loop. A scripted Chat Completions API
// on 127.0.0.1 stands in for OpenAI: it calls the fake server's echo
// tool, then answers.
func ExampleExecute() {
	ctx := context.Background()
	api := convtest.NewAPI(
		convtest.Answer{Body: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test",
			"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"mcp__notes__echo","arguments":"{\"text\":\"hi\"}"}}]}}]}`},
		convtest.Answer{Body: `{"id":"chatcmpl-2","object":"chat.completion","created":2,"model":"gpt-test",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"The server said hi."}}]}`},
	)
	defer api.Close()
	client := openai.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("test"))

	r, done, err := convtest.ExampleRun(ctx, run.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer done()

	history := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Ask the server to echo hi.")}
	for {
		c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "gpt-test", Messages: history, Tools: agtopenai.Tools(r.Tools()),
		})
		if err != nil {
			log.Fatal(err)
		}
		history = append(history, c.Choices[0].Message.ToParam())
		out, reply, err := agtopenai.Execute(ctx, r, c) // a rejected batch is no error: reply answers every call
		if err != nil {
			log.Fatal(err) // the Run is closed, or ctx ended
		}
		if len(reply) == 0 {
			fmt.Println("model:", c.Choices[0].Message.Content)
			break
		}
		for _, res := range out.Results {
			fmt.Printf("%s: %s\n", res.CallID, res.Content)
		}
		history = append(history, reply...)
	}
	fmt.Println(len(history), "messages")
	// Output:
	// call_1: [{"type":"text","text":"hi"}]
	// model: The server said hi.
	// 4 messages
}
