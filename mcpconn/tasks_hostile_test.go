package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// taskPeer is a hostile 2025-11-25 server over streamable HTTP on
// 127.0.0.1 whose one tool, "job", must be called as a task; get answers
// its n-th tasks/get (the others are answered as a normal peer would).
type taskPeer struct {
	get    func(n int) string // the result of the n-th tasks/get (from 1)
	result string             // the result of tasks/result; "" for a text "done"
	create string             // the result of tools/call; "" for task t1, working, polled every 1 ms

	mu      sync.Mutex
	gets    []time.Time
	cancels int
}

func (p *taskPeer) serve(t *testing.T) string {
	ts := hostileHTTP(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		reply := func(res string) { fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res) }
		switch method {
		case "initialize":
			reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"hostile","version":"0"}}`)
		case "tools/list":
			reply(`{"tools":[{"name":"job","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`)
		case "tools/call":
			reply(cmpOr(p.create, `{"task":{"taskId":"t1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000,"pollInterval":1}}`))
		case "tasks/get":
			p.mu.Lock()
			p.gets = append(p.gets, time.Now())
			n := len(p.gets)
			p.mu.Unlock()
			reply(p.get(n))
		case "tasks/result":
			reply(cmpOr(p.result, `{"content":[{"type":"text","text":"done"}]}`))
		case "tasks/cancel":
			p.mu.Lock()
			p.cancels++
			p.mu.Unlock()
			reply(`{"taskId":"t1","status":"cancelled","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}`)
		default:
			reply(`{}`)
		}
	})
	return ts.URL
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func taskState(id, status, extra string) string {
	return `{"taskId":"` + id + `","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000,"pollInterval":1` + extra + `}`
}

// Issue 26 item 1, hostile by default: what a server says of its task is
// bounded, and a task that breaks the protocol fails the call with a bad
// result and is cancelled.
func TestTaskHostileServer(t *testing.T) {
	t.Parallel()
	const minPoll = 40 * time.Millisecond
	huge := strings.Repeat("\u001b[2J", 30_000)
	for _, tc := range []struct {
		name        string
		peer        *taskPeer
		wantErr     error  // nil: a result
		wantDetail  string // a part of the error's text; "" for any
		wantCancels int
		check       func(t *testing.T, p *taskPeer, st *statuses)
	}{
		{name: "asks to be polled every millisecond", peer: &taskPeer{get: func(n int) string {
			if n < 6 {
				return taskState("t1", "working", "")
			}
			return taskState("t1", "completed", "")
		}}, check: func(t *testing.T, p *taskPeer, _ *statuses) {
			// The gaps the server saw are at least the minimum: a slow
			// machine only makes them longer.
			for i := 1; i < len(p.gets); i++ {
				if gap := p.gets[i].Sub(p.gets[i-1]); gap < minPoll {
					t.Errorf("poll %d came %v after the one before, less than MinPollInterval %v", i, gap, minPoll)
				}
			}
		}},
		{name: "a status message of 120 KB with escape sequences", peer: &taskPeer{get: func(n int) string {
			msg, _ := json.Marshal(huge)
			if n == 1 {
				return taskState("t1", "working", `,"statusMessage":`+string(msg))
			}
			return taskState("t1", "completed", "")
		}}, check: func(t *testing.T, _ *taskPeer, st *statuses) {
			// TaskStatus.Message: cut to 512 bytes of the server's text
			// (with "..."), each control character replaced.
			for _, s := range st.list() {
				msg := strings.SplitN(s, " ", 3)[2] // "<calls> <status> <message>"
				if n := utf8.RuneCountInString(msg); n > 512+len("...") || strings.Contains(s, "\u001b") {
					t.Errorf("a status of %d characters, with its escapes: %.80q", n, s)
				}
			}
		}},
		{name: "tasks/get about another task", peer: &taskPeer{get: func(int) string { return taskState("t2", "working", "") }},
			wantErr: mcpconn.ErrBadResult, wantCancels: 1},
		{name: "a task id of 2 KiB", peer: &taskPeer{get: func(int) string { return taskState(strings.Repeat("x", 2048), "working", "") }},
			wantErr: mcpconn.ErrBadResult, wantCancels: 1},
		{name: "an unknown status", peer: &taskPeer{get: func(int) string { return taskState("t1", "sleeping", "") }},
			wantErr: mcpconn.ErrBadResult, wantCancels: 1},
		{name: "tasks/result answered with a task", peer: &taskPeer{get: func(int) string { return taskState("t1", "completed", "") },
			result: `{"task":{"taskId":"t1","status":"working"}}`}, wantErr: mcpconn.ErrBadResult, wantDetail: "answered tasks/result with a task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := tc.peer.serve(t)
			st := &statuses{}
			s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MinTaskPollInterval: minPoll}}),
				resource.MCPServer{Type: resource.TransportHTTP, URL: url}, &mcpconn.Handlers{TaskStatus: st.handler})
			if _, err := s.Tools(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, err := s.CallTool(context.Background(), "job", nil)
			switch {
			case tc.wantErr == nil && (err != nil || res.Text() != "done"):
				t.Fatalf("call = %v, %v; want the task's result", res, err)
			case tc.wantErr != nil && (!errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantDetail)):
				t.Fatalf("call = %v, %v; want %v (%q)", res, err, tc.wantErr, tc.wantDetail)
			}
			tc.peer.mu.Lock()
			defer tc.peer.mu.Unlock()
			if tc.peer.cancels != tc.wantCancels {
				t.Errorf("tasks/cancel sent %d times, want %d", tc.peer.cancels, tc.wantCancels)
			}
			if tc.check != nil {
				tc.check(t, tc.peer, st)
			}
		})
	}
}

// modernTaskPeer is a hostile 2026-07-28 server over streamable HTTP on
// 127.0.0.1 with one tool, "job"; answer gives the result of each request
// but server/discover and tools/list (taskCreated answers a call with
// task t1).
func modernTaskPeer(t *testing.T, answer func(method string) string) string {
	ts := rpcHTTP(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		var res string
		switch method {
		case "server/discover":
			res = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"serverInfo":{"name":"hostile","version":"0"}}`
		case "tools/list":
			res = `{"tools":[{"name":"job","inputSchema":{"type":"object"}}]}`
		default:
			res = answer(method)
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
	})
	return ts.URL
}

// taskCreated is a 2026-07-28 CreateTaskResult: task t1, working.
var taskCreated = modernTask("task", "working", "")

// modernTask is a 2026-07-28 task t1 answer: resultType, status, and
// extra members (",..." or "").
func modernTask(resultType, status, extra string) string {
	return `{"resultType":"` + resultType + `","taskId":"t1","status":"` + status +
		`","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":60000` + extra + `}`
}

// Issue 26 item 1, hostile by default: a 2026-07-28 task that asks for
// input again and again is bounded by MaxInputRounds, like a call's
// input_required answers, and is cancelled.
func TestTaskEndlessInput(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var gets, updates, cancels int
	url := modernTaskPeer(t, func(method string) string {
		mu.Lock()
		defer mu.Unlock()
		switch method {
		case "tools/call":
			return taskCreated
		case "tasks/get":
			gets++
			return modernTask("complete", "input_required", fmt.Sprintf(
				`,"inputRequests":{"k%d":{"method":"elicitation/create","params":{"mode":"form","message":"again?","requestedSchema":{"type":"object"}}}}`, gets))
		case "tasks/update":
			updates++
		case "tasks/cancel":
			cancels++
		}
		return `{"resultType":"complete"}`
	})
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MinTaskPollInterval: time.Millisecond, MaxInputRounds: 3}}),
		resource.MCPServer{Type: resource.TransportHTTP, URL: url}, &mcpconn.Handlers{Elicit: elicitAccept(map[string]any{})})
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(context.Background(), "job", nil); !errors.Is(err, mcpconn.ErrInputRequired) {
		t.Fatalf("call = %v, want ErrInputRequired", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if gets != 4 || updates != 3 || cancels != 1 {
		t.Errorf("tasks/get %d, tasks/update %d, tasks/cancel %d; want 4, 3 and 1", gets, updates, cancels)
	}
}

// Issue 26 item 1: the wait between two polls is the client's, not the
// server's silence: a poll interval longer than the registration's
// tool_timeout_ms (an idle timeout) does not time the call out; each
// poll's answer is what the idle timeout bounds.
func TestTaskPollLongerThanToolTimeout(t *testing.T) {
	t.Parallel()
	peer := &taskPeer{get: func(n int) string {
		if n < 2 {
			return taskState("t1", "working", "")
		}
		return taskState("t1", "completed", "")
	}}
	url := peer.serve(t)
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MinTaskPollInterval: 1200 * time.Millisecond}}),
		resource.MCPServer{Type: resource.TransportHTTP, URL: url, ToolTimeoutMS: 400}, nil)
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res, err := s.CallTool(context.Background(), "job", nil); err != nil || res.Text() != "done" {
		t.Fatalf("call = %v, %v; want the task's result", res, err)
	}
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if len(peer.gets) != 2 || peer.cancels != 0 {
		t.Errorf("tasks/get %d, tasks/cancel %d; want 2 and 0", len(peer.gets), peer.cancels)
	}
}

// Issue 26 item 1 (SEP-2663: clients SHOULD respect pollIntervalMs, which
// MAY change; servers MAY rate-limit faster polls): a poll interval the
// server suggested once holds until it suggests another, so a task
// whose tasks/get answers do not repeat it is not polled faster.
func TestTaskPollIntervalKept(t *testing.T) {
	t.Parallel()
	const suggested = 150 * time.Millisecond
	peer := &taskPeer{
		create: `{"task":{"taskId":"t1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000,"pollInterval":150}}`,
		get: func(n int) string {
			status := "working"
			if n == 3 {
				status = "completed"
			}
			return `{"taskId":"t1","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}`
		},
	}
	url := peer.serve(t)
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MinTaskPollInterval: time.Millisecond}}),
		resource.MCPServer{Type: resource.TransportHTTP, URL: url}, nil)
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res, err := s.CallTool(context.Background(), "job", nil); err != nil || res.Text() != "done" {
		t.Fatalf("call = %v, %v; want the task's result", res, err)
	}
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if len(peer.gets) != 3 {
		t.Fatalf("tasks/get %d times, want 3", len(peer.gets))
	}
	// A slow machine only makes the gaps longer.
	for i := 1; i < len(peer.gets); i++ {
		if gap := peer.gets[i].Sub(peer.gets[i-1]); gap < suggested {
			t.Errorf("poll %d came %v after the one before, less than the %v the server suggested", i+1, gap, suggested)
		}
	}
}

// Issue 26 item 1, hostile by default: a call answered with a task is
// never sent again, whatever error the task ends with: the header
// mismatch that makes CallTool list and send a refused call once more
// (-32020) means the server ran nothing, which a task's failure
// contradicts.
func TestTaskNotSentAgain(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls int
	url := modernTaskPeer(t, func(method string) string {
		mu.Lock()
		defer mu.Unlock()
		switch method {
		case "tools/call":
			calls++
			return taskCreated
		case "tasks/get":
			return modernTask("complete", "failed", `,"error":{"code":-32020,"message":"header mismatch"}`)
		}
		return `{"resultType":"complete"}`
	})
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MinTaskPollInterval: time.Millisecond}}),
		resource.MCPServer{Type: resource.TransportHTTP, URL: url}, nil)
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := s.CallTool(context.Background(), "job", nil)
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != -32020 {
		t.Errorf("call = %v, want the task's error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("tools/call sent %d times, want 1", calls)
	}
}

// Issue 26 item 1: a poll whose answer never comes (the server drops the
// response) does not end the task: it is polled again, up to three
// polls in a row without an answer; past that the call fails as
// unavailable.
func TestTaskLostPoll(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		drops    int // tasks/get answers dropped before one is given
		wantGets int
		wantErr  error
	}{
		{name: "one lost poll", drops: 1, wantGets: 2},
		{name: "three lost polls", drops: 3, wantGets: 4},
		{name: "a server that never answers a poll", drops: 100, wantGets: 4, wantErr: mcpconn.ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			gets, cancels := 0, 0
			url := modernTaskPeer(t, func(method string) string {
				mu.Lock()
				defer mu.Unlock()
				switch method {
				case "tools/call":
					return taskCreated
				case "tasks/get":
					gets++
					if gets <= tc.drops {
						panic(http.ErrAbortHandler) // the response breaks off
					}
					return modernTask("complete", "completed", `,"result":{"content":[{"type":"text","text":"done"}]}`)
				case "tasks/cancel":
					cancels++
				}
				return `{"resultType":"complete"}`
			})
			s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MinTaskPollInterval: time.Millisecond}}),
				resource.MCPServer{Type: resource.TransportHTTP, URL: url}, nil)
			if _, err := s.Tools(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, err := s.CallTool(context.Background(), "job", nil)
			switch {
			case tc.wantErr == nil && (err != nil || res.Text() != "done"):
				t.Fatalf("call = %v, %v; want the task's result", res, err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("call = %v, %v; want %v", res, err, tc.wantErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if gets != tc.wantGets || cancels != 0 {
				t.Errorf("tasks/get sent %d times, tasks/cancel %d; want %d and none (the call did not end early)", gets, cancels, tc.wantGets)
			}
		})
	}
}
