//go:build unix

package framework_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/agtsdk/agt/internal/runtest/poll"
)

// waitExited waits (poll.Until) until pid is gone (reaped).
func waitExited(t *testing.T, pid int) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("server process %d to be reaped after unload", pid), func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
}
