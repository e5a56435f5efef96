//lint:file-ignore SA1019 sampling and logging are current in protocol 2025-11-25, and a Run answers them in either era

package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exampleRun starts a Run of the agent "writer", which mounts "fake": the
// bundled fake server, in memory, with the tools that ask the client
// (mcptest.FaultClientFeatures). close ends the Run and removes its files.
func exampleRun(opts run.Options) (r *run.Run, close func()) {
	ctx := context.Background()
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
	agentDoc, _ := json.Marshal(resource.AgentDocument{MCPs: []resource.Ref{"fake"}})
	if _, err := repo.Create(ctx, resource.Key{Kind: resource.KindMCP, Ref: "fake"}, mcpDoc); err != nil {
		log.Fatal(err)
	}
	if _, err := repo.Create(ctx, resource.Key{Kind: resource.KindAgent, Ref: "writer"}, agentDoc); err != nil {
		log.Fatal(err)
	}
	opts.Agent, opts.Repository, opts.Permission = "writer", repo, policy.AutoAllow()
	// The servers' log lines also go to Logger (nil: slog.Default), at a
	// bounded rate; the examples keep them off stderr.
	opts.Logger = slog.New(slog.DiscardHandler)
	// The in-memory fake server stands in for a stdio process.
	opts.Connector = mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		Dial: mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultClientFeatures}}),
	})
	r, err = run.New(ctx, &opts)
	if err != nil {
		log.Fatal(err)
	}
	return r, func() {
		_ = r.Close()
		_ = repo.Close()
		_ = os.RemoveAll(dir)
	}
}

// executeOne runs one call of the fake server's tool and returns its
// result's text, or its ToolError.
func executeOne(r *run.Run, tool, args string) string {
	out, err := r.Execute(context.Background(), run.Batch{ID: "step-1", Agent: "writer", Calls: []run.Call{
		{ID: "call-1", Name: run.Alias("fake", tool), Arguments: json.RawMessage(args)},
	}})
	if err != nil {
		log.Fatal(err)
	}
	res := out.Results[0]
	if res.Failed() {
		return string(res.ToolError())
	}
	var blocks []struct{ Text string }
	_ = json.Unmarshal(res.Content, &blocks)
	return blocks[0].Text
}

// A server asks the Run's user during a call (elicitation): Elicit gets
// the question with the call that caused it, and answers. The server's
// defaults fill what the answer leaves out.
func ExampleClientFeatures_elicit() {
	r, close := exampleRun(run.Options{ClientFeatures: &run.ClientFeatures{
		Elicit: func(ctx context.Context, from run.Origin, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			call, _ := from.Call() // the call in flight that asked
			fmt.Printf("%s asks during %s: %s\n", from.Mount, call.CallID, p.Message)
			// A real host shows the form (p.RequestedSchema) to its user.
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace", "note": "hi"}}, nil
		},
	}})
	defer close()

	var answer struct {
		Action  string
		Content map[string]any
	}
	_ = json.Unmarshal([]byte(executeOne(r, mcptest.ToolAsk, `{}`)), &answer)
	fmt.Println("the server got:", answer.Action)
	for _, k := range slices.Sorted(maps.Keys(answer.Content)) {
		fmt.Printf("  %s=%v\n", k, answer.Content[k])
	}
	// Output:
	// fake asks during call-1: Who are you?
	// the server got: accept
	//   age=30
	//   name=Grace
	//   note=hi
	//   score=95.5
	//   status=active
	//   verified=true
}

// A server asks the Run's model (sampling): Sample answers with the
// host's model, billed to the call in flight. A real host converts the
// request to its model API (the adapters' Sampler does) and caps the
// tokens: the server's MaxTokens is only a request.
func ExampleClientFeatures_sample() {
	r, close := exampleRun(run.Options{ClientFeatures: &run.ClientFeatures{
		Sample: func(ctx context.Context, from run.Origin, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			call, _ := from.Call()
			fmt.Printf("%s samples during %s: %d message(s), max %d tokens\n", from.Mount, call.CallID, len(p.Messages), p.MaxTokens)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "scripted", Content: &mcp.TextContent{Text: "four"}}, nil
		},
	}})
	defer close()

	fmt.Println(executeOne(r, mcptest.ToolSample, `{}`))
	// Output:
	// fake samples during call-1: 1 message(s), max 100 tokens
	// model said: four
}

// Observe hears what the servers send on their own: a call's progress
// and its log lines, with the call they are about. They reach Observe
// before Execute returns the call's result.
func ExampleClientFeatures_observe() {
	var mu sync.Mutex
	var heard []string
	r, close := exampleRun(run.Options{ClientFeatures: &run.ClientFeatures{
		LogLevel: "info", // the servers' lines at info and above ("" is info too)
		Observe: func(ctx context.Context, n run.Notification) {
			call, _ := n.From.Call()
			var line string
			switch {
			case n.Progress != nil:
				line = fmt.Sprintf("%s progress %v/%v %s", call.CallID, n.Progress.Progress, n.Progress.Total, n.Progress.Message)
			case n.Log != nil:
				line = fmt.Sprintf("%s log %s %s: %v", call.CallID, n.Log.Level, n.Log.Logger, n.Log.Data)
			default:
				return
			}
			mu.Lock() // Observe may be called for several servers at once
			heard = append(heard, line)
			mu.Unlock()
		},
	}})
	defer close()

	executeOne(r, mcptest.ToolProgress, `{"steps": 2, "ms": 0}`)
	fmt.Println(executeOne(r, mcptest.ToolLog, `{"count": 2}`))
	mu.Lock()
	defer mu.Unlock()
	for _, line := range heard {
		fmt.Println(line)
	}
	// Output:
	// logged 2
	// call-1 progress 1/2 step 1
	// call-1 progress 2/2 step 2
	// call-1 log info fake: line 0
	// call-1 log info fake: line 1
}

// A Before hands per-call state to an After placed later in
// Options.Interceptors: the context it returns is the one the rest of the
// chain, the call and the After get.
func ExampleBefore() {
	type callState struct {
		start  time.Time
		ticket int
	}
	type stateKey struct{}
	var tickets int // the calls of this example run one at a time
	r, close := exampleRun(run.Options{Interceptors: []run.Interceptor{
		// Before first: the After runs inside it and sees its context.
		run.Before(func(ctx context.Context, req run.Request) (context.Context, error) {
			tickets++
			return context.WithValue(ctx, stateKey{}, &callState{start: time.Now(), ticket: tickets}), nil
		}),
		run.After(func(ctx context.Context, req run.Request, res run.Result) run.Result {
			st := ctx.Value(stateKey{}).(*callState)
			took := time.Since(st.start) // to a metric, in a real host
			fmt.Printf("ticket %d: %s %s failed=%v measured=%v\n", st.ticket, req.CallID, req.Source.Tool, res.Failed(), took >= 0)
			return res
		}),
	}})
	defer close()

	executeOne(r, mcptest.ToolLog, `{"count": 1}`)
	executeOne(r, mcptest.ToolAsk, `{}`) // no Elicit: the server's question is refused, the call fails
	// Output:
	// ticket 1: call-1 log failed=false measured=true
	// ticket 2: call-1 ask failed=true measured=true
}
