package resource

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agtsdk/agt/internal/glob"
	"github.com/agtsdk/agt/resource/internal/taskrules"
)

// TaskStore keeps the handles of the tasks MCP servers run for the calls of
// Runs (MCP tasks: a tools/call answered with a task id, polled until it ends),
// so that a Run resumed after its host stopped collects their results.
// A Repository may implement it (boltrepo's and pgrepo's do); the Run
// finds it with a type assertion.
//
// Implementations are safe for concurrent use, also by several processes
// on one store: SaveTask's count of the run's handles and its write are
// one step, so concurrent saves never lose a handle nor pass the bound of
// 1024 handles per run.
// A handle has expired once its Expires is not after the clock of the
// process that calls (time.Now). Expired handles are never returned;
// every SaveTask deletes those of its run, and the expired handles of
// other runs too (boltrepo and pgrepo a bounded number per call), so the handles of Runs never resumed do not
// pile up. Times are kept to the millisecond, in UTC: a handle comes back
// with Created and Expires truncated to the millisecond, and otherwise
// exactly as saved. Every store calls CheckTask before writing.
type TaskStore interface {
	// SaveTask stores h under (h.Run, h.Call), replacing the handle there.
	// It fails, wrapping ErrLimit, when the run already has 1024 other
	// handles that have not expired (a fixed bound: a Run that collects its
	// tasks never holds that many), and for a handle CheckTask
	// refuses; nothing is written then. Expired handles of the run are
	// dropped first. A handle that has already expired is accepted (it
	// replaces the one there) and is never returned.
	SaveTask(ctx context.Context, h TaskHandle) error
	// Tasks returns the run's handles that have not expired, sorted by
	// Call (byte order). Expired ones are not returned (and may be
	// deleted). A run with none gives an empty slice and no error; an
	// empty or too long run ID is refused.
	Tasks(ctx context.Context, run string) ([]TaskHandle, error)
	// DeleteTask removes the handle of (run, call); none there is not an
	// error. An empty or too long run or call ID is refused.
	DeleteTask(ctx context.Context, run, call string) error
}

// TaskHandle is one task a server runs for a Run's call. Every string is
// valid UTF-8 without NUL bytes (what every store can keep exactly) and
// within the bound its comment gives; CheckTask judges them.
type TaskHandle struct {
	Run      string    // the Run's ID (run.Options.RunID), non-empty, at most 256 bytes
	Call     string    // the call's ID in its batch, non-empty, at most 256 bytes
	Server   Ref       // the MCP registration that runs it (valid Ref)
	Revision int64     // the registration's revision when the task was created (> 0)
	Tool     string    // the server's tool name, non-empty, at most 256 bytes (a longer name is never callable)
	TaskID   string    // the server's task id, non-empty, at most 1 KiB
	Protocol string    // the MCP protocol version the task was created under, non-empty, at most 64 bytes
	Created  time.Time // when the server created it (as agt saw it); non-zero, 1970 to 9999
	Expires  time.Time // after this the handle is dropped; after Created (to the millisecond), 1970 to 9999
}

// ErrLimit is wrapped by the errors of a store that refuses a write going
// past one of its fixed bounds: a run holding 1024 handles, a task
// handle field longer than its bound. Test with errors.Is. The message
// names the bound, never the value.
var ErrLimit = taskrules.ErrLimit

// CheckTask reports whether a TaskStore may hold h: every field set and
// within its bound (see TaskHandle). Stores call it before writing. The
// error names the field and the bound, never the field's value; a string
// over its bound wraps ErrLimit.
func CheckTask(h TaskHandle) error {
	if err := taskrules.IDs(h.Run, h.Call); err != nil {
		return err
	}
	if !h.Server.Valid() {
		return errors.New("task store: TaskHandle.Server is not a valid reference: want name or category/name")
	}
	if h.Revision <= 0 {
		return errors.New("task store: TaskHandle.Revision must be positive: set the registration's revision")
	}
	for _, f := range []struct {
		name, s string
		max     int
	}{
		{"Tool", h.Tool, glob.MaxNameBytes},
		{"TaskID", h.TaskID, taskrules.MaxTaskIDBytes},
		{"Protocol", h.Protocol, taskrules.MaxProtocolBytes},
	} {
		if err := taskrules.Text(f.name, f.s, f.max); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"Created", h.Created}, {"Expires", h.Expires}} {
		if f.t.Before(taskrules.MinTime) || !f.t.Before(taskrules.MaxTime) {
			return fmt.Errorf("task store: TaskHandle.%s must be a time from 1970 to 9999 (the zero time is not)", f.name)
		}
	}
	if !taskrules.Time(h.Expires).After(taskrules.Time(h.Created)) {
		return errors.New("task store: TaskHandle.Expires must be after Created, to the millisecond")
	}
	return nil
}
