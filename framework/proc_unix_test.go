//go:build unix

package framework_test

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// waitExited waits until pid is gone (reaped), failing after 10 s.
func waitExited(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server process %d still exists after unload", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
