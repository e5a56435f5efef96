package taskrules

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxRunTasks bounds the handles one run keeps at once (1024), the bound
// resource.TaskStore documents. A batch has at most
// run.Options.Limits.MaxBatchCalls calls (256 by default), and a task may
// outlive its batch (the model can be told the work continues), so the
// tasks of several batches can be open together: 1024 is four full default
// batches whose every call is still running, more than a Run that collects
// its tasks ever holds; a run past it is leaking handles it will never
// collect. With the field bounds it caps one run's handles at about 2 MiB.
// Fixed.
const MaxRunTasks = 1024

// The bounds of a task handle's strings, in bytes.
const (
	MaxRunBytes      = 256
	MaxCallBytes     = 256
	MaxTaskIDBytes   = 1 << 10
	MaxProtocolBytes = 64
)

// ErrLimit is resource.ErrLimit.
var ErrLimit = errors.New("resource: a store bound was reached")

// MinTime and MaxTime bound a handle's Created and Expires (MaxTime
// excluded): times every store keeps exactly, as Unix milliseconds, in
// PostgreSQL's timestamptz and in Go's formatting.
var (
	MinTime = time.Unix(0, 0)
	MaxTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Text judges one string field of a task handle: non-empty, at most max
// bytes (else an error wrapping ErrLimit), valid UTF-8 without NUL bytes.
// The error names the field and the bound, never the value.
func Text(field, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("task store: TaskHandle.%s is empty: set it", field)
	case len(s) > max:
		return fmt.Errorf("task store: TaskHandle.%s is %d bytes, more than %d: %w", field, len(s), max, ErrLimit)
	case !utf8.ValidString(s):
		return fmt.Errorf("task store: TaskHandle.%s is not valid UTF-8", field)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("task store: TaskHandle.%s holds a NUL byte", field)
	}
	return nil
}

// Run judges the context and a run ID, as Tasks takes them: ctx's error
// when it has ended.
func Run(ctx context.Context, run string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return Text("Run", run, MaxRunBytes)
}

// Key judges the context, a run and a call ID, as DeleteTask takes them.
func Key(ctx context.Context, run, call string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return IDs(run, call)
}

// IDs judges a handle's run and call ID.
func IDs(run, call string) error {
	if err := Text("Run", run, MaxRunBytes); err != nil {
		return err
	}
	return Text("Call", call, MaxCallBytes)
}

// Time is t as a store keeps it: truncated to the millisecond, in UTC,
// without a monotonic clock reading. t must lie in [MinTime, MaxTime).
func Time(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// Expired reports whether a handle that expires at expires has expired at
// now: its Expires, to the millisecond, is not after now.
func Expired(expires, now time.Time) bool { return !Time(expires).After(now) }

// Full is the error of a SaveTask that finds its run holding MaxRunTasks
// other handles that have not expired.
func Full() error {
	return fmt.Errorf("task store: the run already has %d task handles that have not expired (MaxRunTasks): %w", MaxRunTasks, ErrLimit)
}

// Corrupt is the error of a store that reads task handles it could not
// have written (a damaged or foreign store): where names the store, what
// says what is wrong; the stored bytes are never repeated.
func Corrupt(where, what string) error {
	return fmt.Errorf("%s: %s: it was not written by this package; delete the run's handles (DeleteTask), or restore the store", where, what)
}
