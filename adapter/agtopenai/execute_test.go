package agtopenai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"

	"github.com/agtsdk/agt/adapter/agtopenai"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/run"
)

// toolCalls is a completion whose message calls the functions named, each
// with arguments args, its call IDs call_0, call_1, …
func toolCalls(t *testing.T, args string, names ...string) *sdk.ChatCompletion {
	t.Helper()
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	var calls []call
	for i, n := range names {
		calls = append(calls, call{ID: "call_" + strconv.Itoa(i), Type: "function", Function: fn{n, args}})
	}
	msg := map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
	var c sdk.ChatCompletion
	if err := json.Unmarshal([]byte(completion("tool_calls", string(convtest.JSON(t, msg)))), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// replyCalls are the tool_call_ids the reply's tool messages answer, in
// order ("" for a message that is not a tool message).
func replyCalls(reply []sdk.ChatCompletionMessageParamUnion) []string {
	var ids []string
	for _, m := range reply {
		id := ""
		if m.OfTool != nil {
			id = m.OfTool.ToolCallID
		}
		ids = append(ids, id)
	}
	return ids
}

// Execute in both eras: a batch runs and is answered; a batch the Run
// rejects is answered too, with no error; a completion without function
// calls runs nothing; a closed Run is an error, with every call still
// answered.
func TestExecute(t *testing.T) {
	t.Parallel()
	for _, e := range convtest.Eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := convtest.FeaturesRun(t, e, run.Options{})
			ctx := context.Background()

			out, reply, err := agtopenai.Execute(ctx, r, toolCalls(t, `{"text":"hi"}`, "mcp__notes__echo", "mcp__notes__echo"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{"call_0", "call_1"}, replyCalls(reply)); d != "" || out.Results[0].Failed() {
				t.Errorf("a batch: %s %s; tool messages (-want +got):\n%s", out.Results[0].Code, out.Results[0].Message, d)
			}
			var msg struct{ Content json.RawMessage }
			decode(t, reply[0], &msg)
			if got := textParts(t, msg.Content); !cmp.Equal(got, []string{"hi"}) {
				t.Errorf("the echo's tool message: %q", got)
			}

			out, reply, err = agtopenai.Execute(ctx, r, toolCalls(t, `{"text":"hi"}`, "mcp__notes__echo", "mcp__notes__nope"))
			if err != nil {
				t.Fatalf("a rejected batch is an error: %v", err)
			}
			if d := cmp.Diff([]string{"call_0", "call_1"}, replyCalls(reply)); d != "" {
				t.Errorf("a rejected batch's tool messages (-want +got):\n%s", d)
			}
			for _, res := range out.Results {
				if !res.Failed() {
					t.Errorf("a rejected batch ran %s", res.CallID)
				}
			}
			if out.Results[1].Code != run.CodeUnknownTool {
				t.Errorf("the unknown call: %s", out.Results[1].Code)
			}

			none := toolCalls(t, "")
			for name, c := range map[string]*sdk.ChatCompletion{"no calls": none, "no choices": {ID: "x"}, "nil": nil} {
				out, reply, err := agtopenai.Execute(ctx, r, c)
				if err != nil || reply != nil || len(out.Results) != 0 {
					t.Errorf("%s: %d results, reply %v, error %v; want nothing", name, len(out.Results), reply, err)
				}
			}

			ended, cancel := context.WithCancel(ctx)
			cancel()
			_, reply, err = agtopenai.Execute(ended, r, toolCalls(t, `{"text":"hi"}`, "mcp__notes__echo"))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("an ended context: %v, want context.Canceled", err)
			}
			if d := cmp.Diff([]string{"call_0"}, replyCalls(reply)); d != "" {
				t.Errorf("an ended context's replies (-want +got):\n%s", d)
			}

			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			_, reply, err = agtopenai.Execute(ctx, r, toolCalls(t, `{"text":"hi"}`, "mcp__notes__echo"))
			if !errors.Is(err, run.ErrClosed) {
				t.Errorf("a closed Run: %v, want run.ErrClosed", err)
			}
			if d := cmp.Diff([]string{"call_0"}, replyCalls(reply)); d != "" {
				t.Errorf("a closed Run's tool messages (-want +got):\n%s", d)
			}
		})
	}
}
