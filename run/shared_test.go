//go:build unix

package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
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
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var sharedSeq atomic.Int64

// sharedMounts registers n shared stdio mounts of the fake server (each
// with its own -tag, so its processes can be counted) and the agent
// mounting them; it returns the refs and the tags.
func sharedMounts(tb testing.TB, repo resource.Repository, n int, shared bool, extra ...string) ([]resource.Ref, []string) {
	tb.Helper()
	var refs []resource.Ref
	var tags []string
	for i := range n {
		tag := fmt.Sprintf("agt-shared-%d-%d", os.Getpid(), sharedSeq.Add(1))
		srv := stdioServer(tb, append([]string{"-tag", tag}, extra...)...)
		srv.Shared = shared
		ref := resource.Ref(fmt.Sprintf("shared-%d", i))
		putMCP(tb, repo, ref, srv)
		refs = append(refs, ref)
		tags = append(tags, tag)
	}
	putAgent(tb, repo, testAgent, resource.AgentDocument{MCPs: refs})
	return refs, tags
}

// processesOf counts the live processes whose command line holds tag.
func processesOf(tag string) int {
	return len(liveProcesses(func(cmdline string) bool { return strings.Contains(cmdline, tag) }))
}

// sharingConnector is a Connector with a short idle time and grace,
// closed at the end of the test.
func sharingConnector(tb testing.TB) *mcpconn.Connector {
	return sharingConnectorIdle(tb, 100*time.Millisecond)
}

func sharingConnectorIdle(tb testing.TB, idle time.Duration) *mcpconn.Connector {
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{SharedIdleTimeout: idle, TerminateGrace: 300 * time.Millisecond}})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Issue 18 §4: 64 Runs on 3 shared mounts start 3 processes, call
// concurrently, keep their own snapshot with the fingerprint an unshared
// Run has; closing one Run, or a refresh in one that removes a mount,
// leaves the others working; after the last Close and the idle time no
// process is left.
func TestSharedRunsCallConcurrently(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		refs, tags := sharedMounts(t, repo, 3, true, "-era", string(e))
		c := sharingConnector(t)
		const n = 64
		runs := make([]*run.Run, n)
		var wg sync.WaitGroup
		for i := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := run.New(context.Background(), &run.Options{Agent: testAgent, Repository: repo, Connector: c,
					Permission: policy.AutoAllow(), HostTools: []run.HostTool{mountTool(repo)}, FailOnMountError: true})
				if err != nil {
					t.Errorf("run.New: %v", err)
					return
				}
				runs[i] = r
			}()
		}
		wg.Wait()
		if t.Failed() {
			for _, r := range runs {
				if r != nil {
					_ = r.Close()
				}
			}
			t.FailNow()
		}
		for i, tag := range tags {
			if got := processesOf(tag); got != 1 {
				t.Errorf("mount %s: %d processes for %d Runs; want 1", refs[i], got, n)
			}
		}

		// The fingerprint of a Run is the same shared or not.
		plainRepo := newRepo(t)
		plainRefs, _ := sharedMounts(t, plainRepo, 3, false, "-era", string(e))
		if fmt.Sprint(plainRefs) != fmt.Sprint(refs) {
			t.Fatal("the unshared registrations have other references")
		}
		plain := newRun(t, &run.Options{Repository: plainRepo, HostTools: []run.HostTool{mountTool(plainRepo)}})
		for i, r := range runs {
			if r.Fingerprint() != plain.Fingerprint() {
				t.Fatalf("Run %d: fingerprint %s shared, %s unshared", i, r.Fingerprint(), plain.Fingerprint())
			}
		}
		_ = plain.Close()

		// All Runs call all mounts at once.
		var failed atomic.Int32
		for i, r := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var calls []run.Call
				for j, ref := range refs {
					calls = append(calls, call(fmt.Sprintf("c%d", j), run.Alias(ref, mcptest.ToolEcho), fmt.Sprintf(`{"text":"run-%d-%d"}`, i, j)))
				}
				out, err := r.Execute(context.Background(), batch(calls...))
				if err != nil {
					failed.Add(1)
					return
				}
				for j, res := range out.Results {
					if res.Failed() || echoText(t, res) != fmt.Sprintf("run-%d-%d", i, j) {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d of %d concurrent calls failed", failed.Load(), n*len(refs))
		}

		// Close of one Run never closes a session under another.
		if err := runs[0].Close(); err != nil {
			t.Fatal(err)
		}
		echoOn := func(r *run.Run, ref resource.Ref, text string) {
			t.Helper()
			out, err := r.Execute(context.Background(), batch(call("e", run.Alias(ref, mcptest.ToolEcho), `{"text":"`+text+`"}`)))
			if err != nil || out.Results[0].Failed() || echoText(t, out.Results[0]) != text {
				t.Fatalf("echo on %s: %v %+v", ref, err, out.Results)
			}
		}
		echoOn(runs[1], refs[0], "after-close")

		// A refresh in one Run that removes a mount leaves the others working.
		out, err := runs[1].Execute(context.Background(), batch(call("m", "set_mounts", `{"mcps":["`+string(refs[1])+`","`+string(refs[2])+`"]}`)))
		if err != nil || out.Results[0].Failed() || out.Refresh == nil || len(out.Refresh.Removed) != 1 {
			t.Fatalf("removing a mount in Run 1: %v %+v %+v", err, out.Results, out.Refresh)
		}
		for _, ti := range runs[1].Tools() {
			if ti.Source.Ref == refs[0] {
				t.Fatalf("Run 1 still lists %s after removing it", ti.Name)
			}
		}
		echoOn(runs[2], refs[0], "after-removal")
		if got := processesOf(tags[0]); got != 1 {
			t.Errorf("%d processes of the removed mount while other Runs use it; want 1", got)
		}

		for _, r := range runs[1:] {
			_ = r.Close()
		}
		for i, tag := range tags {
			if !processesGone(tag) {
				t.Errorf("mount %s: a process is left 10 s after the last Run closed (idle time 100 ms)", refs[i])
			}
		}
		if got := c.SharedConnections(); got != 0 {
			t.Errorf("SharedConnections = %d after the idle time; want 0", got)
		}
	})
}

// Issue 18 §1, §4: a crash of a shared server is seen by every Run on
// it; each Run's next batch restarts the mount (its own MaxRestarts), and
// the pool makes that one new process.
func TestSharedServerCrashIsOneRestart(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		refs, tags := sharedMounts(t, repo, 1, true, "-era", string(e))
		c := sharingConnector(t)
		const n = 8
		var runs []*run.Run
		for range n {
			runs = append(runs, newRun(t, &run.Options{Repository: repo, Connector: c}))
		}
		pid := serverPID(t, runs[0], refs[0])
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if !processGone(pid) {
			t.Fatal("the killed server is still there")
		}
		for i, r := range runs {
			poll.Until(t, fmt.Sprintf("Run %d to find the killed server lost", i), func() bool { return run.MountLost(r, refs[0]) })
		}
		var wg sync.WaitGroup
		for i, r := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The lost mount is restarted at the start of this batch.
				out, err := r.Execute(context.Background(), batch(call("e", run.Alias(refs[0], mcptest.ToolEcho), fmt.Sprintf(`{"text":"r%d"}`, i))))
				if err != nil || out.Results[0].Failed() {
					t.Errorf("Run %d after the crash: %v %+v", i, err, out.Results)
				}
			}()
		}
		wg.Wait()
		if got := processesOf(tags[0]); got != 1 {
			t.Errorf("%d processes after %d Runs restarted the crashed server; want 1", got, n)
		}
		pids := map[int]bool{}
		for _, r := range runs {
			pids[serverPID(t, r, refs[0])] = true
		}
		if len(pids) != 1 || pids[pid] {
			t.Errorf("the Runs use processes %v after the restart; want one new one (the killed was %d)", pids, pid)
		}
	})
}

// Issue 18 §1: a tool list change of a shared server makes every Run on
// it list again at its next batch boundary, each for itself, on the live
// connection.
func TestSharedToolListChangeRelistsEveryRun(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		refs, tags := sharedMounts(t, repo, 1, true, "-era", string(e), "-fault", string(mcptest.FaultClientFeatures))
		c := sharingConnector(t)
		a := newRun(t, &run.Options{Repository: repo, Connector: c})
		b := newRun(t, &run.Options{Repository: repo, Connector: c})
		listenOpen(t, a, refs[0], e) // the shared session's
		late := run.Alias(refs[0], "late")
		out, err := a.Execute(context.Background(), batch(call("add", run.Alias(refs[0], mcptest.ToolAddTool), `{"name":"late"}`)))
		if err != nil || out.Results[0].Failed() {
			t.Fatalf("add_tool: %v %+v", err, out.Results)
		}
		out, err = b.Execute(context.Background(), batch(call("late", late, `{"text":"hi"}`)))
		if err != nil || out.Results[0].Failed() || echoText(t, out.Results[0]) != "hi" {
			t.Fatalf("Run b calling the new tool: %v %+v", err, out.Results)
		}
		if out.Refresh == nil || fmt.Sprint(out.Refresh.Relisted) != fmt.Sprint(refs) {
			t.Errorf("Run b's refresh = %+v; want %s relisted", out.Refresh, refs[0])
		}
		if a.Fingerprint() != b.Fingerprint() {
			t.Error("the two Runs disagree on the tools after both re-listed")
		}
		if got := processesOf(tags[0]); got != 1 {
			t.Errorf("%d processes; want the one shared", got)
		}
	})
}

// Issue 18 §1, §4: a changed registration (new revision) is a new shared
// process for the Run that loads it; the Run still on the old revision
// keeps the old process, which exits when that Run closes, without
// waiting for the idle time.
func TestSharedNewRevisionIsANewProcess(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		refs, tags := sharedMounts(t, repo, 1, true, "-era", string(e))
		c := sharingConnectorIdle(t, time.Hour)
		a := newRun(t, &run.Options{Repository: repo, Connector: c, HostTools: []run.HostTool{writeMCPTool(repo)}})
		b := newRun(t, &run.Options{Repository: repo, Connector: c})
		oldPID := serverPID(t, b, refs[0])
		res, err := repo.Get(context.Background(), resource.Key{Kind: resource.KindMCP, Ref: refs[0]})
		if err != nil {
			t.Fatal(err)
		}
		_, changed, err := resource.DecodeMCP(res.Data)
		if err != nil {
			t.Fatal(err)
		}
		changed.Args = append(changed.Args, "-page-size", "50")
		data, err := json.Marshal(map[string]any{"ref": refs[0], "server": changed})
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Execute(context.Background(), batch(call("w", "write_mcp", string(data))))
		if err != nil || out.Results[0].Failed() || out.Refresh == nil || !out.Refresh.OK || len(out.Refresh.Replaced) != 1 {
			t.Fatalf("writing a new revision in Run a: %v %+v %+v", err, out.Results, out.Refresh)
		}
		newPID := serverPID(t, a, refs[0])
		if newPID == oldPID {
			t.Fatal("the new revision uses the old revision's process")
		}
		if got := serverPID(t, b, refs[0]); got != oldPID {
			t.Errorf("Run b (old revision) moved to process %d; want its own %d", got, oldPID)
		}
		if got := processesOf(tags[0]); got != 2 {
			t.Errorf("%d processes with both revisions in use; want 2", got)
		}
		_ = b.Close()
		if !processGone(oldPID) {
			t.Error("the old revision's process is still there 10 s after its last Run closed")
		}
		if got := serverPID(t, a, refs[0]); got != newPID {
			t.Errorf("Run a moved to process %d; want %d", got, newPID)
		}
	})
}

// Issue 18 §1, §4, issue 23 item 9 (a): a shared server's elicitation
// reaches the Run of the call it names (here over stdio by _meta
// progressToken), with that call, also while another Run's call is in
// flight; one that names no call is refused, reaches neither Run's Elicit
// and is audited in neither (the Connector logs it).
func TestSharedElicitationReachesItsRunOnly(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	// Legacy era: routing a request by the call it names, and refusing one
	// that names none, is the legacy rule; a modern server's request
	// belongs to its call exactly (issue 25 item 4).
	refs, _ := sharedMounts(t, repo, 1, true, "-era", string(mcptest.EraLegacy), "-fault", string(mcptest.FaultClientFeatures))
	c := sharingConnector(t)
	type asked struct {
		run  string
		call string
	}
	var mu sync.Mutex
	var asks []asked
	elicit := func(runID string) func(context.Context, run.Origin, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return func(_ context.Context, from run.Origin, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			cc, _ := from.Call()
			mu.Lock()
			defer mu.Unlock()
			asks = append(asks, asked{runID, cc.CallID})
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	progressB := make(chan struct{}, 1)
	auditA, auditB := &auditLog{}, &auditLog{}
	a := newRun(t, &run.Options{Repository: repo, Connector: c, RunID: "A", Auditor: auditA, ClientFeatures: &run.ClientFeatures{Elicit: elicit("A")}})
	b := newRun(t, &run.Options{
		Repository: repo,
		Connector:  c,
		RunID:      "B",
		Auditor:    auditB,
		ClientFeatures: &run.ClientFeatures{Elicit: elicit("B"), Observe: func(_ context.Context, n run.Notification) {
			if n.Progress != nil {
				select {
				case progressB <- struct{}{}:
				default:
				}
			}
		}},
	})
	askAlias := run.Alias(refs[0], mcptest.ToolAsk)
	named := `{"names":"` + mcptest.NamesToken + `"}`
	out := execute(t, a, call("ask-1", askAlias, named))
	if out.Results[0].Failed() || !strings.Contains(string(out.Results[0].Content), "decline") {
		t.Fatalf("ask in Run A: %+v", out.Results[0])
	}

	slow, stopSlow := callInFlight(t, b, progressB, refs[0], "slow")
	out2 := execute(t, a, call("ask-2", askAlias, named))
	out3 := execute(t, a, call("ask-3", askAlias, `{}`))
	stopSlow()
	<-slow
	if out2.Results[0].Failed() {
		t.Errorf("ask in Run A naming its call, during Run B's call = %+v; want it answered by Run A", out2.Results[0])
	}
	if !out3.Results[0].Failed() {
		t.Errorf("ask in Run A naming no call, during Run B's call = %+v; want the refused elicitation to fail the tool", out3.Results[0])
	}
	mu.Lock()
	got := fmt.Sprint(asks)
	mu.Unlock()
	if got != "[{A ask-1} {A ask-2}]" {
		t.Errorf("Elicit calls = %s; want only Run A's, for ask-1 and ask-2", got)
	}
	reqs := func(al *auditLog) (outcomes []string) {
		for _, rec := range al.records("server_request") {
			outcomes = append(outcomes, rec.CallID+":"+string(rec.Outcome))
		}
		return outcomes
	}
	if got := fmt.Sprint(reqs(auditA)); got != "[ask-1:declined ask-2:declined]" {
		t.Errorf("Run A's server request audit = %s", got)
	}
	if got := reqs(auditB); len(got) != 0 {
		t.Errorf("Run B's server request audit = %v; want none: no request named its call", got)
	}
}

// sharedRunMount registers one shared mount of the fake server with
// faults over transport (stdio: with a tag to count its processes,
// returned; http: the test's own server) and the agent mounting it.
func sharedRunMount(t *testing.T, repo resource.Repository, transport string, era mcptest.Era, faults ...mcptest.Fault) (resource.Ref, string) {
	t.Helper()
	names := make([]string, len(faults))
	for i, f := range faults {
		names[i] = string(f)
	}
	args := []string{"-era", string(era), "-fault", strings.Join(names, ",")}
	if transport == resource.TransportHTTP {
		const ref = resource.Ref("shared-http")
		putMCP(t, repo, ref, resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, args...), Shared: true})
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{ref}})
		return ref, ""
	}
	refs, tags := sharedMounts(t, repo, 1, true, args...)
	return refs[0], tags[0]
}

// callInFlight starts a batch of one call, id, of the progress tool of
// mount ref in r, reporting progress until stopped, and returns once it
// is in flight (progress was signalled): done gets its Outcome.
func callInFlight(t *testing.T, r *run.Run, progress <-chan struct{}, ref resource.Ref, id string) (done <-chan run.Outcome, stop func()) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	ch := make(chan run.Outcome, 1)
	go func() {
		out, _ := r.Execute(ctx, batch(call(id, run.Alias(ref, mcptest.ToolProgress), `{"steps":1000000,"ms":20}`)))
		ch <- out
	}()
	select {
	case <-progress:
	case out := <-ch:
		t.Fatalf("the call %s returned before it reported progress: %+v", id, out.Results)
	case <-time.After(20 * time.Second):
		t.Fatalf("the call %s reported no progress in 20 s", id)
	}
	return ch, stop
}

// closeAll closes the Runs and, for a stdio server (tag), checks that
// no process of it is left.
func closeAll(t *testing.T, tag string, runs ...*run.Run) {
	t.Helper()
	for _, r := range runs {
		_ = r.Close()
	}
	if tag != "" && !processesGone(tag) {
		t.Error("a shared server process is left after every Run closed")
	}
}

// userRun records what a Run's handlers and audit get.
type userRun struct {
	name  string
	audit *auditLog
	mu    sync.Mutex
	asked []string // call IDs told to Elicit
	logs  []string // call IDs of the log lines told to Observe
	// progress is signalled at each progress of a call.
	progress chan struct{}
}

func (u *userRun) options(repo resource.Repository, c *mcpconn.Connector, id string) *run.Options {
	u.name, u.audit, u.progress = id, &auditLog{}, make(chan struct{}, 1)
	return &run.Options{
		Repository: repo,
		Connector:  c,
		RunID:      id,
		Auditor:    u.audit,
		ClientFeatures: &run.ClientFeatures{Elicit: func(_ context.Context, from run.Origin, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.asked = append(u.asked, fmt.Sprint(callIDs(from)))
			return &mcp.ElicitResult{Action: "decline"}, nil
		}, Observe: func(_ context.Context, n run.Notification) {
			switch {
			case n.Log != nil:
				u.mu.Lock()
				u.logs = append(u.logs, fmt.Sprint(callIDs(n.From)))
				u.mu.Unlock()
			case n.Progress != nil:
				select {
				case u.progress <- struct{}{}:
				default:
				}
			}
		}},
	}
}

func (u *userRun) seen() (asked, logs []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.asked...), append([]string(nil), u.logs...)
}

func callIDs(o run.Origin) []string {
	var ids []string
	for _, c := range o.Calls {
		ids = append(ids, c.CallID)
	}
	return ids
}

// Issue 23 item 9 (a), the attack, with two Runs: after Alice's call
// returned, the shared server sends an elicitation and a log line about
// it outside any request, while Bob's call is in flight (the fake sends
// them when Bob's call arrives). Neither reaches Bob's Elicit, Observe or
// audit: they name no call, so they belong to no Run (the Connector's
// Logger gets them). Before, Bob's Elicit answered Alice's elicitation
// and Bob's Observe got her line, on stdio and HTTP alike.
func TestSharedLateRequestReachesNoOtherRun(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{resource.TransportStdio, resource.TransportHTTP} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			// Legacy era: a request outside any call is legacy-only (a modern
			// server asks only in its call's rounds).
			ref, tag := sharedRunMount(t, repo, transport, mcptest.EraLegacy, mcptest.FaultClientFeatures)
			logged := &slogRecords{}
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
				Logger: slog.New(logged),
				Limits: &mcpconn.Limits{SharedIdleTimeout: 100 * time.Millisecond, TerminateGrace: 300 * time.Millisecond}})
			t.Cleanup(func() { _ = c.Close() })
			var alice, bob userRun
			a := newRun(t, alice.options(repo, c, "alice"))
			b := newRun(t, bob.options(repo, c, "bob"))

			out := execute(t, a, call("alice-1", run.Alias(ref, mcptest.ToolLate), `{"elicit":true,"log":true}`))
			if out.Results[0].Failed() {
				t.Fatalf("late in Alice's Run: %+v", out.Results[0])
			}
			slow, stopSlow := callInFlight(t, b, bob.progress, ref, "bob-1")
			poll.Until(t, "the late elicitation is settled", func() bool {
				asked, _ := bob.seen()
				return len(asked) > 0 || len(logged.with("agt.shared_server_request")) > 0
			})
			poll.Until(t, "the late log line is delivered", func() bool {
				_, logs := bob.seen()
				return len(logs) > 0 || len(logged.with("agt.shared_server_log")) > 0
			})
			stopSlow()
			<-slow

			for _, u := range []*userRun{&alice, &bob} {
				asked, logs := u.seen()
				if len(asked) != 0 || len(logs) != 0 {
					t.Errorf("Run %s got the late messages about Alice's finished call: Elicit %v, Observe log %v", u.name, asked, logs)
				}
				if recs := u.audit.records("server_request"); len(recs) != 0 {
					t.Errorf("Run %s audits the late request: %+v", u.name, recs)
				}
			}
			closeAll(t, tag, a, b)
		})
	}
}

// Issue 23 item 9 (b), (c): Bob crashes the shared server 8 times. Each
// crash is charged to Bob's Run (his call was in flight), not Alice's:
// her mount restarts after every one with her MaxRestarts (the default,
// 5) unspent, and her next call works. Before, each crash spent one of
// Alice's restarts and from the sixth her mount stayed dead. Every Run
// audits each loss (EventServerLost) with the count in a row, so the
// crash loop shows. A ninth crash while Alice's call is in flight loses
// her call, and is then charged to her too.
//
// Over HTTP the server is legacy: a modern HTTP server has no session, so
// a crash loses only the calls in flight and no mount is lost or
// restarted (issue 25 item 6, tested in mcpconn).
func TestSharedCrashesOfOneRunSpareAnother(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		era       mcptest.Era
	}{
		{resource.TransportStdio, mcptest.EraLegacy},
		{resource.TransportStdio, mcptest.EraDual},
		{resource.TransportHTTP, mcptest.EraLegacy},
	} {
		transport := tc.transport
		t.Run(transport+"/"+string(tc.era), func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			ref, tag := sharedRunMount(t, repo, transport, tc.era, mcptest.FaultCrashOnCall, mcptest.FaultClientFeatures)
			c := sharingConnector(t)
			var alice, bob userRun
			ao := alice.options(repo, c, "alice")
			ao.Limits = &run.Limits{RestartBackoff: time.Nanosecond} // Alice's budget, the default 5, is what counts here
			bo := bob.options(repo, c, "bob")
			bo.Limits = &run.Limits{MaxRestarts: 20, RestartBackoff: time.Nanosecond}
			a, b := newRun(t, ao), newRun(t, bo)
			crash, echo := run.Alias(ref, mcptest.ToolCrash), run.Alias(ref, mcptest.ToolEcho)

			const crashes = 8
			for i := 1; i <= crashes; i++ {
				out := execute(t, b, call(fmt.Sprintf("crash-%d", i), crash, `{}`))
				if out.Results[0].Code != run.CodeUnavailable {
					t.Fatalf("Bob's crash %d: %+v; want unavailable", i, out.Results[0])
				}
				text := fmt.Sprintf("alice-%d", i)
				out = execute(t, a, call(text, echo, `{"text":"`+text+`"}`))
				if out.Results[0].Failed() {
					t.Fatalf("Alice's call after Bob's crash %d: %+v", i, out.Results[0])
				}
			}

			// Alice's call in flight at Bob's ninth crash is lost with it.
			slow, _ := callInFlight(t, a, alice.progress, ref, "alice-slow")
			execute(t, b, call("crash-9", crash, `{}`))
			select {
			case out := <-slow:
				if out.Results[0].Code != run.CodeUnavailable {
					t.Errorf("Alice's call in flight at Bob's crash = %+v; want unavailable (lost with it)", out.Results[0])
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Alice's call in flight did not end 30 s after the crash")
			}
			execute(t, a, call("alice-after", echo, `{"text":"after"}`))

			// serverLoss is what a "server_lost" Record says of the loss.
			type serverLoss struct {
				Shared, Charged  bool
				Losses, Restarts int
			}
			losses := func(u *userRun) []serverLoss {
				var out []serverLoss
				for _, rec := range u.audit.records("server_lost") {
					if rec.Source.Ref != ref || rec.Code != run.CodeUnavailable {
						t.Errorf("a loss record: %+v", rec)
						continue
					}
					out = append(out, serverLoss{Shared: rec.Shared, Charged: rec.Charged, Losses: rec.Losses, Restarts: rec.Restarts})
				}
				return out
			}
			var wantAlice, wantBob []serverLoss
			for i := 1; i <= crashes; i++ {
				wantAlice = append(wantAlice, serverLoss{Shared: true, Charged: false, Losses: i, Restarts: 0})
				wantBob = append(wantBob, serverLoss{Shared: true, Charged: true, Losses: i, Restarts: i - 1})
			}
			wantAlice = append(wantAlice, serverLoss{Shared: true, Charged: true, Losses: crashes + 1, Restarts: 0})
			wantBob = append(wantBob, serverLoss{Shared: true, Charged: true, Losses: crashes + 1, Restarts: crashes})
			if diff := cmp.Diff(wantAlice, losses(&alice)); diff != "" {
				t.Errorf("Alice's loss audit (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantBob, losses(&bob)); diff != "" {
				t.Errorf("Bob's loss audit (-want +got):\n%s", diff)
			}
			if tag != "" {
				if got := processesOf(tag); got != 1 {
					t.Errorf("%d processes after the crashes; want the one shared", got)
				}
			}
			closeAll(t, tag, a, b)
		})
	}
}

// A Run given no Connector makes its own: its Close ends the processes
// of its shared mounts too, as it does those of the others, instead of
// leaving them to an idle time no other Run can use (and to a Connector
// no one closes).
func TestRunOwnConnectorCloseEndsSharedProcesses(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		refs, tags := sharedMounts(t, repo, 1, true, "-era", string(e))
		r := newRun(t, &run.Options{Repository: repo})
		pid := serverPID(t, r, refs[0])
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		// Close returns once its processes ended: no waiting here (the idle
		// time would keep it 30 s).
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("the shared server of a Run with its own Connector outlives Run.Close")
		}
		if !processesGone(tags[0]) {
			t.Error("a process is left")
		}
	})
}
