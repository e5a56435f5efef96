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

// lockFile takes no lock here: two agt that write the secret file at the
// same time may lose one of the writes.
func lockFile(string) (func(), error) { return func() {}, nil }

// echoOff cannot turn a terminal's echo off here.
func echoOff(*os.File) (func(), bool) { return nil, false }
