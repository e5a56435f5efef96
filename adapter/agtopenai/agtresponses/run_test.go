package agtresponses_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/adapter/agtopenai/agtresponses"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The part of a Responses API request a stand-in server reads, decoded
// from the wire JSON rather than through the SDK's types.
type wireRequest struct {
	PreviousResponseID string `json:"previous_response_id"`
	Input              []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		CallID  string          `json:"call_id"`
		Output  json.RawMessage `json:"output"`
		Content json.RawMessage `json:"content"`
	} `json:"input"`
	Tools []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Strict     *bool           `json:"strict"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

// TestRunLoop is one full step against a real Run: function tools from
// Run.Tools in a request, a response JSON with function_call items,
// Execute, and the next request's input, both with previous_response_id
// and with the output items sent back by the host. The batch holds a
// success, an image, a schema failure, a denial and a self-mount whose
// load fails.
//
// The Run is from a Host over a bbolt store in t.TempDir(): the agent
// mounts an in-process fake MCP server (with its content tool) and may
// manage resources; runtest.Broken is registered, not mounted, and never
// starts; the policy denies deleting notes.
func TestRunLoop(t *testing.T) {
	t.Parallel()
	dial := runtest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultContentKinds}})
	r := runtest.HostRun(t, runtest.Repository(t, resource.CapabilityResourceManagement), dial, run.Options{
		Permission: policy.Rules{Deny: []string{"mcp__notes__note_delete"}, Allow: []string{"mcp__*", "framework:*"}},
	})
	tools := r.Tools()
	first := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("tidy the notes", responses.EasyInputMessageRoleUser)}

	// Each function carries the schema bytes the Run listed, as
	// encoding/json writes them (compacted, <, > and & escaped), and
	// strict false.
	var sent wireRequest
	decode(t, request(first, "", tools), &sent)
	if len(sent.Tools) != len(tools) {
		t.Fatalf("%d functions for %d tools", len(sent.Tools), len(tools))
	}
	for i, ti := range tools {
		if f := sent.Tools[i]; f.Type != "function" || f.Name != ti.Name || f.Strict == nil || *f.Strict || string(f.Parameters) != string(convtest.JSON(t, ti.InputSchema)) {
			t.Errorf("tool %s: sent %s %s strict %v with %s, listed %s", ti.Name, f.Type, f.Name, f.Strict, f.Parameters, ti.InputSchema)
		}
	}

	const resp = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[
		{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"opaque"},
		{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_echo","name":"mcp__notes__echo","arguments":"{\"text\":\"hi\"}"},
		{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_image","name":"mcp__notes__content","arguments":"{\"kind\":\"image\"}"},
		{"id":"fc_3","type":"function_call","status":"completed","call_id":"call_bad","name":"mcp__notes__search","arguments":"{\"query\":\"\",\"limit\":0}"},
		{"id":"fc_4","type":"function_call","status":"completed","call_id":"call_denied","name":"mcp__notes__note_delete","arguments":"{\"id\":\"n1\",\"caller\":\"ada\"}"},
		{"id":"fc_5","type":"function_call","status":"completed","call_id":"call_mount","name":"resource_write","arguments":"{\"kind\":\"agent\",\"reference\":\"writer\",\"add\":{\"mcps\":[\"broken\"]}}"}]}`
	var res responses.Response
	if err := json.Unmarshal([]byte(resp), &res); err != nil {
		t.Fatal(err)
	}
	out, err := r.Execute(context.Background(), agtresponses.Batch(res.ID, runtest.Agent, res.Output))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var codes []run.Code
	for _, res := range out.Results {
		codes = append(codes, res.Code)
	}
	if d := cmp.Diff([]run.Code{"", "", run.CodeInvalidArguments, run.CodePermissionDenied, ""}, codes); d != "" {
		t.Fatalf("codes (-want +got):\n%s", d)
	}
	notice := out.Notice()
	if !strings.HasPrefix(notice, "configuration saved, but load failed: ") || !strings.Contains(notice, string(runtest.Broken)) {
		t.Fatalf("notice = %q, want a load failure of %s", notice, runtest.Broken)
	}

	// With previous_response_id: the input is one output per call, in
	// order; the notice once, on the write that caused it, not again as
	// a user message.
	var next wireRequest
	decode(t, request(agtresponses.Results(out), res.ID, r.Tools()), &next)
	if next.PreviousResponseID != "resp_1" || len(next.Tools) != len(tools) {
		t.Errorf("previous_response_id %q, %d tools; want resp_1 and the %d of before", next.PreviousResponseID, len(next.Tools), len(tools))
	}
	type wireOutput struct{ CallID, Output string }
	var got []wireOutput
	for _, in := range next.Input {
		if in.Type != "function_call_output" {
			t.Fatalf("a %q %q item in the input", in.Type, in.Role)
		}
		got = append(got, wireOutput{in.CallID, string(in.Output)})
	}
	want := []wireOutput{
		{"call_echo", `[{"text":"hi","type":"input_text"}]`},
		{"call_image", `[{"image_url":"data:image/png;base64,iVBORw0KGgo=","type":"input_image"}]`},
		{"call_bad", convtest.Quote(t, string(out.Results[2].ToolError()))},
		{"call_denied", convtest.Quote(t, string(out.Results[3].ToolError()))},
		{"call_mount", string(convtest.JSON(t, []map[string]string{{"text": mountText(t, out.Results[4].Content), "type": "input_text"}, {"text": notice, "type": "input_text"}}))},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("next request's input (-want +got):\n%s", d)
	}

	// Without previous_response_id the host sends the output items back
	// as they came, then the Results: each function_call precedes its
	// output, the reasoning item kept.
	history := append(responses.ResponseInputParam{}, first...)
	for _, item := range res.Output {
		history = append(history, param.Override[responses.ResponseInputItemUnionParam](json.RawMessage(item.RawJSON())))
	}
	history = append(history, agtresponses.Results(out)...)
	var stateless wireRequest
	decode(t, request(history, "", r.Tools()), &stateless)
	var order []string
	for _, in := range stateless.Input {
		kind := in.Type
		if kind == "" { // an easy input message leaves its type out
			kind = in.Role
		}
		order = append(order, kind+" "+in.CallID)
	}
	wantOrder := []string{"user ", "reasoning ",
		"function_call call_echo", "function_call call_image", "function_call call_bad", "function_call call_denied", "function_call call_mount",
		"function_call_output call_echo", "function_call_output call_image", "function_call_output call_bad", "function_call_output call_denied", "function_call_output call_mount"}
	if d := cmp.Diff(wantOrder, order); d != "" {
		t.Errorf("stateless input (-want +got):\n%s", d)
	}
}

// request is the Responses API request of one step.
func request(input responses.ResponseInputParam, previous string, tools []run.ToolInfo) responses.ResponseNewParams {
	p := responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Tools: agtresponses.Tools(tools)}
	if previous != "" {
		p.PreviousResponseID = param.NewOpt(previous)
	}
	return p
}

// mountText is the text of the single text block of a write's content.
func mountText(t *testing.T, content json.RawMessage) string {
	t.Helper()
	var blocks []struct{ Text string }
	if err := json.Unmarshal(content, &blocks); err != nil || len(blocks) != 1 {
		t.Fatalf("the write's content is %s, want one text block", content)
	}
	return blocks[0].Text
}

// decode marshals v through the SDK's encoders and decodes the JSON into
// into.
func decode(t *testing.T, v, into any) {
	t.Helper()
	if err := json.Unmarshal(convtest.JSON(t, v), into); err != nil {
		t.Fatal(err)
	}
}
