//go:build unix

package agtanthropic_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process used so far (client and in-memory
// server alike): on a loaded 2-core machine cpu-ns/op is less disturbed
// than ns/op.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
