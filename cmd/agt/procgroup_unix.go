//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"context"
	"os/exec"
	"syscall"
)

// runInGroup runs cmd in a process group of its own until it exits, and
// kills the group then, or when ctx is done, so that nothing it started
// outlives it. kill kills the group of a leader (killGroup; a test's own
// to watch it).
//
// The group is killed while its leader is alive or a zombie, never after
// Wait reaped it: a zombie keeps its process id, which is the group's id,
// so the id cannot have been given to another process and its group.
// waitExited learns of the exit without reaping (waitid's WNOWAIT on
// Linux, kqueue's NOTE_EXIT on the BSDs and macOS); only cmd.Wait, last,
// reaps.
func runInGroup(ctx context.Context, cmd *exec.Cmd, kill func(pid int) error) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- waitExited(pid) }()
	var err error
	select {
	case err = <-exited:
	case <-ctx.Done():
		// Not reaped yet: only the Wait below reaps.
		_ = kill(pid)
		// A leader that left its group, through its handle.
		_ = cmd.Process.Kill()
		err = <-exited
	}
	if err == nil {
		// What it left running, while its id is still its group's.
		_ = kill(pid)
	} else {
		// The exit could not be watched (waitExited failed): the group
		// is not killed after the exit, and ctx still kills the leader.
		stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
		defer stop()
	}
	return cmd.Wait()
}

// killGroup kills the process group whose leader is pid.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
