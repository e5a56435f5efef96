package anthropic_test

import (
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	agtanthropic "github.com/agtsdk/agt/adapter/anthropic"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// jsonOf marshals v through the SDK's own encoders.
func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// sameJSON compares two JSON texts as values.
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s\ngot: %s", d, got)
	}
}

func TestToolsKeepSchemaBytes(t *testing.T) {
	t.Parallel()
	// Key order, a large integer and a tiny number would not survive a
	// round trip through map[string]any and float64.
	schema := `{"type":"object","required":["z","a"],"properties":{"z":{"type":"integer","maximum":12345678901234567890},"a":{"type":"number","minimum":1e-400}},"additionalProperties":false}`
	tools := []run.ToolInfo{
		{Name: "files.read", Title: "Read", Description: "Reads a file.", InputSchema: json.RawMessage(schema)},
		{Name: "noargs", InputSchema: nil},
	}
	got := jsonOf(t, agtanthropic.Tools(tools))
	sameJSON(t, got, `[{"name":"files.read","description":"Reads a file.","input_schema":`+schema+`},`+
		`{"name":"noargs","input_schema":{"type":"object"}}]`)
	var defs []struct {
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(got, &defs); err != nil {
		t.Fatal(err)
	}
	if string(defs[0].InputSchema) != schema {
		t.Errorf("input_schema bytes changed:\ngot  %s\nwant %s", defs[0].InputSchema, schema)
	}
}

func TestToolsEmpty(t *testing.T) {
	t.Parallel()
	sameJSON(t, jsonOf(t, agtanthropic.Tools(nil)), `[]`)
}

// messageJSON is a Messages API response as the API sends it: text, two
// tool_use blocks, and a thinking block.
const messageJSON = `{
  "id": "msg_01",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5",
  "stop_reason": "tool_use",
  "content": [
    {"type": "thinking", "thinking": "plan", "signature": "sig"},
    {"type": "text", "text": "Reading both."},
    {"type": "tool_use", "id": "toolu_A", "name": "files.read", "input": {"path": "a.txt", "n": 12345678901234567890}},
    {"type": "tool_use", "id": "toolu_B", "name": "files.list", "input": {}}
  ],
  "usage": {"input_tokens": 10, "output_tokens": 20}
}`

func TestBatchFromMessageJSON(t *testing.T) {
	t.Parallel()
	var msg sdk.Message
	if err := json.Unmarshal([]byte(messageJSON), &msg); err != nil {
		t.Fatal(err)
	}
	got := agtanthropic.Batch("step-1", resource.Ref("agents/a"), &msg)
	if got.ID != "step-1" || got.Agent != "agents/a" {
		t.Errorf("batch ID/agent = %q/%q", got.ID, got.Agent)
	}
	type call struct{ ID, Name, Args string }
	var calls []call
	for _, c := range got.Calls {
		calls = append(calls, call{c.ID, c.Name, string(c.Arguments)})
	}
	want := []call{
		{"toolu_A", "files.read", `{"path": "a.txt", "n": 12345678901234567890}`},
		{"toolu_B", "files.list", `{}`},
	}
	if d := cmp.Diff(want, calls); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

func TestBatchWithoutToolUse(t *testing.T) {
	t.Parallel()
	var msg sdk.Message
	if err := json.Unmarshal([]byte(`{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"done"}]}`), &msg); err != nil {
		t.Fatal(err)
	}
	if got := agtanthropic.Batch("b", "agents/a", &msg); len(got.Calls) != 0 {
		t.Errorf("calls = %v, want none", got.Calls)
	}
	if got := agtanthropic.Batch("b", "agents/a", nil); len(got.Calls) != 0 || got.ID != "b" {
		t.Errorf("nil message: batch = %+v", got)
	}
}

func TestResultsJSON(t *testing.T) {
	t.Parallel()
	failed := run.Result{CallID: "toolu_E", Name: "files.read", Code: run.CodeInvalidArguments,
		Message:    "the arguments do not match the tool's input schema",
		Violations: []run.Violation{{Path: "/path", SchemaPath: "/properties/path/type", Message: "must be >= 1"}},
		Content:    json.RawMessage(`[{"type":"text","text":"server's own error text"}]`)}
	tests := []struct {
		name string
		res  run.Result
		want string
	}{
		{"text", run.Result{CallID: "toolu_1", Content: json.RawMessage(`[{"type":"text","text":"hello"},{"type":"text","text":"world"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"hello"},{"type":"text","text":"world"}]}`},
		{"image", run.Result{CallID: "toolu_2", Content: json.RawMessage(`[{"type":"text","text":"a dot"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"a dot"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}`},
		{"image type the API does not take", run.Result{CallID: "toolu_3", Content: json.RawMessage(`[{"type":"image","data":"AAAA","mimeType":"image/bmp"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_3","content":[{"type":"text","text":"{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/bmp\"}"}]}`},
		{"resource link as its JSON", run.Result{CallID: "toolu_4", Content: json.RawMessage(`[{"type":"resource_link","uri":"file:///a","name":"a"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_4","content":[{"type":"text","text":"{\"type\":\"resource_link\",\"uri\":\"file:///a\",\"name\":\"a\"}"}]}`},
		{"structured with text only", run.Result{CallID: "toolu_5", Content: json.RawMessage(`[{"type":"text","text":"{\"n\":1}"}]`), Structured: json.RawMessage(`{"n":1}`)},
			`{"type":"tool_result","tool_use_id":"toolu_5","content":[{"type":"text","text":"{\"n\":1}"}]}`},
		{"result notice", run.Result{CallID: "toolu_6", Content: json.RawMessage(`[{"type":"text","text":"saved"}]`), Structured: json.RawMessage(`{"ok":true}`), Notice: "configuration saved, but load failed: x"},
			`{"type":"tool_result","tool_use_id":"toolu_6","content":[{"type":"text","text":"saved"},{"type":"text","text":"configuration saved, but load failed: x"}]}`},
		{"failed", failed,
			`{"type":"tool_result","tool_use_id":"toolu_E","is_error":true,"content":[{"type":"text","text":` + quote(t, string(failed.ToolError())) + `}]}`},
		{"host tool content not an array", run.Result{CallID: "toolu_7", Content: json.RawMessage(`{"x":1}`)},
			`{"type":"tool_result","tool_use_id":"toolu_7","content":[{"type":"text","text":"{\"x\":1}"}]}`},
		{"empty", run.Result{CallID: "toolu_8"},
			`{"type":"tool_result","tool_use_id":"toolu_8"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sameJSON(t, jsonOf(t, agtanthropic.ToolResult(tt.res)), tt.want)
		})
	}
}

func quote(t *testing.T, s string) string {
	t.Helper()
	return string(jsonOf(t, s))
}

func TestFailedResultIsToolErrorOnly(t *testing.T) {
	t.Parallel()
	r := run.Result{CallID: "toolu_E", Code: run.CodeToolError, Message: "disk full",
		Content: json.RawMessage(`[{"type":"text","text":"disk full"},{"type":"image","data":"AAAA","mimeType":"image/png"}]`)}
	tr := agtanthropic.ToolResult(r)
	if !tr.IsError.Valid() || !tr.IsError.Value {
		t.Errorf("is_error not set")
	}
	if len(tr.Content) != 1 || tr.Content[0].OfText == nil {
		t.Fatalf("content = %+v, want one text block", tr.Content)
	}
	sameJSON(t, []byte(tr.Content[0].OfText.Text), `{"error":{"code":"tool_error","message":"disk full"}}`)
}

func TestResultsOutcomeUserMessage(t *testing.T) {
	t.Parallel()
	out := run.Outcome{
		BatchID: "step-1",
		Results: []run.Result{
			{CallID: "toolu_A", Content: json.RawMessage(`[{"type":"text","text":"a"}]`)},
			{CallID: "toolu_B", Code: run.CodePermissionDenied, Message: "denied by policy"},
		},
		Refresh: &run.RefreshReport{Notice: "configuration saved, but load failed: mount m"},
	}
	msg := sdk.NewUserMessage(agtanthropic.Results(out)...)
	sameJSON(t, jsonOf(t, msg), `{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"toolu_A","content":[{"type":"text","text":"a"}]},
		{"type":"tool_result","tool_use_id":"toolu_B","is_error":true,"content":[{"type":"text","text":"{\"error\":{\"code\":\"permission_denied\",\"message\":\"denied by policy\"}}"}]},
		{"type":"text","text":"configuration saved, but load failed: mount m"}]}`)

	out.Refresh = &run.RefreshReport{OK: true}
	if got := agtanthropic.Results(out); len(got) != 2 {
		t.Errorf("no notice: %d blocks, want 2", len(got))
	}
}

// The Run puts a failed refresh's notice on the write that caused it as
// well: the model reads it there, not again after the tool_results. A
// failed result sends only its ToolError, so its Notice does not count.
func TestResultsNoticeOnce(t *testing.T) {
	t.Parallel()
	const notice = "configuration saved, but load failed: mount m"
	write := run.Result{CallID: "toolu_W", Content: json.RawMessage(`[{"type":"text","text":"saved"}]`), Notice: notice}
	out := run.Outcome{Results: []run.Result{write}, Refresh: &run.RefreshReport{Notice: notice}}
	sameJSON(t, jsonOf(t, agtanthropic.Results(out)), `[{"type":"tool_result","tool_use_id":"toolu_W","content":[
		{"type":"text","text":"saved"},{"type":"text","text":`+string(jsonOf(t, notice))+`}]}]`)

	failed := run.Result{CallID: "toolu_W", Code: run.CodeToolError, Message: "disk full", Notice: notice}
	out.Results = []run.Result{failed}
	if blocks := agtanthropic.Results(out); len(blocks) != 2 || blocks[1].OfText == nil || blocks[1].OfText.Text != notice {
		t.Errorf("a failed result with the notice: %s, want the notice after it", jsonOf(t, blocks))
	}
}

// TestRoundTripThroughSDK sends the Messages API request JSON the adapter
// helps build back through the SDK's params: what the SDK parses is what
// the adapter made.
func TestRoundTripThroughSDK(t *testing.T) {
	t.Parallel()
	var msg sdk.Message
	if err := json.Unmarshal([]byte(messageJSON), &msg); err != nil {
		t.Fatal(err)
	}
	batch := agtanthropic.Batch("step-1", "agents/a", &msg)
	out := run.Outcome{BatchID: batch.ID}
	for _, c := range batch.Calls {
		out.Results = append(out.Results, run.Result{CallID: c.ID, Name: c.Name,
			Content: json.RawMessage(`[{"type":"image","data":"R0lGODlh","mimeType":"image/gif"}]`)})
	}
	params := sdk.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Tools:     agtanthropic.Tools([]run.ToolInfo{{Name: "files.read", InputSchema: json.RawMessage(`{"type":"object"}`)}}),
		Messages:  []sdk.MessageParam{msg.ToParam(), sdk.NewUserMessage(agtanthropic.Results(out)...)},
	}
	raw := jsonOf(t, params)
	var back sdk.MessageNewParams
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("the SDK does not read its own request: %v", err)
	}
	if len(back.Messages) != 2 {
		t.Fatalf("messages = %d", len(back.Messages))
	}
	var ids []string
	for _, b := range back.Messages[1].OfUser.Content {
		tr := b.OfToolResult
		if tr == nil {
			t.Fatalf("block is not a tool_result: %s", jsonOf(t, b))
		}
		ids = append(ids, tr.ToolUseID)
		if len(tr.Content) != 1 || tr.Content[0].OfImage == nil || tr.Content[0].OfImage.Source.OfBase64 == nil {
			t.Fatalf("content is not one image: %s", jsonOf(t, tr))
		}
		src := tr.Content[0].OfImage.Source.OfBase64
		if src.Data != "R0lGODlh" || src.MediaType != sdk.Base64ImageSourceMediaTypeImageGIF {
			t.Errorf("image = %s", jsonOf(t, src))
		}
	}
	if d := cmp.Diff([]string{"toolu_A", "toolu_B"}, ids); d != "" {
		t.Errorf("tool_use IDs (-want +got):\n%s", d)
	}
	// The assistant turn carries the same IDs the batch kept.
	var useIDs []string
	for _, b := range back.Messages[0].OfAssistant.Content {
		if b.OfToolUse != nil {
			useIDs = append(useIDs, b.OfToolUse.ID)
		}
	}
	if d := cmp.Diff(ids, useIDs); d != "" {
		t.Errorf("assistant tool_use IDs (-want +got):\n%s", d)
	}
}
