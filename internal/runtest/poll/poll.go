// Package poll is the one poll helper of agt's tests: Until waits for a
// condition that no event announces (a server's counter, a process's
// exit, a background refresh), checking it with a short backoff and
// failing the test after a bound wide enough for a loaded machine.
//
//	poll.Until(t, "the server to see the cancellation", func() bool {
//		return counters.Cancelled() > 0
//	})
//
// A test waits on the event itself when it can (a channel, a returned
// call) and uses testing/synctest where the code runs in process; Until
// is for the rest. Its sleeps pace the checks, they do not synchronise:
// the condition does. Inside a synctest bubble its sleeps are virtual.
//
// It is a leaf package (it imports only the standard library) so that the
// internal tests of every package can use it, which package runtest,
// built on mcpconn and run, cannot offer them.
package poll

import (
	"testing"
	"time"
)

// Timeout is how long Until waits before it fails the test: far past any
// wait a passing test has, even on a machine loaded with parallel tests.
const Timeout = 30 * time.Second

// The backoff between checks: it starts at minPause and doubles up to
// maxPause, so a condition met at once costs a millisecond and a long
// wait costs few checks.
const (
	minPause = time.Millisecond
	maxPause = 20 * time.Millisecond
)

// Until calls cond until it returns true, pausing between calls, and
// fails t (t.Fatalf, naming what it waited for) when cond has not
// returned true within Timeout. cond runs on the calling goroutine, which
// must be the test's (t.Fatalf ends it); elsewhere use Try.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Try(cond) {
		t.Fatalf("timed out after %s waiting for %s", Timeout, what)
	}
}

// Try calls cond until it returns true, pausing between calls, and
// reports whether it did within Timeout. It does not fail the test, so a
// goroutine other than the test's may call it.
func Try(cond func() bool) bool {
	deadline := time.Now().Add(Timeout)
	for pause := minPause; !cond(); pause = min(2*pause, maxPause) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
	return true
}
