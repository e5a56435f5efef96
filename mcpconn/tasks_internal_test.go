package mcpconn

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Issue 26 item 1: what a server says of a task is read by one set of
// rules in both eras, and bounded.
func TestReadTask(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxTaskIDBytes+1)
	for _, tc := range []struct {
		name string
		raw  string
		want *taskView
		err  string // a part of the error; "" for none
	}{
		{"legacy create", `{"task":{"taskId":"t1","status":"working","statusMessage":"go","ttl":60000,"pollInterval":500,"createdAt":"x"}}`,
			&taskView{id: "t1", status: TaskWorking, message: "go", ttl: time.Minute, poll: 500 * time.Millisecond}, ""},
		{"modern create", `{"resultType":"task","taskId":"t2","status":"working","ttlMs":null,"pollIntervalMs":1000}`,
			&taskView{id: "t2", status: TaskWorking, poll: time.Second}, ""},
		{"modern completed", `{"resultType":"complete","taskId":"t3","status":"completed","result":{"content":[]}}`,
			&taskView{id: "t3", status: TaskCompleted, result: json.RawMessage(`{"content":[]}`)}, ""},
		{"modern failed", `{"taskId":"t4","status":"failed","error":{"code":-32000,"message":"no"}}`,
			&taskView{id: "t4", status: TaskFailed, fault: json.RawMessage(`{"code":-32000,"message":"no"}`)}, ""},
		{"control characters in the message", `{"taskId":"t5","status":"working","statusMessage":"a\u001b[2Jb"}`,
			&taskView{id: "t5", status: TaskWorking, message: "a\uFFFD[2Jb"}, ""},
		{"no id", `{"status":"working"}`, nil, "no taskId"},
		{"empty id", `{"taskId":"","status":"working"}`, nil, "non-empty string"},
		{"id too long", `{"taskId":"` + long + `","status":"working"}`, nil, "MaxTaskIDBytes"},
		{"unknown status", `{"taskId":"t","status":"paused"}`, nil, "status is not one MCP defines"},
		{"negative ttl", `{"taskId":"t","status":"working","ttlMs":-1}`, nil, "non-negative integer"},
		{"fractional poll", `{"taskId":"t","status":"working","pollIntervalMs":1.5}`, nil, "non-negative integer"},
		{"not an object", `[1]`, nil, "not an object"},
		{"bad input requests", `{"taskId":"t","status":"input_required","inputRequests":[1]}`, nil, "inputRequests is not an object"},
	} {
		got, err := readTask(json.RawMessage(tc.raw))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want one with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(taskView{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestReadTaskInputRequests(t *testing.T) {
	t.Parallel()
	got, err := readTask(json.RawMessage(`{"taskId":"t","status":"input_required","inputRequests":{
		"b":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}},
		"a":{"method":"roots/list"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.input == nil || len(got.input.requests) != 2 || got.input.requests[0].key != "a" || got.input.requests[1].method != MethodElicit {
		t.Errorf("input = %+v, want the two requests in key order", got.input)
	}
}

func TestTaskAnswerRead(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		`{"resultType":"task","taskId":"t"}`:          false,
		`{"task":{"taskId":"t"}}`:                     false,
		`{"task":{"taskId":"t"},"content":[]}`:        true, // a tool result with a member of its own
		`{"content":[{"type":"text","text":"task"}]}`: true,
		`{"resultType":"complete","content":[]}`:      true,
		`{"task":"t","content":[]}`:                   true,
	} {
		_, err := decodeCallResult(json.RawMessage(raw))
		if got := !errors.Is(err, errTaskAnswer); got != want {
			t.Errorf("decodeCallResult(%s): a result = %v (%v), want %v", raw, got, err, want)
		}
	}
}

// The wire layer sends a task's request in place of the go-sdk's
// tools/call: its method, the go-sdk's _meta and the task's params only.
func TestTaskWire(t *testing.T) {
	t.Parallel()
	tw := &taskWire{method: methodTaskGet, set: map[string]json.RawMessage{"taskId": json.RawMessage(`"t1"`)}, name: "t1"}
	req := &jsonrpc.Request{Method: methodCallTool, Params: json.RawMessage(`{"name":"","arguments":{},"_meta":{"k":1}}`)}
	out, err := tw.request(req)
	if err != nil {
		t.Fatal(err)
	}
	if out.Method != methodTaskGet || string(out.Params) != `{"_meta":{"k":1},"taskId":"t1"}` || req.Method != methodCallTool {
		t.Errorf("rewritten = %s %s (original %s)", out.Method, out.Params, req.Method)
	}
	keep := &taskWire{keep: true, set: map[string]json.RawMessage{"task": json.RawMessage(`{"ttl":1000}`)}}
	out, err = keep.request(req)
	if err != nil {
		t.Fatal(err)
	}
	if out.Method != methodCallTool || string(out.Params) != `{"_meta":{"k":1},"arguments":{},"name":"","task":{"ttl":1000}}` {
		t.Errorf("a call asked as a task = %s %s", out.Method, out.Params)
	}
}

func TestTaskPollInterval(t *testing.T) {
	t.Parallel()
	o := (&Limits{}).resolved().tasks()
	for suggested, want := range map[time.Duration]time.Duration{
		0:                      2 * defaultMinTaskPoll,
		time.Millisecond:       defaultMinTaskPoll,
		5 * time.Second:        5 * time.Second,
		time.Hour:              defaultMaxTaskPoll,
		defaultMaxTaskPoll + 1: defaultMaxTaskPoll,
	} {
		if got := o.interval(suggested); got != want {
			t.Errorf("interval(%v) = %v, want %v", suggested, got, want)
		}
	}
	if o := (&Limits{MinTaskPollInterval: time.Minute, MaxTaskPollInterval: time.Second}).resolved().tasks(); o.interval(0) != time.Minute {
		t.Errorf("a maximum below the minimum: interval = %v, want the minimum", o.interval(0))
	}
}

func TestTaskFault(t *testing.T) {
	t.Parallel()
	s := &Session{}
	err := s.taskFault("t", json.RawMessage(`{"code":-32000,"message":"the task failed","data":{"x":1}}`))
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != -32000 || wire.Message != "the task failed" || string(wire.Data) != `{"x":1}` {
		t.Errorf("taskFault = %v, want the task's JSON-RPC error", err)
	}
	if err := s.taskFault("t", json.RawMessage(`{"message":"no code"}`)); !errors.Is(err, ErrBadResult) {
		t.Errorf("a failed task without a code = %v, want ErrBadResult", err)
	}
}

// A 2025-11-25 call sent as a task keeps its arguments whole over
// streamable HTTP, however large: the body is the client's own.
func TestTaskWireLargeHTTPBody(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", maxCapturedMessage+1)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","arguments":{"text":"` + big + `"}}}`
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	tw := &taskWire{keep: true, set: map[string]json.RawMessage{"task": json.RawMessage(`{"ttl":1000}`)}}
	out, err := tw.httpRequest(req)
	if err != nil {
		t.Fatalf("httpRequest: %v", err)
	}
	raw, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Params struct {
			Arguments struct{ Text string } `json:"arguments"`
			Task      json.RawMessage       `json:"task"`
		} `json:"params"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.Params.Arguments.Text != big || string(msg.Params.Task) != `{"ttl":1000}` || out.ContentLength != int64(len(raw)) {
		t.Errorf("rewritten body: %v; arguments kept %v, task %s", err, msg.Params.Arguments.Text == big, msg.Params.Task)
	}
}
