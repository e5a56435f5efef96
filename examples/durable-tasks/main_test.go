package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"go.uber.org/goleak"
)

// The demo (no -url) stops a host at its task's first status and collects
// the task with a second host on the same store (issue 26 item 3).
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, []string{"-args", `{"text":"demo done","steps":3,"step_ms":100}`}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"run run-1: 0 stored task handle(s)\ntask working: step 1 of 3\nstopped:",
		"run run-1: 1 stored task handle(s)\n  call call-1: a task of task_work on tasks",
		"run run-1: resumed from its checkpoint\n",
		"task completed\nresult: demo done\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.String())
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"extra"},
		{"-nope"},
		{"-run-id", ""},
		{"-run-id", "../x"},
		{"-tool", ""},
		{"-args", "{"},
		{"-url", "http://127.0.0.1:1/mcp"}, // no -dir
	} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}

// Issue 26 item 3: a host killed with SIGKILL in the middle of a task, and
// started again with the same store and Run ID, collects the task's result
// exactly once: the server created one task and cancelled none, and the
// handle is gone from the store once collected. A third start calls the
// tool anew.
func TestHostKill(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL and its exit status are unix's")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "durable-tasks")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern} {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			const runID, text = "killed-run", "collected once"
			url := mcptest.StartHTTP(t, "-era", string(era), "-fault", string(mcptest.FaultTasks))
			dir := t.TempDir()
			// 20 steps of 200 ms; a TTL of 10 minutes (the handle's too)
			// so that a slow machine does not see the task lapse.
			args := []string{"-dir", dir, "-url", url, "-run-id", runID,
				"-tool", mcptest.ToolTaskWork, "-args", `{"text":"` + text + `","steps":20,"step_ms":200,"ttl_ms":600000}`}

			// The first host: killed once it printed the task's first
			// status (its handle is stored before the first poll).
			start := time.Now()
			killHost(t, exec.Command(bin, args...), "task working: step ")
			if got := storedTasks(t, dir, runID); len(got) != 1 || got[0].Call != callID || got[0].Tool != mcptest.ToolTaskWork || got[0].Server != serverRef {
				t.Fatalf("after the kill the store holds %+v, want the one handle of %s", got, callID)
			} else if ttl := got[0].Expires.Sub(got[0].Created); ttl != 10*time.Minute {
				t.Errorf("the stored handle lives %v, want the task's TTL, 10m", ttl)
			}
			if st := taskStats(t, url); st.Created != 1 || st.Cancels != 0 {
				t.Fatalf("after the kill: task stats %+v, want 1 created, 0 cancelled", st)
			}

			// The second host resumes the stored task: no new tools/call.
			out := runHost(t, bin, args)
			for _, want := range []string{"run " + runID + ": 1 stored task handle(s)\n", "run " + runID + ": resumed from its checkpoint\n", "\nresult: " + text + "\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("the second host's output lacks %q:\n%s", want, out)
				}
			}
			if _, err := os.Stat(checkpointFile(config{dir: dir, runID: runID})); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after the second host the checkpoint is still there (%v)", err)
			}
			st := taskStats(t, url)
			if st.Created != 1 || st.Cancels != 0 {
				t.Errorf("after the second host: task stats %+v, want 1 created (resumed, not called again), 0 cancelled", st)
			}
			if got := storedTasks(t, dir, runID); len(got) != 0 {
				t.Errorf("after the second host the store still holds %+v", got)
			}
			t.Logf("%s: killed and collected in %v; task stats %+v", era, time.Since(start).Round(time.Millisecond), st)

			// The third host finds no handle: the result was collected once,
			// so the same call is a new one.
			out = runHost(t, bin, args)
			if strings.Contains(out, "resumed") {
				t.Errorf("the third host resumed:\n%s", out)
			}
			for _, want := range []string{"run " + runID + ": 0 stored task handle(s)\n", "\nresult: " + text + "\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("the third host's output lacks %q:\n%s", want, out)
				}
			}
			if st := taskStats(t, url); st.Created != 2 || st.Cancels != 0 {
				t.Errorf("after the third host: task stats %+v, want 2 created, 0 cancelled", st)
			}
			if got := storedTasks(t, dir, runID); len(got) != 0 {
				t.Errorf("after the third host the store still holds %+v", got)
			}
		})
	}
}

// killHost starts cmd, waits (60 s at most) for a stdout line starting
// with prefix, kills it with SIGKILL and waits for its end.
func killHost(t *testing.T, cmd *exec.Cmd, prefix string) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var lines []string
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if !found && strings.HasPrefix(sc.Text(), prefix) {
				found = true
				close(seen)
			}
		}
		if !found {
			close(seen)
		}
		exited <- cmd.Wait() // after the last read, as Wait closes the pipe
	}()
	select {
	case <-seen:
	case <-time.After(60 * time.Second):
	}
	_ = cmd.Process.Kill()
	err = <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.String() != "signal: killed" {
		t.Fatalf("the first host ended with %v, want killed by SIGKILL; stdout:\n%s\nstderr:\n%s", err, strings.Join(lines, "\n"), stderr.String())
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], prefix) {
		t.Fatalf("the first host was killed before printing a line starting with %q; stdout:\n%s\nstderr:\n%s", prefix, strings.Join(lines, "\n"), stderr.String())
	}
}

// runHost runs the host binary to its end (2 minutes at most) and
// returns its stdout.
func runHost(t *testing.T, bin string, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the host: %v; stdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// storedTasks opens the host's store (no host runs then) and returns the
// run's task handles.
func storedTasks(t *testing.T, dir, runID string) []resource.TaskHandle {
	t.Helper()
	ctx := context.Background()
	h, err := agt.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ts, ok := h.Repository().(resource.TaskStore)
	if !ok {
		t.Fatal("the bbolt repository is not a resource.TaskStore")
	}
	got, err := ts.Tasks(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// taskStats asks the fake server, over a session of its own, what task
// traffic it had.
func taskStats(t *testing.T, url string) mcptest.TaskStats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mcpconn.NewConnector(nil)
	defer c.Close()
	s, err := c.Connect(ctx, "stats", resource.MCPServer{Type: resource.TransportHTTP, URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, mcptest.ToolTaskStats, nil)
	if err != nil {
		t.Fatal(err)
	}
	var st mcptest.TaskStats
	if err := json.Unmarshal([]byte(res.Text()), &st); err != nil {
		t.Fatalf("task_stats: %v in %q", err, res.Text())
	}
	return st
}
