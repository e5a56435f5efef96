package agtanthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/adapter/agtanthropic"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/run"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunLoop is one full step against a real Run: tool definitions from
// Run.Tools, a Messages API response JSON with tool_use blocks, Execute,
// and the tool_result blocks of the next user message.
//
// The Run is over a bbolt store in t.TempDir(): the agent mounts one
// in-memory fake MCP server and has one host tool that returns an image.
func TestRunLoop(t *testing.T) {
	t.Parallel()
	const (
		pngPixel  = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
		imageTool = "snapshot"
	)
	r := runtest.New(t, runtest.Repository(t), runtest.Dial(&mcptest.ServerOptions{}), run.Options{
		Permission: policy.AutoAllow(),
		HostTools: []run.HostTool{{
			Name:        imageTool,
			Description: "Returns a one-pixel PNG.",
			Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Handler: func(context.Context, run.Request) (run.Result, error) {
				return run.Result{Content: json.RawMessage(`[{"type":"text","text":"one pixel"},{"type":"image","data":"` + pngPixel + `","mimeType":"image/png"}]`)}, nil
			},
		}},
	})
	ctx := context.Background()

	tools := r.Tools()
	echo := ""
	for _, ti := range tools {
		if strings.HasSuffix(ti.Name, "__"+mcptest.ToolEcho) {
			echo = ti.Name
		}
	}
	if echo == "" {
		t.Fatalf("no echo tool in %d tools", len(tools))
	}
	defs := agtanthropic.Tools(tools)
	if len(defs) != len(tools) {
		t.Fatalf("%d definitions for %d tools", len(defs), len(tools))
	}
	// Each definition sends the schema bytes the Run listed.
	var sent []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(convtest.JSON(t, defs), &sent); err != nil {
		t.Fatal(err)
	}
	for i, ti := range tools {
		var compact bytes.Buffer
		if err := json.Compact(&compact, ti.InputSchema); err != nil {
			t.Fatal(err)
		}
		if sent[i].Name != ti.Name || string(sent[i].InputSchema) != compact.String() {
			t.Errorf("tool %s: sent %s, listed %s", ti.Name, sent[i].InputSchema, ti.InputSchema)
		}
	}

	response := `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","content":[
		{"type":"text","text":"calling"},
		{"type":"tool_use","id":"toolu_echo","name":"` + echo + `","input":{"text":"hi"}},
		{"type":"tool_use","id":"toolu_img","name":"` + imageTool + `","input":{}},
		{"type":"tool_use","id":"toolu_bad","name":"` + echo + `","input":{"text":7}}]}`
	var msg sdk.Message
	if err := json.Unmarshal([]byte(response), &msg); err != nil {
		t.Fatal(err)
	}
	out, err := r.Execute(ctx, agtanthropic.Batch(msg.ID, runtest.Agent, &msg))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var gotCodes []run.Code
	for _, res := range out.Results {
		gotCodes = append(gotCodes, res.Code)
	}
	if d := cmp.Diff([]run.Code{"", "", run.CodeInvalidArguments}, gotCodes); d != "" {
		t.Fatalf("codes (-want +got):\n%s", d)
	}

	user := sdk.NewUserMessage(agtanthropic.Results(out)...)
	var back sdk.MessageParam
	if err := json.Unmarshal(convtest.JSON(t, user), &back); err != nil {
		t.Fatal(err)
	}
	if back.OfUser == nil || len(back.OfUser.Content) != 3 {
		t.Fatalf("user message = %s", convtest.JSON(t, user))
	}
	type part struct {
		ID      string
		IsError bool
		Kinds   []string
	}
	var parts []part
	for _, b := range back.OfUser.Content {
		tr := b.OfToolResult
		if tr == nil {
			t.Fatalf("not a tool_result: %s", convtest.JSON(t, b))
		}
		p := part{ID: tr.ToolUseID, IsError: tr.IsError.Value}
		for _, c := range tr.Content {
			switch {
			case c.OfText != nil:
				p.Kinds = append(p.Kinds, "text")
			case c.OfImage != nil:
				p.Kinds = append(p.Kinds, "image:"+string(c.OfImage.Source.OfBase64.MediaType))
				if c.OfImage.Source.OfBase64.Data != pngPixel {
					t.Errorf("image data changed")
				}
			}
		}
		parts = append(parts, p)
	}
	want := []part{
		{ID: "toolu_echo", Kinds: []string{"text"}},
		{ID: "toolu_img", Kinds: []string{"text", "image:image/png"}},
		{ID: "toolu_bad", IsError: true, Kinds: []string{"text"}},
	}
	if d := cmp.Diff(want, parts); d != "" {
		t.Errorf("tool_results (-want +got):\n%s", d)
	}
	// A failure's text is the ToolError JSON, the model's one error format.
	got := back.OfUser.Content[2].OfToolResult.Content[0].OfText.Text
	if got != string(out.Results[2].ToolError()) || !strings.Contains(got, `"code":"invalid_arguments"`) {
		t.Errorf("failure text = %s, want the ToolError %s", got, out.Results[2].ToolError())
	}
}
