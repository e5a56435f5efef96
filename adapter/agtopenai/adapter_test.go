package agtopenai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"

	"github.com/agtsdk/agt/adapter/agtopenai"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/agtsdk/agt/toolschema"
)

func TestToolsKeepSchemaBytes(t *testing.T) {
	t.Parallel()
	// Key order, a large integer and a tiny number would not survive a
	// round trip through map[string]any and float64.
	schema := `{"type":"object","required":["z","a"],"properties":{"z":{"type":"integer","maximum":12345678901234567890},"a":{"type":"number","minimum":1e-400}},"additionalProperties":false}`
	tools := []run.ToolInfo{
		{Name: "files.read", Title: "Read", Description: "Reads a file.", InputSchema: json.RawMessage(schema)},
		{Name: "noargs", InputSchema: nil},
	}
	got := convtest.JSON(t, agtopenai.Tools(tools))
	convtest.SameJSON(t, got, `[{"type":"function","function":{"name":"files.read","description":"Reads a file.","parameters":`+schema+`}},`+
		`{"type":"function","function":{"name":"noargs","parameters":{"type":"object"}}}]`)
	var defs []struct {
		Function struct {
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(got, &defs); err != nil {
		t.Fatal(err)
	}
	if string(defs[0].Function.Parameters) != schema {
		t.Errorf("parameters bytes changed:\ngot  %s\nwant %s", defs[0].Function.Parameters, schema)
	}
}

func TestToolsEmpty(t *testing.T) {
	t.Parallel()
	convtest.SameJSON(t, convtest.JSON(t, agtopenai.Tools(nil)), `[]`)
}

// completionJSON is a Chat Completions response as the API sends it: text,
// two function calls and a custom tool call.
const completionJSON = `{
  "id": "chatcmpl-01",
  "object": "chat.completion",
  "created": 1700000000,
  "model": "gpt-5",
  "choices": [{
    "index": 0,
    "finish_reason": "tool_calls",
    "logprobs": null,
    "message": {
      "role": "assistant",
      "content": "Reading both.",
      "refusal": null,
      "tool_calls": [
        {"id": "call_A", "type": "function", "function": {"name": "files.read", "arguments": "{\"path\": \"a.txt\", \"n\": 12345678901234567890}"}},
        {"id": "call_C", "type": "custom", "custom": {"name": "grammar", "input": "free text"}},
        {"id": "call_B", "type": "function", "function": {"name": "files.list", "arguments": "{}"}}
      ]
    }
  }],
  "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
}`

func TestBatchFromCompletionJSON(t *testing.T) {
	t.Parallel()
	var c sdk.ChatCompletion
	if err := json.Unmarshal([]byte(completionJSON), &c); err != nil {
		t.Fatal(err)
	}
	got := agtopenai.Batch(c.ID, resource.Ref("agents/a"), c.Choices[0].Message)
	if got.ID != "chatcmpl-01" || got.Agent != "agents/a" {
		t.Errorf("batch ID/agent = %q/%q", got.ID, got.Agent)
	}
	want := []convtest.Call{
		{ID: "call_A", Name: "files.read", Args: `{"path": "a.txt", "n": 12345678901234567890}`},
		{ID: "call_B", Name: "files.list", Args: `{}`},
	}
	if d := cmp.Diff(want, convtest.Calls(got)); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

// Some OpenAI-compatible servers leave a tool call's type out: a call
// that names a function is still one; a custom tool call is not agt's.
func TestBatchToolCallTypes(t *testing.T) {
	t.Parallel()
	var msg sdk.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"refusal":null,"tool_calls":[
		{"id":"call_1","function":{"name":"files.read","arguments":"{}"}},
		{"id":"call_2","type":"custom","custom":{"name":"grammar","input":"free text"}},
		{"id":"call_3","type":"function","function":{"name":"files.list","arguments":"{}"}}]}`), &msg); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range agtopenai.Batch("b", "agents/a", msg).Calls {
		ids = append(ids, c.ID)
	}
	if d := cmp.Diff([]string{"call_1", "call_3"}, ids); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
}

func TestBatchWithoutToolCalls(t *testing.T) {
	t.Parallel()
	var msg sdk.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":"done","refusal":null}`), &msg); err != nil {
		t.Fatal(err)
	}
	if got := agtopenai.Batch("b", "agents/a", msg); len(got.Calls) != 0 || got.ID != "b" {
		t.Errorf("batch = %+v, want no calls", got)
	}
}

func TestToolMessageJSON(t *testing.T) {
	t.Parallel()
	failed := run.Result{CallID: "call_E", Name: "files.read", Code: run.CodeInvalidArguments,
		Message:    "the arguments do not match the tool's input schema",
		Violations: []toolschema.Violation{{Path: "/path", SchemaPath: "/properties/path/type", Message: "must be >= 1"}},
		Content:    json.RawMessage(`[{"type":"text","text":"server's own error text"}]`)}
	tests := []struct {
		name string
		res  run.Result
		want string
	}{
		{"text", run.Result{CallID: "call_1", Content: json.RawMessage(`[{"type":"text","text":"hello"},{"type":"text","text":"world"}]`)},
			`{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"hello"},{"type":"text","text":"world"}]}`},
		{"image as its JSON, the base64 left out", run.Result{CallID: "call_2", Content: json.RawMessage(`[{"type":"text","text":"a dot"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]`)},
			`{"role":"tool","tool_call_id":"call_2","content":[{"type":"text","text":"a dot"},{"type":"text","text":"{\"data\":\"(12 characters of base64 left out: a tool message takes text only)\",\"mimeType\":\"image/png\",\"type\":\"image\"}"}]}`},
		{"resource link as its JSON", run.Result{CallID: "call_4", Content: json.RawMessage(`[{"type":"resource_link","uri":"file:///a","name":"a"}]`)},
			`{"role":"tool","tool_call_id":"call_4","content":[{"type":"text","text":"{\"type\":\"resource_link\",\"uri\":\"file:///a\",\"name\":\"a\"}"}]}`},
		{"structured with text only", run.Result{CallID: "call_5", Content: json.RawMessage(`[{"type":"text","text":"{\"n\":1}"}]`), Structured: json.RawMessage(`{"n":1}`)},
			`{"role":"tool","tool_call_id":"call_5","content":"{\"n\":1}"}`},
		{"result notice", run.Result{CallID: "call_6", Content: json.RawMessage(`[{"type":"text","text":"saved"}]`), Structured: json.RawMessage(`{"ok":true}`), Notice: "configuration saved, but load failed: x"},
			`{"role":"tool","tool_call_id":"call_6","content":[{"type":"text","text":"saved"},{"type":"text","text":"configuration saved, but load failed: x"}]}`},
		{"failed", failed,
			`{"role":"tool","tool_call_id":"call_E","content":` + convtest.Quote(t, string(failed.ToolError())) + `}`},
		{"host tool content not an array", run.Result{CallID: "call_7", Content: json.RawMessage(`{"x":1}`)},
			`{"role":"tool","tool_call_id":"call_7","content":"{\"x\":1}"}`},
		{"empty", run.Result{CallID: "call_8"},
			`{"role":"tool","tool_call_id":"call_8","content":"[]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			convtest.SameJSON(t, convtest.JSON(t, agtopenai.ToolMessage(tt.res)), tt.want)
		})
	}
}

func TestFailedResultIsToolErrorOnly(t *testing.T) {
	t.Parallel()
	r := run.Result{CallID: "call_E", Code: run.CodeToolError, Message: "disk full",
		Content: json.RawMessage(`[{"type":"text","text":"disk full"},{"type":"image","data":"AAAA","mimeType":"image/png"}]`)}
	tm := agtopenai.ToolMessage(r)
	if !tm.Content.OfString.Valid() || tm.Content.OfArrayOfContentParts != nil {
		t.Fatalf("content = %s, want one string", convtest.JSON(t, tm.Content))
	}
	convtest.SameJSON(t, []byte(tm.Content.OfString.Value), `{"error":{"code":"tool_error","message":"disk full"}}`)
}

func TestResultsAfterAssistantMessage(t *testing.T) {
	t.Parallel()
	var c sdk.ChatCompletion
	if err := json.Unmarshal([]byte(completionJSON), &c); err != nil {
		t.Fatal(err)
	}
	msg := c.Choices[0].Message
	b := agtopenai.Batch(c.ID, "agents/a", msg)
	out := run.Outcome{
		BatchID: b.ID,
		Results: []run.Result{
			{CallID: b.Calls[0].ID, Content: json.RawMessage(`[{"type":"text","text":"a"}]`)},
			{CallID: b.Calls[1].ID, Code: run.CodePermissionDenied, Message: "denied by policy"},
		},
		Refresh: &run.RefreshReport{Notice: "configuration saved, but load failed: mount m"},
	}
	history := append([]sdk.ChatCompletionMessageParamUnion{msg.ToParam()}, agtopenai.Results(out)...)
	params := sdk.ChatCompletionNewParams{Model: "gpt-5", Messages: history}
	raw := convtest.JSON(t, params)

	// Back through the SDK's own request type, as a stand-in server reads it.
	var back sdk.ChatCompletionNewParams
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Messages) != 4 {
		t.Fatalf("messages = %d, want 4: %s", len(back.Messages), raw)
	}
	var callIDs []string
	for _, tc := range back.Messages[0].OfAssistant.ToolCalls {
		if tc.OfFunction != nil {
			callIDs = append(callIDs, tc.OfFunction.ID)
		}
	}
	var answered []string
	for _, m := range back.Messages[1:3] {
		if m.OfTool == nil {
			t.Fatalf("message is not a tool message: %s", convtest.JSON(t, m))
		}
		answered = append(answered, m.OfTool.ToolCallID)
	}
	if d := cmp.Diff(callIDs, answered); d != "" {
		t.Errorf("tool_call IDs answered (-calls +answers):\n%s", d)
	}
	convtest.SameJSON(t, []byte(back.Messages[2].OfTool.Content.OfString.Value), `{"error":{"code":"permission_denied","message":"denied by policy"}}`)
	user := back.Messages[3].OfUser
	if user == nil || user.Content.OfString.Value != out.Notice() {
		t.Errorf("last message = %s, want the notice as a user message", convtest.JSON(t, back.Messages[3]))
	}
}

// The Run puts a failed refresh's notice on the write that caused it as
// well: the model reads it there, not again in a user message. A failed
// result sends only its ToolError, so its Notice does not count.
func TestResultsNoticeOnce(t *testing.T) {
	t.Parallel()
	const notice = "configuration saved, but load failed: mount m"
	write := run.Result{CallID: "call_w", Content: json.RawMessage(`[{"type":"text","text":"saved"}]`), Notice: notice}
	out := run.Outcome{Results: []run.Result{write}, Refresh: &run.RefreshReport{Notice: notice}}
	convtest.SameJSON(t, convtest.JSON(t, agtopenai.Results(out)), `[{"role":"tool","tool_call_id":"call_w","content":[
		{"type":"text","text":"saved"},{"type":"text","text":`+convtest.Quote(t, notice)+`}]}]`)

	failed := run.Result{CallID: "call_w", Code: run.CodeToolError, Message: "disk full", Notice: notice}
	out.Results = []run.Result{failed}
	if msgs := agtopenai.Results(out); len(msgs) != 2 || msgs[1].OfUser == nil {
		t.Errorf("a failed result with the notice: %s, want the notice as a user message", convtest.JSON(t, msgs))
	}
}

func TestResultsWithoutNotice(t *testing.T) {
	t.Parallel()
	out := run.Outcome{Results: []run.Result{{CallID: "call_1", Content: json.RawMessage(`[{"type":"text","text":"a"}]`)}}}
	convtest.SameJSON(t, convtest.JSON(t, agtopenai.Results(out)), `[{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"a"}]}]`)
}

// The API refuses the whole request when one function's parameters have
// no "type": "object" at their root, so one server's tool would stop
// every turn of the conversation. A root without "type" gets it, the rest
// of its bytes kept; a root that is not an object (the schema true) is
// {"type":"object"}, as for a tool without a schema. The Run still checks
// the arguments against the server's own schema.
func TestToolsSchemaRootIsTypeObject(t *testing.T) {
	t.Parallel()
	for _, tc := range append(convtest.SchemaRoots(), []convtest.SchemaRoot{
		// OpenAI refuses the request with these at the root.
		{Name: "root combinators, enum and not left out", Schema: `{"type":"object","anyOf":[{"required":["a"]}],"oneOf":[{}],"allOf":[{}],"enum":[{}],"not":{}}`, Want: `{"type":"object"}`},
	}...) {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var defs []struct {
				Function struct {
					Parameters json.RawMessage `json:"parameters"`
				} `json:"function"`
			}
			if err := json.Unmarshal(convtest.JSON(t, agtopenai.Tools([]run.ToolInfo{{Name: "t", InputSchema: json.RawMessage(tc.Schema)}})), &defs); err != nil {
				t.Fatal(err)
			}
			if got := string(defs[0].Function.Parameters); got != tc.Want {
				t.Errorf("parameters\ngot  %s\nwant %s", got, tc.Want)
			}
		})
	}
}

// A tool message takes text only, and the model cannot see an image or
// hear audio in base64 text; sent whole, one screenshot of a few hundred
// KiB would fill the context window, and the API would refuse every
// later request of the conversation. So the base64 of an image, an audio
// block and a binary embedded resource is left out, and said so; the
// block's other fields go as they are.
func TestToolMessageLeavesOutBase64(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("QUJD", 256<<10) // 1 MiB of base64
	res := run.Result{CallID: "call_b", Content: json.RawMessage(`[` +
		`{"type":"image","data":"` + big + `","mimeType":"image/png"},` +
		`{"type":"audio","data":"` + big + `","mimeType":"audio/wav","annotations":{"priority":1}},` +
		`{"type":"resource","resource":{"uri":"file:///a.bin","mimeType":"application/octet-stream","blob":"` + big + `"}},` +
		`{"type":"resource","resource":{"uri":"file:///a.txt","text":"kept"}}]`)}
	tm := agtopenai.ToolMessage(res)
	parts := tm.Content.OfArrayOfContentParts
	if len(parts) != 4 {
		t.Fatalf("%d parts, want 4: %s", len(parts), convtest.JSON(t, tm))
	}
	left := `"(1048576 characters of base64 left out: a tool message takes text only)"`
	want := []string{
		`{"data":` + left + `,"mimeType":"image/png","type":"image"}`,
		`{"annotations":{"priority":1},"data":` + left + `,"mimeType":"audio/wav","type":"audio"}`,
		`{"resource":{"blob":` + left + `,"mimeType":"application/octet-stream","uri":"file:///a.bin"},"type":"resource"}`,
		`{"type":"resource","resource":{"uri":"file:///a.txt","text":"kept"}}`,
	}
	for i, p := range parts {
		if p.Text != want[i] {
			t.Errorf("part %d:\ngot  %.300s\nwant %s", i, p.Text, want[i])
		}
	}
}
