package agtanthropic_test

import (
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/adapter/agtanthropic"
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
	got := convtest.JSON(t, agtanthropic.Tools(tools))
	convtest.SameJSON(t, got, `[{"name":"files.read","description":"Reads a file.","input_schema":`+schema+`},`+
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
	convtest.SameJSON(t, convtest.JSON(t, agtanthropic.Tools(nil)), `[]`)
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
	want := []convtest.Call{
		{ID: "toolu_A", Name: "files.read", Args: `{"path": "a.txt", "n": 12345678901234567890}`},
		{ID: "toolu_B", Name: "files.list", Args: `{}`},
	}
	if d := cmp.Diff(want, convtest.Calls(got)); d != "" {
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
		Violations: []toolschema.Violation{{Path: "/path", SchemaPath: "/properties/path/type", Message: "must be >= 1"}},
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
			`{"type":"tool_result","tool_use_id":"toolu_3","content":[{"type":"text","text":"{\"data\":\"(4 characters of base64 left out: not a JPEG, PNG, GIF or WebP image in base64 on one line of at most 5 MiB)\",\"mimeType\":\"image/bmp\",\"type\":\"image\"}"}]}`},
		// The API checks an image's bytes against its media type and
		// rejects the whole request on a mismatch or bad base64, so the
		// history that holds it can never be sent again: the type sent is
		// the one the bytes show, and data that is no image the API takes
		// goes as its JSON.
		{"image labelled png, bytes jpeg", run.Result{CallID: "toolu_j", Content: json.RawMessage(`[{"type":"image","data":"/9j/4AAQSkZJRgABAQ==","mimeType":"image/png"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_j","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQSkZJRgABAQ=="}}]}`},
		{"image data not base64", run.Result{CallID: "toolu_b", Content: json.RawMessage(`[{"type":"image","data":"not base64!","mimeType":"image/png"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_b","content":[{"type":"text","text":"{\"data\":\"(11 characters of base64 left out: not a JPEG, PNG, GIF or WebP image in base64 on one line of at most 5 MiB)\",\"mimeType\":\"image/png\",\"type\":\"image\"}"}]}`},
		{"image labelled png, bytes text", run.Result{CallID: "toolu_t", Content: json.RawMessage(`[{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_t","content":[{"type":"text","text":"{\"data\":\"(8 characters of base64 left out: not a JPEG, PNG, GIF or WebP image in base64 on one line of at most 5 MiB)\",\"mimeType\":\"image/png\",\"type\":\"image\"}"}]}`},
		// The API refuses a text block that is empty or only whitespace
		// (a tool that answers "" is common): such blocks are left out.
		{"empty and blank text left out", run.Result{CallID: "toolu_e", Content: json.RawMessage(`[{"type":"text","text":""},{"type":"text","text":"kept"},{"type":"text","text":" \n\t"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_e","content":[{"type":"text","text":"kept"}]}`},
		{"only empty text", run.Result{CallID: "toolu_z", Content: json.RawMessage(`[{"type":"text","text":""}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_z"}`},
		// The model hears no audio in base64 text, and a long one would
		// fill its context window: the base64 is left out, and said so.
		{"audio as its JSON, the base64 left out", run.Result{CallID: "toolu_a", Content: json.RawMessage(`[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_a","content":[{"type":"text","text":"{\"data\":\"(8 characters of base64 left out: a tool_result takes no audio or binary resource)\",\"mimeType\":\"audio/wav\",\"type\":\"audio\"}"}]}`},
		{"resource link as its JSON", run.Result{CallID: "toolu_4", Content: json.RawMessage(`[{"type":"resource_link","uri":"file:///a","name":"a"}]`)},
			`{"type":"tool_result","tool_use_id":"toolu_4","content":[{"type":"text","text":"{\"type\":\"resource_link\",\"uri\":\"file:///a\",\"name\":\"a\"}"}]}`},
		{"structured with text only", run.Result{CallID: "toolu_5", Content: json.RawMessage(`[{"type":"text","text":"{\"n\":1}"}]`), Structured: json.RawMessage(`{"n":1}`)},
			`{"type":"tool_result","tool_use_id":"toolu_5","content":[{"type":"text","text":"{\"n\":1}"}]}`},
		{"result notice", run.Result{CallID: "toolu_6", Content: json.RawMessage(`[{"type":"text","text":"saved"}]`), Structured: json.RawMessage(`{"ok":true}`), Notice: "configuration saved, but load failed: x"},
			`{"type":"tool_result","tool_use_id":"toolu_6","content":[{"type":"text","text":"saved"},{"type":"text","text":"configuration saved, but load failed: x"}]}`},
		{"failed", failed,
			`{"type":"tool_result","tool_use_id":"toolu_E","is_error":true,"content":[{"type":"text","text":` + convtest.Quote(t, string(failed.ToolError())) + `}]}`},
		{"host tool content not an array", run.Result{CallID: "toolu_7", Content: json.RawMessage(`{"x":1}`)},
			`{"type":"tool_result","tool_use_id":"toolu_7","content":[{"type":"text","text":"{\"x\":1}"}]}`},
		{"empty", run.Result{CallID: "toolu_8"},
			`{"type":"tool_result","tool_use_id":"toolu_8"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			convtest.SameJSON(t, convtest.JSON(t, agtanthropic.ToolResult(tt.res)), tt.want)
		})
	}
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
	convtest.SameJSON(t, []byte(tr.Content[0].OfText.Text), `{"error":{"code":"tool_error","message":"disk full"}}`)
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
	convtest.SameJSON(t, convtest.JSON(t, msg), `{"role":"user","content":[
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
	convtest.SameJSON(t, convtest.JSON(t, agtanthropic.Results(out)), `[{"type":"tool_result","tool_use_id":"toolu_W","content":[
		{"type":"text","text":"saved"},{"type":"text","text":`+string(convtest.JSON(t, notice))+`}]}]`)

	failed := run.Result{CallID: "toolu_W", Code: run.CodeToolError, Message: "disk full", Notice: notice}
	out.Results = []run.Result{failed}
	if blocks := agtanthropic.Results(out); len(blocks) != 2 || blocks[1].OfText == nil || blocks[1].OfText.Text != notice {
		t.Errorf("a failed result with the notice: %s, want the notice after it", convtest.JSON(t, blocks))
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
	raw := convtest.JSON(t, params)
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
			t.Fatalf("block is not a tool_result: %s", convtest.JSON(t, b))
		}
		ids = append(ids, tr.ToolUseID)
		if len(tr.Content) != 1 || tr.Content[0].OfImage == nil || tr.Content[0].OfImage.Source.OfBase64 == nil {
			t.Fatalf("content is not one image: %s", convtest.JSON(t, tr))
		}
		src := tr.Content[0].OfImage.Source.OfBase64
		if src.Data != "R0lGODlh" || src.MediaType != sdk.Base64ImageSourceMediaTypeImageGIF {
			t.Errorf("image = %s", convtest.JSON(t, src))
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

// The API refuses the whole request when one tool's input_schema has no
// "type": "object" at its root, so one server's tool would stop every
// turn of the conversation. A root without "type" gets it, the rest of
// its bytes kept; a root that is not an object (the schema true) is
// {"type":"object"}, as for a tool without a schema. The Run still checks
// the arguments against the server's own schema.
func TestToolsSchemaRootIsTypeObject(t *testing.T) {
	t.Parallel()
	for _, tc := range append(convtest.SchemaRoots(), []convtest.SchemaRoot{
		// The API refuses oneOf, anyOf and allOf at the root: they go,
		// the rest stays (the root's keys in order of their names).
		{Name: "root anyOf", Schema: `{"type":"object","properties":{"a":{"type":"string"},"b":{"maximum":12345678901234567890}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`,
			Want: `{"properties":{"a":{"type":"string"},"b":{"maximum":12345678901234567890}},"type":"object"}`},
		{Name: "root oneOf and allOf, no type", Schema: `{"oneOf":[{"required":["a"]}],"allOf":[{"properties":{}}]}`, Want: `{"type":"object"}`},
	}...) {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var defs []struct {
				InputSchema json.RawMessage `json:"input_schema"`
			}
			if err := json.Unmarshal(convtest.JSON(t, agtanthropic.Tools([]run.ToolInfo{{Name: "t", InputSchema: json.RawMessage(tc.Schema)}})), &defs); err != nil {
				t.Fatal(err)
			}
			if got := string(defs[0].InputSchema); got != tc.Want {
				t.Errorf("input_schema\ngot  %s\nwant %s", got, tc.Want)
			}
		})
	}
}

// The API refuses an image of more than 5 MiB of base64, and the whole
// request with it: MaxImageBase64 is the largest image block sent; a
// larger image goes as its JSON, the base64 left out.
func TestImageSizeBound(t *testing.T) {
	t.Parallel()
	for _, tc := range convtest.ImagesAtBound("toolu_big", agtanthropic.MaxImageBase64) {
		tr := agtanthropic.ToolResult(tc.Result)
		if len(tr.Content) != 1 {
			t.Fatalf("%s: %d blocks", tc.Name, len(tr.Content))
		}
		if got := tr.Content[0].OfImage != nil; got != tc.Image {
			t.Errorf("%s: sent as an image %v, want %v", tc.Name, got, tc.Image)
		}
		if !tc.Image && len(tr.Content[0].OfText.Text) > 512 {
			t.Errorf("%s: a text block of %d bytes, want the base64 left out", tc.Name, len(tr.Content[0].OfText.Text))
		}
	}
}
