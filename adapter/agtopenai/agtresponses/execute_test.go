package agtresponses_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/agtopenai/agtresponses"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/run"
)

// functionCalls is a response whose output calls the functions named,
// each with arguments args, their call IDs call_0, call_1, …, after a
// reasoning item.
func functionCalls(t *testing.T, args string, names ...string) *responses.Response {
	t.Helper()
	items := []map[string]any{{"type": "reasoning", "id": "rs_1", "summary": []any{}}}
	for i, n := range names {
		items = append(items, map[string]any{"type": "function_call", "id": "fc_" + strconv.Itoa(i), "call_id": "call_" + strconv.Itoa(i),
			"name": n, "arguments": args, "status": "completed"})
	}
	var resp responses.Response
	if err := json.Unmarshal([]byte(response("completed", "null", string(convtest.JSON(t, items)))), &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

// replyCalls are the call IDs the reply's function_call_output items
// answer, in order ("" for another item).
func replyCalls(reply []responses.ResponseInputItemUnionParam) []string {
	var ids []string
	for _, it := range reply {
		id := ""
		if it.OfFunctionCallOutput != nil {
			id = it.OfFunctionCallOutput.CallID.Value
		}
		ids = append(ids, id)
	}
	return ids
}

// Execute in both eras: a batch runs and is answered; a batch the Run
// rejects is answered too, with no error; a response without function
// calls runs nothing; a closed Run is an error, with every call still
// answered.
func TestExecute(t *testing.T) {
	t.Parallel()
	for _, e := range convtest.Eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := convtest.FeaturesRun(t, e, run.Options{})
			ctx := context.Background()

			out, reply, err := agtresponses.Execute(ctx, r, functionCalls(t, `{"text":"hi"}`, "mcp__notes__echo", "mcp__notes__echo"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{"call_0", "call_1"}, replyCalls(reply)); d != "" || out.Results[0].Failed() {
				t.Errorf("a batch: %s %s; outputs (-want +got):\n%s", out.Results[0].Code, out.Results[0].Message, d)
			}
			convtest.SameJSON(t, convtest.JSON(t, reply[0]), `{"type":"function_call_output","call_id":"call_0","output":[{"type":"input_text","text":"hi"}]}`)

			out, reply, err = agtresponses.Execute(ctx, r, functionCalls(t, `{"text":"hi"}`, "mcp__notes__echo", "mcp__notes__nope"))
			if err != nil {
				t.Fatalf("a rejected batch is an error: %v", err)
			}
			if d := cmp.Diff([]string{"call_0", "call_1"}, replyCalls(reply)); d != "" {
				t.Errorf("a rejected batch's outputs (-want +got):\n%s", d)
			}
			for _, res := range out.Results {
				if !res.Failed() {
					t.Errorf("a rejected batch ran %s", res.CallID)
				}
			}
			if out.Results[1].Code != run.CodeUnknownTool {
				t.Errorf("the unknown call: %s", out.Results[1].Code)
			}

			for name, resp := range map[string]*responses.Response{"no calls": functionCalls(t, ""), "nil": nil} {
				out, reply, err := agtresponses.Execute(ctx, r, resp)
				if err != nil || reply != nil || len(out.Results) != 0 {
					t.Errorf("%s: %d results, reply %v, error %v; want nothing", name, len(out.Results), reply, err)
				}
			}

			ended, cancel := context.WithCancel(ctx)
			cancel()
			_, reply, err = agtresponses.Execute(ended, r, functionCalls(t, `{"text":"hi"}`, "mcp__notes__echo"))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("an ended context: %v, want context.Canceled", err)
			}
			if d := cmp.Diff([]string{"call_0"}, replyCalls(reply)); d != "" {
				t.Errorf("an ended context's replies (-want +got):\n%s", d)
			}

			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			_, reply, err = agtresponses.Execute(ctx, r, functionCalls(t, `{"text":"hi"}`, "mcp__notes__echo"))
			if !errors.Is(err, run.ErrClosed) {
				t.Errorf("a closed Run: %v, want run.ErrClosed", err)
			}
			if d := cmp.Diff([]string{"call_0"}, replyCalls(reply)); d != "" {
				t.Errorf("a closed Run's outputs (-want +got):\n%s", d)
			}
		})
	}
}
