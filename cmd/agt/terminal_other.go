//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"context"
	"os"
	"os/exec"
)

// isTerminal reports whether f is a character device: the best guess
// without a terminal ioctl.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runInGroup runs cmd until it exits, killing it when ctx is done. Here
// there are no process groups: the command alone is killed, through its
// process handle (never another process, even once it is reaped).
func runInGroup(ctx context.Context, cmd *exec.Cmd, _ func(pid int) error) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	return cmd.Wait()
}

// killGroup does nothing here: there are no process groups.
func killGroup(int) error { return nil }

// lockFile takes no lock here: two agt that write the secret file at the
// same time may lose one of the writes.
func lockFile(string) (func(), error) { return func() {}, nil }

// echoOff cannot turn a terminal's echo off here.
func echoOff(*os.File) (func(), bool) { return nil, false }
