package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// taskNotes collects the task statuses a Run observes.
type taskNotes struct {
	mu    sync.Mutex
	notes []string
	first chan struct{}
	once  sync.Once
}

func newTaskNotes() *taskNotes { return &taskNotes{first: make(chan struct{})} }

func (n *taskNotes) observe(_ context.Context, note run.Notification) {
	if note.Task == nil {
		return
	}
	c, _ := note.From.Call()
	n.mu.Lock()
	n.notes = append(n.notes, c.CallID+" "+note.Task.Status+" "+note.Task.Message)
	n.mu.Unlock()
	n.once.Do(func() { close(n.first) })
}

// Issue 26 items 2 and 3: a call answered with a task ends its batch with
// the task's result, and a Run closed while the task runs keeps its
// handle; a Run with the same RunID that executes the batch again takes
// the task's result instead of calling again (the server created one
// task), exactly once: the handle is then dropped, and a third execution
// is a new call. Both eras, over HTTP (the server outlives the Runs).
func TestRunDurableTask(t *testing.T) {
	t.Parallel()
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern} {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			url := mcptest.StartHTTP(t, "-era", string(era), "-fault", string(mcptest.FaultTasks))
			repo := newRepo(t)
			putMCP(t, repo, "tasks", resource.MCPServer{Type: resource.TransportHTTP, URL: url})
			putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{"tasks"}})
			connector := func() *mcpconn.Connector {
				c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MinTaskPollInterval: time.Millisecond, MaxTaskPollInterval: 20 * time.Millisecond}})
				t.Cleanup(func() { c.Close() })
				return c
			}
			work := batch(call("c1", run.Alias("tasks", mcptest.ToolTaskWork), `{"text":"the report","steps":4,"step_ms":150}`))
			store := resource.TaskStore(repo)
			stats := func(r *run.Run) mcptest.TaskStats {
				t.Helper()
				out, err := r.Execute(context.Background(), run.Batch{ID: "stats", Agent: testAgent,
					Calls: []run.Call{call("s", run.Alias("tasks", mcptest.ToolTaskStats), `{}`)}})
				if err != nil || out.Results[0].Failed() {
					t.Fatalf("task_stats: %v %+v", err, out)
				}
				var st mcptest.TaskStats
				if err := json.Unmarshal([]byte(runtest.Text(t, out.Results[0])), &st); err != nil {
					t.Fatal(err)
				}
				return st
			}

			// The first Run: closed once the task is stored and polled.
			notes := newTaskNotes()
			first := newRun(t, &run.Options{Repository: repo, Connector: connector(), RunID: "r1", ClientFeatures: &run.ClientFeatures{Observe: notes.observe}})
			done := make(chan run.Outcome, 1)
			go func() {
				out, _ := first.Execute(context.Background(), work)
				done <- out
			}()
			<-notes.first
			handles, err := store.Tasks(context.Background(), "r1")
			if err != nil || len(handles) != 1 || handles[0].Call != "c1" || handles[0].Server != "tasks" || handles[0].Tool != mcptest.ToolTaskWork {
				t.Fatalf("stored handles = %+v, %v; want the call's task", handles, err)
			}
			_ = first.Close()
			if out := <-done; len(out.Results) != 1 || out.Results[0].Code != run.CodeUnavailable {
				t.Errorf("the closed Run's call = %+v, want unavailable", out.Results)
			}
			if handles, err := store.Tasks(context.Background(), "r1"); err != nil || len(handles) != 1 {
				t.Fatalf("handles after Close = %+v, %v; want the task kept", handles, err)
			}

			// The second Run, same RunID: the batch again takes the task's
			// result.
			second := newRun(t, &run.Options{Repository: repo, Connector: connector(), RunID: "r1"})
			out, err := second.Execute(context.Background(), work)
			if err != nil || out.Results[0].Failed() || runtest.Text(t, out.Results[0]) != "the report" {
				t.Fatalf("resumed batch = %+v, %v; want the task's result", out.Results, err)
			}
			if st := stats(second); st.Created != 1 || st.Cancels != 0 {
				t.Errorf("server stats = %+v, want one task created, none cancelled", st)
			}
			if handles, err := store.Tasks(context.Background(), "r1"); err != nil || len(handles) != 0 {
				t.Errorf("handles after the result = %+v, %v; want none", handles, err)
			}
			// Once: the same batch again is a new call.
			if out, err := second.Execute(context.Background(), work); err != nil || runtest.Text(t, out.Results[0]) != "the report" {
				t.Fatalf("third execution = %+v, %v", out.Results, err)
			}
			if st := stats(second); st.Created != 2 {
				t.Errorf("server stats = %+v, want a second task created", st)
			}
		})
	}
}

// Issue 26 item 2: a task that outlives the call's bounds (polls keep
// restarting the 200 ms idle timeout; MaxCallDuration ends the call) is
// cancelled, the call fails as a timeout, and its handle is dropped: no
// result reaches the model later.
func TestRunTaskOutlivesCall(t *testing.T) {
	t.Parallel()
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern} {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			url := mcptest.StartHTTP(t, "-era", string(era), "-fault", string(mcptest.FaultTasks))
			repo := newRepo(t)
			putMCP(t, repo, "tasks", resource.MCPServer{Type: resource.TransportHTTP, URL: url, ToolTimeoutMS: 200})
			putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{"tasks"}})
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
				Limits: &mcpconn.Limits{MinTaskPollInterval: time.Millisecond, MaxTaskPollInterval: 20 * time.Millisecond, MaxCallDuration: 300 * time.Millisecond}})
			t.Cleanup(func() { c.Close() })
			r := newRun(t, &run.Options{Repository: repo, Connector: c, RunID: "r2"})
			out, err := r.Execute(context.Background(), batch(call("c1", run.Alias("tasks", mcptest.ToolTaskForever), `{}`)))
			if err != nil || out.Results[0].Code != run.CodeDeadlineExceeded {
				t.Fatalf("task_forever = %+v, %v; want a timeout", out.Results, err)
			}
			if handles, err := resource.TaskStore(repo).Tasks(context.Background(), "r2"); err != nil || len(handles) != 0 {
				t.Errorf("handles = %+v, %v; want none", handles, err)
			}
			stats, err := r.Execute(context.Background(), run.Batch{ID: "s", Agent: testAgent,
				Calls: []run.Call{call("s", run.Alias("tasks", mcptest.ToolTaskStats), `{}`)}})
			var st mcptest.TaskStats
			if err != nil || json.Unmarshal([]byte(runtest.Text(t, stats.Results[0])), &st) != nil || st.Cancels != 1 {
				t.Errorf("server stats = %+v (%v), want the task cancelled once", st, err)
			}
		})
	}
}

// Issue 26 item 3: a stored handle of another revision of the
// registration, or of another tool, is not this call's task: the call is
// made anew (the server creates a task; the stale id is never polled),
// and the handle is dropped with the call's result.
func TestRunTaskHandleOfAnotherCall(t *testing.T) {
	t.Parallel()
	url := mcptest.StartHTTP(t, "-era", string(mcptest.EraModern), "-fault", string(mcptest.FaultTasks))
	repo := newRepo(t)
	rev := putMCP(t, repo, "tasks", resource.MCPServer{Type: resource.TransportHTTP, URL: url})
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{"tasks"}})
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MinTaskPollInterval: time.Millisecond, MaxTaskPollInterval: 20 * time.Millisecond}})
	t.Cleanup(func() { c.Close() })
	store := resource.TaskStore(repo)
	now := time.Now()
	for i, h := range []resource.TaskHandle{
		{Revision: rev + 1, Tool: mcptest.ToolTaskWork},
		{Revision: rev, Tool: mcptest.ToolTaskAsk},
	} {
		runID := fmt.Sprintf("stale-%d", i)
		h.Run, h.Call, h.Server, h.TaskID, h.Protocol, h.Created, h.Expires = runID, "c1", "tasks", "no-such-task", "2026-07-28", now, now.Add(time.Hour)
		if err := store.SaveTask(context.Background(), h); err != nil {
			t.Fatal(err)
		}
		r := newRun(t, &run.Options{Repository: repo, Connector: c, RunID: runID})
		out, err := r.Execute(context.Background(), batch(call("c1", run.Alias("tasks", mcptest.ToolTaskWork), `{"text":"anew","steps":1}`)))
		if err != nil || out.Results[0].Failed() || runtest.Text(t, out.Results[0]) != "anew" {
			t.Errorf("revision %d, tool %s: the call = %+v, %v; want it made anew", h.Revision, h.Tool, out.Results, err)
		}
		if handles, err := store.Tasks(context.Background(), runID); err != nil || len(handles) != 0 {
			t.Errorf("revision %d, tool %s: handles after the call = %+v, %v; want none", h.Revision, h.Tool, handles, err)
		}
	}
}
