package main

import (
	"syscall"
	"unsafe"
)

// waitExited waits until the child pid has exited, without reaping it:
// waitid(P_PID, pid, WEXITED|WNOWAIT), as package os does.
func waitExited(pid int) error {
	const pPID = 1 // P_PID of <sys/wait.h>
	var siginfo [16]uint64
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&siginfo)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			if errno != 0 {
				return errno
			}
			return nil
		}
	}
}
