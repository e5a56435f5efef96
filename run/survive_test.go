//go:build unix

package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// touchTool writes a resource without changing it, as a repeated
// resource_write does: Written, not Changed.
func touchTool() run.HostTool {
	return run.HostTool{
		Name:   "touch",
		Schema: json.RawMessage(`{"type":"object","properties":{"kind":{"type":"string"},"ref":{"type":"string"}},"required":["kind","ref"]}`),
		Handler: func(_ context.Context, req run.Request) (run.Result, error) {
			var k struct {
				Kind resource.Kind `json:"kind"`
				Ref  resource.Ref  `json:"ref"`
			}
			if err := json.Unmarshal(req.Arguments, &k); err != nil {
				return run.Result{}, err
			}
			return run.Result{Content: json.RawMessage(`[]`), Written: []resource.Key{{Kind: k.Kind, Ref: k.Ref}}}, nil
		},
	}
}

func touch(kind resource.Kind, ref resource.Ref) run.Call {
	b, _ := json.Marshal(map[string]any{"kind": kind, "ref": ref})
	return run.Call{ID: "touch", Name: "touch", Arguments: b}
}

// Issue 12 §1: Close during a refresh that connects a server that never
// answers (startup timeout 20 s) returns within about a second plus the
// termination grace, and the refresh never reports a switch after it.
func TestCloseDuringARefreshReturnsPromptly(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		a, mute := resource.Ref("a"), resource.Ref("mute")
		putMCP(t, repo, a, stdioServerEra(t, e))
		marker := t.TempDir()
		srv := stdioServerEra(t, e, "-fault", string(mcptest.FaultNoHandshake), "-call-log", filepath.Join(marker, "calls.log"))
		srv.StartupTimeoutMS = 20_000
		putMCP(t, repo, mute, srv)
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{a}})
		const grace = 300 * time.Millisecond
		r, err := run.New(context.Background(), &run.Options{Agent: testAgent, Repository: repo, Permission: policy.AutoAllow(),
			Connector: mcpconn.NewConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{TerminateGrace: grace}}), HostTools: []run.HostTool{mountTool(repo)}})
		if err != nil {
			t.Fatal(err)
		}
		refreshed := make(chan run.Outcome, 1)
		go func() {
			out, _ := r.Execute(context.Background(), batch(setMounts(a, mute)))
			refreshed <- out
		}()
		// The refresh is waiting for the handshake once the server runs.
		poll.Until(t, "the refresh to start the mute server", func() bool { return processCount(marker) > 0 })
		start := time.Now()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		t.Logf("Close during the refresh took %s (grace %s)", took, grace)
		if took > 4*grace+3*time.Second { // wide: the machine is noisy
			t.Errorf("Close took %s", took)
		}
		out := <-refreshed
		if out.Refresh == nil || out.Refresh.OK || !errors.Is(out.Refresh.Err, run.ErrClosed) {
			t.Errorf("the refresh cut by Close reported %+v; want not OK, ErrClosed", out.Refresh)
		}
		if !processesGone(marker) {
			t.Error("the server the refresh was starting outlived Close")
		}
	})
}

// Issue 12 §1: an Execute whose boundary refreshes while another batch of
// the old snapshot is held (a person who has not answered) returns within
// its own deadline: it never waits for the other batch.
func TestRefreshingExecuteDoesNotWaitForAnotherBatch(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b, c := resource.Ref("a"), resource.Ref("b"), resource.Ref("c")
		repo, mem := setupEra(t, e, a, c)
		putMCP(t, repo, b, inMemoryServer(t))
		hold, held, release := holdTool()
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{mountTool(repo), hold}})
		holding := make(chan error, 1)
		go func() {
			_, err := r.Execute(context.Background(), batch(call("h", "hold", `{}`)))
			holding <- err
		}()
		<-held
		defer func() {
			close(release)
			if err := <-holding; err != nil {
				t.Errorf("the held batch: %v", err)
			}
		}()
		// A deadline far longer than the refresh takes, even on a loaded
		// machine: waiting for the held batch (released only at the end of
		// the test) would run into it and fail the refresh.
		const deadline = 8 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		start := time.Now()
		type result struct {
			out run.Outcome
			err error
		}
		done := make(chan result, 1)
		go func() {
			out, err := r.Execute(ctx, batch(setMounts(a, b)))
			done <- result{out, err}
		}()
		var res result
		select {
		case res = <-done:
		case <-time.After(deadline + 5*time.Second):
			t.Fatal("the refreshing Execute waits for the held batch")
		}
		out, err := res.out, res.err
		took := time.Since(start)
		t.Logf("the refreshing Execute (deadline %s) returned after %s", deadline, took)
		if err != nil || out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("refresh: %v %+v", err, out.Refresh)
		}
		if diff := cmp.Diff([]resource.Ref{c}, out.Refresh.Removed); diff != "" {
			t.Errorf("removed (-want +got):\n%s", diff)
		}
		// c's connection is still open for the held batch; it closes when
		// that batch ends (checked by the leak checks of TestMain).
	})
}

// Issue 12 §2: a server killed between batches is restarted at the next
// boundary, before the next batch's calls: the call succeeds, and no call
// reached a server twice.
func TestKilledServerRestartsBeforeTheNextBatch(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		notesRef := resource.Ref("notes")
		logPath := filepath.Join(t.TempDir(), "calls.log")
		putMCP(t, repo, notesRef, stdioServerEra(t, e, "-call-log", logPath))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{notesRef}})
		var audit auditLog
		r := newRun(t, &run.Options{Repository: repo, Auditor: &audit})
		echoAlias := run.Alias(notesRef, mcptest.ToolEcho)
		out, err := r.Execute(context.Background(), batch(call("e1", echoAlias, `{"text":"one"}`)))
		if err != nil || out.Results[0].Failed() {
			t.Fatalf("first call: %v %+v", err, out.Results)
		}
		pid := serverPID(t, r, notesRef)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Until the Run's mount is lost: the next batch restarts it.
		poll.Until(t, "the Run to find the killed server lost", func() bool { return run.MountLost(r, notesRef) })
		out, err = r.Execute(context.Background(), batch(call("e2", echoAlias, `{"text":"two"}`)))
		if err != nil || out.Results[0].Failed() || echoText(t, out.Results[0]) != "two" {
			t.Fatalf("the call after the kill: %v %+v", err, out.Results)
		}
		if out.Refresh == nil || !cmp.Equal([]resource.Ref{notesRef}, out.Refresh.Restarted) {
			t.Errorf("refresh report = %+v; want notes restarted", out.Refresh)
		}
		if got := serverPID(t, r, notesRef); got == pid {
			t.Error("the server was not restarted")
		}
		if diff := cmp.Diff([]string{mcptest.ToolEcho, mcptest.ToolEnvironment, mcptest.ToolEcho, mcptest.ToolEnvironment}, readLines(t, logPath)); diff != "" {
			t.Errorf("calls the servers received (-want +got):\n%s", diff)
		}
		var diffs []*run.RefreshReport
		for _, rec := range audit.records("refresh") {
			diffs = append(diffs, rec.Refresh)
		}
		if len(diffs) != 1 || diffs[0] == nil || !cmp.Equal([]resource.Ref{notesRef}, diffs[0].Restarted) {
			t.Errorf("refresh audit diffs = %+v; want one restart of notes", diffs)
		}
	})
}

// Issue 12 §2: a server that crashes on every call is restarted at most
// MaxRestarts times in a Run; then its calls say it is not restarted again.
func TestCrashLoopingServerIsRestartedAtMostMaxRestarts(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		crashy := resource.Ref("crashy")
		marker := t.TempDir()
		putMCP(t, repo, crashy, stdioServerEra(t, e, "-fault", string(mcptest.FaultCrashOnCall), "-call-log", filepath.Join(marker, "calls.log")))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{crashy}})
		const maxRestarts = 3
		// A backoff of 1 ns (doubled thrice, 8 ns) has passed by each
		// next batch: the test is about the count, not the wait.
		r := newRun(t, &run.Options{Repository: repo, Limits: &run.Limits{MaxRestarts: maxRestarts, RestartBackoff: time.Nanosecond}})
		restarts := 0
		var last run.Result
		for i := range 8 {
			out, err := r.Execute(context.Background(), batch(call("c", run.Alias(crashy, mcptest.ToolCrash), `{}`)))
			if err != nil || out.Results[0].Code != run.CodeUnavailable {
				t.Fatalf("call %d: %v %+v", i, err, out.Results)
			}
			last = out.Results[0]
			if out.Refresh != nil {
				restarts += len(out.Refresh.Restarted)
			}
		}
		if restarts != maxRestarts {
			t.Errorf("%d restarts; want %d", restarts, maxRestarts)
		}
		if !strings.Contains(last.Message, "not restarted again") {
			t.Errorf("the last call says %q; want that the server is not restarted again", last.Message)
		}
		if got := len(readLines(t, filepath.Join(marker, "calls.log"))); got != 1+maxRestarts {
			t.Errorf("the servers received %d calls; want %d (one per process)", got, 1+maxRestarts)
		}
	})
}

// Issue 12 §3a: after "configuration saved, but load failed" on an add
// (the server could not start yet), the writing call's own result tells the
// model; writing the server's document again, or repeating the agent
// write unchanged, retries, and the Run catches up.
func TestFailedAddIsRetriedByALaterWrite(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		a, late := resource.Ref("a"), resource.Ref("late")
		putMCP(t, repo, a, stdioServerEra(t, e))
		broken := stdioServerEra(t, e)
		broken.Cwd = filepath.Join(t.TempDir(), "not-yet")
		putMCP(t, repo, late, broken)
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{a}})
		r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{mountTool(repo), writeMCPTool(repo), touchTool()}})

		out, err := r.Execute(context.Background(), batch(setMounts(a, late)))
		if err != nil || out.Refresh == nil || out.Refresh.OK {
			t.Fatalf("add of a broken server: %v %+v", err, out.Refresh)
		}
		model := string(out.Results[0].ForModel())
		if !strings.Contains(model, "configuration saved, but load failed") || !strings.Contains(model, "write the agent or the server again to retry") {
			t.Errorf("the writing call's result for the model = %s; want the notice", model)
		}

		// The same agent write again, unchanged: a retry, which still fails.
		out, err = r.Execute(context.Background(), batch(touch(resource.KindAgent, testAgent)))
		if err != nil || out.Refresh == nil || out.Refresh.OK {
			t.Errorf("retry by an unchanged write: %v %+v; want a refresh that fails again", err, out.Refresh)
		}
		// The server's document fixed: its write retries, and the Run loads it.
		fixed := stdioServerEra(t, e)
		srvJSON, _ := json.Marshal(map[string]any{"ref": late, "server": fixed})
		out, err = r.Execute(context.Background(), batch(run.Call{ID: "fix", Name: "write_mcp", Arguments: srvJSON}))
		if err != nil || out.Refresh == nil || !out.Refresh.OK || !cmp.Equal([]resource.Ref{late}, out.Refresh.Added) {
			t.Fatalf("after fixing the server: %v %+v", err, out.Refresh)
		}
		if !hasTool(r, run.Alias(late, mcptest.ToolEcho)) {
			t.Error("the late server's tools did not load")
		}
		// Caught up: an unchanged write no longer refreshes.
		out, err = r.Execute(context.Background(), batch(touch(resource.KindAgent, testAgent)))
		if err != nil || out.Refresh != nil {
			t.Errorf("an unchanged write when caught up: %v %+v; want no refresh", err, out.Refresh)
		}
	})
}

// Issue 12 §3b: a mount that crashed and cannot restart does not block a
// refresh: removing another mount, or the crashed one itself, takes
// effect.
func TestDeadMountDoesNotBlockRemovals(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		crashy, a, b := resource.Ref("crashy"), resource.Ref("a"), resource.Ref("b")
		putMCP(t, repo, crashy, stdioServerEra(t, e, "-fault", string(mcptest.FaultCrashOnCall)))
		putMCP(t, repo, a, stdioServerEra(t, e))
		putMCP(t, repo, b, stdioServerEra(t, e))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{crashy, a, b}})
		r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{mountTool(repo)}, Limits: &run.Limits{MaxRestarts: -1}})
		out, err := r.Execute(context.Background(), batch(call("c", run.Alias(crashy, mcptest.ToolCrash), `{}`)))
		if err != nil || out.Results[0].Code != run.CodeUnavailable || out.Refresh != nil {
			t.Fatalf("crash: %v %+v %+v", err, out.Results, out.Refresh)
		}
		out, err = r.Execute(context.Background(), batch(setMounts(crashy, a)))
		if err != nil || out.Refresh == nil || !out.Refresh.OK || !cmp.Equal([]resource.Ref{b}, out.Refresh.Removed) {
			t.Fatalf("remove b beside a dead mount: %v %+v", err, out.Refresh)
		}
		out, err = r.Execute(context.Background(), batch(setMounts(a)))
		if err != nil || out.Refresh == nil || !out.Refresh.OK || !cmp.Equal([]resource.Ref{crashy}, out.Refresh.Removed) {
			t.Fatalf("remove the dead mount: %v %+v", err, out.Refresh)
		}
		if hasTool(r, run.Alias(crashy, mcptest.ToolEcho)) || hasTool(r, run.Alias(b, mcptest.ToolEcho)) {
			t.Error("removed mounts' tools are still listed")
		}
	})
}

// Issue 12 §3b: a failed refresh still applies removals; the failing
// addition is left out and the rest stays.
func TestFailedRefreshStillRemoves(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		a, b, broken := resource.Ref("a"), resource.Ref("b"), resource.Ref("broken")
		putMCP(t, repo, a, stdioServerEra(t, e))
		putMCP(t, repo, b, stdioServerEra(t, e))
		putMCP(t, repo, broken, stdioServerEra(t, e, "-fault", string(mcptest.FaultExitAtStart)))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{a, b}})
		r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{mountTool(repo)}})
		pidB := serverPID(t, r, b)
		out, err := r.Execute(context.Background(), batch(setMounts(a, broken)))
		if err != nil || out.Refresh == nil || out.Refresh.OK {
			t.Fatalf("refresh: %v %+v", err, out.Refresh)
		}
		if !cmp.Equal([]resource.Ref{b}, out.Refresh.Removed) || len(out.Refresh.Added) != 0 {
			t.Errorf("report = %+v; want b removed and nothing added", out.Refresh)
		}
		if hasTool(r, run.Alias(b, mcptest.ToolEcho)) || !hasTool(r, run.Alias(a, mcptest.ToolEcho)) {
			t.Errorf("tools = %v; want a's and not b's", toolNames(r))
		}
		if !processGone(pidB) {
			t.Error("the removed server still runs")
		}
	})
}

// Issue 12 §2: a restart that fails is reported like a failed refresh
// (the notice, Failures) and keeps the lost mount, whose calls say so; it
// does not fail the boundary.
func TestFailedRestartIsReported(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		crashy := resource.Ref("crashy")
		srv := stdioServerEra(t, e, "-fault", string(mcptest.FaultCrashOnCall))
		srv.Cwd = t.TempDir()
		putMCP(t, repo, crashy, srv)
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{crashy}})
		r := newRun(t, &run.Options{Repository: repo, Limits: &run.Limits{RestartBackoff: time.Millisecond}})
		if err := os.Remove(srv.Cwd); err != nil { // the restart cannot start it
			t.Fatal(err)
		}
		out, err := r.Execute(context.Background(), batch(call("c", run.Alias(crashy, mcptest.ToolCrash), `{}`)))
		if err != nil || out.Results[0].Code != run.CodeUnavailable {
			t.Fatalf("crash: %v %+v", err, out.Results)
		}
		rep := out.Refresh
		if rep == nil || !rep.OK || len(rep.Failures) != 1 || rep.Failures[0].Ref != crashy || len(rep.Restarted) != 0 {
			t.Fatalf("refresh report = %+v; want OK with crashy's restart failing", rep)
		}
		if !strings.Contains(out.Notice(), "configuration saved, but load failed: restarting mount crashy") {
			t.Errorf("notice = %q", out.Notice())
		}
		if !hasTool(r, run.Alias(crashy, mcptest.ToolEcho)) {
			t.Error("the lost mount's tools were dropped")
		}
	})
}

// A mount shared by several snapshots stays open while any batch still
// uses one of them: two refreshes while a batch of the first snapshot is
// held do not close the mount that batch calls next.
func TestSharedMountOutlivesLaterSnapshots(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b, c := resource.Ref("a"), resource.Ref("b"), resource.Ref("c")
		repo, mem := setupEra(t, e, a, c)
		putMCP(t, repo, b, inMemoryServer(t))
		hold, held, release := holdTool()
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{mountTool(repo), hold}, Limits: &run.Limits{MaxConcurrency: 1}})
		done := make(chan run.Outcome, 1)
		go func() {
			out, _ := r.Execute(context.Background(), batch(call("h", "hold", `{}`), call("late", run.Alias(c, mcptest.ToolEcho), `{"text":"still here"}`)))
			done <- out
		}()
		<-held
		for _, mounts := range [][]resource.Ref{{a, b, c}, {a, b}} {
			if out, err := r.Execute(context.Background(), batch(setMounts(mounts...))); err != nil || out.Refresh == nil || !out.Refresh.OK {
				t.Fatalf("set %v: %v %+v", mounts, err, out.Refresh)
			}
		}
		close(release)
		out := <-done
		if got := echoText(t, out.Results[1]); got != "still here" {
			t.Errorf("the held batch's call to c got %q", got)
		}
	})
}

// SPEC R7.5: restarting a lost mount loads no edit that another front end
// saved: not the agent's mounts, not the server's document.
func TestRestartLoadsNoOtherEdits(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		crashy, other := resource.Ref("crashy"), resource.Ref("other")
		putMCP(t, repo, crashy, stdioServerEra(t, e, "-fault", string(mcptest.FaultCrashOnCall)))
		putMCP(t, repo, other, stdioServerEra(t, e))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{crashy}})
		r := newRun(t, &run.Options{Repository: repo})
		// Another front end adds a mount and edits the crashy server.
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{crashy, other}})
		putMCP(t, repo, crashy, stdioServerEra(t, e, "-fault", string(mcptest.FaultCrashOnCall), "-tag", "edited"))
		out, err := r.Execute(context.Background(), batch(call("c", run.Alias(crashy, mcptest.ToolCrash), `{}`)))
		if err != nil || out.Refresh == nil || !cmp.Equal([]resource.Ref{crashy}, out.Refresh.Restarted) || len(out.Refresh.Added) != 0 {
			t.Fatalf("restart: %v %+v", err, out.Refresh)
		}
		if hasTool(r, run.Alias(other, mcptest.ToolEcho)) {
			t.Error("the restart loaded a mount another front end added")
		}
		if env := serverEnv(t, r, crashy); slices.Contains(env.Args, "edited") {
			t.Errorf("the restart used the edited document: %v", env.Args)
		}
	})
}
