package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/google/go-cmp/cmp"
)

// taskEras are the protocol eras the task tests run in: tasks of
// 2025-11-25, and the tasks extension of 2026-07-28.
var taskEras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern}

// taskLines returns the lines agent call printed on stderr for the call's
// task ("task STATUS[: MESSAGE]"), in order.
func taskLines(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "task ") {
			out = append(out, line)
		}
	}
	return out
}

// toolErrorOf decodes the ToolError agent call printed on stdout; it
// fails the test when stdout is not that JSON.
func toolErrorOf(t *testing.T, stdout string) (code, message string) {
	t.Helper()
	var te struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout), &te); err != nil || te.Error.Code == "" {
		t.Fatalf("stdout is not a ToolError (%v):\n%s", err, stdout)
	}
	return te.Error.Code, te.Error.Message
}

// Issue 26 (Done when): agent call of a task tool, in both eras, shows
// each new status of the task on stderr, one line each, and prints on
// stdout exactly what the call of any tool prints: the result, or the
// ToolError with exit status 1. An input_required task (task_ask) is
// declined under --yes as a synchronous elicitation (ask) is (issue 29
// item 2: agent call asks on a terminal, and declines without one), and
// the task goes on to its end. No argument value reaches stderr.
func TestAgentCallTaskTools(t *testing.T) {
	t.Parallel()
	const secret = "arg-value-7f3c" // an argument value: never on stderr
	tests := []struct {
		name, tool, args string
		code             int
		result           any    // the exact result on stdout (exit 0)
		errCode, errText string // the ToolError on stdout (exit 1)
		first, last      string // the first and the last task line ("" for none; last "": any)
		declined         bool   // stderr says agt declined an elicitation
	}{
		{name: "completes", tool: mcptest.ToolTaskWork, args: `{"text":"` + secret + `","steps":2,"step_ms":50}`,
			result: []any{map[string]any{"type": "text", "text": secret}},
			first:  "task working: step 1 of 2", last: "task completed"},
		{name: "fails", tool: mcptest.ToolTaskFail, args: `{"text":"` + secret + `"}`, code: 1,
			errCode: "tool_error", errText: mcptest.TaskFailMessage,
			first: "task working: step 1 of 1", last: "task failed: " + mcptest.TaskFailMessage},
		{name: "asks", tool: mcptest.ToolTaskAsk, args: `{"text":"` + secret + `"}`,
			result: []any{map[string]any{"type": "text", "text": "declined"}},
			// The last status seen depends on the era's polls.
			first: "task working: step 1 of 1", declined: true},
		{name: "asks without a task", tool: mcptest.ToolAsk, args: `{}`,
			result: []any{map[string]any{"type": "text", "text": `{"action":"decline"}`}}, declined: true},
	}
	for _, era := range taskEras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			registerFake(t, db, "jobs", "-fault", string(mcptest.FaultTasks)+","+string(mcptest.FaultClientFeatures), "-era", string(era))
			mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "jobs")
			for _, tc := range tests {
				r := mustRun(t, db, tc.code, "agent", "call", "helper", "mcp__jobs__"+tc.tool, tc.args, "--yes")
				if tc.code == 0 {
					var got any
					if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
						t.Fatalf("%s: stdout is not JSON (%v):\n%s", tc.name, err, r.stdout)
					}
					if diff := cmp.Diff(tc.result, got); diff != "" {
						t.Errorf("%s: result (-want +got):\n%s", tc.name, diff)
					}
				} else if code, msg := toolErrorOf(t, r.stdout); code != tc.errCode || !strings.Contains(msg, tc.errText) {
					t.Errorf("%s: ToolError %s %q; want %s containing %q", tc.name, code, msg, tc.errCode, tc.errText)
				}
				if declined := strings.Contains(r.stderr, "agt declined it: --yes answers no question"); declined != tc.declined {
					t.Errorf("%s: stderr says agt declined an elicitation: %v, want %v:\n%s", tc.name, declined, tc.declined, r.stderr)
				}
				lines := taskLines(r.stderr)
				switch {
				case tc.first == "" && len(lines) > 0:
					t.Errorf("%s: task lines for a call without a task: %q", tc.name, lines)
				case tc.first != "" && (len(lines) == 0 || lines[0] != tc.first || tc.last != "" && lines[len(lines)-1] != tc.last):
					t.Errorf("%s: task lines %q; want %q first and %q last", tc.name, lines, tc.first, tc.last)
				}
				for i := 1; i < len(lines); i++ {
					if lines[i] == lines[i-1] {
						t.Errorf("%s: the status %q is shown twice in a row", tc.name, lines[i])
					}
				}
				if strings.Contains(r.stderr, secret) {
					t.Errorf("%s: stderr shows an argument value:\n%s", tc.name, r.stderr)
				}
			}
		})
	}
}

// Issue 26 (Done when): a task still running when agent call's context
// ends, past --timeout or at Ctrl-C (SIGINT), ends the call
// deadline_exceeded or canceled (stdout stays the ToolError JSON, exit
// status 1), agt says why and that it asked the server to cancel the task,
// and the server got exactly one tasks/cancel (task_stats, read with a
// second agent call from the same server process, over HTTP).
func TestAgentCallTaskEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		interrupt bool // SIGINT once the task runs; else --timeout 5s
		code      string
		say       []string
	}{
		// task_forever never ends: the timeout does, whatever the
		// machine's speed (5 s leaves the Run ample time to start).
		{name: "timeout", code: "deadline_exceeded", say: []string{
			"the call timed out: it did not finish within --timeout 5s\n", "next: agt gave up after --timeout 5s"}},
		{name: "interrupt", interrupt: true, code: "canceled", say: []string{"the call was interrupted\n"}},
	}
	for _, era := range taskEras {
		for _, tc := range tests {
			t.Run(string(era)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				db := filepath.Join(t.TempDir(), "agt.db")
				url := mcptest.ServeHTTP(t, &mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultTasks}, Era: era})
				mustRun(t, db, 0, "mcp", "create", "jobs", "--url", url)
				mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "jobs")

				args := []string{"agent", "call", "helper", "mcp__jobs__" + mcptest.ToolTaskForever, `{}`, "--yes"}
				var r result
				if tc.interrupt {
					r = interruptOnTask(t, db, args...)
				} else {
					r = mustRun(t, db, 1, append(args, "--timeout", "5s")...)
				}
				if code, _ := toolErrorOf(t, r.stdout); r.code != 1 || code != tc.code {
					t.Errorf("exit %d, ToolError code %s; want 1, %s", r.code, code, tc.code)
				}
				assertContains(t, "agent call of task_forever: stderr", r.stderr, append(tc.say,
					"task working: ", "agt asked the server to cancel the task it was running for the call\n")...)

				r = mustRun(t, db, 0, "agent", "call", "helper", "mcp__jobs__"+mcptest.ToolTaskStats, `{}`, "--yes")
				var content []struct {
					Text string `json:"text"`
				}
				var stats mcptest.TaskStats
				if err := json.Unmarshal([]byte(r.stdout), &content); err != nil || len(content) != 1 {
					t.Fatalf("task_stats result (%v):\n%s", err, r.stdout)
				}
				if err := json.Unmarshal([]byte(content[0].Text), &stats); err != nil {
					t.Fatalf("task_stats text (%v): %q", err, content[0].Text)
				}
				if stats.Created != 1 || stats.Cancels != 1 {
					t.Errorf("task_stats = %+v; want created 1, cancels 1", stats)
				}
			})
		}
	}
}

// interruptOnTask runs agt with args, sends it SIGINT once it has shown
// a task's first status on stderr, and returns what it printed.
func interruptOnTask(t *testing.T, db string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := agtCommand(ctx, t, nil, db, args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "task working") {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
	}
	code := exitCode(t, cmd, cmd.Wait())
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// Issue 26: task tools are usable, in both eras: the probe of the fake
// server's task tools is ok (exit status 0, with --strict too), no tool
// is left out, and agent check --probe --strict finds the agent ready.
func TestProbeTaskTools(t *testing.T) {
	t.Parallel()
	for _, era := range taskEras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			registerFake(t, db, "jobs", "-fault", string(mcptest.FaultTasks), "-era", string(era))
			mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "jobs")

			r := mustRun(t, db, 0, "mcp", "probe", "jobs", "--strict")
			assertContains(t, "mcp probe", r.stdout, "probe jobs: ok\n", "  "+mcptest.ToolTaskWork+" ", "  "+mcptest.ToolTaskForever+" ")
			if strings.Contains(r.stdout, "left out") || strings.Contains(r.stdout, "task-augmented") {
				t.Errorf("mcp probe leaves a task tool out:\n%s", r.stdout)
			}
			r = mustRun(t, db, 0, "mcp", "probe", "jobs", "--json")
			var rep struct {
				Tools []struct {
					Name string `json:"name"`
					OK   bool   `json:"ok"`
				} `json:"tools"`
				Usable int  `json:"usable"`
				OK     bool `json:"ok"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("mcp probe --json: %v\n%s", err, r.stdout)
			}
			names := map[string]bool{}
			for _, tl := range rep.Tools {
				names[tl.Name] = tl.OK
			}
			for _, tool := range []string{mcptest.ToolTaskWork, mcptest.ToolTaskAsk, mcptest.ToolTaskFail, mcptest.ToolTaskForever, mcptest.ToolTaskStats} {
				if ok, listed := names[tool]; !ok || !listed {
					t.Errorf("mcp probe --json: %s listed %v, ok %v", tool, listed, ok)
				}
			}
			if !rep.OK || rep.Usable != len(rep.Tools) {
				t.Errorf("mcp probe --json: ok %v, usable %d of %d", rep.OK, rep.Usable, len(rep.Tools))
			}
			r = mustRun(t, db, 0, "agent", "check", "helper", "--probe", "--strict")
			assertContains(t, "agent check --probe --strict", r.stdout, "    probe: ok, ", "\nready\n")
		})
	}
}

// Issue 26: on the stock reference server (server-everything, pinned in
// package.json; skipped outside CI when npm ci has not installed it),
// agt mcp probe everything exits 0 with simulate-research-query, a
// task-required tool of 2025-11-25, usable; agent call of it shows the
// task's statuses on stderr and prints the report on stdout.
func TestServerEverythingCLI(t *testing.T) {
	t.Parallel()
	node, script := runtest.Node(t, filepath.Join("..", ".."), "@modelcontextprotocol/server-everything/dist/index.js")
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "everything", "--cwd", t.TempDir(), "--", node, script, "stdio")
	mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "everything")

	r := mustRun(t, db, 0, "mcp", "probe", "everything")
	assertContains(t, "mcp probe everything", r.stdout, "probe everything: ok\n", "  simulate-research-query ")
	if strings.Contains(r.stdout, "left out") {
		t.Errorf("mcp probe everything leaves tools out:\n%s", r.stdout)
	}
	r = mustRun(t, db, 0, "agent", "call", "helper", "mcp__everything__simulate-research-query", `{"topic":"python"}`, "--yes")
	var content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &content); err != nil || len(content) == 0 || !strings.Contains(content[0].Text, "Research Report: python") {
		t.Errorf("simulate-research-query result (%v):\n%.500s", err, r.stdout)
	}
	if lines := taskLines(r.stderr); len(lines) < 2 || !strings.HasPrefix(lines[0], "task working") || !strings.HasPrefix(lines[len(lines)-1], "task completed") {
		t.Errorf("simulate-research-query task lines %q; want working first, completed last", lines)
	}
}

// A task's status message is the server's text: its line never carries
// a control or format character, nor a line break (no forged line), and
// is cut at maxLineWidth characters; the task's id is not shown.
func TestTaskLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", maxLineWidth+24)
	tests := []struct {
		status mcpconn.TaskStatus
		want   string
	}{
		{mcpconn.TaskStatus{TaskID: "t-1", Status: mcpconn.TaskWorking, Message: "step 1 of 3"}, "task working: step 1 of 3"},
		{mcpconn.TaskStatus{TaskID: "t-1", Status: mcpconn.TaskCompleted}, "task completed"},
		{mcpconn.TaskStatus{TaskID: "t-1", Status: mcpconn.TaskWorking, Message: "a\x1b]0;owned\x07\nagt: forged\u202e"}, "task working: a?]0;owned??agt: forged?"},
		{mcpconn.TaskStatus{TaskID: "t-1", Status: mcpconn.TaskWorking, Message: long},
			"task working: " + strings.Repeat("é", maxLineWidth-1) + "… (2048 bytes)"},
	}
	for _, tt := range tests {
		if got := taskLine(tt.status); got != tt.want {
			t.Errorf("taskLine(%+.40v) = %.80q; want %.80q", tt.status, got, tt.want)
		}
	}
}
