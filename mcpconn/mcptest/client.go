//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 only; the fake speaks 2025-11-25, where they are current

package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names of the tools FaultClientFeatures adds.
const (
	ToolAsk        = "ask"         // elicitation/create, form or url
	ToolAskMany    = "ask_many"    // many elicitations at once
	ToolSample     = "sample"      // sampling/createMessage
	ToolListRoots  = "list_roots"  // roots/list
	ToolProgress   = "progress"    // notifications/progress, then a result
	ToolLog        = "log"         // notifications/message
	ToolAddTool    = "add_tool"    // adds a tool: notifications/tools/list_changed
	ToolClientCaps = "client_caps" // the client's capabilities from initialize
)

// AskDefaults are the defaults of the form ToolAsk requests (SEP-1034).
// They cover the types of the conformance scenario
// elicitation-sep1034-client-defaults: string, integer, number, enum,
// boolean.
var AskDefaults = map[string]any{"name": "Ann", "age": float64(30), "score": 95.5, "status": "active", "verified": true}

// AskURL is the URL of the url-mode elicitation of ToolAsk.
const AskURL = "https://auth.example.com/login?session=s1"

// AskIn is the input of ask.
type AskIn struct {
	// Mode is "form" (default) or "url".
	Mode string `json:"mode,omitempty"`
}

// AskManyIn is the input of ask_many.
type AskManyIn struct {
	Count int `json:"count"`
}

// SampleIn is the input of sample.
type SampleIn struct {
	// Messages is how many user messages to send (default 1); Bytes the
	// size of each text (default 5).
	Messages int `json:"messages,omitempty"`
	Bytes    int `json:"bytes,omitempty"`
	// Times is how many requests to make, one after the other (default 1).
	Times int `json:"times,omitempty"`
}

// ProgressIn is the input of progress.
type ProgressIn struct {
	// Steps progress notifications, each after MS milliseconds.
	Steps int `json:"steps"`
	MS    int `json:"ms"`
}

// LogIn is the input of log.
type LogIn struct {
	Count int `json:"count"`
	Bytes int `json:"bytes,omitempty"`
	// Structured makes each line's data the object LogData(i) instead
	// of a string.
	Structured bool `json:"structured,omitempty"`
}

// LogData is the data of line i of the log tool with structured set:
// {"event":"disk","free_mb":12,"line":i}.
func LogData(i int) map[string]any {
	return map[string]any{"event": "disk", "free_mb": 12, "line": i}
}

// AddToolIn is the input of add_tool.
type AddToolIn struct {
	Name string `json:"name"`
	// BreakListing makes every later tools/list fail.
	BreakListing bool `json:"break_listing,omitempty"`
}

// clientFeatures are the tools that use what a client offers.
type clientFeatures struct {
	server *mcp.Server
	mu     sync.Mutex
	broken bool // tools/list fails (add_tool break_listing)
	// changed is signalled when notifications/tools/list_changed has
	// been sent (the go-sdk sends it 10 ms after AddTool).
	changed chan struct{}
}

// sent is the server's sending middleware: it tells add_tool that the
// notification went out.
func (cf *clientFeatures) sent(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "notifications/tools/list_changed" {
			select {
			case cf.changed <- struct{}{}:
			default:
			}
		}
		return res, err
	}
}

func (cf *clientFeatures) listingBroken() bool {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	return cf.broken
}

func (cf *clientFeatures) add(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: ToolAsk, Description: "Asks the user (elicitation) and returns the answer as JSON.",
		InputSchema: schemaFor[AskIn](func(s *jsonschema.Schema) { s.Properties["mode"].Enum = []any{"form", "url"} })}, cf.ask)
	mcp.AddTool(s, &mcp.Tool{Name: ToolAskMany, Description: "Sends count elicitations at once; returns how many were answered and refused.",
		InputSchema: schemaFor[AskManyIn](func(s *jsonschema.Schema) {
			s.Properties["count"].Minimum = jsonschema.Ptr(1.0)
			s.Properties["count"].Maximum = jsonschema.Ptr(1000.0)
		})}, cf.askMany)
	mcp.AddTool(s, &mcp.Tool{Name: ToolSample, Description: "Asks the client's model (sampling) and returns its text.",
		InputSchema: schemaFor[SampleIn](nil)}, cf.sample)
	mcp.AddTool(s, &mcp.Tool{Name: ToolListRoots, Description: "Returns the client's roots as JSON.",
		InputSchema: schemaFor[struct{}](nil)}, cf.listRoots)
	mcp.AddTool(s, &mcp.Tool{Name: ToolProgress, Description: "Reports progress steps times, ms apart, then returns.",
		InputSchema: schemaFor[ProgressIn](nil)}, cf.progress)
	mcp.AddTool(s, &mcp.Tool{Name: ToolLog, Description: "Sends count log messages at level info (structured: objects as their data).",
		InputSchema: schemaFor[LogIn](nil)}, cf.log)
	mcp.AddTool(s, &mcp.Tool{Name: ToolClientCaps, Description: "Returns the capabilities the client declared in initialize, as JSON.",
		InputSchema: schemaFor[struct{}](nil)}, cf.clientCaps)
	mcp.AddTool(s, &mcp.Tool{Name: ToolAddTool, Description: "Adds a tool named name (an echo), which tells the clients that the tools changed.",
		InputSchema: schemaFor[AddToolIn](nil)}, cf.addTool)
}

// failure is a tool error result that names the client's JSON-RPC error
// code, if any.
func failure(what string, err error) *mcp.CallToolResult {
	var wire *jsonrpc.Error
	code := 0
	if errors.As(err, &wire) {
		code = int(wire.Code)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s failed: code %d: %v", what, code, err)}}}
}

func (cf *clientFeatures) ask(ctx context.Context, req *mcp.CallToolRequest, in AskIn) (*mcp.CallToolResult, any, error) {
	params := &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":     map[string]any{"type": "string", "default": AskDefaults["name"]},
			"age":      map[string]any{"type": "integer", "default": AskDefaults["age"]},
			"score":    map[string]any{"type": "number", "default": AskDefaults["score"]},
			"status":   map[string]any{"type": "string", "enum": []any{"active", "inactive", "pending"}, "default": AskDefaults["status"]},
			"verified": map[string]any{"type": "boolean", "default": AskDefaults["verified"]},
			"note":     map[string]any{"type": "string"},
		},
	}}
	if in.Mode == "url" {
		params = &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: AskURL, ElicitationID: "e1"}
	}
	res, err := req.Session.Elicit(ctx, params)
	if err != nil {
		return failure("elicitation", err), nil, nil
	}
	b, _ := json.Marshal(res)
	return textResult("%s", b), nil, nil
}

func (cf *clientFeatures) askMany(ctx context.Context, req *mcp.CallToolRequest, in AskManyIn) (*mcp.CallToolResult, any, error) {
	var (
		wg             sync.WaitGroup
		mu             sync.Mutex
		answered, fail int
	)
	for range in.Count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "again?", RequestedSchema: map[string]any{"type": "object"}})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fail++
			} else {
				answered++
			}
		}()
	}
	wg.Wait()
	return textResult("answered=%d refused=%d", answered, fail), nil, nil
}

func (cf *clientFeatures) sample(ctx context.Context, req *mcp.CallToolRequest, in SampleIn) (*mcp.CallToolResult, any, error) {
	n, size, times := max(in.Messages, 1), max(in.Bytes, 5), max(in.Times, 1)
	msgs := make([]*mcp.SamplingMessage, n)
	for i := range msgs {
		msgs[i] = &mcp.SamplingMessage{Role: "user", Content: &mcp.TextContent{Text: strings.Repeat("x", size)}}
	}
	var texts []string
	for range times {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: msgs, MaxTokens: 100})
		if err != nil {
			return failure("sampling", err), nil, nil
		}
		if tc, ok := res.Content.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return textResult("model said: %s", strings.Join(texts, " | ")), nil, nil
}

func (cf *clientFeatures) listRoots(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	res, err := req.Session.ListRoots(ctx, nil)
	if err != nil {
		return failure("roots/list", err), nil, nil
	}
	uris := []string{}
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	b, _ := json.Marshal(uris)
	return textResult("%s", b), nil, nil
}

func (cf *clientFeatures) progress(ctx context.Context, req *mcp.CallToolRequest, in ProgressIn) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	for i := range in.Steps {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
				Progress: float64(i + 1), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i+1)})
		}
	}
	return textResult("token=%v steps=%d", token, in.Steps), nil, nil
}

func (cf *clientFeatures) log(ctx context.Context, req *mcp.CallToolRequest, in LogIn) (*mcp.CallToolResult, any, error) {
	for i := range in.Count {
		var data any = fmt.Sprintf("line %d", i)
		switch {
		case in.Structured:
			data = LogData(i)
		case in.Bytes > 0:
			data = strings.Repeat("y", in.Bytes)
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "fake", Data: data}); err != nil {
			return failure("log", err), nil, nil
		}
	}
	return textResult("logged %d", in.Count), nil, nil
}

func (cf *clientFeatures) addTool(ctx context.Context, req *mcp.CallToolRequest, in AddToolIn) (*mcp.CallToolResult, any, error) {
	if in.BreakListing {
		cf.mu.Lock()
		cf.broken = true
		cf.mu.Unlock()
	}
	// AddTool tells every session (notifications/tools/list_changed)
	// before this result is sent.
	select {
	case <-cf.changed: // an earlier change's
	default:
	}
	mcp.AddTool(cf.server, &mcp.Tool{Name: in.Name, Description: "added during the session; returns its text",
		InputSchema: schemaFor[EchoIn](nil)},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return textResult("%s", in.Text), nil, nil
		})
	// The result follows the notification, so a client reads the change
	// before the result.
	select {
	case <-cf.changed:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	return textResult("added %s", in.Name), nil, nil
}

func (cf *clientFeatures) clientCaps(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	// Built by hand: encoding/json writes the go-sdk's Roots struct even
	// when the client sent no roots.
	caps := map[string]any{}
	if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil {
		c := p.Capabilities
		if c.Elicitation != nil {
			caps["elicitation"] = c.Elicitation
		}
		if c.Sampling != nil {
			caps["sampling"] = c.Sampling
		}
		switch {
		case c.RootsV2 != nil:
			caps["roots"] = c.RootsV2
		case c.Roots.ListChanged:
			caps["roots"] = c.Roots
		}
	}
	b, _ := json.Marshal(caps)
	return textResult("%s", b), nil, nil
}
