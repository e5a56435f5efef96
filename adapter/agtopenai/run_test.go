package agtopenai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/adapter/agtopenai"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The part of a Chat Completions request a stand-in server reads, decoded
// from the wire JSON rather than through the SDK's types.
type wireRequest struct {
	Messages []struct {
		Role       string          `json:"role"`
		ToolCallID string          `json:"tool_call_id"`
		Content    json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// TestRunLoop is one full step against a real Run: function tools from
// Run.Tools in a request, a completion JSON with tool_calls, Execute, and
// the tool messages of the next request. The batch holds a
// success, a schema failure, a denial and a self-mount whose load fails.
//
// The Run is from a Host over a bbolt store in t.TempDir(): the agent
// mounts an in-process fake MCP server and may manage resources (so it
// has the framework tools); runtest.Broken is registered, not mounted,
// and never starts; the policy denies deleting notes.
func TestRunLoop(t *testing.T) {
	t.Parallel()
	r := runtest.HostRun(t, runtest.Repository(t, resource.CapabilityResourceManagement), runtest.Dial(nil), run.Options{
		Permission: policy.Rules{Deny: []string{"mcp__notes__note_delete"}, Allow: []string{"mcp__*", "framework:*"}},
	})
	ctx := context.Background()
	tools := r.Tools()
	first := []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("tidy the notes")}

	// Each function carries the schema bytes the Run listed, as
	// encoding/json writes them: compacted, with <, > and & escaped (the
	// framework tools' descriptions hold "->").
	var sent wireRequest
	decode(t, sdk.ChatCompletionNewParams{Model: "m", Messages: first, Tools: agtopenai.Tools(tools)}, &sent)
	if len(sent.Tools) != len(tools) {
		t.Fatalf("%d functions for %d tools", len(sent.Tools), len(tools))
	}
	for i, ti := range tools {
		if f := sent.Tools[i]; f.Type != "function" || f.Function.Name != ti.Name || string(f.Function.Parameters) != string(convtest.JSON(t, ti.InputSchema)) {
			t.Errorf("tool %s: sent %s %s with %s, listed %s", ti.Name, f.Type, f.Function.Name, f.Function.Parameters, ti.InputSchema)
		}
	}

	completion := `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
		"message":{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_echo","type":"function","function":{"name":"mcp__notes__echo","arguments":"{\"text\":\"hi\"}"}},
		{"id":"call_bad","type":"function","function":{"name":"mcp__notes__search","arguments":"{\"query\":\"\",\"limit\":0}"}},
		{"id":"call_denied","type":"function","function":{"name":"mcp__notes__note_delete","arguments":"{\"id\":\"n1\",\"caller\":\"ada\"}"}},
		{"id":"call_mount","type":"function","function":{"name":"resource_write","arguments":"{\"kind\":\"agent\",\"reference\":\"writer\",\"add\":{\"mcps\":[\"broken\"]}}"}}]}}]}`
	var c sdk.ChatCompletion
	if err := json.Unmarshal([]byte(completion), &c); err != nil {
		t.Fatal(err)
	}
	msg := c.Choices[0].Message
	out, err := r.Execute(ctx, agtopenai.Batch(c.ID, runtest.Agent, msg))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var codes []run.Code
	for _, res := range out.Results {
		codes = append(codes, res.Code)
	}
	if d := cmp.Diff([]run.Code{"", run.CodeInvalidArguments, run.CodePermissionDenied, ""}, codes); d != "" {
		t.Fatalf("codes (-want +got):\n%s", d)
	}
	notice := out.Notice()
	if !strings.HasPrefix(notice, "configuration saved, but load failed: ") || !strings.Contains(notice, string(runtest.Broken)) {
		t.Fatalf("notice = %q, want a load failure of %s", notice, runtest.Broken)
	}

	// The next request: the assistant message and one tool message per
	// call, in order; the notice once, on the write that caused it, not
	// again as a user message. The tools are unchanged: the Run did not
	// switch.
	history := append(append(first, msg.ToParam()), agtopenai.Results(out)...)
	var next wireRequest
	decode(t, sdk.ChatCompletionNewParams{Model: "m", Messages: history, Tools: agtopenai.Tools(r.Tools())}, &next)
	if len(next.Tools) != len(tools) {
		t.Errorf("%d tools after a failed refresh, want the %d of before", len(next.Tools), len(tools))
	}
	type wireMessage struct {
		Role, ToolCallID string
		Parts            []string
	}
	var got []wireMessage
	for _, m := range next.Messages[1:] {
		got = append(got, wireMessage{Role: m.Role, ToolCallID: m.ToolCallID, Parts: textParts(t, m.Content)})
	}
	// The write's answer is the written resource, then the notice.
	writeAnswer := ""
	for _, m := range got {
		if m.ToolCallID == "call_mount" && len(m.Parts) > 0 {
			writeAnswer = m.Parts[0]
		}
	}
	if !strings.Contains(writeAnswer, `"reference":"writer"`) {
		t.Errorf("the write's answer = %q, want the written agent", writeAnswer)
	}
	badError := string(out.Results[1].ToolError())
	want := []wireMessage{
		{Role: "assistant"},
		{Role: "tool", ToolCallID: "call_echo", Parts: []string{"hi"}},
		{Role: "tool", ToolCallID: "call_bad", Parts: []string{badError}},
		{Role: "tool", ToolCallID: "call_denied", Parts: []string{string(out.Results[2].ToolError())}},
		{Role: "tool", ToolCallID: "call_mount", Parts: []string{writeAnswer, notice}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("next request's messages (-want +got):\n%s", d)
	}
	// A failure is the ToolError JSON, paths included, no argument values.
	for _, part := range []string{`"code":"invalid_arguments"`, `"path":"/limit"`, `"path":"/query"`} {
		if !strings.Contains(badError, part) {
			t.Errorf("the schema failure %s lacks %s", badError, part)
		}
	}
	if !strings.Contains(string(out.Results[2].ToolError()), `"code":"permission_denied"`) {
		t.Errorf("the denial is %s", out.Results[2].ToolError())
	}
}

// decode marshals v through the SDK's encoders and decodes the JSON into
// into.
func decode(t *testing.T, v, into any) {
	t.Helper()
	if err := json.Unmarshal(convtest.JSON(t, v), into); err != nil {
		t.Fatal(err)
	}
}

// textParts is a message content's text: a string, or the texts of an
// array of text parts; nil for none.
func textParts(t *testing.T, content json.RawMessage) []string {
	t.Helper()
	if len(content) == 0 || string(content) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []string{s}
	}
	var parts []struct {
		Type, Text string
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		t.Fatalf("content is neither a string nor text parts: %s", content)
	}
	var out []string
	for _, p := range parts {
		if p.Type != "text" {
			t.Fatalf("a %s part in %s", p.Type, content)
		}
		out = append(out, p.Text)
	}
	return out
}
