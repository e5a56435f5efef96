//go:build unix

package bench_test

import (
	"syscall"
	"time"
)

// selfCPU returns the CPU time this process (the Go clients; the servers
// and the TypeScript client are processes of their own) used so far.
func selfCPU() time.Duration {
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano())
}
