package run

import (
	"time"

	"github.com/agtsdk/agt/resource"
)

// SetClock replaces the clock the Run spaces re-listings by
// (Options.Limits.MinRelistInterval); call it before the first batch.
func SetClock(r *Run, now func() time.Time) { r.now = now }

// MountLost reports whether the connection of r's mount ref is lost, as
// the next batch will find it; false for a ref r does not mount. Tests
// wait on it instead of the clock after they kill a server.
func MountLost(r *Run, ref resource.Ref) bool {
	m := r.snap.Load().mounts[ref]
	return m != nil && m.lost()
}

// NoteKind names what a Notification carries ("progress", "log", "task",
// "tools_changed"), for the tests' logs.
func NoteKind(n Notification) string { return n.kind() }
