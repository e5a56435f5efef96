package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/internal/taskcall"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fastTasks polls tasks every few milliseconds: the fake server's steps
// are short.
var fastTasks = &mcpconn.Limits{MinTaskPollInterval: time.Millisecond, MaxTaskPollInterval: 20 * time.Millisecond}

// taskTarget is one way to reach the fake server with its task tools: an
// era, in process or over streamable HTTP.
type taskTarget struct {
	name     string
	counters *mcptest.Counters // in process only
	srv      resource.MCPServer
	opts     *mcpconn.ConnectorOptions
}

func taskTargets(t *testing.T) []taskTarget {
	t.Helper()
	var out []taskTarget
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern} {
		counters := &mcptest.Counters{}
		out = append(out, taskTarget{name: string(era) + "/in-process", counters: counters,
			srv: resource.MCPServer{Type: resource.TransportStdio, Command: "unused-with-dial", Cwd: "/"},
			opts: &mcpconn.ConnectorOptions{Limits: fastTasks, Dial: mcptest.Dial(&mcptest.ServerOptions{Era: era,
				Faults: []mcptest.Fault{mcptest.FaultTasks}, Counters: counters})}})
		url := mcptest.StartHTTP(t, "-era", string(era), "-fault", string(mcptest.FaultTasks))
		out = append(out, taskTarget{name: string(era) + "/http", srv: resource.MCPServer{Type: resource.TransportHTTP, URL: url},
			opts: &mcpconn.ConnectorOptions{Limits: fastTasks}})
	}
	return out
}

// statuses records the task statuses a session's handler is told.
type statuses struct {
	mu  sync.Mutex
	got []string
}

func (s *statuses) handler(_ context.Context, in mcpconn.Incoming, st mcpconn.TaskStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, fmt.Sprintf("%v %s %s", in.Calls, st.Status, st.Message))
}

func (s *statuses) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// stats reads the fake server's task counters: in process directly, over
// HTTP through its task_stats tool.
func (tt taskTarget) stats(t *testing.T, s *mcpconn.Session) mcptest.TaskStats {
	t.Helper()
	if tt.counters != nil {
		return tt.counters.Tasks()
	}
	res, err := s.CallTool(context.Background(), mcptest.ToolTaskStats, nil)
	if err != nil {
		t.Fatal(err)
	}
	var st mcptest.TaskStats
	if err := json.Unmarshal([]byte(res.Text()), &st); err != nil {
		t.Fatalf("task_stats: %v in %q", err, res.Text())
	}
	return st
}

// Issue 26 items 1 and 7: a call answered with a task is followed to its
// end in both eras, in process and over HTTP, and gives exactly what the
// call would have given at once: the result's bytes, the task's JSON-RPC
// error, the answer to its question; a cancelled task, one whose TTL
// lapsed and a call that ends before its task are errors, and the last
// cancels the task.
func TestTasks(t *testing.T) {
	t.Parallel()
	for _, tt := range taskTargets(t) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := &statuses{}
			var asked []string
			var mu sync.Mutex
			s := connectWith(t, quickConnector(tt.opts), tt.srv, &mcpconn.Handlers{
				TaskStatus: st.handler,
				Elicit: func(_ context.Context, in mcpconn.Incoming, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, fmt.Sprintf("%v %s", in.Calls, p.Message))
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "42"}}, nil
				},
			})
			if _, err := s.Tools(context.Background()); err != nil {
				t.Fatal(err)
			}
			ctx := mcpconn.WithCallTag(context.Background(), "c1")

			// Completed: exactly the bytes of echo, called at once.
			want := call(t, s, context.Background(), mcptest.ToolEcho, map[string]any{"text": "done"})
			got, err := s.CallTool(ctx, mcptest.ToolTaskWork, json.RawMessage(`{"text":"done","steps":2}`))
			if err != nil {
				t.Fatalf("task_work: %v", err)
			}
			// The task's result as the server wrote it: echo's result,
			// without the synchronous answer's own wrapping (modern:
			// resultType and _meta serverInfo; legacy: tasks/result adds
			// the related-task _meta).
			if strings.Contains(tt.name, "modern") && string(got.Raw) != `{"content":[{"type":"text","text":"done"}]}` {
				t.Errorf("task_work result = %s, want the task's result exactly", got.Raw)
			}
			if got.Text() != "done" || string(got.ContentJSON) != string(want.ContentJSON) || got.IsError {
				t.Errorf("task_work content = %s, want %s", got.ContentJSON, want.ContentJSON)
			}
			seen := st.list()
			// The first status is the task's seed, the last its end: the
			// steps between depend on when the polls came.
			if len(seen) < 2 || seen[0] != "[c1] working step 1 of 2" || !strings.HasPrefix(seen[len(seen)-1], "[c1] completed") {
				t.Errorf("statuses = %q, want call c1's task from working to completed", seen)
			}

			// input_required: the question goes to Elicit with the call.
			got, err = s.CallTool(ctx, mcptest.ToolTaskAsk, nil)
			if err != nil || got.Text() != "answer: 42" {
				t.Fatalf("task_ask = %v, %v; want the answer", got, err)
			}
			mu.Lock()
			if len(asked) != 1 || asked[0] != "[c1] "+mcptest.TaskAskMessage {
				t.Errorf("elicitations = %q, want one for call c1", asked)
			}
			mu.Unlock()

			// failed: the task's JSON-RPC error.
			_, err = s.CallTool(ctx, mcptest.ToolTaskFail, nil)
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) || wire.Code != mcptest.TaskFailCode || wire.Message != mcptest.TaskFailMessage {
				t.Errorf("task_fail = %v, want the task's error", err)
			}

			// cancelled by the server, and a TTL that lapsed: unavailable.
			for _, tool := range []string{mcptest.ToolTaskCancelled, mcptest.ToolTaskTTL} {
				if _, err := s.CallTool(ctx, tool, nil); !errors.Is(err, mcpconn.ErrUnavailable) {
					t.Errorf("%s = %v, want ErrUnavailable", tool, err)
				}
			}

			// A call that ends before its task cancels it, once.
			before := tt.stats(t, s)
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := s.CallTool(cctx, mcptest.ToolTaskForever, nil)
				done <- err
			}()
			poll.Until(t, "the forever task to be polled", func() bool { return tt.stats(t, s).Gets > before.Gets+1 })
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("task_forever after cancel = %v, want the cancellation", err)
			}
			poll.Until(t, "tasks/cancel", func() bool { return tt.stats(t, s).Cancels == before.Cancels+1 })
			if after := tt.stats(t, s); after.Created != before.Created+1 {
				t.Errorf("tasks created by task_forever = %d, want 1", after.Created-before.Created)
			}
		})
	}
}

// Issue 26 item 1: a 2025-11-25 server that answers a call with a task it
// was not asked for gives a bad result, and the session stays usable.
func TestTaskNotAskedFor(t *testing.T) {
	t.Parallel()
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: fastTasks, Dial: mcptest.Dial(&mcptest.ServerOptions{
		Era: mcptest.EraLegacy, Faults: []mcptest.Fault{mcptest.FaultTasks}})}),
		resource.MCPServer{Type: resource.TransportStdio, Command: "unused-with-dial", Cwd: "/"}, nil)
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(context.Background(), mcptest.ToolTaskUnasked, nil); !errors.Is(err, mcpconn.ErrBadResult) {
		t.Errorf("task_unasked = %v, want ErrBadResult", err)
	}
	call(t, s, context.Background(), mcptest.ToolEcho, map[string]any{"text": "still here"})
}

// Issue 26 item 3: a task created by one session is collected by another
// (a host that restarted) with taskcall's Resume, in both eras.
func TestTaskResume(t *testing.T) {
	t.Parallel()
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern} {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			url := mcptest.StartHTTP(t, "-era", string(era), "-fault", string(mcptest.FaultTasks))
			srv := resource.MCPServer{Type: resource.TransportHTTP, URL: url}
			first := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: fastTasks}), srv, nil)
			if _, err := first.Tools(context.Background()); err != nil {
				t.Fatal(err)
			}
			created := make(chan taskcall.Info, 1)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := first.CallTool(taskcall.With(ctx, &taskcall.Call{Created: func(ti taskcall.Info) error {
					created <- ti
					return nil
				}}), mcptest.ToolTaskWork, json.RawMessage(`{"text":"later","steps":3,"step_ms":300}`))
				done <- err
			}()
			info := <-created
			// The host goes away: its session closes under the call,
			// which does not cancel the task.
			_ = first.Close()
			<-done
			cancel()
			if info.ID == "" || info.Protocol == "" || info.TTL <= 0 {
				t.Errorf("taskcall.Info = %+v", info)
			}

			second := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: fastTasks}), srv, nil)
			got, err := second.CallTool(taskcall.With(context.Background(), &taskcall.Call{Resume: info.ID}), mcptest.ToolTaskWork, nil)
			if err != nil || got.Text() != "later" {
				t.Fatalf("resumed = %v, %v; want the task's result", got, err)
			}
			res, err := second.CallTool(context.Background(), mcptest.ToolTaskStats, nil)
			if err != nil {
				t.Fatal(err)
			}
			var st mcptest.TaskStats
			if err := json.Unmarshal([]byte(res.Text()), &st); err != nil || st.Created != 1 || st.Cancels != 0 {
				t.Errorf("task stats = %+v (%v), want 1 task created, none cancelled", st, err)
			}
		})
	}
}

// Issue 26 item 1: a 2025-11-25 server's request for a task names the
// task (_meta io.modelcontextprotocol/related-task), which ties it to the
// call of that task alone, while another call is in flight (on stdio
// nothing else names it).
func TestTaskRelatedRequest(t *testing.T) {
	t.Parallel()
	counters := &mcptest.Counters{}
	var mu sync.Mutex
	var asked [][]any
	s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: fastTasks, Dial: mcptest.Dial(&mcptest.ServerOptions{
		Era: mcptest.EraLegacy, Faults: []mcptest.Fault{mcptest.FaultTasks}, Counters: counters})}),
		resource.MCPServer{Type: resource.TransportStdio, Command: "unused-with-dial", Cwd: "/"}, &mcpconn.Handlers{
			Elicit: func(_ context.Context, in mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked = append(asked, in.Calls)
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "42"}}, nil
			},
		})
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Another call's task, in flight the whole time.
	before := counters.Tasks()
	fctx, cancel := context.WithCancel(mcpconn.WithCallTag(context.Background(), "other"))
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(fctx, mcptest.ToolTaskForever, nil)
		done <- err
	}()
	poll.Until(t, "the other task to be polled", func() bool { return counters.Tasks().Gets > before.Gets })
	got, err := s.CallTool(mcpconn.WithCallTag(context.Background(), "asker"), mcptest.ToolTaskAsk, nil)
	cancel()
	<-done
	if err != nil || got.Text() != "answer: 42" {
		t.Fatalf("task_ask = %v, %v; want the answer", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || len(asked[0]) != 1 || asked[0][0] != "asker" {
		t.Errorf("the elicitation named calls %v, want [[asker]]", asked)
	}
}

// Issue 26 item 3: a task whose handle the caller could not record
// (taskcall.Call.Created failed) is cancelled, once, and the call fails with
// the caller's error: no task runs on that nobody could collect.
func TestTaskCreatedFails(t *testing.T) {
	t.Parallel()
	errStore := errors.New("the store is down")
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern} {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			counters := &mcptest.Counters{}
			s := connectWith(t, quickConnector(&mcpconn.ConnectorOptions{Limits: fastTasks, Dial: mcptest.Dial(&mcptest.ServerOptions{
				Era: era, Faults: []mcptest.Fault{mcptest.FaultTasks}, Counters: counters})}),
				resource.MCPServer{Type: resource.TransportStdio, Command: "unused-with-dial", Cwd: "/"}, nil)
			if _, err := s.Tools(context.Background()); err != nil {
				t.Fatal(err)
			}
			calls := 0
			ctx := taskcall.With(context.Background(), &taskcall.Call{Created: func(taskcall.Info) error {
				calls++
				return errStore
			}})
			if _, err := s.CallTool(ctx, mcptest.ToolTaskForever, nil); !errors.Is(err, errStore) {
				t.Errorf("call = %v, want the error of Created", err)
			}
			if st := counters.Tasks(); calls != 1 || st.Created != 1 || st.Cancels != 1 || st.Gets != 0 {
				t.Errorf("Created told %d times; task stats %+v; want 1, and 1 task created, cancelled once, never polled", calls, st)
			}
		})
	}
}
