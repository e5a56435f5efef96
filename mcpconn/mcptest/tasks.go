package mcptest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tasks (issue 26 item 7): with FaultTasks the fake server answers calls
// of its task tools with a task handle, in both eras. The go-sdk v1.8 has
// no tasks, so the server side is here: the task tools create tasks in a
// store shared by every session of the server (and, through Dial, by
// every connection of one Dial), and the methods tasks/get,
// tasks/result, tasks/list (2025-11-25), tasks/update (2026-07-28,
// extension io.modelcontextprotocol/tasks) and tasks/cancel read and
// drive them. A task's state follows from the clock alone (its steps and
// TTL are computed when asked), so a task needs no goroutine and no timer
// of its own; only a tasks/result that waits holds a timer, for as long
// as its request lasts.

// The task tools of FaultTasks (ToolTaskOptional, "task_optional", is
// also the name of a FaultToolMetadata tool; with both faults the task
// tool is the one served).
const (
	ToolTaskWork      = "task_work"
	ToolTaskAsk       = "task_ask"
	ToolTaskFail      = "task_fail"
	ToolTaskCancelled = "task_cancelled"
	ToolTaskTTL       = "task_ttl"
	ToolTaskForever   = "task_forever"
	ToolTaskUnasked   = "task_unasked"
	ToolTaskStats     = "task_stats"
)

// The wire names and fixed texts of the task tools.
const (
	// TasksExtension is the extension of MCP 2026-07-28 the server
	// declares in server/discover, and the one a modern tools/call must
	// declare in its client capabilities to be answered with a task.
	TasksExtension = "io.modelcontextprotocol/tasks"
	// RelatedTaskMeta is the _meta key naming the task of a message
	// (2025-11-25): on the result of tasks/result and on the
	// elicitation a task sends.
	RelatedTaskMeta = "io.modelcontextprotocol/related-task"
	// TaskAskKey is the key of the input request of ToolTaskAsk in a
	// modern tasks/get (inputRequests) and tasks/update
	// (inputResponses).
	TaskAskKey = "ask-1"
	// TaskAskMessage and TaskAskSchema are the message and the
	// requestedSchema of the form elicitation of ToolTaskAsk.
	TaskAskMessage = "what answer?"
	TaskAskSchema  = `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`
	// TaskFailCode and TaskFailMessage are the JSON-RPC error of a task
	// of ToolTaskFail.
	TaskFailCode    = -32000
	TaskFailMessage = "the task failed on purpose"
	// TaskCancelledByServer is the statusMessage of a task of
	// ToolTaskCancelled; TaskCancelledByClient that of a task ended by
	// tasks/cancel.
	TaskCancelledByServer = "cancelled by the server"
	TaskCancelledByClient = "cancelled by the client"
	// TaskCancelledCode and TaskCancelledMessage are the JSON-RPC error
	// tasks/result answers for a cancelled task (2025-11-25: the call
	// has no result).
	TaskCancelledCode    = -32800
	TaskCancelledMessage = "the task was cancelled"
	// TaskUnknownMessage is the message of the -32602 error for a task
	// that does not exist, or no longer does (its TTL lapsed).
	TaskUnknownMessage = "unknown task"
	// TaskListPageSize is the number of tasks per tasks/list page.
	TaskListPageSize = 20
	// MaxTasks bounds the tasks the store holds at once; a task call
	// past it gets the error -32603.
	MaxTasks = 1000
)

// The arguments of the task tools, their defaults and bounds.
const (
	TaskStepsDefault  = 2
	TaskStepsMax      = 100
	TaskStepMSDefault = 20
	TaskStepMSMax     = 60000
	TaskPollMSDefault = 10
	TaskPollMSMax     = 60000
	TaskTTLMSDefault  = 60000
	TaskTTLMSMax      = 86400000
	// TaskTTLToolDefault is the ttl_ms default of ToolTaskTTL.
	TaskTTLToolDefault = 50
)

// taskMetaKey is where a tools/call's 2025-11-25 task parameter
// ({"ttl":N}) is moved to in its _meta before the go-sdk reads the call
// (it drops params it does not know); any value a client put there is
// removed first.
const taskMetaKey = "mcptest.agt/task"

// TaskIn is the input of the task tools. Each field is optional.
type TaskIn struct {
	// Text is what the task's result says: the result of echo for
	// Text, exactly.
	Text string `json:"text,omitempty"`
	// Steps (task_work, task_optional, task_unasked) is how many steps
	// the task works (TaskStepsDefault when 0); the others work one.
	Steps int `json:"steps,omitempty"`
	// StepMS is the length of a step in milliseconds (TaskStepMSDefault
	// when 0).
	StepMS int `json:"step_ms,omitempty"`
	// PollMS is the pollInterval (pollIntervalMs) the task announces:
	// TaskPollMSDefault when absent, none when 0.
	PollMS *int `json:"poll_ms,omitempty"`
	// TTLMS is the ttl (ttlMs) the task announces and keeps
	// (TaskTTLMSDefault when 0; TaskTTLToolDefault for task_ttl). The
	// ttl a 2025-11-25 client asks for is not used.
	TTLMS int `json:"ttl_ms,omitempty"`
}

// TaskStats counts the task traffic of a server: tasks created and the
// tasks/get, tasks/result, tasks/update, tasks/cancel and tasks/list
// requests received (valid or not). ToolTaskStats answers with it as
// JSON; Counters.Tasks reports it in process.
type TaskStats struct {
	Created int64 `json:"created"`
	Gets    int64 `json:"gets"`
	Results int64 `json:"results"`
	Updates int64 `json:"updates"`
	Cancels int64 `json:"cancels"`
	Listed  int64 `json:"listed"`
}

// taskCounts is TaskStats, counted concurrently.
type taskCounts struct{ created, gets, results, updates, cancels, listed atomic.Int64 }

func (c *taskCounts) stats() TaskStats {
	return TaskStats{Created: c.created.Load(), Gets: c.gets.Load(), Results: c.results.Load(),
		Updates: c.updates.Load(), Cancels: c.cancels.Load(), Listed: c.listed.Load()}
}

// counter returns the count of a tasks method (or "created").
func (c *taskCounts) counter(method string) *atomic.Int64 {
	switch method {
	case "created":
		return &c.created
	case "tasks/get":
		return &c.gets
	case "tasks/result":
		return &c.results
	case "tasks/update":
		return &c.updates
	case "tasks/cancel":
		return &c.cancels
	case "tasks/list":
		return &c.listed
	}
	return nil
}

// Task statuses.
const (
	statusWorking       = "working"
	statusInputRequired = "input_required"
	statusCompleted     = "completed"
	statusFailed        = "failed"
	statusCancelled     = "cancelled"
)

func terminal(status string) bool {
	return status == statusCompleted || status == statusFailed || status == statusCancelled
}

// fakeTask is one task. Its working phases are computed from the clock:
// a phase of steps steps of step each, started at phaseStart, is
// followed by next.
type fakeTask struct {
	id      string
	seq     int
	created time.Time
	ttl     time.Duration
	ttlMS   int
	pollMS  *int

	status  string
	message string
	updated time.Time

	phaseStart time.Time
	steps      int // 0: works until something else ends it
	step       time.Duration
	next       func(t *fakeTask, at time.Time)

	result json.RawMessage // completed: the CallToolResult
	rpcErr *jsonrpc.Error  // failed
	asking bool            // a tasks/result is sending the elicitation
	asked  bool            // input_required: the elicitation is outstanding

	changed chan struct{} // closed at each change a waiter cannot compute
}

// set moves t to status at time at.
func (t *fakeTask) set(status, message string, at time.Time) {
	t.status, t.message, t.updated = status, message, at
}

// work starts a working phase of steps steps (0: without end) at at.
func (t *fakeTask) work(steps int, step time.Duration, at time.Time, message string, next func(*fakeTask, time.Time)) {
	t.phaseStart, t.steps, t.step, t.next = at, steps, step, next
	t.set(statusWorking, message, at)
	if steps > 0 {
		t.message = fmt.Sprintf("step 1 of %d", steps)
	}
}

// advance brings t to its state at now.
func (t *fakeTask) advance(now time.Time) {
	for t.status == statusWorking && t.steps > 0 {
		end := t.phaseStart.Add(time.Duration(t.steps) * t.step)
		if now.Before(end) {
			i := int(now.Sub(t.phaseStart) / t.step)
			t.message = fmt.Sprintf("step %d of %d", i+1, t.steps)
			t.updated = t.phaseStart.Add(time.Duration(i) * t.step)
			return
		}
		next := t.next
		t.steps, t.next = 0, nil
		next(t, end)
	}
}

// nextChange is when t changes next by the clock alone (zero: never).
func (t *fakeTask) nextChange() time.Time {
	if t.status != statusWorking || t.steps == 0 {
		return time.Time{}
	}
	return t.phaseStart.Add(time.Duration(t.steps) * t.step)
}

func (t *fakeTask) broadcast() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// taskStore holds the tasks of a server (of a process, for the binary).
type taskStore struct {
	mu     sync.Mutex
	seq    int
	tasks  map[string]*fakeTask
	counts taskCounts
	now    func() time.Time
}

func newTaskStore() *taskStore {
	return &taskStore{tasks: map[string]*fakeTask{}, now: time.Now}
}

// lookup returns the task id at now, after dropping the tasks whose TTL
// lapsed; nil when there is none. s.mu is held.
func (s *taskStore) lookup(id string, now time.Time) *fakeTask {
	for k, t := range s.tasks {
		if !now.Before(t.created.Add(t.ttl)) {
			delete(s.tasks, k)
			t.broadcast() // a waiting tasks/result sees it gone
		}
	}
	t := s.tasks[id]
	if t != nil {
		t.advance(now)
	}
	return t
}

func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "task-" + hex.EncodeToString(b[:])
}

var errUnknownTask = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: TaskUnknownMessage}

// taskTools is the execution.taskSupport each task tool lists (none for
// task_unasked and task_stats).
var taskTools = map[string]string{
	ToolTaskWork: "required", ToolTaskOptional: "optional", ToolTaskAsk: "required", ToolTaskFail: "required",
	ToolTaskCancelled: "required", ToolTaskTTL: "required", ToolTaskForever: "required", ToolTaskUnasked: "",
}

// taskWireFields is the execution of the task tools, for the listing.
func taskWireFields() map[string]map[string]json.RawMessage {
	out := map[string]map[string]json.RawMessage{}
	for name, support := range taskTools {
		if support != "" {
			out[name] = map[string]json.RawMessage{"execution": json.RawMessage(`{"taskSupport":"` + support + `"}`)}
		}
	}
	return out
}

// tasks is the task side of one server.
type tasks struct {
	store    *taskStore
	counters *Counters // nil: none
}

func (x *tasks) count(method string) {
	if c := x.store.counts.counter(method); c != nil {
		c.Add(1)
	}
	if x.counters != nil {
		if c := x.counters.tasks.counter(method); c != nil {
			c.Add(1)
		}
	}
}

// addTaskTools adds the task tools and methods of FaultTasks to s.
func addTaskTools(s *mcp.Server, x *tasks) {
	schema := schemaFor[TaskIn](func(s *jsonschema.Schema) {
		s.Properties["text"].MaxLength = jsonschema.Ptr(EchoTextMaxLen)
		s.Properties["steps"].Minimum, s.Properties["steps"].Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(TaskStepsMax))
		s.Properties["step_ms"].Minimum, s.Properties["step_ms"].Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(TaskStepMSMax))
		poll := s.Properties["poll_ms"]
		poll.Types, poll.Type = nil, "integer"
		poll.Minimum, poll.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(TaskPollMSMax))
		s.Properties["ttl_ms"].Minimum, s.Properties["ttl_ms"].Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(TaskTTLMSMax))
	})
	descriptions := map[string]string{
		ToolTaskWork:      "Works as a task for steps steps of step_ms, then completes with echo's result for text (fault mode).",
		ToolTaskOptional:  "task_work, as a task only when the call asks for one (fault mode).",
		ToolTaskAsk:       "Works a step as a task, asks for an answer (input_required), then completes with it (fault mode).",
		ToolTaskFail:      "Works a step as a task, then fails with a JSON-RPC error (fault mode).",
		ToolTaskCancelled: "Works a step as a task, then the server cancels it (fault mode).",
		ToolTaskTTL:       "A task that never completes and is dropped when its TTL lapses (fault mode).",
		ToolTaskForever:   "A task that works until it is cancelled (fault mode).",
		ToolTaskUnasked:   "Answers every call with a task, asked for or not: a hostile server (fault mode).",
	}
	for name, desc := range descriptions {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc, InputSchema: schema},
			func(ctx context.Context, req *mcp.CallToolRequest, in TaskIn) (*mcp.CallToolResult, any, error) {
				return x.call(req, name, in)
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolTaskStats, Description: "Returns the server's task counters as JSON (fault mode).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}, InputSchema: schemaFor[struct{}](nil)},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(x.store.counts.stats())
			return textResult("%s", b), nil, nil
		})
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/list", "tasks/update", "tasks/cancel"} {
		if err := mcp.AddReceivingCustomMethod(s, m, func(ctx context.Context, ss *mcp.ServerSession, p *taskParams) (*wireResult, error) {
			x.count(m)
			return x.method(ctx, ss, m, p)
		}); err != nil {
			panic(fmt.Sprintf("mcptest: %s: %v", m, err))
		}
	}
	s.AddReceivingMiddleware(x.middleware)
}

// taskParams are the params of the tasks methods.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	Cursor         *string                    `json:"cursor,omitempty"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// modernMeta reports whether params' _meta names a protocol of
// 2026-07-28 or later.
func modernMeta(m map[string]any) bool {
	v, _ := m["io.modelcontextprotocol/protocolVersion"].(string)
	return isModern(v)
}

// declaresTasks reports whether a modern request's _meta declares the
// tasks extension among its client capabilities.
func declaresTasks(m map[string]any) bool {
	caps, _ := m["io.modelcontextprotocol/clientCapabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[TasksExtension]
	return ok
}

// call is a task tool's handler: it creates the task, or answers as the
// tool does without one. A created task is returned as a result marked
// in its _meta, which middleware turns into the CreateTaskResult.
func (x *tasks) call(req *mcp.CallToolRequest, name string, in TaskIn) (*mcp.CallToolResult, any, error) {
	meta := req.Params.Meta
	modern := modernMeta(meta)
	asked := declaresTasks(meta)
	if !modern {
		_, asked = meta[taskMetaKey]
	}
	support := taskTools[name]
	switch {
	case name == ToolTaskUnasked || asked:
	case support == "optional":
		return echoResult(in.Text), nil, nil
	case modern:
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
		return nil, nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
			Message: "missing required client capability: tool " + name + " runs only as a task (extension " + TasksExtension + ")", Data: data}
	default:
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: "tool " + name + " must be called as a task (params.task)"}
	}
	id, err := x.create(name, in)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Meta: mcp.Meta{taskMetaKey: id}, Content: []mcp.Content{}}, nil, nil
}

// echoResult is what echo answers for text.
func echoResult(text string) *mcp.CallToolResult { return textResult("%s", text) }

func (x *tasks) create(name string, in TaskIn) (string, error) {
	steps, step := cmp.Or(in.Steps, TaskStepsDefault), time.Duration(cmp.Or(in.StepMS, TaskStepMSDefault))*time.Millisecond
	ttlMS := cmp.Or(in.TTLMS, TaskTTLMSDefault)
	if name == ToolTaskTTL {
		ttlMS = cmp.Or(in.TTLMS, TaskTTLToolDefault)
	}
	poll := in.PollMS
	if poll == nil {
		poll = jsonschema.Ptr(TaskPollMSDefault)
	}
	complete := func(res *mcp.CallToolResult) func(*fakeTask, time.Time) {
		raw, _ := json.Marshal(res)
		return func(t *fakeTask, at time.Time) {
			t.result = raw
			t.set(statusCompleted, "", at)
		}
	}
	s := x.store
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.lookup("", now) // drop the lapsed ones
	if len(s.tasks) >= MaxTasks {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the task store is full (%d tasks)", MaxTasks)}
	}
	s.seq++
	t := &fakeTask{id: newTaskID(), seq: s.seq, created: now, ttl: time.Duration(ttlMS) * time.Millisecond, ttlMS: ttlMS,
		pollMS: poll, changed: make(chan struct{})}
	switch name {
	case ToolTaskWork, ToolTaskOptional, ToolTaskUnasked:
		t.work(steps, step, now, "", complete(echoResult(in.Text)))
	case ToolTaskAsk:
		t.work(1, step, now, "", func(t *fakeTask, at time.Time) {
			t.asked = true
			t.set(statusInputRequired, TaskAskMessage, at)
		})
	case ToolTaskFail:
		t.work(1, step, now, "", func(t *fakeTask, at time.Time) {
			t.rpcErr = &jsonrpc.Error{Code: TaskFailCode, Message: TaskFailMessage}
			t.set(statusFailed, TaskFailMessage, at)
		})
	case ToolTaskCancelled:
		t.work(1, step, now, "", func(t *fakeTask, at time.Time) { t.set(statusCancelled, TaskCancelledByServer, at) })
	case ToolTaskTTL:
		t.work(0, 0, now, "working until the TTL lapses", nil)
	case ToolTaskForever:
		t.work(0, 0, now, "working until cancelled", nil)
	}
	s.tasks[t.id] = t
	x.count("created")
	return t.id, nil
}

// answer records the answer to task_ask's elicitation at now: the task
// works one more step, then completes with the answer. s.mu is held.
func (t *fakeTask) answer(res *mcp.ElicitResult, step time.Duration, now time.Time) {
	text := "declined"
	switch res.Action {
	case "accept":
		a, _ := res.Content["answer"].(string)
		text = "answer: " + a
	case "cancel":
		text = "cancelled"
	}
	raw, _ := json.Marshal(echoResult(text))
	t.asked = false
	t.work(1, step, now, "", func(t *fakeTask, at time.Time) {
		t.result = raw
		t.set(statusCompleted, "", at)
	})
	t.broadcast()
}

// timeText is the ISO 8601 form of a task time.
func timeText(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// taskFields are the fields of the Task t in the era's names.
func taskFields(t *fakeTask, modern bool) []wireField {
	q := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	f := []wireField{{"taskId", q(t.id)}, {"status", q(t.status)}}
	if t.message != "" {
		f = append(f, wireField{"statusMessage", q(t.message)})
	}
	ttl, poll := "ttl", "pollInterval"
	if modern {
		ttl, poll = "ttlMs", "pollIntervalMs"
	}
	f = append(f, wireField{"createdAt", q(timeText(t.created))}, wireField{"lastUpdatedAt", q(timeText(t.updated))},
		wireField{ttl, json.RawMessage(strconv.Itoa(t.ttlMS))})
	if t.pollMS != nil && *t.pollMS > 0 {
		f = append(f, wireField{poll, json.RawMessage(strconv.Itoa(*t.pollMS))})
	}
	return f
}

// askRequest is the elicitation of task_ask.
func askRequest(meta mcp.Meta) *mcp.ElicitParams {
	return &mcp.ElicitParams{Meta: meta, Mode: "form", Message: TaskAskMessage, RequestedSchema: json.RawMessage(TaskAskSchema)}
}

// detailed is the modern tasks/get result of t.
func detailed(t *fakeTask) *wireResult {
	f := append([]wireField{{"resultType", json.RawMessage(`"complete"`)}}, taskFields(t, true)...)
	switch t.status {
	case statusInputRequired:
		raw, _ := json.Marshal(mcp.InputRequestMap{TaskAskKey: askRequest(nil)})
		f = append(f, wireField{"inputRequests", raw})
	case statusCompleted:
		f = append(f, wireField{"result", t.result})
	case statusFailed:
		raw, _ := json.Marshal(t.rpcErr)
		f = append(f, wireField{"error", raw})
	}
	return &wireResult{fields: f}
}

var completeAck = func() *wireResult {
	return &wireResult{fields: []wireField{{"resultType", json.RawMessage(`"complete"`)}}}
}

// method answers the tasks methods.
func (x *tasks) method(ctx context.Context, ss *mcp.ServerSession, method string, p *taskParams) (*wireResult, error) {
	if p == nil {
		p = &taskParams{}
	}
	modern := modernMeta(p.Meta)
	switch {
	case modern && (method == "tasks/result" || method == "tasks/list"):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method + " is not part of the extension " + TasksExtension}
	case !modern && method == "tasks/update":
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: tasks/update is part of the extension " + TasksExtension + " (2026-07-28)"}
	case method == "tasks/list":
		return x.list(p)
	case p.TaskID == "":
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params.taskId is missing"}
	case method == "tasks/result":
		return x.result(ctx, ss, p.TaskID)
	}
	s := x.store
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	t := s.lookup(p.TaskID, now)
	if t == nil {
		return nil, errUnknownTask
	}
	switch method {
	case "tasks/get":
		if modern {
			return detailed(t), nil
		}
		return &wireResult{fields: taskFields(t, false)}, nil
	case "tasks/update":
		if raw, ok := p.InputResponses[TaskAskKey]; ok && t.status == statusInputRequired && t.asked {
			var res mcp.ElicitResult
			if err := json.Unmarshal(raw, &res); err != nil || !slices.Contains([]string{"accept", "decline", "cancel"}, res.Action) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses[" + TaskAskKey + "] is not an elicitation result"}
			}
			if _, ok := res.Content["answer"].(string); res.Action == "accept" && !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses[" + TaskAskKey + "] accepts without a string answer"}
			}
			t.answer(&res, t.stepOrDefault(), now)
		}
		return completeAck(), nil
	case "tasks/cancel":
		if terminal(t.status) {
			if modern {
				return completeAck(), nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the task is already " + t.status}
		}
		t.steps, t.next, t.asked = 0, nil, false
		t.set(statusCancelled, TaskCancelledByClient, now)
		t.broadcast()
		if modern {
			return completeAck(), nil
		}
		return &wireResult{fields: taskFields(t, false)}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
}

// stepOrDefault is the step of the task's last phase.
func (t *fakeTask) stepOrDefault() time.Duration {
	if t.step > 0 {
		return t.step
	}
	return TaskStepMSDefault * time.Millisecond
}

// list is tasks/list (2025-11-25): every task of the store, oldest
// first, TaskListPageSize a page.
func (x *tasks) list(p *taskParams) (*wireResult, error) {
	after := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n <= 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
		}
		after = n
	}
	s := x.store
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.lookup("", now)
	all := slices.SortedFunc(maps.Values(s.tasks), func(a, b *fakeTask) int { return a.seq - b.seq })
	page := []json.RawMessage{}
	next, last := "", 0
	for _, t := range all {
		if t.seq <= after {
			continue
		}
		if len(page) == TaskListPageSize {
			next = strconv.Itoa(last)
			break
		}
		t.advance(now)
		raw, _ := (&wireResult{fields: taskFields(t, false)}).MarshalJSON()
		page, last = append(page, raw), t.seq
	}
	list, _ := json.Marshal(page)
	f := []wireField{{"tasks", list}}
	if next != "" {
		b, _ := json.Marshal(next)
		f = append(f, wireField{"nextCursor", b})
	}
	return &wireResult{fields: f}, nil
}

// result is tasks/result (2025-11-25): it waits until the task ends,
// sending the elicitation of an input_required task on this request
// (over streamable HTTP, on its response stream) and taking the answer,
// and returns what the call would have returned.
func (x *tasks) result(ctx context.Context, ss *mcp.ServerSession, id string) (*wireResult, error) {
	s := x.store
	for {
		s.mu.Lock()
		now := s.now()
		t := s.lookup(id, now)
		if t == nil {
			s.mu.Unlock()
			return nil, errUnknownTask
		}
		switch {
		case t.status == statusCompleted:
			res := &wireResult{base: t.result}
			res.Meta = mcp.Meta{RelatedTaskMeta: map[string]any{"taskId": t.id}}
			s.mu.Unlock()
			return res, nil
		case t.status == statusFailed:
			err := t.rpcErr
			s.mu.Unlock()
			return nil, err
		case t.status == statusCancelled:
			s.mu.Unlock()
			return nil, &jsonrpc.Error{Code: TaskCancelledCode, Message: TaskCancelledMessage}
		case t.status == statusInputRequired && t.asked && !t.asking:
			t.asking = true
			s.mu.Unlock()
			res, err := ss.Elicit(ctx, askRequest(mcp.Meta{RelatedTaskMeta: map[string]any{"taskId": id}}))
			s.mu.Lock()
			now = s.now()
			t.asking = false
			if s.lookup(id, now) == t && t.status == statusInputRequired && t.asked {
				switch {
				case err == nil:
					t.answer(res, t.stepOrDefault(), now)
				case ctx.Err() == nil:
					// The client answered with an error, or cannot
					// elicit: the task fails with it.
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) {
						rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the elicitation failed: " + err.Error()}
					}
					t.rpcErr, t.asked = rpcErr, false
					t.set(statusFailed, rpcErr.Message, now)
					t.broadcast()
				default:
					t.broadcast() // another tasks/result may ask
				}
			}
			s.mu.Unlock()
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		changed, at := t.changed, t.nextChange()
		s.mu.Unlock()
		// The wait ends at the next change, or at the end of the TTL
		// (the task is gone then).
		if until := t.created.Add(t.ttl); at.IsZero() || until.Before(at) {
			at = until
		}
		timer := time.NewTimer(at.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// middleware turns a task tool's marked result into the CreateTaskResult
// of the request's era, adds the tasks capability to a legacy
// initialize result and the extension to server/discover's.
func (x *tasks) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" && p.Meta[taskMetaKey] != nil &&
			!modernMeta(p.Meta) && taskTools[p.Name] == "" && p.Name != ToolTaskUnasked {
			// 2025-11-25: a tool without taskSupport called as a task.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tool " + p.Name + " cannot be called as a task"}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch method {
		case "tools/call":
			ctr, ok := res.(*mcp.CallToolResult)
			if !ok {
				return res, nil
			}
			id, ok := ctr.Meta[taskMetaKey].(string)
			if !ok {
				return res, nil
			}
			s := x.store
			s.mu.Lock()
			defer s.mu.Unlock()
			// The task as it was created (its seed state: a task begins
			// working), however long the answer took on a loaded
			// machine; later requests see it move on.
			t := s.tasks[id]
			if t == nil {
				return nil, errUnknownTask
			}
			if modernMeta(req.GetParams().GetMeta()) {
				return &wireResult{fields: append([]wireField{{"resultType", json.RawMessage(`"task"`)}}, taskFields(t, true)...)}, nil
			}
			task, _ := (&wireResult{fields: taskFields(t, false)}).MarshalJSON()
			return &wireResult{fields: []wireField{{"task", task}}}, nil
		case "initialize":
			return patchResult(res, func(m map[string]any) {
				if caps, ok := m["capabilities"].(map[string]any); ok {
					caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
						"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
				}
			})
		case "server/discover":
			return patchResult(res, func(m map[string]any) {
				if caps, ok := m["capabilities"].(map[string]any); ok {
					ext, _ := caps["extensions"].(map[string]any)
					if ext == nil {
						ext = map[string]any{}
					}
					ext[TasksExtension] = map[string]any{}
					caps["extensions"] = ext
				}
			})
		}
		return res, nil
	}
}

// wireResult is a result written field by field: base (an object, or
// nil), then fields in order, then _meta (which the go-sdk may set on a
// modern result).
type wireResult struct {
	mcp.ResultBase
	base   json.RawMessage
	fields []wireField
}

type wireField struct {
	key   string
	value json.RawMessage
}

func (r *wireResult) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	if base := bytes.TrimSpace(r.base); len(base) > 2 {
		b.Write(base[1 : len(base)-1])
		n++
	}
	add := func(k string, v []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	for _, f := range r.fields {
		add(f.key, f.value)
	}
	if len(r.Meta) > 0 {
		m, err := json.Marshal(r.Meta)
		if err != nil {
			return nil, err
		}
		add("_meta", m)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// patchResult returns res with patch applied to its JSON object; its
// _meta stays apart, so that the go-sdk can still add to it.
func patchResult(res mcp.Result, patch func(map[string]any)) (mcp.Result, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	meta, _ := m["_meta"].(map[string]any)
	delete(m, "_meta")
	patch(m)
	base, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := &wireResult{base: base}
	out.Meta = meta
	return out, nil
}

// liftTaskParam moves the task parameter of a tools/call's params into
// its _meta (taskMetaKey), where the go-sdk keeps it; a client's own
// value there is dropped. Params it cannot read are returned as they
// are.
func liftTaskParam(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params
	}
	var meta map[string]json.RawMessage
	if raw, ok := p["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return params
	}
	_, hadKey := meta[taskMetaKey]
	task, hasTask := p["task"]
	if !hadKey && !hasTask {
		return params
	}
	delete(meta, taskMetaKey)
	delete(p, "task")
	if hasTask {
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		meta[taskMetaKey] = task
	}
	if meta != nil {
		p["_meta"], _ = json.Marshal(meta)
	}
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}

// taskTransport lifts the task parameter of every tools/call read.
type taskTransport struct{ mcp.Transport }

func (t taskTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return taskConn{c}, nil
}

type taskConn struct{ mcp.Connection }

func (c taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && err == nil && r.Method == "tools/call" {
		r.Params = liftTaskParam(r.Params)
	}
	return m, err
}

// maxTaskBody bounds the request body taskHTTP reads.
const maxTaskBody = 32 << 20

// taskHTTP serves h with the task parameter of a tools/call lifted (as
// taskTransport does), and checks the routing header of a modern
// tasks/get, tasks/update or tasks/cancel: Mcp-Name must be its taskId
// (SEP-2663), else 400 with the error HeaderMismatch (-32020), as the
// go-sdk answers for a tools/call.
func taskHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxTaskBody+1))
		_ = r.Body.Close()
		if err != nil || len(body) > maxTaskBody {
			http.Error(w, "request body unreadable or larger than 32 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				TaskID *string `json:"taskId"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil {
			switch msg.Method {
			case "tools/call":
				var full map[string]json.RawMessage
				if json.Unmarshal(body, &full) == nil && full["params"] != nil {
					full["params"] = liftTaskParam(full["params"])
					if b, err := json.Marshal(full); err == nil {
						body = b
					}
				}
			case "tasks/get", "tasks/update", "tasks/cancel":
				name, id := r.Header.Get("Mcp-Name"), ""
				if msg.Params.TaskID != nil {
					id = *msg.Params.TaskID
				}
				if isModern(r.Header.Get("Mcp-Protocol-Version")) && name != id {
					resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": mcp.CodeHeaderMismatch,
						"message": fmt.Sprintf("header mismatch: Mcp-Name header value %q does not match params.taskId %q", name, id)}})
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					_, _ = w.Write(resp)
					return
				}
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}
