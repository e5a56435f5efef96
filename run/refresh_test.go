package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
)

func setMounts(refs ...resource.Ref) run.Call {
	b, _ := json.Marshal(map[string]any{"mcps": refs})
	return run.Call{ID: "mount", Name: "set_mounts", Arguments: b}
}

func toolNames(r *run.Run) []string {
	var names []string
	for _, t := range r.Tools() {
		names = append(names, t.Name)
	}
	return names
}

func hasTool(r *run.Run, alias string) bool { return slices.Contains(toolNames(r), alias) }

// SPEC R7.1, R7.2, R7.5: mounting a server at the batch boundary keeps the
// unchanged mounts' connections; calls in the batch use the old snapshot;
// unmounting closes the server's process.
func TestRefreshAddAndRemoveMount(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, a, b := mountedAndNot(t, e)
		audit := &auditLog{}
		r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{mountTool(repo)}, Auditor: audit})
		fp0 := r.Fingerprint()
		pidA := serverPID(t, r, a)

		// In the same batch as the mount, b's tools are not callable yet.
		out, err := r.Execute(context.Background(), batch(setMounts(a, b)))
		if err != nil {
			t.Fatal(err)
		}
		if out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("refresh report = %+v, want OK", out.Refresh)
		}
		if diff := cmp.Diff([]resource.Ref{b}, out.Refresh.Added); diff != "" {
			t.Errorf("added (-want +got):\n%s", diff)
		}
		if !hasTool(r, run.Alias(b, mcptest.ToolEcho)) {
			t.Fatalf("b's tools did not appear: %v", toolNames(r))
		}
		if got := serverPID(t, r, a); got != pidA {
			t.Errorf("mount a was restarted by the refresh (pid %d -> %d)", pidA, got)
		}
		if r.Fingerprint() == fp0 {
			t.Error("the fingerprint did not change with the tool snapshot")
		}
		pidB := serverPID(t, r, b)

		out, err = r.Execute(context.Background(), batch(setMounts(a)))
		if err != nil || out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("unmount: %v %+v", err, out.Refresh)
		}
		if hasTool(r, run.Alias(b, mcptest.ToolEcho)) {
			t.Error("b's tools are still listed after unmounting")
		}
		if !processGone(pidB) {
			t.Errorf("b's server (pid %d) still runs after unmounting", pidB)
		}
		out, err = r.Execute(context.Background(), batch(call("late", run.Alias(b, mcptest.ToolEcho), `{"text":"x"}`)))
		var be *run.BatchError
		if !errors.As(err, &be) || be.Code != run.CodeUnknownTool {
			t.Errorf("calling an unmounted tool: %v, want unknown_tool", err)
		}
		if r.Fingerprint() != fp0 {
			t.Error("back to the first configuration, the fingerprint differs")
		}
		if n := len(audit.records("refresh")); n != 2 {
			t.Errorf("%d refresh audit records, want 2", n)
		}
	})
}

// Batches running on other goroutines while the Run refreshes keep working:
// an unchanged mount is never interrupted (run with -race).
func TestConcurrentBatchesDuringRefresh(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b := resource.Ref("a"), resource.Ref("b")
		repo, mem := setupEra(t, e, a)
		putMCP(t, repo, b, inMemoryServer(t))
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{mountTool(repo)}})
		stop := make(chan struct{})
		errs := make(chan error, 4)
		for w := range 4 {
			go func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						errs <- nil
						return
					default:
					}
					out, err := r.Execute(context.Background(), run.Batch{ID: fmt.Sprint(w, i), Agent: testAgent,
						Calls: []run.Call{call("e", run.Alias(a, mcptest.ToolEcho), `{"text":"x"}`)}})
					if err != nil || out.Results[0].Failed() {
						errs <- fmt.Errorf("worker %d batch %d: %v %+v", w, i, err, out.Results)
						return
					}
				}
			}()
		}
		for i := range 10 {
			mounts := []resource.Ref{a}
			if i%2 == 0 {
				mounts = append(mounts, b)
			}
			out, err := r.Execute(context.Background(), batch(setMounts(mounts...)))
			if err != nil || !out.Refresh.OK {
				t.Fatalf("refresh %d: %v %+v", i, err, out.Refresh)
			}
		}
		close(stop)
		for range 4 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
}

// SPEC R7.1: the calls of the batch that changes a mounted server all use
// the old snapshot: a call by the same name after the change, in the same
// batch, reaches the old process; the next batch reaches the new one.
func TestRefreshCallsInBatchUseOldSnapshot(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		a := resource.Ref("a")
		putMCP(t, repo, a, stdioServerEra(t, e))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{a}})
		r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{writeMCPTool(repo)}, Limits: &run.Limits{MaxConcurrency: 1}})
		oldPID := serverPID(t, r, a)
		changed, _ := json.Marshal(map[string]any{"ref": a, "server": stdioServerEra(t, e, "-tag", "changed")})
		out, err := r.Execute(context.Background(), batch(
			run.Call{ID: "w", Name: "write_mcp", Arguments: changed},
			call("env", run.Alias(a, mcptest.ToolEnvironment), `{}`)))
		if err != nil || out.Refresh == nil || !out.Refresh.OK || !slices.Equal(out.Refresh.Replaced, []resource.Ref{a}) {
			t.Fatalf("change: %v %+v", err, out.Refresh)
		}
		var env mcptest.EnvironmentOut
		if err := json.Unmarshal(out.Results[1].Structured, &env); err != nil {
			t.Fatalf("environment in the changing batch: %v %+v", err, out.Results[1])
		}
		if env.PID != oldPID || slices.Contains(env.Args, "changed") {
			t.Errorf("the call after the change in its batch reached pid %d %v; want the old process %d", env.PID, env.Args, oldPID)
		}
		if got := serverEnv(t, r, a); got.PID == oldPID || !slices.Contains(got.Args, "changed") {
			t.Errorf("the next batch reached pid %d %v; want the new process", got.PID, got.Args)
		}
	})
}

// SPEC R7.2: a changed mount that cannot load keeps the old snapshot whole
// and says "configuration saved, but load failed" to the model and audit.
func TestRefreshFailureKeepsOldSnapshot(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		putMCP(t, repo, notes, stdioServerEra(t, e))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{notes}})
		audit := &auditLog{}
		r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{writeMCPTool(repo)}, Auditor: audit})
		fp := r.Fingerprint()
		pid := serverPID(t, r, notes)

		broken := stdioServerEra(t, e, "-fault", string(mcptest.FaultExitAtStart))
		args, _ := json.Marshal(map[string]any{"ref": notes, "server": broken})
		out, err := r.Execute(context.Background(), batch(run.Call{ID: "w", Name: "write_mcp", Arguments: args}))
		if err != nil {
			t.Fatal(err)
		}
		if out.Results[0].Failed() {
			t.Fatalf("the write itself failed: %+v", out.Results[0])
		}
		notice := out.Notice()
		if !strings.HasPrefix(notice, "configuration saved, but load failed: ") || !strings.Contains(notice, "mount notes") {
			t.Errorf("notice = %q", notice)
		}
		if out.Refresh.OK || len(out.Refresh.Failures) != 1 || out.Refresh.Failures[0].Ref != notes {
			t.Errorf("refresh report = %+v", out.Refresh)
		}
		// The old server still answers, unrestarted.
		if got := serverPID(t, r, notes); got != pid {
			t.Errorf("old mount pid %d -> %d", pid, got)
		}
		if r.Fingerprint() != fp {
			t.Error("a failed refresh changed the fingerprint")
		}
		recs := audit.records("refresh")
		if len(recs) != 1 || !strings.HasPrefix(recs[0].Message, "configuration saved, but load failed") {
			t.Errorf("refresh audit = %+v", recs)
		}
	})
}

// SPEC R7.5: writes by other agents and direct edits do not refresh a
// running Run; a new Run sees them.
func TestOtherWritersDoNotRefresh(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b := resource.Ref("a"), resource.Ref("b")
		repo, mem := setupEra(t, e, a)
		putMCP(t, repo, b, inMemoryServer(t))
		putAgent(t, repo, "other", resource.AgentDocument{MCPs: []resource.Ref{a}})
		opts := func(agent resource.Ref) *run.Options {
			return &run.Options{Agent: agent, Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{mountTool(repo)}}
		}
		r := newRun(t, opts(testAgent))
		other := newRun(t, opts("other"))

		// Another agent changes its own mounts: only its Run refreshes.
		out, err := other.Execute(context.Background(), run.Batch{ID: "o", Agent: "other", Calls: []run.Call{setMounts(a, b)}})
		if err != nil || out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("other agent's refresh: %v %+v", err, out.Refresh)
		}
		// A direct edit (CLI) of this agent's document.
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{a, b}})
		dials := mem.dials.Load()
		out, err = r.Execute(context.Background(), batch(call("e", run.Alias(a, mcptest.ToolEcho), `{"text":"x"}`)))
		if err != nil || out.Refresh != nil {
			t.Fatalf("a plain batch refreshed: %v %+v", err, out.Refresh)
		}
		if hasTool(r, run.Alias(b, mcptest.ToolEcho)) || mem.dials.Load() != dials {
			t.Error("a write from elsewhere refreshed the running Run")
		}
		if fresh := newRun(t, opts(testAgent)); !hasTool(fresh, run.Alias(b, mcptest.ToolEcho)) {
			t.Error("a new Run does not see the direct edit")
		}
	})
}

// SPEC R7.3: after a refresh that reorders mounts, every old alias names
// the same tool, and no connection restarts.
func TestRefreshReorderKeepsAliases(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b := resource.Ref("x/a"), resource.Ref("b")
		repo, mem := setupEra(t, e, a, b)
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{mountTool(repo)}})
		before := r.Tools()
		dials := mem.dials.Load()
		out, err := r.Execute(context.Background(), batch(setMounts(b, a)))
		if err != nil || out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("reorder: %v %+v", err, out.Refresh)
		}
		if diff := cmp.Diff(before, r.Tools()); diff != "" {
			t.Errorf("tools changed by a reorder (-before +after):\n%s", diff)
		}
		if mem.dials.Load() != dials {
			t.Error("a reorder restarted connections")
		}
	})
}

// Changing a mounted MCP resource reconnects only that mount.
func TestRefreshReplacesChangedMount(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b := resource.Ref("a"), resource.Ref("b")
		repo, mem := setupEra(t, e, a, b)
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{writeMCPTool(repo)}})
		dials := mem.dials.Load()
		args, _ := json.Marshal(map[string]any{"ref": b, "server": inMemoryServer(t)})
		out, err := r.Execute(context.Background(), batch(run.Call{ID: "w", Name: "write_mcp", Arguments: args}))
		if err != nil || out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("refresh: %v %+v", err, out.Refresh)
		}
		if diff := cmp.Diff([]resource.Ref{b}, out.Refresh.Replaced); diff != "" {
			t.Errorf("replaced (-want +got):\n%s", diff)
		}
		if got := mem.dials.Load() - dials; got != 1 {
			t.Errorf("%d new connections, want 1", got)
		}
		// A write to an MCP resource that is not mounted does not refresh.
		putMCP(t, repo, "unmounted", inMemoryServer(t))
		args, _ = json.Marshal(map[string]any{"ref": "unmounted", "server": inMemoryServer(t)})
		out, err = r.Execute(context.Background(), batch(run.Call{ID: "w", Name: "write_mcp", Arguments: args}))
		if err != nil || out.Refresh != nil {
			t.Errorf("a write to an unmounted resource refreshed: %v %+v", err, out.Refresh)
		}
	})
}

// SPEC R3.6: management-only tools appear only for agents that can manage,
// and appear or disappear with the capability at the boundary.
func TestManagementOnlyTools(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		framework := run.HostTool{Name: "resource_read", Schema: json.RawMessage(`{"type":"object"}`), ManagementOnly: true,
			Handler: func(context.Context, run.Request) (run.Result, error) { return run.Result{}, nil }}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{framework}})
		if hasTool(r, "resource_read") {
			t.Error("a plain agent sees a management-only tool")
		}
		if _, err := r.Execute(context.Background(), batch(call("x", "resource_read", `{}`))); !errors.As(err, new(*run.BatchError)) {
			t.Errorf("a plain agent called a management-only tool: %v", err)
		}
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{notes}, Capabilities: []string{resource.CapabilityResourceManagement}})
		m := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{framework}})
		var src run.Source
		for _, ti := range m.Tools() {
			if ti.Name == "resource_read" {
				src = ti.Source
			}
		}
		if src.Kind != run.SourceFramework {
			t.Errorf("manager's resource_read source = %+v, want framework", src)
		}
		// Denied calls of framework tools never run (SPEC R3.6: still pass the
		// permission policy).
		d := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{framework},
			Permission: policy.Rules{Deny: []string{"framework:*"}, Default: run.Allow}})
		out, err := d.Execute(context.Background(), batch(call("x", "resource_read", `{}`)))
		if err != nil || out.Results[0].Code != run.CodePermissionDenied {
			t.Errorf("denied framework call: %v %+v", err, out.Results)
		}
	})
}

// SPEC R5.1, R7.4: Checkpoint and Resume; a refresh updates the
// fingerprint so a checkpoint taken after it resumes; a changed static input
// or tool set fails with ErrFingerprintMismatch naming the part.
func TestCheckpointResume(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b := resource.Ref("a"), resource.Ref("b")
		repo, mem := setupEra(t, e, a)
		putMCP(t, repo, b, inMemoryServer(t))
		static := run.StaticInputs{Model: "m1", Provider: "p", BasePrompt: "be brief", Permissions: []byte(`{"x":1}`)}
		opts := func(s run.StaticInputs) *run.Options {
			return &run.Options{Agent: testAgent, Repository: repo, Connector: mem.connector(), Permission: policy.AutoAllow(),
				HostTools: []run.HostTool{mountTool(repo)}, Static: s}
		}
		r := newRun(t, opts(static))
		cp := r.Checkpoint()
		raw, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		var decoded run.Checkpoint
		if err := json.Unmarshal(raw, &decoded); err != nil {
			t.Fatal(err)
		}
		resumed, err := run.Resume(context.Background(), decoded, opts(static))
		if err != nil {
			t.Fatalf("resume of an unchanged configuration: %v", err)
		}
		_ = resumed.Close()

		changed := static
		changed.Model = "m2"
		_, err = run.Resume(context.Background(), cp, opts(changed))
		if !errors.Is(err, run.ErrFingerprintMismatch) {
			t.Fatalf("resume with another model: %v, want a mismatch", err)
		}
		if got, want := err.Error(), "run: fingerprint mismatch: model differ"; got != want {
			t.Errorf("mismatch = %q, want %q", got, want)
		}

		// A refresh mounts b: the old checkpoint no longer matches the stored
		// configuration, a new one does.
		out, err := r.Execute(context.Background(), batch(setMounts(a, b)))
		if err != nil || !out.Refresh.OK || out.Refresh.Fingerprint != r.Fingerprint() {
			t.Fatalf("refresh: %v %+v", err, out.Refresh)
		}
		_, err = run.Resume(context.Background(), cp, opts(static))
		if !errors.Is(err, run.ErrFingerprintMismatch) || !strings.HasPrefix(err.Error(), "run: fingerprint mismatch: tools differ; tools added: ") ||
			strings.Contains(err.Error(), "tools removed") {
			t.Errorf("resume of the pre-refresh checkpoint: %v", err)
		}
		resumed, err = run.Resume(context.Background(), r.Checkpoint(), opts(static))
		if err != nil {
			t.Fatalf("resume after a successful refresh: %v", err)
		}
		_ = resumed.Close()
	})
}

// A mount whose server crashed is reconnected at the next refresh, while
// the other mounts keep their connections.
func TestRefreshReconnectsDeadMount(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		crashy, steady := resource.Ref("crashy"), resource.Ref("steady")
		repo := crashyAndOther(t, e, crashy, steady)
		r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{mountTool(repo)}})
		steadyPID := serverPID(t, r, steady)
		out, err := r.Execute(context.Background(), batch(call("boom", run.Alias(crashy, mcptest.ToolCrash), `{}`)))
		if err != nil || out.Results[0].Code != run.CodeUnavailable || !strings.Contains(out.Results[0].Message, "restarted at the end of this batch") {
			t.Fatalf("crash: %v %+v", err, out.Results)
		}
		// Issue 12 §2: restarted at the boundary of the batch that found it
		// dead, without a write.
		if out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("refresh: %+v", out.Refresh)
		}
		if diff := cmp.Diff([]resource.Ref{crashy}, out.Refresh.Restarted); diff != "" {
			t.Errorf("restarted (-want +got):\n%s", diff)
		}
		out, err = r.Execute(context.Background(), batch(call("e", run.Alias(crashy, mcptest.ToolEcho), `{"text":"back"}`)))
		if err != nil || out.Results[0].Failed() {
			t.Errorf("after the refresh the crashed server is still unavailable: %v %+v", err, out.Results)
		}
		if got := serverPID(t, r, steady); got != steadyPID {
			t.Errorf("the steady mount was restarted (pid %d -> %d)", steadyPID, got)
		}
	})
}

// SPEC R7.2: when one mount of the candidate fails, the connections the
// candidate opened for the others are closed (no process or connection
// outlives the failed refresh), and the old snapshot stays whole.
func TestRefreshFailureClosesCandidateConnections(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		a, b, c := resource.Ref("a"), resource.Ref("b"), resource.Ref("c")
		marker := t.TempDir() // unique to this test's b process
		putMCP(t, repo, a, stdioServerEra(t, e))
		putMCP(t, repo, b, stdioServerEra(t, e, "-call-log", filepath.Join(marker, "calls.log")))
		putMCP(t, repo, c, stdioServerEra(t, e, "-fault", string(mcptest.FaultExitAtStart)))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{a}})
		r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{mountTool(repo)}})
		before := toolNames(r)
		out, err := r.Execute(context.Background(), batch(setMounts(a, b, c)))
		if err != nil || out.Refresh == nil || out.Refresh.OK {
			t.Fatalf("refresh with a broken mount: %v %+v", err, out.Refresh)
		}
		if len(out.Refresh.Failures) != 1 || out.Refresh.Failures[0].Ref != c || len(out.Refresh.Added) != 0 {
			t.Errorf("refresh report = %+v, want only c failing and nothing added", out.Refresh)
		}
		if !processesGone(marker) {
			t.Error("the candidate's connection to b outlived the failed refresh")
		}
		if diff := cmp.Diff(before, toolNames(r)); diff != "" {
			t.Errorf("tools changed by a failed refresh (-before +after):\n%s", diff)
		}
		if out, err := r.Execute(context.Background(), batch(call("e", run.Alias(a, mcptest.ToolEcho), `{"text":"x"}`))); err != nil || out.Results[0].Failed() {
			t.Errorf("the old mount after the failed refresh: %v %+v", err, out.Results)
		}
	})
}

// Close does not wait for a batch of the old snapshot that a refresh is
// waiting for (a call held by a person who never answers): it closes
// every connection, the replaced ones included, and returns.
func TestCloseDoesNotWaitForARefreshWaitingOnABatch(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		a, b, c := resource.Ref("a"), resource.Ref("b"), resource.Ref("c")
		putMCP(t, repo, a, stdioServerEra(t, e))
		putMCP(t, repo, b, stdioServerEra(t, e))
		putMCP(t, repo, c, stdioServerEra(t, e))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{a, c}})
		hold, held, release := holdTool()
		r, err := run.New(context.Background(), &run.Options{Agent: testAgent, Repository: repo, Permission: policy.AutoAllow(),
			HostTools: []run.HostTool{mountTool(repo), hold}})
		if err != nil {
			t.Fatal(err)
		}
		pidA, pidC := serverPID(t, r, a), serverPID(t, r, c)
		holding := make(chan error, 1)
		go func() {
			_, err := r.Execute(context.Background(), batch(call("h", "hold", `{}`)))
			holding <- err
		}()
		<-held
		refreshed := make(chan *run.RefreshReport, 1)
		go func() {
			out, _ := r.Execute(context.Background(), batch(setMounts(a, b)))
			refreshed <- out.Refresh
		}()
		// The switch is done (b listed); the refresh now waits for the held
		// batch before it unloads c.
		poll.Until(t, "the refresh to switch", func() bool { return hasTool(r, run.Alias(b, mcptest.ToolEcho)) })
		closed := make(chan struct{})
		go func() { _ = r.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatal("Close waited for a held batch of the old snapshot")
		}
		for _, pid := range []int{pidA, pidC} {
			if !processGone(pid) {
				t.Errorf("server %d still runs after Close", pid)
			}
		}
		close(release)
		if err := <-holding; err != nil {
			t.Errorf("the held batch: %v", err)
		}
		if rep := <-refreshed; rep == nil || !rep.OK {
			t.Errorf("the refresh: %+v", rep)
		}
	})
}

// The context of New, and of the Execute whose boundary connects a mount,
// bound only that work: the connections outlive them (a host passes
// request-scoped contexts).
func TestConnectionsOutliveTheirContexts(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, a, b := mountedAndNot(t, e)
		ctx, cancel := context.WithCancel(context.Background())
		r, err := run.New(ctx, &run.Options{Agent: testAgent, Repository: repo, Permission: policy.AutoAllow(), HostTools: []run.HostTool{mountTool(repo)}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		cancel()
		ctx2, cancel2 := context.WithCancel(context.Background())
		out, err := r.Execute(ctx2, batch(setMounts(a, b)))
		cancel2()
		if err != nil || out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("refresh: %v %+v", err, out.Refresh)
		}
		for _, ref := range []resource.Ref{a, b} {
			out, err := r.Execute(context.Background(), batch(call("e", run.Alias(ref, mcptest.ToolEcho), `{"text":"x"}`)))
			if err != nil || out.Results[0].Failed() {
				t.Errorf("%s after its context ended: %v %+v", ref, err, out.Results)
			}
		}
	})
}

// SPEC R7.1: a call after the unmounting call in the same batch still uses
// the old snapshot and its connection; the unload happens at the boundary.
func TestRefreshUnmountKeepsTheBatchsCalls(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, c := resource.Ref("a"), resource.Ref("c")
		repo, mem := setupEra(t, e, a, c)
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{mountTool(repo)}, Limits: &run.Limits{MaxConcurrency: 1}})
		out, err := r.Execute(context.Background(), batch(setMounts(a), call("late", run.Alias(c, mcptest.ToolEcho), `{"text":"still here"}`)))
		if err != nil || out.Refresh == nil || !out.Refresh.OK {
			t.Fatalf("unmount: %v %+v", err, out.Refresh)
		}
		if got := echoText(t, out.Results[1]); got != "still here" {
			t.Errorf("the call after the unmount got %q", got)
		}
		if diff := cmp.Diff([]resource.Ref{c}, out.Refresh.Removed); diff != "" {
			t.Errorf("removed (-want +got):\n%s", diff)
		}
		if hasTool(r, run.Alias(c, mcptest.ToolEcho)) {
			t.Error("c's tools are still listed after the boundary")
		}
	})
}
