package mcptest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// A raw JSON-RPC peer of the fake server, so that the tests see the task
// wire shapes as they are: in process (Dial), over stdio (the binary) and
// over streamable HTTP (the binary with -http).

// rpcMsg is one JSON-RPC message.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcErr         `json:"error,omitempty"`
}

type rpcErr struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// msgLine carries messages one JSON text at a time (in process and
// stdio).
type msgLine interface {
	send(b []byte) error
	recv() ([]byte, error)
	close()
}

// rawPeer speaks to the fake server in one era. Its calls are made one
// at a time; server requests that come meanwhile are answered by
// onRequest (nil: an error answer).
type rawPeer struct {
	t      *testing.T
	modern bool
	line   msgLine // in process, stdio
	url    string  // HTTP
	sessID string  // HTTP legacy
	mu     sync.Mutex
	nextID int
	// onRequest answers a server request: its result, or an error.
	onRequest func(method string, params json.RawMessage) (any, *rpcErr)
	// seen records every server request received, in order.
	seen []rpcMsg
}

// inMemLine is a Connection of an in-process server.
type inMemLine struct{ c mcp.Connection }

func (l inMemLine) send(b []byte) error {
	m, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return err
	}
	return l.c.Write(context.Background(), m)
}

func (l inMemLine) recv() ([]byte, error) {
	m, err := l.c.Read(context.Background())
	if err != nil {
		return nil, err
	}
	return jsonrpc.EncodeMessage(m)
}

func (l inMemLine) close() { _ = l.c.Close() }

// stdioLine is the pipes of a server process.
type stdioLine struct {
	in  io.WriteCloser
	out *bufio.Reader
	cmd *exec.Cmd
}

func (l *stdioLine) send(b []byte) error {
	_, err := l.in.Write(append(b, '\n'))
	return err
}

func (l *stdioLine) recv() ([]byte, error) {
	b, err := l.out.ReadBytes('\n')
	return bytes.TrimSpace(b), err
}

func (l *stdioLine) close() {
	_ = l.in.Close()
	_ = l.cmd.Wait()
}

// dialPeer connects to a server of dial, in process.
func dialPeer(t *testing.T, dial func(context.Context, resource.Ref, resource.MCPServer) (mcp.Transport, error), modern bool) *rawPeer {
	t.Helper()
	return startPeer(t, &rawPeer{t: t, modern: modern, line: dialLine(t, dial)})
}

// dialLine is a new connection to a server of dial.
func dialLine(t *testing.T, dial func(context.Context, resource.Ref, resource.MCPServer) (mcp.Transport, error)) msgLine {
	t.Helper()
	tr, err := dial(context.Background(), "fake", resource.MCPServer{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return inMemLine{c}
}

// stdioPeer starts the binary with args and speaks to it on stdio.
func stdioPeer(t *testing.T, modern bool, args ...string) *rawPeer {
	t.Helper()
	cmd := exec.Command(mcptest.Command(t), args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return startPeer(t, &rawPeer{t: t, modern: modern, line: &stdioLine{in: in, out: bufio.NewReader(out), cmd: cmd}})
}

// httpPeer speaks streamable HTTP to url.
func httpPeer(t *testing.T, url string, modern bool) *rawPeer {
	t.Helper()
	return startPeer(t, &rawPeer{t: t, modern: modern, url: url})
}

func startPeer(t *testing.T, p *rawPeer) *rawPeer {
	t.Helper()
	if p.line != nil {
		t.Cleanup(p.line.close)
	}
	if !p.modern {
		res, rerr := p.call("initialize", map[string]any{"protocolVersion": "2025-11-25",
			"capabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
			"clientInfo":   map[string]any{"name": "raw", "version": "1"}})
		if rerr != nil {
			t.Fatalf("initialize: %+v", rerr)
		}
		var ir struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		}
		_ = json.Unmarshal(res, &ir)
		p.notify("notifications/initialized")
	}
	return p
}

const clientCapsKey = "io.modelcontextprotocol/clientCapabilities"

// modernMeta is the _meta of a modern request, declaring the tasks
// extension when tasks is set.
func modernMeta(tasks bool) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{mcptest.TasksExtension: map[string]any{}}
	}
	return map[string]any{"io.modelcontextprotocol/protocolVersion": mcptest.ModernProtocolVersion,
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "raw", "version": "1"},
		clientCapsKey:                        caps}
}

// callMeta sends method with params (a map; a modern peer adds _meta
// declaring the tasks extension unless params has a _meta).
func (p *rawPeer) call(method string, params map[string]any) (json.RawMessage, *rpcErr) {
	p.t.Helper()
	if p.modern && params["_meta"] == nil {
		params["_meta"] = modernMeta(true)
	}
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	p.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	idText := fmt.Sprint(id)
	if p.url != "" {
		return p.httpCall(method, params, b, idText)
	}
	if err := p.line.send(b); err != nil {
		p.t.Fatalf("%s: send: %v", method, err)
	}
	for {
		raw, err := p.line.recv()
		if err != nil {
			p.t.Fatalf("%s: recv: %v", method, err)
		}
		if m, done := p.handle(raw, idText); done {
			return m.Result, m.Error
		}
	}
}

// handle takes one message read while waiting for the response idText;
// done when it is that response.
func (p *rawPeer) handle(raw []byte, idText string) (rpcMsg, bool) {
	var m rpcMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		p.t.Fatalf("bad message %s: %v", raw, err)
	}
	switch {
	case m.Method != "" && m.ID != nil:
		p.seen = append(p.seen, m)
		resp := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		if p.onRequest == nil {
			resp["error"] = rpcErr{Code: -32601, Message: "no handler"}
		} else if res, rerr := p.onRequest(m.Method, m.Params); rerr != nil {
			resp["error"] = rerr
		} else {
			resp["result"] = res
		}
		b, _ := json.Marshal(resp)
		if p.url != "" {
			p.post(b, "", "")
		} else if err := p.line.send(b); err != nil {
			p.t.Fatalf("answer: %v", err)
		}
	case m.Method == "" && string(m.ID) == idText:
		return m, true
	}
	return m, false
}

func (p *rawPeer) notify(method string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	if p.url != "" {
		p.post(b, "", "")
		return
	}
	if err := p.line.send(b); err != nil {
		p.t.Fatal(err)
	}
}

// post sends body to the HTTP server with the era's headers.
func (p *rawPeer) post(body []byte, method, name string) *http.Response {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if p.modern {
		req.Header.Set("Mcp-Protocol-Version", mcptest.ModernProtocolVersion)
		if method != "" {
			req.Header.Set("Mcp-Method", method)
		}
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else if p.sessID != "" {
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", p.sessID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	if method == "" { // a notification or an answer
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	return resp
}

// httpNameOf is the Mcp-Name of a modern request.
func httpNameOf(method string, params map[string]any) string {
	switch method {
	case "tools/call":
		s, _ := params["name"].(string)
		return s
	case "tasks/get", "tasks/update", "tasks/cancel":
		s, _ := params["taskId"].(string)
		return s
	}
	return ""
}

func (p *rawPeer) httpCall(method string, params map[string]any, body []byte, idText string) (json.RawMessage, *rpcErr) {
	p.t.Helper()
	resp := p.post(body, method, httpNameOf(method, params))
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && p.sessID == "" {
		p.sessID = id
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		var m rpcMsg
		if json.Unmarshal(b, &m) == nil && m.Error != nil {
			return nil, m.Error
		}
		p.t.Fatalf("%s: HTTP %d: %s", method, resp.StatusCode, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		m, done := p.handle(b, idText)
		if !done {
			p.t.Fatalf("%s: no response in %s", method, b)
		}
		return m.Result, m.Error
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimSpace(v)...)
			continue
		}
		if line == "" && len(data) > 0 {
			m, done := p.handle(data, idText)
			data = nil
			if done {
				return m.Result, m.Error
			}
		}
	}
	p.t.Fatalf("%s: the event stream ended without a response: %v", method, sc.Err())
	return nil, nil
}

// taskOf is the Task of a CreateTaskResult or a tasks/get result.
type taskWire struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTL            *int            `json:"ttl"`
	PollInterval   *int            `json:"pollInterval"`
	TTLMs          *int            `json:"ttlMs"`
	PollIntervalMs *int            `json:"pollIntervalMs"`
	InputRequests  json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage `json:"result"`
	Error          json.RawMessage `json:"error"`
}

func decodeTask(t *testing.T, raw json.RawMessage) taskWire {
	t.Helper()
	var w taskWire
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("not a task: %s", raw)
	}
	return w
}

// startTask calls tool as a task (legacy: params.task; modern: the
// extension declared) and returns the task of the answer and its raw
// bytes.
func (p *rawPeer) startTask(tool string, args map[string]any) (taskWire, json.RawMessage) {
	p.t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	if !p.modern {
		params["task"] = map[string]any{"ttl": 600000}
	}
	res, rerr := p.call("tools/call", params)
	if rerr != nil {
		p.t.Fatalf("tools/call %s: %+v", tool, rerr)
	}
	if p.modern {
		return decodeTask(p.t, res), res
	}
	var ct struct {
		Task json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(res, &ct); err != nil || ct.Task == nil {
		p.t.Fatalf("tools/call %s: not a CreateTaskResult: %s", tool, res)
	}
	return decodeTask(p.t, ct.Task), res
}

// plainCall calls tool without asking for a task (legacy: no
// params.task; modern: the extension not declared).
func (p *rawPeer) plainCall(tool string, args map[string]any) (json.RawMessage, *rpcErr) {
	p.t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	if p.modern {
		params["_meta"] = modernMeta(false)
	}
	return p.call("tools/call", params)
}

// get is tasks/get.
func (p *rawPeer) get(id string) (taskWire, *rpcErr) {
	p.t.Helper()
	res, rerr := p.call("tasks/get", map[string]any{"taskId": id})
	if rerr != nil {
		return taskWire{}, rerr
	}
	return decodeTask(p.t, res), nil
}

// waitStatus polls tasks/get (poll.Until) until the task's status is one
// of want.
func (p *rawPeer) waitStatus(id string, want ...string) taskWire {
	p.t.Helper()
	var last taskWire
	poll.Until(p.t, fmt.Sprintf("task %s to be one of %v", id, want), func() bool {
		w, rerr := p.get(id)
		if rerr != nil {
			p.t.Fatalf("tasks/get %s: %+v", id, rerr)
		}
		last = w
		return slices.Contains(want, w.Status)
	})
	return last
}

// syncEcho is the raw result of echo for text, called without a task.
func (p *rawPeer) syncEcho(text string) json.RawMessage {
	p.t.Helper()
	res, rerr := p.call("tools/call", map[string]any{"name": mcptest.ToolEcho, "arguments": map[string]any{"text": text}})
	if rerr != nil {
		p.t.Fatalf("echo: %+v", rerr)
	}
	return res
}

// withoutEnvelope drops the fields a modern result carries beside the
// CallToolResult (resultType, _meta), and _meta in legacy (the
// related-task of tasks/result).
func withoutEnvelope(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	delete(m, "resultType")
	delete(m, "_meta")
	b, _ := json.Marshal(m)
	return string(b)
}

// taskEnv is a fake server with FaultTasks in one era: peer connects a
// new client (a new session or connection) to the same server, so that
// tasks outlive the session that created them; shared is false where
// each peer has a server of its own (stdio: a process each).
type taskEnv struct {
	name   string
	modern bool
	peer   func(t *testing.T) *rawPeer
	shared bool
	// counters, in process, are the server's Counters.
	counters *mcptest.Counters
}

func taskEnvs(t *testing.T) []taskEnv {
	var envs []taskEnv
	for _, modern := range []bool{false, true} {
		era := "legacy"
		if modern {
			era = "modern"
		}
		counters := &mcptest.Counters{}
		dial := mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultTasks}, Counters: counters})
		envs = append(envs, taskEnv{name: "in-process dual " + era, modern: modern, shared: true, counters: counters,
			peer: func(t *testing.T) *rawPeer { return dialPeer(t, dial, modern) }})
		eraDial := mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultTasks}, Era: mcptest.Era(era)})
		envs = append(envs, taskEnv{name: "in-process " + era, modern: modern, shared: true,
			peer: func(t *testing.T) *rawPeer { return dialPeer(t, eraDial, modern) }})
		envs = append(envs, taskEnv{name: "stdio " + era, modern: modern,
			peer: func(t *testing.T) *rawPeer { return stdioPeer(t, modern, "-fault", "tasks", "-era", "dual") }})
		url := mcptest.StartHTTP(t, "-fault", "tasks", "-era", era)
		envs = append(envs, taskEnv{name: "http " + era, modern: modern, shared: true,
			peer: func(t *testing.T) *rawPeer { return httpPeer(t, url, modern) }})
	}
	return envs
}

func errIs(e *rpcErr, code int64, msg string) bool {
	return e != nil && e.Code == code && (msg == "" || e.Message == msg)
}

// Issue 26 item 7: each task tool of FaultTasks, in both eras, over every
// transport, with the exact wire shapes of 2025-11-25 tasks and of the
// 2026-07-28 tasks extension (SEP-2663).
func TestTaskTools(t *testing.T) {
	t.Parallel()
	for _, env := range taskEnvs(t) {
		t.Run(env.name, func(t *testing.T) {
			t.Parallel()
			p := env.peer(t)
			legacy := !env.modern

			t.Run("work completes with echo's exact result", func(t *testing.T) {
				w, raw := p.startTask(mcptest.ToolTaskWork, map[string]any{"text": "héllo <&> \u2028", "steps": 3, "step_ms": 5})
				if w.Status != "working" || w.StatusMessage != "step 1 of 3" || w.CreatedAt != w.LastUpdatedAt {
					t.Errorf("created %s", raw)
				}
				if _, err := time.Parse(time.RFC3339Nano, w.CreatedAt); err != nil {
					t.Errorf("createdAt %q: %v", w.CreatedAt, err)
				}
				ttl, poll := w.TTL, w.PollInterval
				if env.modern {
					ttl, poll = w.TTLMs, w.PollIntervalMs
					if w.ResultType != "task" || w.TTL != nil {
						t.Errorf("modern create %s", raw)
					}
				} else if w.ResultType != "" || w.TTLMs != nil {
					t.Errorf("legacy create %s", raw)
				}
				if ttl == nil || *ttl != mcptest.TaskTTLMSDefault || poll == nil || *poll != mcptest.TaskPollMSDefault {
					t.Errorf("ttl, poll interval of %s; want %d, %d", raw, mcptest.TaskTTLMSDefault, mcptest.TaskPollMSDefault)
				}
				want := withoutEnvelope(t, p.syncEcho("héllo <&> \u2028"))
				if legacy {
					// tasks/result blocks until the task ends.
					res, rerr := p.call("tasks/result", map[string]any{"taskId": w.TaskID})
					if rerr != nil {
						t.Fatalf("tasks/result: %+v", rerr)
					}
					if got := withoutEnvelope(t, res); got != want {
						t.Errorf("tasks/result = %s; want %s", got, want)
					}
					var m struct {
						Meta map[string]map[string]string `json:"_meta"`
					}
					_ = json.Unmarshal(res, &m)
					if m.Meta[mcptest.RelatedTaskMeta]["taskId"] != w.TaskID || len(m.Meta) != 1 {
						t.Errorf("tasks/result _meta = %s", res)
					}
				}
				done := p.waitStatus(w.TaskID, "completed")
				if env.modern && string(done.Result) != want {
					t.Errorf("completed result = %s; want echo's %s", done.Result, want)
				}
				if legacy && done.Result != nil {
					t.Errorf("a legacy tasks/get carries the result: %s", done.Result)
				}
				if done.StatusMessage != "" || done.LastUpdatedAt < done.CreatedAt {
					t.Errorf("completed task %+v", done)
				}
			})

			t.Run("poll 0 omits the poll interval; ttl_ms is announced", func(t *testing.T) {
				_, raw := p.startTask(mcptest.ToolTaskForever, map[string]any{"poll_ms": 0, "ttl_ms": 1234})
				if strings.Contains(string(raw), "pollInterval") || !strings.Contains(string(raw), `"ttl`) ||
					!(strings.Contains(string(raw), `"ttl":1234`) || strings.Contains(string(raw), `"ttlMs":1234`)) {
					t.Errorf("created %s", raw)
				}
				if !strings.Contains(string(raw), `"statusMessage":"working until cancelled"`) {
					t.Errorf("created %s", raw)
				}
			})

			t.Run("required tool called without a task is refused", func(t *testing.T) {
				_, rerr := p.plainCall(mcptest.ToolTaskWork, map[string]any{})
				if env.modern {
					if !errIs(rerr, -32021, "") || string(rerr.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
						t.Errorf("modern refusal %+v; want -32021 with requiredCapabilities", rerr)
					}
				} else if !errIs(rerr, -32601, "") {
					t.Errorf("legacy refusal %+v; want -32601", rerr)
				}
			})

			t.Run("optional tool answers at once without a task", func(t *testing.T) {
				res, rerr := p.plainCall(mcptest.ToolTaskOptional, map[string]any{"text": "x"})
				if rerr != nil || string(res) != string(p.syncEcho("x")) {
					t.Errorf("sync task_optional = %s, %+v; want %s", res, rerr, p.syncEcho("x"))
				}
				w, _ := p.startTask(mcptest.ToolTaskOptional, map[string]any{"text": "x", "step_ms": 1})
				if w.Status != "working" {
					t.Errorf("task_optional as a task: %+v", w)
				}
			})

			t.Run("ask", func(t *testing.T) {
				for _, answer := range []struct{ action, answer, want string }{
					{"accept", "42", "answer: 42"}, {"decline", "", "declined"}, {"cancel", "", "cancelled"},
				} {
					reply := map[string]any{"action": answer.action}
					if answer.action == "accept" {
						reply["content"] = map[string]any{"answer": answer.answer}
					}
					w, _ := p.startTask(mcptest.ToolTaskAsk, map[string]any{"step_ms": 5})
					ir := p.waitStatus(w.TaskID, "input_required")
					if ir.StatusMessage != mcptest.TaskAskMessage {
						t.Errorf("input_required message %q", ir.StatusMessage)
					}
					var res json.RawMessage
					if env.modern {
						wantReq := `{"ask-1":{"method":"elicitation/create","params":{"mode":"form","message":"what answer?","requestedSchema":` + mcptest.TaskAskSchema + `}}}`
						if string(ir.InputRequests) != wantReq {
							t.Errorf("inputRequests = %s; want %s", ir.InputRequests, wantReq)
						}
						ack, rerr := p.call("tasks/update", map[string]any{"taskId": w.TaskID, "inputResponses": map[string]any{"other": reply}})
						if rerr != nil || withoutEnvelope(t, ack) != `{}` || !strings.HasPrefix(string(ack), `{"resultType":"complete"`) {
							t.Errorf("tasks/update of an unknown key = %s, %+v", ack, rerr)
						}
						if again, _ := p.get(w.TaskID); again.Status != "input_required" {
							t.Errorf("after an unknown key: %+v", again)
						}
						if _, rerr := p.call("tasks/update", map[string]any{"taskId": w.TaskID, "inputResponses": map[string]any{"ask-1": reply}}); rerr != nil {
							t.Fatalf("tasks/update: %+v", rerr)
						}
						res = p.waitStatus(w.TaskID, "completed").Result
					} else {
						p.seen = nil
						p.onRequest = func(method string, params json.RawMessage) (any, *rpcErr) { return reply, nil }
						var rerr *rpcErr
						res, rerr = p.call("tasks/result", map[string]any{"taskId": w.TaskID})
						p.onRequest = nil
						if rerr != nil {
							t.Fatalf("tasks/result: %+v", rerr)
						}
						if len(p.seen) != 1 || p.seen[0].Method != "elicitation/create" {
							t.Fatalf("server requests %+v; want one elicitation/create", p.seen)
						}
						want := `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + w.TaskID + `"}},"mode":"form","message":"what answer?","requestedSchema":` + mcptest.TaskAskSchema + `}`
						if string(p.seen[0].Params) != want {
							t.Errorf("elicitation params %s; want %s", p.seen[0].Params, want)
						}
					}
					if got := withoutEnvelope(t, res); got != withoutEnvelope(t, p.syncEcho(answer.want)) {
						t.Errorf("%s: result %s; want the text %q", answer.action, got, answer.want)
					}
				}
			})

			t.Run("fail", func(t *testing.T) {
				w, _ := p.startTask(mcptest.ToolTaskFail, map[string]any{"step_ms": 5})
				if legacy {
					if _, rerr := p.call("tasks/result", map[string]any{"taskId": w.TaskID}); !errIs(rerr, mcptest.TaskFailCode, mcptest.TaskFailMessage) {
						t.Errorf("tasks/result of a failed task: %+v", rerr)
					}
				}
				f := p.waitStatus(w.TaskID, "failed")
				if env.modern && string(f.Error) != `{"code":-32000,"message":"the task failed on purpose"}` {
					t.Errorf("failed task error %s", f.Error)
				}
				if _, rerr := p.call("tasks/cancel", map[string]any{"taskId": w.TaskID}); legacy && !errIs(rerr, -32602, "") || env.modern && rerr != nil {
					t.Errorf("tasks/cancel of a failed task: %+v", rerr)
				}
			})

			t.Run("cancelled by the server", func(t *testing.T) {
				w, _ := p.startTask(mcptest.ToolTaskCancelled, map[string]any{"step_ms": 5})
				if legacy {
					if _, rerr := p.call("tasks/result", map[string]any{"taskId": w.TaskID}); !errIs(rerr, mcptest.TaskCancelledCode, mcptest.TaskCancelledMessage) {
						t.Errorf("tasks/result of a cancelled task: %+v", rerr)
					}
				}
				if c := p.waitStatus(w.TaskID, "cancelled"); c.StatusMessage != mcptest.TaskCancelledByServer {
					t.Errorf("cancelled task %+v", c)
				}
			})

			t.Run("ttl lapses and the task is gone", func(t *testing.T) {
				w, raw := p.startTask(mcptest.ToolTaskTTL, map[string]any{})
				if !strings.Contains(string(raw), `"ttl":50,`) && !strings.Contains(string(raw), `"ttlMs":50,`) {
					t.Errorf("task_ttl created %s; want ttl 50", raw)
				}
				var rerr *rpcErr
				poll.Until(t, "the task's TTL to lapse", func() bool {
					_, rerr = p.get(w.TaskID)
					return rerr != nil
				})
				if !errIs(rerr, -32602, mcptest.TaskUnknownMessage) {
					t.Fatalf("tasks/get after the TTL: %+v", rerr)
				}
				methods := []string{"tasks/cancel", "tasks/result"}
				if env.modern {
					methods = []string{"tasks/cancel", "tasks/update"}
				}
				for _, m := range methods {
					if _, rerr := p.call(m, map[string]any{"taskId": w.TaskID, "inputResponses": map[string]any{}}); !errIs(rerr, -32602, mcptest.TaskUnknownMessage) {
						t.Errorf("%s after the TTL: %+v", m, rerr)
					}
				}
			})

			t.Run("forever until cancelled", func(t *testing.T) {
				w, _ := p.startTask(mcptest.ToolTaskForever, map[string]any{})
				if g, _ := p.get(w.TaskID); g.Status != "working" {
					t.Errorf("task_forever %+v", g)
				}
				res, rerr := p.call("tasks/cancel", map[string]any{"taskId": w.TaskID})
				if rerr != nil {
					t.Fatalf("tasks/cancel: %+v", rerr)
				}
				if env.modern {
					if withoutEnvelope(t, res) != `{}` || !strings.HasPrefix(string(res), `{"resultType":"complete"`) {
						t.Errorf("modern tasks/cancel = %s", res)
					}
				} else if c := decodeTask(t, res); c.Status != "cancelled" || c.StatusMessage != mcptest.TaskCancelledByClient || c.TaskID != w.TaskID {
					t.Errorf("legacy tasks/cancel = %s", res)
				}
				if g, _ := p.get(w.TaskID); g.Status != "cancelled" || g.StatusMessage != mcptest.TaskCancelledByClient {
					t.Errorf("after tasks/cancel: %+v", g)
				}
				if _, rerr := p.call("tasks/cancel", map[string]any{"taskId": w.TaskID}); legacy && !errIs(rerr, -32602, "") {
					t.Errorf("second legacy tasks/cancel: %+v", rerr)
				}
			})

			t.Run("unasked task to a plain call", func(t *testing.T) {
				res, rerr := p.plainCall(mcptest.ToolTaskUnasked, map[string]any{})
				if rerr != nil {
					t.Fatal(rerr)
				}
				if env.modern && !strings.HasPrefix(string(res), `{"resultType":"task","taskId":"task-`) ||
					legacy && !strings.HasPrefix(string(res), `{"task":{"taskId":"task-`) {
					t.Errorf("task_unasked = %s", res)
				}
			})

			t.Run("methods of the other era and bad params", func(t *testing.T) {
				type methodCase struct {
					method string
					params map[string]any
					code   int64
				}
				tests := []methodCase{
					{method: "tasks/get", params: map[string]any{}, code: -32602},
					{method: "tasks/get", params: map[string]any{"taskId": "task-nope"}, code: -32602},
				}
				if env.modern {
					tests = append(tests, methodCase{"tasks/result", map[string]any{"taskId": "x"}, -32601},
						methodCase{"tasks/list", map[string]any{}, -32601})
				} else {
					tests = append(tests, methodCase{"tasks/update", map[string]any{"taskId": "x"}, -32601},
						methodCase{"tasks/list", map[string]any{"cursor": "nope"}, -32602})
				}
				for _, tt := range tests {
					if _, rerr := p.call(tt.method, tt.params); !errIs(rerr, tt.code, "") {
						t.Errorf("%s %v: %+v; want code %d", tt.method, tt.params, rerr, tt.code)
					}
				}
			})

			t.Run("stats", func(t *testing.T) {
				res, rerr := p.call("tools/call", map[string]any{"name": mcptest.ToolTaskStats, "arguments": map[string]any{}})
				if rerr != nil {
					t.Fatal(rerr)
				}
				var ctr struct {
					Content []struct{ Text string } `json:"content"`
				}
				_ = json.Unmarshal(res, &ctr)
				var st mcptest.TaskStats
				if len(ctr.Content) != 1 || json.Unmarshal([]byte(ctr.Content[0].Text), &st) != nil {
					t.Fatalf("task_stats = %s", res)
				}
				// The tasks above: work, forever (poll), optional, 3 asks,
				// fail, cancelled, ttl, forever, unasked.
				if st.Created != 11 || st.Gets == 0 || st.Cancels < 3 {
					t.Errorf("task_stats = %+v", st)
				}
				if env.modern && (st.Updates < 4 || st.Results != 1) || legacy && (st.Results < 6 || st.Updates != 1) {
					t.Errorf("task_stats = %+v", st)
				}
				if env.counters != nil && env.counters.Tasks() != st {
					t.Errorf("Counters.Tasks() = %+v; task_stats %+v", env.counters.Tasks(), st)
				}
			})

			if env.shared {
				t.Run("a new session reads a task created earlier", func(t *testing.T) {
					w, _ := p.startTask(mcptest.ToolTaskWork, map[string]any{"text": "later", "step_ms": 1})
					q := env.peer(t)
					if done := q.waitStatus(w.TaskID, "completed"); env.modern && withoutEnvelope(t, done.Result) != withoutEnvelope(t, q.syncEcho("later")) {
						t.Errorf("from another session: %+v", done)
					}
				})
			}
		})
	}
}

// The capabilities and the listing of FaultTasks: 2025-11-25's tasks
// capability in initialize, the extension in server/discover, and each
// tool's execution.taskSupport (none for task_unasked and task_stats).
func TestTaskListing(t *testing.T) {
	t.Parallel()
	dial := mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultTasks}})
	legacy := dialPeer(t, dial, false)
	res, rerr := legacy.call("tools/list", map[string]any{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	var lr struct {
		Tools []struct {
			Name      string          `json:"name"`
			Execution json.RawMessage `json:"execution"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &lr); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range lr.Tools {
		if strings.HasPrefix(tool.Name, "task_") {
			got[tool.Name] = string(tool.Execution)
		}
	}
	want := map[string]string{
		mcptest.ToolTaskWork: `{"taskSupport":"required"}`, mcptest.ToolTaskOptional: `{"taskSupport":"optional"}`,
		mcptest.ToolTaskAsk: `{"taskSupport":"required"}`, mcptest.ToolTaskFail: `{"taskSupport":"required"}`,
		mcptest.ToolTaskCancelled: `{"taskSupport":"required"}`, mcptest.ToolTaskTTL: `{"taskSupport":"required"}`,
		mcptest.ToolTaskForever: `{"taskSupport":"required"}`, mcptest.ToolTaskUnasked: "", mcptest.ToolTaskStats: "",
	}
	if !maps.Equal(got, want) {
		t.Errorf("task tools listed %v; want %v", got, want)
	}

	// A fresh session: the initialize result.
	p := &rawPeer{t: t, line: dialLine(t, dial)}
	t.Cleanup(p.line.close)
	res, rerr = p.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	var ir struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(res, &ir)
	if got := string(ir.Capabilities["tasks"]); got != `{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}` {
		t.Errorf("initialize capabilities.tasks = %s", got)
	}
	if ir.Capabilities["extensions"] != nil {
		t.Errorf("a legacy initialize declares extensions: %s", res)
	}

	modern := dialPeer(t, dial, true)
	res, rerr = modern.call("server/discover", map[string]any{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	ir.Capabilities = nil
	_ = json.Unmarshal(res, &ir)
	if got := string(ir.Capabilities["extensions"]); got != `{"io.modelcontextprotocol/tasks":{}}` || ir.Capabilities["tasks"] != nil {
		t.Errorf("server/discover capabilities = %s", res)
	}
}

// 2025-11-25: a tool without taskSupport called as a task gets -32601;
// tasks/list pages the tasks, oldest first.
func TestTaskLegacyListAndRefusal(t *testing.T) {
	t.Parallel()
	p := dialPeer(t, mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultTasks}}), false)
	_, rerr := p.call("tools/call", map[string]any{"name": mcptest.ToolEcho, "arguments": map[string]any{"text": "x"}, "task": map[string]any{}})
	if !errIs(rerr, -32601, "") {
		t.Errorf("echo as a task: %+v; want -32601", rerr)
	}
	var ids []string
	for range mcptest.TaskListPageSize + 5 {
		w, _ := p.startTask(mcptest.ToolTaskForever, map[string]any{})
		ids = append(ids, w.TaskID)
	}
	var listed []string
	cursor := ""
	for pages := 0; ; pages++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, rerr := p.call("tasks/list", params)
		if rerr != nil {
			t.Fatal(rerr)
		}
		var page struct {
			Tasks      []taskWire `json:"tasks"`
			NextCursor string     `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			t.Fatal(err)
		}
		if pages == 0 && len(page.Tasks) != mcptest.TaskListPageSize {
			t.Errorf("first page has %d tasks", len(page.Tasks))
		}
		for _, w := range page.Tasks {
			if w.Status != "working" || w.TTL == nil {
				t.Errorf("listed %+v", w)
			}
			listed = append(listed, w.TaskID)
		}
		if cursor = page.NextCursor; cursor == "" || pages > 3 {
			break
		}
	}
	if !slices.Equal(listed, ids) {
		t.Errorf("listed %v; want %v", listed, ids)
	}
}

// 2025-11-25: a tasks/result waiting on a task ends when another session
// cancels the task; an elicitation the client answers with an error
// fails the task with that error.
func TestTaskLegacyResultWaits(t *testing.T) {
	t.Parallel()
	url := mcptest.StartHTTP(t, "-fault", "tasks", "-era", "legacy")
	dial := mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultTasks}})
	for name, peer := range map[string]func(t *testing.T) *rawPeer{
		"in-process": func(t *testing.T) *rawPeer { return dialPeer(t, dial, false) },
		"http":       func(t *testing.T) *rawPeer { return httpPeer(t, url, false) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			waiter, other := peer(t), peer(t)
			w, _ := other.startTask(mcptest.ToolTaskForever, map[string]any{})
			type answer struct {
				res  json.RawMessage
				rerr *rpcErr
			}
			got := make(chan answer, 1)
			go func() {
				res, rerr := waiter.call("tasks/result", map[string]any{"taskId": w.TaskID})
				got <- answer{res, rerr}
			}()
			// The waiter is waiting once the server counted its request.
			poll.Until(t, "the server to count the waiting tasks/result", func() bool {
				var st mcptest.TaskStats
				res, _ := other.call("tools/call", map[string]any{"name": mcptest.ToolTaskStats, "arguments": map[string]any{}})
				var ctr struct {
					Content []struct{ Text string } `json:"content"`
				}
				_ = json.Unmarshal(res, &ctr)
				_ = json.Unmarshal([]byte(ctr.Content[0].Text), &st)
				return st.Results > 0
			})
			if _, rerr := other.call("tasks/cancel", map[string]any{"taskId": w.TaskID}); rerr != nil {
				t.Fatal(rerr)
			}
			if a := <-got; !errIs(a.rerr, mcptest.TaskCancelledCode, mcptest.TaskCancelledMessage) {
				t.Errorf("the waiting tasks/result = %s, %+v", a.res, a.rerr)
			}

			ask, _ := other.startTask(mcptest.ToolTaskAsk, map[string]any{"step_ms": 1})
			waiter.onRequest = func(string, json.RawMessage) (any, *rpcErr) {
				return nil, &rpcErr{Code: -32001, Message: "the user went away"}
			}
			if _, rerr := waiter.call("tasks/result", map[string]any{"taskId": ask.TaskID}); !errIs(rerr, -32001, "the user went away") {
				t.Errorf("tasks/result after an elicitation error: %+v", rerr)
			}
			if g := other.waitStatus(ask.TaskID, "failed"); g.StatusMessage != "the user went away" {
				t.Errorf("failed task %+v", g)
			}
		})
	}
}

// 2026-07-28 over streamable HTTP: tasks/get, tasks/update and
// tasks/cancel must carry Mcp-Name: the taskId (SEP-2663), else 400 with
// HeaderMismatch (-32020).
func TestTaskModernNameHeader(t *testing.T) {
	t.Parallel()
	url := mcptest.StartHTTP(t, "-fault", "tasks", "-era", "modern")
	p := httpPeer(t, url, true)
	w, _ := p.startTask(mcptest.ToolTaskForever, map[string]any{})
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		for _, name := range []string{"", "task-other"} {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method,
				"params": map[string]any{"taskId": w.TaskID, "inputResponses": map[string]any{}, "_meta": modernMeta(true)}})
			resp := p.post(body, method, name)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var m rpcMsg
			_ = json.Unmarshal(b, &m)
			if resp.StatusCode != http.StatusBadRequest || !errIs(m.Error, -32020, "") || string(m.ID) != "7" {
				t.Errorf("%s with Mcp-Name %q: %d %s; want 400 with -32020", method, name, resp.StatusCode, b)
			}
		}
	}
	if g, rerr := p.get(w.TaskID); rerr != nil || g.Status != "working" {
		t.Errorf("with the right Mcp-Name: %+v, %+v", g, rerr)
	}
}
