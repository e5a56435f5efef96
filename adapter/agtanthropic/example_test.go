package agtanthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agtsdk/agt/adapter/agtanthropic"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// A mounted server asks the host's model (sampling) during a call: the
// Run answers with the Messages API through Sampler, at most 1024 tokens
// a request whatever the server asks.
func ExampleSampler() {
	ctx := context.Background()
	// A scripted Messages API on 127.0.0.1 stands in for the real one.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			MaxTokens int `json:"max_tokens"`
			Messages  []struct {
				Role    string `json:"role"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
		fmt.Printf("the API got %d %s message(s) %q, max_tokens %d\n",
			len(req.Messages), req.Messages[0].Role, req.Messages[0].Content[0].Text, req.MaxTokens)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",`+
			`"stop_reason":"end_turn","content":[{"type":"text","text":"Four."}],"usage":{"input_tokens":9,"output_tokens":2}}`)
	}))
	defer api.Close()
	client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(api.URL),
		option.WithAPIKey("not-a-key"), option.WithHTTPClient(api.Client()), option.WithMaxRetries(0))

	r, done := exampleRun(ctx, &run.Options{ClientFeatures: &run.ClientFeatures{
		Sample: agtanthropic.Sampler(client, "claude-sonnet-4-5", 1024),
	}})
	defer done()

	// The fake server's sample tool asks for one message of 5 bytes,
	// maxTokens 100, and returns what the model said.
	out, err := r.Execute(ctx, run.Batch{ID: "b1", Agent: r.Agent(), Calls: []run.Call{
		{ID: "c1", Name: "mcp__tools__sample", Arguments: json.RawMessage(`{}`)},
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out.Results[0].ForModel()))
	// Output:
	// the API got 1 user message(s) "xxxxx", max_tokens 100
	// [{"type":"text","text":"model said: Four."}]
}

// One model loop with Execute: the model's tool_use blocks run as one
// batch, and the reply answers each of them. The loop ends when a
// response has no tool_use.
func ExampleExecute() {
	ctx := context.Background()
	// A scripted Messages API: first a tool_use of the server's echo
	// tool, then, once it has read the tool_result, the end of the turn.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content []struct {
					Type    string `json:"type"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		last := req.Messages[len(req.Messages)-1].Content[0]
		if last.Type != "tool_result" {
			_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use",`+
				`"content":[{"type":"tool_use","id":"toolu_1","name":"mcp__tools__echo","input":{"text":"hello"}}]}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"msg_2","type":"message","role":"assistant","model":"m","stop_reason":"end_turn",`+
			`"content":[{"type":"text","text":"The server said `+last.Content[0].Text+`."}]}`)
	}))
	defer api.Close()
	client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(api.URL),
		option.WithAPIKey("not-a-key"), option.WithHTTPClient(api.Client()), option.WithMaxRetries(0))

	r, done := exampleRun(ctx, &run.Options{})
	defer done()

	history := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello through the server."))}
	for range 10 {
		msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model: "claude-sonnet-4-5", MaxTokens: 1024, Messages: history,
			Tools: agtanthropic.Tools(r.Tools()),
		})
		if err != nil {
			log.Fatal(err)
		}
		history = append(history, msg.ToParam())
		out, reply, err := agtanthropic.Execute(ctx, r, msg)
		if err != nil {
			log.Fatal(err) // the Run closed or ctx ended
		}
		if len(out.Results) == 0 {
			fmt.Println("model:", msg.Content[0].Text)
			break // no tool_use: the model is done
		}
		for _, res := range out.Results {
			fmt.Println("ran", res.CallID, res.Name, res.Failed())
		}
		history = append(history, reply)
	}
	// Output:
	// ran toolu_1 mcp__tools__echo false
	// model: The server said hello.
}

// exampleRun starts a Run of the agent "assistant", which mounts the
// fake MCP server (in memory, with its client feature tools) as "tools",
// with opts and a policy that allows every tool; done closes it and
// removes its files.
func exampleRun(ctx context.Context, opts *run.Options) (r *run.Run, done func()) {
	dir, err := os.MkdirTemp("", "agt-example-")
	if err != nil {
		log.Fatal(err)
	}
	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	mcpDoc, _ := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{
		"fake": {Command: "fakemcp", Cwd: dir},
	}})
	agentDoc, _ := json.Marshal(resource.AgentDocument{MCPs: []resource.Ref{"tools"}})
	_, _ = repo.Create(ctx, resource.Key{Kind: resource.KindMCP, Ref: "tools"}, mcpDoc)
	_, _ = repo.Create(ctx, resource.Key{Kind: resource.KindAgent, Ref: "assistant"}, agentDoc)
	opts.Agent, opts.Repository, opts.Permission = "assistant", repo, policy.AutoAllow()
	opts.Connector = mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		Dial: mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultClientFeatures}}),
	})
	r, err = run.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	return r, func() {
		_ = r.Close()
		_ = repo.Close()
		_ = os.RemoveAll(dir)
	}
}
