package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/runtest/poll"
)

// procState is the state letter of /proc/PID/stat ("Z" for a zombie), or
// "reaped" when the process is gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "reaped"
	}
	// pid (comm) STATE ...: comm may hold spaces and parentheses.
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	if f := strings.Fields(rest); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// The sampling command's process group is killed while its leader is
// alive or a zombie, never after it was reaped (then its id, the group's,
// may be another process's): once when the command exits, leaving a
// child that is killed with the group, and once when the call is given up
// on while it runs.
func TestRunInGroupKillsBeforeReaping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		canceled bool
		want     []string // the leader's state at each kill
	}{
		{"exits leaving a child", "sleep 600 & echo $!", false, []string{"Z"}},
		{"given up on while it runs", "echo $$; exec sleep 600", true, []string{"alive", "Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := exec.Command("/bin/sh", "-c", tt.script)
			out := &cappedBuffer{max: 1 << 10, full: func() {}}
			cmd.Stdout = out
			// A child left running holds stdout: Wait gives up on it
			// (ErrWaitDelay) when the group was not killed first.
			cmd.WaitDelay = 10 * time.Second
			if tt.canceled {
				// Given up on once it has written its line.
				out.full, out.max = cancel, 0
			}
			var states []string
			kill := func(pid int) error {
				s := procState(pid)
				if s != "Z" && s != "reaped" {
					s = "alive"
				}
				states = append(states, s)
				return killGroup(pid)
			}
			err := runInGroup(ctx, cmd, kill)
			var exit *exec.ExitError
			if err != nil && !(tt.canceled && errors.As(err, &exit)) {
				t.Fatalf("runInGroup = %v", err)
			}
			if diff := cmp.Diff(tt.want, states); diff != "" {
				t.Errorf("the leader at each kill of its group (-want +got):\n%s", diff)
			}
			if !tt.canceled {
				child, err := strconv.Atoi(strings.TrimSpace(string(out.Bytes())))
				if err != nil {
					t.Fatalf("the child's id: %q", out.Bytes())
				}
				// Killed with its group (then reaped by whoever adopted it).
				poll.Until(t, "the command's child killed with its group", func() bool {
					s := procState(child)
					return s == "reaped" || s == "Z"
				})
			}
		})
	}
}
