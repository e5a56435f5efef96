//go:build unix

package agtotel_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process used so far (user and system):
// the client and the in-process server alike.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
