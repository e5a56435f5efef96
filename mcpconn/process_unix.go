//go:build unix

package mcpconn

import (
	"errors"
	"os/exec"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setProcessGroup puts the child in a new process group whose id is its pid,
// so that signals reach everything it starts, even through a shell.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// groupAlive reports whether any process is left in the child's group.
func groupAlive(cmd *exec.Cmd) bool {
	err := syscall.Kill(-cmd.Process.Pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// reapGroup reaps the dead members of the child's group that are children
// of this process (adopted ones; the leader is reaped by cmd.Wait first).
func reapGroup(cmd *exec.Cmd) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-cmd.Process.Pid, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
