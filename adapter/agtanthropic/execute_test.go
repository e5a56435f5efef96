package agtanthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/adapter/agtanthropic"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/run"
)

// eras are the protocol eras every test touching a server runs in.
var eras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraDual}

// featuresRun is a Run whose agent mounts the fake server with its client
// feature tools (sample among them), in era, with opts.
func featuresRun(t *testing.T, era mcptest.Era, opts run.Options) *run.Run {
	t.Helper()
	opts.Permission = policy.AutoAllow()
	return runtest.New(t, runtest.Repository(t), runtest.Dial(&mcptest.ServerOptions{
		Era: era, Faults: []mcptest.Fault{mcptest.FaultClientFeatures},
	}), opts)
}

// toolName is the Run's name of the fake server's tool.
func toolName(t *testing.T, r *run.Run, tool string) string {
	t.Helper()
	for _, ti := range r.Tools() {
		if strings.HasSuffix(ti.Name, "__"+tool) {
			return ti.Name
		}
	}
	t.Fatalf("no tool %s among %d", tool, len(r.Tools()))
	return ""
}

// toolUseMessage is a response whose tool_use blocks call name with
// each input, IDs toolu_0, toolu_1, ...
func toolUseMessage(t *testing.T, name string, inputs ...string) *sdk.Message {
	t.Helper()
	content := []map[string]any{{"type": "text", "text": "calling"}}
	for i, in := range inputs {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", i), "name": name, "input": json.RawMessage(in)})
	}
	var msg sdk.Message
	if err := json.Unmarshal(convtest.JSON(t, map[string]any{
		"id": "msg_x", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use", "content": content,
	}), &msg); err != nil {
		t.Fatal(err)
	}
	return &msg
}

// answered is the reply's tool_results: call ID, is_error, and the text
// of each.
type answered struct {
	ID      string
	IsError bool
	Text    string
}

func replyResults(t *testing.T, reply sdk.MessageParam) []answered {
	t.Helper()
	var back apiMessage
	if err := json.Unmarshal(convtest.JSON(t, reply), &back); err != nil {
		t.Fatal(err)
	}
	if back.Role != "user" {
		t.Fatalf("reply role %q, want user", back.Role)
	}
	var out []answered
	for _, b := range back.Content {
		if b.Type != "tool_result" {
			t.Fatalf("reply block %q, want tool_result", b.Type)
		}
		a := answered{ID: b.ToolUseID, IsError: b.IsError}
		for _, c := range b.Content {
			a.Text += c.Text
		}
		out = append(out, a)
	}
	return out
}

// TestExecute runs a response's tool_use blocks and answers each one.
func TestExecute(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			r := featuresRun(t, era, run.Options{})
			echo := toolName(t, r, mcptest.ToolEcho)
			out, reply, err := agtanthropic.Execute(context.Background(), r, toolUseMessage(t, echo, `{"text":"one"}`, `{"text":7}`))
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if len(out.Results) != 2 || out.Results[0].Failed() || out.Results[1].Code != run.CodeInvalidArguments {
				t.Fatalf("outcome %+v", out.Results)
			}
			got := replyResults(t, reply)
			want := []answered{
				{ID: "toolu_0", Text: "one"},
				{ID: "toolu_1", IsError: true, Text: string(out.Results[1].ToolError())},
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("reply (-want +got):\n%s", d)
			}
		})
	}
}

// A batch the Run rejects whole is not an error: the reply answers every
// tool_use with the rejection.
func TestExecuteRejectedBatch(t *testing.T) {
	t.Parallel()
	r := featuresRun(t, mcptest.EraDual, run.Options{})
	msg := toolUseMessage(t, "mcp__nowhere__nothing", `{}`, `{}`)
	out, reply, err := agtanthropic.Execute(context.Background(), r, msg)
	if err != nil {
		t.Fatalf("Execute: %v, want nil for a rejected batch", err)
	}
	// The same batch through the Run says it was rejected.
	if _, err := r.Execute(context.Background(), agtanthropic.Batch(msg.ID, r.Agent(), msg)); !errors.As(err, new(*run.BatchError)) {
		t.Fatalf("the batch was not rejected: %v", err)
	}
	got := replyResults(t, reply)
	if len(got) != 2 || len(out.Results) != 2 {
		t.Fatalf("%d tool_results and %d results for 2 tool_use", len(got), len(out.Results))
	}
	for i, a := range got {
		if a.ID != fmt.Sprintf("toolu_%d", i) || !a.IsError || !strings.Contains(a.Text, `"code":"unknown_tool"`) {
			t.Errorf("tool_result %d = %+v, want an unknown_tool error", i, a)
		}
	}
}

// A closed Run stops the loop (run.ErrClosed), and the reply still
// answers every tool_use.
func TestExecuteClosedRun(t *testing.T) {
	t.Parallel()
	r := featuresRun(t, mcptest.EraDual, run.Options{})
	echo := toolName(t, r, mcptest.ToolEcho)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, reply, err := agtanthropic.Execute(context.Background(), r, toolUseMessage(t, echo, `{"text":"a"}`, `{"text":"b"}`))
	if !errors.Is(err, run.ErrClosed) {
		t.Fatalf("Execute on a closed Run: %v, want run.ErrClosed", err)
	}
	got := replyResults(t, reply)
	if len(got) != 2 {
		t.Fatalf("%d tool_results for 2 tool_use", len(got))
	}
	for i, a := range got {
		if a.ID != fmt.Sprintf("toolu_%d", i) || !a.IsError || !strings.Contains(a.Text, `"code":"unavailable"`) {
			t.Errorf("tool_result %d = %+v, want an unavailable error", i, a)
		}
	}
}

// A response without tool_use runs nothing: no results, nothing to send.
func TestExecuteNoToolUse(t *testing.T) {
	t.Parallel()
	var calls int
	var mu sync.Mutex
	r := featuresRun(t, mcptest.EraDual, run.Options{
		WrapExecute: func(ctx context.Context, b run.Batch, execute func(context.Context) (run.Outcome, error)) (run.Outcome, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return execute(ctx)
		},
	})
	var done sdk.Message
	if err := json.Unmarshal([]byte(`{"id":"msg_d","type":"message","role":"assistant","model":"m","stop_reason":"end_turn","content":[{"type":"text","text":"Done."}]}`), &done); err != nil {
		t.Fatal(err)
	}
	for name, msg := range map[string]*sdk.Message{"text only": &done, "nil": nil} {
		out, reply, err := agtanthropic.Execute(context.Background(), r, msg)
		if err != nil || len(out.Results) != 0 || out.Refresh != nil {
			t.Errorf("%s: Execute = %+v, %v; want no results and no error", name, out, err)
		}
		if reply.OfUser != nil || reply.OfAssistant != nil || reply.OfSystem != nil {
			t.Errorf("%s: reply %+v, want the zero MessageParam", name, reply)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 0 {
		t.Errorf("the Run executed %d batches, want none", calls)
	}
}
