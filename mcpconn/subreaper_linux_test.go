package mcpconn_test

import (
	"fmt"
	"os"
	"syscall"
)

// The tests run as a child subreaper, the way a host runs as PID 1 in a
// container: a server's orphaned children are handed to the test process
// instead of init, so Close must reap them, and assertNoLeftovers fails
// on any it leaves as a zombie.
func init() {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "mcpconn tests: cannot become a child subreaper:", errno)
	}
}
