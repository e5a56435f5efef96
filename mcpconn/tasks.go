package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/internal/taskcall"
)

// MCP tasks: a server may answer a tools/call with a task (a handle it
// runs on its own) instead of the result; the client polls the task until
// it ends and takes its result then. In protocol 2025-11-25 the client
// asks for a task (params.task, for a tool whose execution.taskSupport
// is "required" on a server that declares tasks.requests.tools.call) and
// takes the result with tasks/result; from 2026-07-28 on tasks are the
// extension io.modelcontextprotocol/tasks, which the client declares with
// every request, the server decides per call (resultType "task"), and
// tasks/get carries the result, the error or the input the task needs
// (answered with tasks/update). Session.CallTool follows either to its
// end; see Tasks in the package doc.
//
// The go-sdk has no task methods. A task's requests go through its
// tools/call path, so that each is tied to its call exactly like the
// call's own request (its answer captured, its event stream the call's,
// its cancellation, its bounds), and the wire layer rewrites the message
// as it leaves (taskWire): the method, and the params to the task's.

// The task methods and fields.
const (
	methodTaskGet    = "tasks/get"
	methodTaskResult = "tasks/result" // 2025-11-25
	methodTaskUpdate = "tasks/update" // 2026-07-28
	methodTaskCancel = "tasks/cancel"

	// tasksExtension is the extension a modern client declares.
	tasksExtension = "io.modelcontextprotocol/tasks"
	// metaRelatedTask names the task a legacy server's request is for.
	metaRelatedTask = "io.modelcontextprotocol/related-task"
)

// The statuses of a task.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Fixed bounds of what a server says of a task.
const (
	// maxTaskIDBytes bounds a task id: a longer one fails the call with
	// ErrBadResult (a *LimitError).
	maxTaskIDBytes = 1024
	// taskCancelTime bounds the tasks/cancel sent for a call that ended.
	taskCancelTime = 5 * time.Second
)

// taskBounds bound how a session follows the tasks its servers run for
// its calls (Limits: MinTaskPollInterval, MaxTaskPollInterval, TaskTTL).
type taskBounds struct {
	MinPollInterval time.Duration
	MaxPollInterval time.Duration
	TTL             time.Duration
}

// tasks returns the task bounds of resolved limits.
func (l Limits) tasks() taskBounds {
	return taskBounds{MinPollInterval: l.MinTaskPollInterval, MaxPollInterval: l.MaxTaskPollInterval, TTL: l.TaskTTL}
}

// interval is the wait before the next poll: the server's suggestion
// (none: twice the minimum) within the bounds.
func (o taskBounds) interval(suggested time.Duration) time.Duration {
	if suggested <= 0 {
		suggested = 2 * o.MinPollInterval
	}
	return min(max(suggested, o.MinPollInterval), o.MaxPollInterval)
}

// TaskStatus is a task's state as a poll found it (Handlers.TaskStatus).
type TaskStatus struct {
	// TaskID is the server's task id.
	TaskID string
	// Status is TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed
	// or TaskCancelled.
	Status string
	// Message is the server's statusMessage, cut to 512 bytes (with
	// "...") and each control character replaced by U+FFFD, as every
	// server text agt hands on: the server's words, to show as such.
	Message string
}

// taskView is a task as the server described it.
type taskView struct {
	id, status, message string
	ttl                 time.Duration // 0: none, or not said
	poll                time.Duration // 0: not said, in this answer or before
	// A modern tasks/get's payload: the result of a completed task, the
	// error of a failed one, the input an input_required one needs.
	result, fault json.RawMessage
	input         *inputRound
}

// errTaskAnswer: a tools/call result that is a task, not the tool's
// result.
var errTaskAnswer = errMalformed("the result is a task")

// readTask reads a task from a result: a 2025-11-25 CreateTaskResult
// wraps it in task, the others are the task's fields themselves.
func readTask(raw json.RawMessage) (*taskView, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errMalformed("the task is not an object")
	}
	var inner json.RawMessage
	_ = objectMembers(raw, func(key, val []byte) error {
		if string(key) == "task" && len(val) > 0 && val[0] == '{' {
			inner = val
		}
		return nil
	})
	if inner != nil {
		raw = inner
	}
	t := &taskView{}
	var idSeen, statusSeen bool
	var inputRequests json.RawMessage
	err := objectMembers(raw, func(key, val []byte) error {
		switch string(key) {
		case "taskId":
			if len(val) > maxTaskIDBytes+2 {
				return &LimitError{Option: "MaxTaskIDBytes (fixed)", What: "a task id", Limit: maxTaskIDBytes, Unit: "bytes"}
			}
			s, ok := exactString(val)
			if !ok || s == "" {
				return errMalformed("the taskId is not a non-empty string")
			}
			t.id, idSeen = s, true
		case "status":
			var s string
			if json.Unmarshal(val, &s) != nil {
				return errMalformed("the task status is not a string")
			}
			switch s {
			case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
			default:
				return errMalformed("the task status is not one MCP defines")
			}
			t.status, statusSeen = s, true
		case "statusMessage":
			var s string
			if !isNull(val) && json.Unmarshal(val, &s) != nil {
				return errMalformed("the task statusMessage is not a string")
			}
			t.message = boundServerText(s)
		case "ttl", "ttlMs":
			d, err := millis(val)
			if err != nil {
				return err
			}
			t.ttl = d
		case "pollInterval", "pollIntervalMs":
			d, err := millis(val)
			if err != nil {
				return err
			}
			t.poll = d
		case "result":
			t.result = optional(val)
		case "error":
			t.fault = optional(val)
		case "inputRequests":
			inputRequests = optional(val)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !idSeen || !statusSeen {
		return nil, errMalformed("the task has no taskId or no status")
	}
	if t.status == TaskInputRequired && inputRequests != nil {
		round, err := readInputRequired(json.RawMessage(`{"inputRequests":` + string(inputRequests) + `}`))
		if err != nil {
			return nil, err
		}
		t.input = round
	}
	return t, nil
}

// millis reads a duration in integer milliseconds (null: 0).
func millis(val []byte) (time.Duration, error) {
	if isNull(val) {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(val), 10, 64)
	if err != nil || n < 0 || n > int64(365*24*time.Hour/time.Millisecond) {
		return 0, errMalformed("a task's ttl or poll interval is not a non-negative integer of milliseconds within a year")
	}
	return time.Duration(n) * time.Millisecond, nil
}

// taskWire is what the wire layer does to a tools/call request of a
// call's task as it leaves: send method in its place (empty: keep
// tools/call), with params of only the go-sdk's _meta and set (keep:
// all of the go-sdk's params, and set).
type taskWire struct {
	method string
	keep   bool
	set    map[string]json.RawMessage
	// name is the task id for the Mcp-Name header ("" for none).
	name string
}

type taskWireKey struct{}

func taskWireOf(ctx context.Context) *taskWire {
	tw, _ := ctx.Value(taskWireKey{}).(*taskWire)
	return tw
}

// params returns the request's params rewritten.
func (tw *taskWire) params(p json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(p) > 0 {
		if err := json.Unmarshal(p, &m); err != nil {
			return nil, err
		}
	}
	out := map[string]json.RawMessage{}
	for k, v := range m {
		if tw.keep || k == "_meta" {
			out[k] = v
		}
	}
	for k, v := range tw.set {
		out[k] = v
	}
	return json.Marshal(out)
}

// request rewrites a tools/call request of the go-sdk's (a copy: the
// go-sdk keeps its own).
func (tw *taskWire) request(req *jsonrpc.Request) (*jsonrpc.Request, error) {
	p, err := tw.params(req.Params)
	if err != nil {
		return nil, err
	}
	out := *req
	out.Params = p
	if tw.method != "" {
		out.Method = tw.method
	}
	return &out, nil
}

// httpRequest rewrites the body of a streamable HTTP POST that carries a
// tools/call request, and its Mcp-Method and Mcp-Name headers where the
// go-sdk set them (protocol 2026-07-28: Mcp-Name is the task id).
func (tw *taskWire) httpRequest(req *http.Request) (*http.Request, error) {
	if req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	// The body is the client's own (already in memory): read whole, as a
	// call's arguments may be larger than any bound of what servers send.
	raw, err := io.ReadAll(body)
	_ = body.Close()
	if err != nil {
		return nil, err
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, err
	}
	if string(msg["method"]) != `"`+methodCallTool+`"` {
		return req, nil // the cancellation of the request: as it is
	}
	if msg["params"], err = tw.params(msg["params"]); err != nil {
		return nil, err
	}
	if tw.method != "" {
		msg["method"], _ = json.Marshal(tw.method)
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(out))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	req.ContentLength = int64(len(out))
	if tw.method != "" && req.Header.Get(methodHeader) != "" {
		req.Header.Set(methodHeader, tw.method)
		req.Header.Del(nameHeader)
		if tw.name != "" {
			req.Header.Set(nameHeader, tw.name)
		}
	}
	return req, nil
}

// taskRequest sends one request of the call's task (method, with the
// task id and set) and returns its result exactly as it came.
func (s *Session) taskRequest(cctx context.Context, call *inflightCall, method, id string, set map[string]json.RawMessage) (json.RawMessage, error) {
	params := map[string]json.RawMessage{}
	for k, v := range set {
		params[k] = v
	}
	params["taskId"], _ = json.Marshal(id)
	tw := &taskWire{method: method, set: params}
	if s.modern() {
		tw.name = id
	}
	_, err := s.cs.CallTool(context.WithValue(cctx, taskWireKey{}, tw), &mcp.CallToolParams{})
	if rerr := call.refusal(); rerr != nil {
		return nil, rerr
	}
	if raw := call.answer(); raw != nil {
		return raw, nil
	}
	if err == nil {
		err = errMalformed("the answer has no result")
	}
	return nil, err
}

// clientCapabilities are what every session declares before its
// handlers add theirs: the tasks extension (2026-07-28; the go-sdk sends
// it with each request), as CallTool follows a task to its end.
func clientCapabilities() *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(tasksExtension, map[string]any{})
	return caps
}

// modern reports whether the session speaks protocol 2026-07-28 or later.
func (s *Session) modern() bool { return modernVersion(s.protocolVersion) }

// legacyTaskParam is the task a 2025-11-25 tools/call asks for, or nil
// when it asks none: a tool whose taskSupport is "required", on a server
// that declares task-augmented tools/call.
func (s *Session) legacyTaskParam(name string) map[string]json.RawMessage {
	if s.modern() || !s.capture.tasksDeclared() || !s.hints.taskRequired(name) {
		return nil
	}
	ttl := strconv.FormatInt(s.tasks.TTL.Milliseconds(), 10)
	return map[string]json.RawMessage{"task": json.RawMessage(`{"ttl":` + ttl + `}`)}
}

// followTask follows the call's task to its end and returns the call's
// result: what the synchronous call would have returned.
func (s *Session) followTask(ctx, cctx context.Context, name string, call *inflightCall, t *taskView, resumed bool) (*CallResult, error) {
	call.setTask(t.id)
	tc := taskcall.From(ctx)
	if !resumed && tc != nil && tc.Created != nil {
		info := taskcall.Info{ID: t.id, Protocol: s.protocolVersion, Created: time.Now(), TTL: t.ttl}
		if err := tc.Created(info); err != nil {
			s.cancelTask(cctx, call, t.id)
			return nil, &Error{Ref: s.ref, Op: callOp(name), Detail: "the task could not be recorded, so it was cancelled", Err: err}
		}
	}
	answered := map[string]bool{} // input keys answered (a server may ask again until it reads them)
	rounds := 0
	var last TaskStatus
	// polled: t is a tasks/get answer (a creation or a resume is not:
	// a task that ended is asked for its result or error first).
	polled := false
	// lostPolls counts the polls in a row that got no answer; retry: the
	// last one got none, so the next waits first (the status stays the
	// server's, so no status of agt's own reaches the host).
	lostPolls, retry := 0, false
	for {
		if st := (TaskStatus{TaskID: t.id, Status: t.status, Message: t.message}); t.status != "" && st != last {
			last = st
			s.reportTask(ctx, call, st)
		}
		switch t.status {
		case TaskCompleted, TaskFailed:
			if !s.modern() {
				return s.taskResult(ctx, cctx, name, call, t.id)
			}
			if !polled {
				break // its result or error comes with tasks/get
			}
			if t.status == TaskFailed {
				return nil, s.taskFault(name, t.fault)
			}
			if t.result == nil {
				return nil, &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: "the server says the task completed but gave no result",
					Err: errMalformed("a completed task without result")}
			}
			cr, err := decodeCallResult(t.result)
			if err != nil {
				return nil, &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: "the task's result is malformed", Err: err}
			}
			return cr, nil
		case TaskCancelled:
			return nil, &Error{Ref: s.ref, Op: callOp(name), Kind: ErrUnavailable, Detail: "the server cancelled the task: the call has no result"}
		case TaskInputRequired:
			if !s.modern() {
				// 2025-11-25: the requests come as server requests, while
				// tasks/result waits for the task's end.
				return s.taskResult(ctx, cctx, name, call, t.id)
			}
			if t.input != nil {
				round := &inputRound{}
				for _, r := range t.input.requests {
					if !answered[r.key] {
						round.requests = append(round.requests, r)
					}
				}
				if len(round.requests) > 0 {
					if rounds == s.maxRounds {
						s.cancelTask(cctx, call, t.id)
						return nil, s.inputError(name, roundsDetail(s.maxRounds))
					}
					rounds++
					answers, err := s.answerRound(ctx, cctx, name, call, round)
					if err != nil {
						s.cancelTask(cctx, call, t.id)
						return nil, err
					}
					raw, err := json.Marshal(answers)
					if err != nil {
						return nil, &Error{Ref: s.ref, Op: callOp(name), Detail: "the answers could not be encoded", Err: err}
					}
					if _, err := s.taskRequest(cctx, call, methodTaskUpdate, t.id, map[string]json.RawMessage{"inputResponses": raw}); err != nil {
						return nil, s.taskError(ctx, cctx, name, call, t.id, err)
					}
					for _, r := range round.requests {
						answered[r.key] = true
					}
					// Look again at once: the answers may be all it
					// waited for.
					t.status = ""
				}
			}
		}
		if retry || t.status == TaskWorking || t.status == TaskInputRequired {
			retry = false
			if err := s.taskWait(cctx, call, s.tasks.interval(t.poll)); err != nil {
				return nil, s.taskError(ctx, cctx, name, call, t.id, err)
			}
		}
		raw, err := s.taskRequest(cctx, call, methodTaskGet, t.id, nil)
		if err != nil && s.pollRetriable(ctx, cctx, err) && lostPolls < maxLostPolls {
			// A poll whose answer never came (a broken response
			// stream): the task goes on at the server, and polling is
			// what the protocol asks; looked at again after a wait.
			lostPolls++
			retry = true
			continue
		}
		if err != nil {
			return nil, s.taskError(ctx, cctx, name, call, t.id, err)
		}
		lostPolls = 0
		// An answer: the server is alive, as progress says.
		call.clock.progress()
		next, err := readTask(raw)
		if err == nil && next.id != t.id {
			err = errMalformed("tasks/get answered for another task")
		}
		if err != nil {
			s.cancelTask(cctx, call, t.id)
			return nil, &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: "the server's tasks/get answer is malformed, so the task was cancelled", Err: err}
		}
		if next.poll == 0 {
			// The interval the server suggested holds until it
			// suggests another (it may change; it need not repeat it).
			next.poll = t.poll
		}
		t, polled = next, true
	}
}

// maxLostPolls bounds the polls in a row of one task that may get no
// answer (a transport failure, not a refusal) before the call fails.
const maxLostPolls = 3

// pollRetriable reports whether a poll's failure leaves the task worth
// polling again: the request got no answer (not a JSON-RPC error, a
// bound, or a malformed answer), the call goes on, and the session is
// neither closed nor lost.
func (s *Session) pollRetriable(ctx, cctx context.Context, err error) bool {
	var wire *jsonrpc.Error
	switch {
	case ctx.Err() != nil || cctx.Err() != nil || s.closed.Load() || s.Lost() || s.guard.breach() != nil,
		errors.Is(err, mcp.ErrConnectionClosed):
		return false
	case errors.As(err, &wire) && !rejectedByTransport(wire):
		return false
	case errors.Is(err, ErrLimit) || errors.As(err, new(errMalformed)):
		return false
	}
	return true
}

// taskWait waits d, or until the call ends. The wait is the client's,
// not the server's silence: the call's idle timeout is held meanwhile
// (it bounds each poll's answer), and MaxCallDuration still counts.
func (s *Session) taskWait(cctx context.Context, call *inflightCall, d time.Duration) error {
	call.clock.hold()
	defer call.clock.release()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-cctx.Done():
		return cctx.Err()
	}
}

// taskResult takes a 2025-11-25 task's result with tasks/result, which
// the server answers once the task ended, exactly as it would have
// answered the call. It is sent once the task ended, or once it needs
// input: the server's requests come meanwhile, tied to the call by the
// task's id.
func (s *Session) taskResult(ctx, cctx context.Context, name string, call *inflightCall, id string) (*CallResult, error) {
	// It may wait for the task's end (an input_required task asks its
	// input meanwhile): no poll restarts the idle timeout then, so it is
	// held, and MaxCallDuration alone bounds the wait.
	call.clock.hold()
	raw, err := s.taskRequest(cctx, call, methodTaskResult, id, nil)
	call.clock.release()
	s.awaitNotes(ctx, call)
	if err != nil {
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && ctx.Err() == nil && cctx.Err() == nil && !rejectedByTransport(wire) {
			return nil, &Error{Ref: s.ref, Op: callOp(name), Detail: "the server answered with a protocol error", Err: err}
		}
		return nil, s.taskError(ctx, cctx, name, call, id, err)
	}
	cr, err := decodeCallResult(raw)
	if errors.Is(err, errTaskAnswer) {
		return nil, &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: "the server answered tasks/result with a task", Err: err}
	}
	if err != nil {
		return nil, &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: "the task's result is malformed", Err: err}
	}
	return cr, nil
}

// taskFault is the error of a failed task: the JSON-RPC error it carries,
// as the synchronous call would have failed with it.
func (s *Session) taskFault(name string, fault json.RawMessage) error {
	var wire struct {
		Code    *int64          `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if fault == nil || json.Unmarshal(fault, &wire) != nil || wire.Code == nil {
		return &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: "the server says the task failed but gave no JSON-RPC error",
			Err: errMalformed("a failed task without error")}
	}
	return &Error{Ref: s.ref, Op: callOp(name), Detail: "the server answered with a protocol error",
		Err: &jsonrpc.Error{Code: *wire.Code, Message: boundServerText(wire.Message), Data: wire.Data}}
}

// taskError turns the failure of a task's request into the call's error.
// A call that ended (its caller, its bounds) cancels the task, unless
// the session is closing: a host that closes its Run keeps its tasks, to
// resume them.
func (s *Session) taskError(ctx, cctx context.Context, name string, call *inflightCall, id string, err error) error {
	if !s.closed.Load() && (ctx.Err() != nil || cctx.Err() != nil) {
		s.cancelTask(cctx, call, id)
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && !rejectedByTransport(wire) && ctx.Err() == nil && cctx.Err() == nil {
		// The server refused the task's request: it no longer knows the
		// task (its TTL lapsed), or broke the protocol.
		return &Error{Ref: s.ref, Op: callOp(name), Kind: ErrUnavailable,
			Detail: "the server refused a request about the call's task (it may no longer know the task: its TTL may have lapsed); the call has no result", Err: err}
	}
	if errors.Is(err, ErrLimit) || errors.As(err, new(errMalformed)) {
		return &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: "the server's answer about the call's task is malformed", Err: err}
	}
	return s.classify(callOp(name), ctx, cctx, err)
}

// cancelTask asks the server to cancel the task (cooperative: it may
// finish anyway), bounded by taskCancelTime, after the call's end.
func (s *Session) cancelTask(cctx context.Context, call *inflightCall, id string) {
	if s.closed.Load() || id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(cctx), taskCancelTime)
	defer cancel()
	_, _ = s.taskRequest(ctx, call, methodTaskCancel, id, nil)
}

// reportTask hands a task's status to the session's TaskStatus handler,
// with the call's tag.
func (s *Session) reportTask(ctx context.Context, call *inflightCall, st TaskStatus) {
	if s.serve == nil || s.serve.h.TaskStatus == nil {
		return
	}
	s.serve.h.TaskStatus(ctx, Incoming{Ref: s.ref, Calls: []any{call.tag}}, st)
}

// relatedTask returns the task id a legacy server's request names in its
// _meta (io.modelcontextprotocol/related-task), "" when none.
func relatedTask(meta map[string]any) string {
	m, _ := meta[metaRelatedTask].(map[string]any)
	id, _ := m["taskId"].(string)
	if len(id) > maxTaskIDBytes {
		return ""
	}
	return id
}

// declaresTaskCalls reads an initialize result: whether the server's
// capabilities declare task-augmented tools/call
// (capabilities.tasks.requests.tools.call, protocol 2025-11-25), which
// the go-sdk does not keep.
func declaresTaskCalls(result json.RawMessage) bool {
	var r struct {
		Capabilities struct {
			Tasks *struct {
				Requests *struct {
					Tools *struct {
						Call json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil || r.Capabilities.Tasks == nil {
		return false
	}
	req := r.Capabilities.Tasks.Requests
	return req != nil && req.Tools != nil && len(req.Tools.Call) > 0 && req.Tools.Call[0] == '{'
}

// initWritten notes the id of the initialize request, whose answer
// says whether the server declares task-augmented tools/call.
func (c *toolsListCapture) initWritten(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.initID = id
}

// initAnswered reads the answer to the initialize request.
func (c *toolsListCapture) initAnswered(id string, result json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id == "" || id != c.initID {
		return
	}
	c.initID = ""
	c.taskCalls = declaresTaskCalls(result)
}

// tasksDeclared reports whether the server's initialize result declared
// task-augmented tools/call.
func (c *toolsListCapture) tasksDeclared() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taskCalls
}
