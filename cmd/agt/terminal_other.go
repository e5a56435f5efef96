//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"os"
	"os/exec"
)

// isTerminal reports whether f is a character device: the best guess
// without a terminal ioctl.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// setProcessGroup does nothing here: the command alone is killed.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills cmd.
func killProcessGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
