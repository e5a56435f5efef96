package poll_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
)

// recorder is a testing.TB whose Fatalf records the message and ends the
// goroutine, as testing.T's does.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// until runs poll.Until on its own goroutine (Fatalf ends it) and returns
// the failure message, if any, and the (virtual) time it took.
func until(t *testing.T, cond func() bool) (string, time.Duration) {
	r := &recorder{TB: t}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		poll.Until(r, "the condition", cond)
	}()
	<-done
	return r.fatal, time.Since(start)
}

func TestUntil(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		trueAfter int // calls of cond that return false first; -1: never true
		wantFatal bool
		wantCalls int // -1: not checked
		maxTook   time.Duration
	}{
		{name: "met at once", trueAfter: 0, wantCalls: 1, maxTook: 0},
		{name: "met after a few checks", trueAfter: 5, wantCalls: 6, maxTook: 100 * time.Millisecond},
		{name: "never met", trueAfter: -1, wantFatal: true, wantCalls: -1, maxTook: poll.Timeout + time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				fatal, took := until(t, func() bool {
					calls++
					return tc.trueAfter >= 0 && calls > tc.trueAfter
				})
				if got := fatal != ""; got != tc.wantFatal {
					t.Errorf("failed = %v (%q); want %v", got, fatal, tc.wantFatal)
				}
				if tc.wantFatal && !strings.Contains(fatal, "waiting for the condition") {
					t.Errorf("failure %q does not name what it waited for", fatal)
				}
				if tc.wantFatal && took < poll.Timeout {
					t.Errorf("gave up after %s; want %s", took, poll.Timeout)
				}
				if tc.wantCalls >= 0 && calls != tc.wantCalls {
					t.Errorf("cond called %d times; want %d", calls, tc.wantCalls)
				}
				if took > tc.maxTook {
					t.Errorf("took %s; want at most %s", took, tc.maxTook)
				}
			})
		})
	}
}
