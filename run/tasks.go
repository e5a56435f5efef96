package run

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agtsdk/agt/internal/taskcall"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// maxTaskHandleAge bounds how long a Run keeps the handle of a task whose
// server sets no TTL (or a longer one): a handle older than this is
// dropped, and a resumed Run no longer collects its task.
const maxTaskHandleAge = 24 * time.Hour

// taskStoreTime bounds one use of the task store on a call's path, so
// that a stalled store does not hold the call.
const taskStoreTime = 10 * time.Second

// runTasks are the Run's durable tasks (see Tasks in the package doc).
type runTasks struct {
	store resource.TaskStore // nil: none (no RunID, or a repository without)
	runID string
	// mu guards pending: the handles stored before the Run started (a
	// host that restarted), by call ID, until a call takes its own.
	mu      sync.Mutex
	pending map[string]resource.TaskHandle
}

// newRunTasks finds the repository's task store and loads the handles
// an earlier process stored for the Run's ID.
func newRunTasks(ctx context.Context, repo resource.Repository, runID string, logger *slog.Logger) *runTasks {
	store, ok := repo.(resource.TaskStore)
	if !ok || runID == "" {
		return &runTasks{}
	}
	rt := &runTasks{store: store, runID: runID}
	sctx, cancel := context.WithTimeout(ctx, taskStoreTime)
	defer cancel()
	handles, err := store.Tasks(sctx, runID)
	if err != nil {
		logger.LogAttrs(ctx, slog.LevelWarn, "agt.task_store", slog.String("error", err.Error()))
		return rt
	}
	for _, h := range handles {
		if rt.pending == nil {
			rt.pending = map[string]resource.TaskHandle{}
		}
		rt.pending[h.Call] = h
	}
	return rt
}

// taskCall is one call's side of it: what it tells mcpconn, and whether
// the call has a handle in the store.
type taskCall struct {
	tc     *taskcall.Call
	stored atomic.Bool
}

// call returns what the call tells mcpconn of the task its server may
// run for it: the handle of a task created is stored before the task is
// polled, and the handle an earlier process stored for this call, by
// this registration, revision and tool, is resumed instead of calling
// again. Nil when the Run has no task store.
func (rt *runTasks) call(ctx context.Context, m *mount, tool string, callID string) *taskCall {
	if rt.store == nil {
		return nil
	}
	c := &taskCall{}
	rt.mu.Lock()
	h, ok := rt.pending[callID]
	delete(rt.pending, callID)
	rt.mu.Unlock()
	if ok {
		// A handle of another registration, revision or tool cannot be
		// this call's task: the call is made anew, and the handle
		// replaced, or dropped when the call ends.
		c.stored.Store(true)
		if h.Server == m.ref && h.Revision == m.revision && h.Tool == tool {
			c.tc = &taskcall.Call{Resume: h.TaskID}
		}
	}
	if c.tc == nil {
		c.tc = &taskcall.Call{}
	}
	c.tc.Created = func(info taskcall.Info) error {
		expires := info.Created.Add(maxTaskHandleAge)
		if info.TTL > 0 && info.TTL < maxTaskHandleAge {
			expires = info.Created.Add(info.TTL)
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskStoreTime)
		defer cancel()
		c.stored.Store(true)
		return rt.store.SaveTask(sctx, resource.TaskHandle{Run: rt.runID, Call: callID, Server: m.ref, Revision: m.revision,
			Tool: tool, TaskID: info.ID, Protocol: info.Protocol, Created: info.Created, Expires: expires})
	}
	return c
}

// done drops the call's handle once the call ended: its result (or its
// error) is the model's now, exactly once. A call that ended because the
// Run closed under it keeps its handle, for a Run resumed later.
func (rt *runTasks) done(ctx context.Context, c *taskCall, callID string, err error, closing bool, logger *slog.Logger) {
	if c == nil || !c.stored.Load() || (closing && errors.Is(err, mcpconn.ErrUnavailable)) {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskStoreTime)
	defer cancel()
	if derr := rt.store.DeleteTask(sctx, rt.runID, callID); derr != nil {
		logger.LogAttrs(ctx, slog.LevelWarn, "agt.task_store", slog.String("error", derr.Error()))
	}
}
