//go:build !unix

package mcpconn

import (
	"os"
	"os/exec"
)

// Without process groups only the direct child can be signalled.

type signal int

const (
	sigTerm signal = iota
	sigKill
)

func setProcessGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig signal) error {
	if sig == sigTerm {
		return cmd.Process.Signal(os.Interrupt)
	}
	return cmd.Process.Kill()
}

func groupAlive(*exec.Cmd) bool { return false }

func reapGroup(*exec.Cmd) {}
