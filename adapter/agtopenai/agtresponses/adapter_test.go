package agtresponses_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/agtopenai/agtresponses"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/run"
	"github.com/agtsdk/agt/toolschema"
)

// Each function tool carries the server's schema bytes (key order, a large
// integer and a tiny number would not survive a map[string]any), a root
// "type": "object" where the schema has none, and strict false: an
// omitted strict makes the Responses API rewrite the schema into strict
// mode.
func TestToolsJSON(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","required":["z","a"],"properties":{"z":{"type":"integer","maximum":12345678901234567890},"a":{"type":"number","minimum":1e-400}}}`
	noType := `{"properties":{"n":{"type":"integer","maximum":12345678901234567890}}}`
	tools := []run.ToolInfo{
		{Name: "files.read", Title: "Read", Description: "Reads a file.", InputSchema: json.RawMessage(schema)},
		{Name: "count", InputSchema: json.RawMessage(noType)},
		{Name: "noargs"},
	}
	got := convtest.JSON(t, agtresponses.Tools(tools))
	convtest.SameJSON(t, got, `[{"type":"function","name":"files.read","description":"Reads a file.","strict":false,"parameters":`+schema+`},`+
		`{"type":"function","name":"count","strict":false,"parameters":{"type":"object","properties":{"n":{"type":"integer","maximum":12345678901234567890}}}},`+
		`{"type":"function","name":"noargs","strict":false,"parameters":{"type":"object"}}]`)
	var defs []struct {
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(got, &defs); err != nil {
		t.Fatal(err)
	}
	var params []string
	for _, d := range defs {
		params = append(params, string(d.Parameters))
	}
	want := []string{schema, `{"type":"object","properties":{"n":{"type":"integer","maximum":12345678901234567890}}}`, `{"type":"object"}`}
	if d := cmp.Diff(want, params); d != "" {
		t.Errorf("parameters bytes (-want +got):\n%s", d)
	}
	convtest.SameJSON(t, convtest.JSON(t, agtresponses.Tools(nil)), `[]`)
}

// OpenAI refuses the whole request when one function's parameters have
// oneOf, anyOf, allOf, enum or not at the root: they go, the rest stays
// (the root's keys in the order of their names, their values' bytes
// kept); nested ones stay.
func TestToolsRootKeywordsLeftOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, schema, want string }{
		{"root anyOf", `{"type":"object","properties":{"a":{"type":"string"},"b":{"maximum":12345678901234567890}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`,
			`{"properties":{"a":{"type":"string"},"b":{"maximum":12345678901234567890}},"type":"object"}`},
		{"root oneOf, allOf, enum and not, no type", `{"oneOf":[{"required":["a"]}],"allOf":[{}],"enum":[{}],"not":{"required":["b"]}}`, `{"type":"object"}`},
		{"nested anyOf kept", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`},
	} {
		var defs []struct {
			Parameters json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal(convtest.JSON(t, agtresponses.Tools([]run.ToolInfo{{Name: "t", InputSchema: json.RawMessage(tc.schema)}})), &defs); err != nil {
			t.Fatal(err)
		}
		if got := string(defs[0].Parameters); got != tc.want {
			t.Errorf("%s: parameters\ngot  %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// responseJSON is a Responses API response as the API sends it: a
// reasoning item, a message, two function calls around a built-in web
// search call, and a custom tool call. A function_call's "id" is the
// item's, its "call_id" the one its output must name.
const responseJSON = `{
  "id": "resp_01",
  "object": "response",
  "created_at": 1700000000,
  "status": "completed",
  "model": "gpt-5",
  "output": [
    {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": null},
    {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
     "content": [{"type": "output_text", "text": "Reading both.", "annotations": []}]},
    {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_A", "name": "files.read",
     "arguments": "{\"path\": \"a.txt\", \"n\": 12345678901234567890}"},
    {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "agt"}},
    {"id": "ctc_1", "type": "custom_tool_call", "status": "completed", "call_id": "call_C", "name": "grammar", "input": "free text"},
    {"id": "fc_2", "type": "function_call", "status": "completed", "call_id": "call_B", "name": "files.list", "arguments": "{}"}
  ],
  "parallel_tool_calls": true,
  "tool_choice": "auto",
  "tools": [],
  "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}
}`

func TestBatchFromResponseJSON(t *testing.T) {
	t.Parallel()
	var resp responses.Response
	if err := json.Unmarshal([]byte(responseJSON), &resp); err != nil {
		t.Fatal(err)
	}
	got := agtresponses.Batch(resp.ID, "agents/a", resp.Output)
	if got.ID != "resp_01" || got.Agent != "agents/a" {
		t.Errorf("batch ID/agent = %q/%q", got.ID, got.Agent)
	}
	want := []convtest.Call{
		{ID: "call_A", Name: "files.read", Args: `{"path": "a.txt", "n": 12345678901234567890}`},
		{ID: "call_B", Name: "files.list", Args: `{}`},
	}
	if d := cmp.Diff(want, convtest.Calls(got)); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	if b := agtresponses.Batch("b", "agents/a", resp.Output[:2]); len(b.Calls) != 0 {
		t.Errorf("a message and reasoning gave %d calls", len(b.Calls))
	}
}

const (
	// onePixelPNG is a whole 1x1 PNG.
	onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	// jpegStart is the start of a JPEG/JFIF file.
	jpegStart = "/9j/4AAQSkZJRgABAQ=="
)

func TestFunctionCallOutputJSON(t *testing.T) {
	t.Parallel()
	failed := run.Result{CallID: "call_E", Name: "files.read", Code: run.CodeInvalidArguments,
		Message:    "the arguments do not match the tool's input schema",
		Violations: []toolschema.Violation{{Path: "/path", SchemaPath: "/properties/path/type", Message: "must be >= 1"}},
		Content:    json.RawMessage(`[{"type":"text","text":"server's own error text"}]`)}
	notImage := "(16 characters of base64 left out: not a JPEG, PNG, GIF or WebP image in base64 on one line of at most 5 MiB)"
	tests := []struct {
		name string
		res  run.Result
		want string
	}{
		{"text", run.Result{CallID: "call_1", Content: json.RawMessage(`[{"type":"text","text":"hello"},{"type":"text","text":"world"}]`)},
			`{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"hello"},{"type":"input_text","text":"world"}]}`},
		{"png image as a data URL", run.Result{CallID: "call_2", Content: json.RawMessage(`[{"type":"text","text":"a dot"},{"type":"image","data":"` + onePixelPNG + `","mimeType":"image/png"}]`)},
			`{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"a dot"},{"type":"input_image","image_url":"data:image/png;base64,` + onePixelPNG + `"}]}`},
		{"jpeg labelled png goes as jpeg", run.Result{CallID: "call_3", Content: json.RawMessage(`[{"type":"image","data":"` + jpegStart + `","mimeType":"image/png"}]`)},
			`{"type":"function_call_output","call_id":"call_3","output":[{"type":"input_image","image_url":"data:image/jpeg;base64,` + jpegStart + `"}]}`},
		{"text labelled png goes as its JSON", run.Result{CallID: "call_4", Content: json.RawMessage(`[{"type":"image","data":"aGVsbG8gd29ybGQ=","mimeType":"image/png"}]`)},
			`{"type":"function_call_output","call_id":"call_4","output":[{"type":"input_text","text":` + convtest.Quote(t, `{"data":"`+notImage+`","mimeType":"image/png","type":"image"}`) + `}]}`},
		{"audio as its JSON", run.Result{CallID: "call_5", Content: json.RawMessage(`[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]`)},
			`{"type":"function_call_output","call_id":"call_5","output":[{"type":"input_text","text":` + convtest.Quote(t, `{"data":"(8 characters of base64 left out: a function_call_output takes no audio or binary resource)","mimeType":"audio/wav","type":"audio"}`) + `}]}`},
		{"resource link as its JSON", run.Result{CallID: "call_6", Content: json.RawMessage(`[{"type":"resource_link","uri":"file:///a","name":"a"}]`)},
			`{"type":"function_call_output","call_id":"call_6","output":[{"type":"input_text","text":` + convtest.Quote(t, `{"type":"resource_link","uri":"file:///a","name":"a"}`) + `}]}`},
		{"structured with text only", run.Result{CallID: "call_7", Content: json.RawMessage(`[{"type":"text","text":"{\"n\":1}"}]`), Structured: json.RawMessage(`{"n":1}`)},
			`{"type":"function_call_output","call_id":"call_7","output":"{\"n\":1}"}`},
		{"result notice last", run.Result{CallID: "call_8", Content: json.RawMessage(`[{"type":"text","text":"saved"}]`), Structured: json.RawMessage(`{"ok":true}`), Notice: "configuration saved, but load failed: x"},
			`{"type":"function_call_output","call_id":"call_8","output":[{"type":"input_text","text":"saved"},{"type":"input_text","text":"configuration saved, but load failed: x"}]}`},
		{"failed is its ToolError only", failed,
			`{"type":"function_call_output","call_id":"call_E","output":` + convtest.Quote(t, string(failed.ToolError())) + `}`},
		{"failed with an image sends no image", run.Result{CallID: "call_F", Code: run.CodeToolError, Message: "disk full",
			Content: json.RawMessage(`[{"type":"image","data":"` + onePixelPNG + `","mimeType":"image/png"}]`)},
			`{"type":"function_call_output","call_id":"call_F","output":` + convtest.Quote(t, `{"error":{"code":"tool_error","message":"disk full"}}`) + `}`},
		{"host tool content not an array", run.Result{CallID: "call_9", Content: json.RawMessage(`{"x":1}`)},
			`{"type":"function_call_output","call_id":"call_9","output":"{\"x\":1}"}`},
		{"empty", run.Result{CallID: "call_10"},
			`{"type":"function_call_output","call_id":"call_10","output":"[]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			convtest.SameJSON(t, convtest.JSON(t, agtresponses.FunctionCallOutput(tt.res)), tt.want)
		})
	}
}

// An image past MaxImageBase64 goes as its JSON, the base64 left out: it
// neither reaches the API as an image nor fills the model's context.
func TestImageSizeBound(t *testing.T) {
	t.Parallel()
	for _, tc := range convtest.ImagesAtBound("call_big", agtresponses.MaxImageBase64) {
		parts := agtresponses.FunctionCallOutput(tc.Result).Output.OfResponseFunctionCallOutputItemArray
		if len(parts) != 1 {
			t.Fatalf("%s: %d parts", tc.Name, len(parts))
		}
		if got := parts[0].OfInputImage != nil; got != tc.Image {
			t.Errorf("%s: sent as an image %v, want %v", tc.Name, got, tc.Image)
		}
		if tc.Image {
			continue
		}
		text := parts[0].OfInputText.Text
		if left := "(" + strconv.Itoa(len(tc.Data)) + " characters of base64 left out: "; len(text) > 512 || !strings.Contains(text, left) {
			t.Errorf("%s: input_text of %d bytes %.200q, want the base64 left out and said so", tc.Name, len(text), text)
		}
	}
}

// The refresh notice reaches the model once: as a last user message, or
// not at all when a successful output already ends with it.
func TestResultsNotice(t *testing.T) {
	t.Parallel()
	const notice = "configuration saved, but load failed: mount m"
	ok := run.Result{CallID: "call_1", Content: json.RawMessage(`[{"type":"text","text":"a"}]`)}
	denied := run.Result{CallID: "call_2", Code: run.CodePermissionDenied, Message: "denied by policy", Notice: notice}
	withNotice := ok
	withNotice.Notice = notice
	outputs := `{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"a"}]},` +
		`{"type":"function_call_output","call_id":"call_2","output":` + convtest.Quote(t, `{"error":{"code":"permission_denied","message":"denied by policy"}}`) + `}`
	tests := []struct {
		name string
		out  run.Outcome
		want string
	}{
		{"no notice", run.Outcome{Results: []run.Result{ok, denied}}, `[` + outputs + `]`},
		{"notice as a user message, after the outputs", run.Outcome{Results: []run.Result{ok, denied}, Refresh: &run.RefreshReport{Notice: notice}},
			`[` + outputs + `,{"role":"user","content":` + convtest.Quote(t, notice) + `}]`},
		{"notice already in an output", run.Outcome{Results: []run.Result{withNotice}, Refresh: &run.RefreshReport{Notice: notice}},
			`[{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"a"},{"type":"input_text","text":` + convtest.Quote(t, notice) + `}]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			convtest.SameJSON(t, convtest.JSON(t, agtresponses.Results(tt.out)), tt.want)
		})
	}
}
