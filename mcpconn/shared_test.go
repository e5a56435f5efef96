//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 only; agt speaks 2025-11-25, where they are current

package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sharedConnector is a quick Connector with a short idle time, closed
// at the end of the test.
func sharedConnector(t *testing.T, idle time.Duration) *mcpconn.Connector {
	t.Helper()
	c := quickConnector(&mcpconn.ConnectorOptions{SharedIdleTimeout: idle})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// lease connects a shared session at revision rev.
func lease(t *testing.T, c *mcpconn.Connector, ref resource.Ref, srv resource.MCPServer, rev int64, h *mcpconn.Handlers) *mcpconn.Session {
	t.Helper()
	s, err := c.ConnectWith(context.Background(), ref, srv, &mcpconn.ConnectOptions{Handlers: h, Revision: rev})
	if err != nil {
		t.Fatalf("ConnectWith: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// leaseTwoRevisions leases srv at revision 1 and then at revision 2,
// asserting that the second is another process, and returns both
// sessions and the first one's PID.
func leaseTwoRevisions(t *testing.T, c *mcpconn.Connector, srv resource.MCPServer) (old *mcpconn.Session, oldPID int, cur *mcpconn.Session) {
	t.Helper()
	old = lease(t, c, "files", srv, 1, nil)
	oldPID = pidOf(t, old)
	cur = lease(t, c, "files", srv, 2, nil)
	if pidOf(t, cur) == oldPID {
		t.Fatal("revision 2 shares the process of revision 1")
	}
	return old, oldPID, cur
}

func echo(t *testing.T, s *mcpconn.Session, text string) {
	t.Helper()
	res, err := s.CallTool(context.Background(), mcptest.ToolEcho, json.RawMessage(`{"text":"`+text+`"}`))
	if err != nil || res.IsError {
		t.Fatalf("echo %s: %v %+v", text, err, res)
	}
}

func pidOf(t *testing.T, s *mcpconn.Session) int {
	t.Helper()
	res, err := s.CallTool(context.Background(), mcptest.ToolEnvironment, nil)
	if err != nil || res.IsError {
		t.Fatalf("environment: %v %+v", err, res)
	}
	var env mcptest.EnvironmentOut
	if err := json.Unmarshal(res.Structured, &env); err != nil {
		t.Fatal(err)
	}
	return env.PID
}

// Issue 18 §1, §4: 64 sessions of one shared registration use one
// process, call concurrently, and closing one never closes it under the
// others; after the last, the connection closes after the idle time.
func TestSharedSessionsUseOneProcess(t *testing.T) {
	t.Parallel()
	c := sharedConnector(t, 200*time.Millisecond)
	srv, tag := fakeStdio(t)
	srv.Shared = true
	const n = 64
	sessions := make([]*mcpconn.Session, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.ConnectWith(context.Background(), "files", srv, &mcpconn.ConnectOptions{Revision: 1})
			if err != nil {
				errs <- err
				return
			}
			sessions[i] = s
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("ConnectWith: %v", err)
	}
	if got := len(processesWithTag(t, tag)); got != 1 {
		t.Fatalf("%d processes for %d shared sessions; want 1", got, n)
	}
	var failed atomic.Int32
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tools, err := s.Tools(context.Background())
			if err != nil || len(tools) == 0 {
				failed.Add(1)
				return
			}
			text := "call-" + strconv.Itoa(i)
			res, err := s.CallTool(context.Background(), mcptest.ToolEcho, json.RawMessage(`{"text":"`+text+`"}`))
			if err != nil || res.IsError || !strings.Contains(string(res.ContentJSON), text) {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d concurrent calls failed", failed.Load(), n)
	}
	// Close of one never closes the connection under another.
	if err := sessions[0].Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions[0].CallTool(context.Background(), mcptest.ToolEcho, json.RawMessage(`{"text":"x"}`)); !errors.Is(err, mcpconn.ErrUnavailable) {
		t.Errorf("a call on a closed lease = %v; want ErrUnavailable", err)
	}
	if sessions[0].Lost() {
		t.Error("a closed lease reports its connection lost")
	}
	echo(t, sessions[1], "after-close")
	if sessions[1].Lost() {
		t.Error("another lease reports the connection lost")
	}
	for _, s := range sessions[1:] {
		_ = s.Close()
	}
	// That the idle time keeps it is TestSharedConnectionIsReusedWhileIdle's
	// (an hour there): 200 ms may pass before a look here on a busy machine.
	waitFor(t, "the idle shared connection closes", func() bool { return c.SharedConnections() == 0 })
	assertNoLeftovers(t, tag)
}

// A session taken during the idle time reuses the connection.
func TestSharedConnectionIsReusedWhileIdle(t *testing.T) {
	t.Parallel()
	c := sharedConnector(t, time.Hour)
	srv, tag := fakeStdio(t)
	srv.Shared = true
	a := lease(t, c, "files", srv, 1, nil)
	pid := pidOf(t, a)
	_ = a.Close()
	b := lease(t, c, "files", srv, 1, nil)
	if got := pidOf(t, b); got != pid {
		t.Errorf("a session during the idle time got process %d; want the idle %d", got, pid)
	}
	_ = b.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	assertNoLeftovers(t, tag)
	if _, err := c.ConnectWith(context.Background(), "files", srv, &mcpconn.ConnectOptions{Revision: 1}); !errors.Is(err, mcpconn.ErrUnavailable) {
		t.Errorf("a shared connect after Connector.Close = %v; want ErrUnavailable", err)
	}
}

// Sharing is opt-in twice: the document says shared, and the caller
// gives the revision. Connect (the Prober's path) never shares.
func TestSharingNeedsTheFieldAndARevision(t *testing.T) {
	t.Parallel()
	c := sharedConnector(t, time.Hour)
	plain, _ := fakeStdio(t)
	shared := plain
	shared.Shared = true
	a := lease(t, c, "files", plain, 1, nil)
	b := lease(t, c, "files", plain, 1, nil)
	if pidOf(t, a) == pidOf(t, b) {
		t.Error("a document without shared was shared")
	}
	p, err := c.Connect(context.Background(), "files", shared)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	d := lease(t, c, "files", shared, 1, nil)
	if pidOf(t, p) == pidOf(t, d) {
		t.Error("Connect (no revision) shared a connection")
	}
	if c.SharedConnections() != 1 {
		t.Errorf("SharedConnections = %d; want 1", c.SharedConnections())
	}
}

// Issue 18 §4: a new revision is a new connection; the old one ends when
// its last session closes, without waiting for the idle time.
func TestSharedNewRevisionIsANewProcess(t *testing.T) {
	t.Parallel()
	c := sharedConnector(t, time.Hour)
	srv, _ := fakeStdio(t)
	srv.Shared = true
	old, oldPID, cur := leaseTwoRevisions(t, c, srv)
	echo(t, old, "old-still-works")
	_ = old.Close()
	waitFor(t, "the process of the old revision exits after its last session", func() bool { return syscall.Kill(oldPID, 0) != nil })
	echo(t, cur, "new-still-works")
	// Another document under the same reference and revision (another
	// store) is another connection.
	other := srv
	other.Args = append(append([]string(nil), srv.Args...), "-page-size", "3")
	o := lease(t, c, "files", other, 2, nil)
	if pidOf(t, o) == pidOf(t, cur) {
		t.Error("two documents of one reference and revision share a process")
	}
}

// Issue 18 §1, §4: a crash of a shared server is seen by every session;
// the first to connect again starts one new process, the others share it.
func TestSharedCrashIsOneRestart(t *testing.T) {
	t.Parallel()
	c := sharedConnector(t, time.Hour)
	srv, tag := fakeStdio(t)
	srv.Shared = true
	const n = 8
	var sessions []*mcpconn.Session
	for range n {
		sessions = append(sessions, lease(t, c, "files", srv, 1, nil))
	}
	pid := pidOf(t, sessions[0])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		waitFor(t, "every lease sees the crash", s.Lost)
	}
	if _, err := sessions[3].CallTool(context.Background(), mcptest.ToolEcho, json.RawMessage(`{"text":"x"}`)); !errors.Is(err, mcpconn.ErrUnavailable) {
		t.Errorf("a call after the crash = %v; want ErrUnavailable", err)
	}
	var wg sync.WaitGroup
	again := make([]*mcpconn.Session, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.ConnectWith(context.Background(), "files", srv, &mcpconn.ConnectOptions{Revision: 1})
			if err != nil {
				t.Errorf("reconnect: %v", err)
				return
			}
			again[i] = s
		}()
	}
	wg.Wait()
	pids := map[int]bool{}
	for _, s := range again {
		if s != nil {
			pids[pidOf(t, s)] = true
			_ = s.Close()
		}
	}
	if len(pids) != 1 || pids[pid] {
		t.Errorf("the reconnected sessions use processes %v; want one new one (the dead was %d)", pids, pid)
	}
	if got := len(processesWithTag(t, tag)); got != 1 {
		t.Errorf("%d processes after the restart; want 1", got)
	}
}

// served collects a lease's handler calls and reports.
type served struct {
	mu      sync.Mutex
	asked   int
	reports []mcpconn.ServedRequest
	calls   [][]any
	// progress is signalled at each progress of a call (not blocking).
	progress chan struct{}
}

func (s *served) handlers() *mcpconn.Handlers {
	return &mcpconn.Handlers{
		Elicit: func(_ context.Context, in mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.asked++
			s.calls = append(s.calls, in.Calls)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		Progress: func(context.Context, mcpconn.Incoming, *mcp.ProgressNotificationParams) {
			select {
			case s.progress <- struct{}{}:
			default:
			}
		},
		Served: func(_ mcpconn.Incoming, rep mcpconn.ServedRequest) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.reports = append(s.reports, rep)
		},
	}
}

func (s *served) get() (int, []mcpconn.ServedRequest, [][]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked, append([]mcpconn.ServedRequest(nil), s.reports...), append([][]any(nil), s.calls...)
}

// Issue 18 §1, §4: an elicitation goes to the session whose call alone
// was in flight, with that call only; while calls of two sessions are in
// flight it is refused, and neither handler sees it.
func TestSharedElicitationGoesToItsSessionOrIsRefused(t *testing.T) {
	t.Parallel()
	c := sharedConnector(t, time.Hour)
	srv, _ := fakeStdio(t, "-fault", string(mcptest.FaultClientFeatures))
	srv.Shared = true
	ha, hb := served{progress: make(chan struct{}, 1)}, served{progress: make(chan struct{}, 1)}
	a := lease(t, c, "files", srv, 1, ha.handlers())
	b := lease(t, c, "files", srv, 1, hb.handlers())

	ctx := mcpconn.WithCallTag(context.Background(), "a-call")
	res, err := a.CallTool(ctx, mcptest.ToolAsk, nil)
	if err != nil || res.IsError || !strings.Contains(string(res.ContentJSON), "decline") {
		t.Fatalf("ask on a: %v %+v", err, res)
	}
	asked, reps, calls := ha.get()
	if asked != 1 || len(reps) != 1 || reps[0].Outcome != mcpconn.OutcomeDeclined || len(calls) != 1 || len(calls[0]) != 1 || calls[0][0] != "a-call" {
		t.Errorf("a's handler: asked %d, reports %+v, calls %v; want one declined request for a-call", asked, reps, calls)
	}
	if asked, reps, _ := hb.get(); asked != 0 || len(reps) != 0 {
		t.Errorf("b's handler saw a's elicitation: asked %d, reports %+v", asked, reps)
	}

	// b's call in flight (its first progress says so), then a's ask:
	// two sessions' calls.
	slowCtx, stopSlow := context.WithCancel(mcpconn.WithCallTag(context.Background(), "b-call"))
	defer stopSlow()
	slow := make(chan error, 1)
	go func() {
		_, err := b.CallTool(slowCtx, mcptest.ToolProgress, json.RawMessage(`{"steps":100000,"ms":20}`))
		slow <- err
	}()
	select {
	case <-hb.progress:
	case <-time.After(10 * time.Second):
		t.Fatal("b's call reported no progress in 10 s")
	}
	res, err = a.CallTool(ctx, mcptest.ToolAsk, nil)
	if err != nil || !res.IsError {
		t.Fatalf("ask on a with b's call in flight: %v %+v; want a refused elicitation (a failed tool result)", err, res)
	}
	stopSlow()
	<-slow
	if asked, reps, _ := ha.get(); asked != 1 || len(reps) != 2 || reps[1].Outcome != mcpconn.OutcomeRefused || !strings.Contains(reps[1].Reason, "several sessions") {
		t.Errorf("a: asked %d, reports %+v; want the second request refused, its handler not called", asked, reps)
	}
	if asked, reps, _ := hb.get(); asked != 0 || len(reps) != 1 || reps[0].Outcome != mcpconn.OutcomeRefused {
		t.Errorf("b: asked %d, reports %+v; want one refused report and no handler call", asked, reps)
	}
}

// lockedBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Issue 18 §1: a shared server's log line goes to the session whose call
// alone was in flight; during calls of two sessions it goes to the
// Connector's Logger, to neither session.
func TestSharedLogLinesGoToTheirSessionOrTheConnector(t *testing.T) {
	t.Parallel()
	var logged lockedBuffer
	c := quickConnector(&mcpconn.ConnectorOptions{Logger: slog.New(slog.NewJSONHandler(&logged, nil))})
	t.Cleanup(func() { _ = c.Close() })
	srv, _ := fakeStdio(t, "-fault", string(mcptest.FaultClientFeatures))
	srv.Shared = true
	var linesA, linesB atomic.Int32
	progressB := make(chan struct{}, 1)
	a := lease(t, c, "files", srv, 1, &mcpconn.Handlers{
		Log: func(context.Context, mcpconn.Incoming, *mcp.LoggingMessageParams) { linesA.Add(1) },
	})
	b := lease(t, c, "files", srv, 1, &mcpconn.Handlers{
		Log: func(context.Context, mcpconn.Incoming, *mcp.LoggingMessageParams) { linesB.Add(1) },
		Progress: func(context.Context, mcpconn.Incoming, *mcp.ProgressNotificationParams) {
			select {
			case progressB <- struct{}{}:
			default:
			}
		},
	})
	logOnce := func() {
		t.Helper()
		res, err := a.CallTool(context.Background(), mcptest.ToolLog, json.RawMessage(`{"count":1}`))
		if err != nil || res.IsError {
			t.Fatalf("log: %v %+v", err, res)
		}
	}
	logOnce()
	waitFor(t, "a's Log handler gets a's line", func() bool { return linesA.Load() == 1 })

	slowCtx, stopSlow := context.WithCancel(context.Background())
	defer stopSlow()
	slow := make(chan struct{})
	go func() {
		defer close(slow)
		_, _ = b.CallTool(slowCtx, mcptest.ToolProgress, json.RawMessage(`{"steps":100000,"ms":20}`))
	}()
	select {
	case <-progressB:
	case <-time.After(10 * time.Second):
		t.Fatal("b's call reported no progress in 10 s")
	}
	logOnce()
	waitFor(t, "the Connector's Logger gets the line of two sessions' calls", func() bool {
		return strings.Contains(logged.String(), "agt.shared_server_log")
	})
	stopSlow()
	<-slow
	if linesA.Load() != 1 || linesB.Load() != 0 {
		t.Errorf("lines at a = %d, at b = %d; want 1 and 0 (the second line belongs to neither)", linesA.Load(), linesB.Load())
	}
	if !strings.Contains(logged.String(), `"mount":"files"`) {
		t.Errorf("the Connector's log line does not name the mount: %s", logged.String())
	}
}

// Connector.Close ends every shared connection, also one of an older
// revision that a newer one superseded while a session still held it:
// the pool no longer lists it, but its process is the Connector's.
func TestConnectorCloseEndsSupersededConnections(t *testing.T) {
	t.Parallel()
	c := sharedConnector(t, time.Hour)
	srv, tag := fakeStdio(t)
	srv.Shared = true
	old, oldPID, cur := leaseTwoRevisions(t, c, srv)
	if got := c.SharedConnections(); got != 2 {
		t.Errorf("SharedConnections = %d with both revisions in use; want 2", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returns once the processes have ended: no waiting here.
	if syscall.Kill(oldPID, 0) == nil {
		t.Error("the process of the superseded revision outlives Connector.Close")
	}
	if !old.Lost() || !cur.Lost() {
		t.Errorf("after Connector.Close: old lease lost %v, current lease lost %v; want both lost", old.Lost(), cur.Lost())
	}
	assertNoLeftovers(t, tag)
}

// Connector.Close during a shared start (a server that never answers
// the handshake) ends it at once: the starter and the sessions waiting
// for it get ErrUnavailable long before the startup timeout, and no
// process is left.
func TestConnectorCloseStopsASharedStart(t *testing.T) {
	t.Parallel()
	c := quickConnector(nil)
	srv, tag := fakeStdio(t, "-fault", string(mcptest.FaultNoHandshake))
	srv.Shared = true
	srv.StartupTimeoutMS = 120_000
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			s, err := c.ConnectWith(context.Background(), "files", srv, &mcpconn.ConnectOptions{Revision: 1})
			if s != nil {
				_ = s.Close()
			}
			errs <- err
		}()
	}
	waitFor(t, "the shared server's process starts", func() bool { return len(processesWithTag(t, tag)) == 1 })
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for range n {
		select {
		case err := <-errs:
			if !errors.Is(err, mcpconn.ErrUnavailable) {
				t.Errorf("a shared connect ended by Connector.Close = %v; want ErrUnavailable", err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("a shared connect still waits 60 s after Connector.Close")
		}
	}
	t.Logf("the connects ended %v after Close began", time.Since(start))
	if got := c.SharedConnections(); got != 0 {
		t.Errorf("SharedConnections = %d after Close; want 0", got)
	}
	assertNoLeftovers(t, tag)
}

// Close of the last lease on a superseded shared connection does not
// wait for its process to end (a server that ignores SIGTERM takes two
// grace periods): the process is the Connector's, whose Close waits for
// it.
func TestLastLeaseCloseDoesNotWaitForTheProcess(t *testing.T) {
	t.Parallel()
	const grace = 2 * time.Second
	c := quickConnector(&mcpconn.ConnectorOptions{TerminateGrace: grace, SharedIdleTimeout: time.Hour})
	t.Cleanup(func() { _ = c.Close() })
	srv, tag := fakeStdio(t, "-fault", string(mcptest.FaultIgnoreSIGTERM))
	srv.Shared = true
	old := lease(t, c, "files", srv, 1, nil)
	oldPID := pidOf(t, old)
	_ = lease(t, c, "files", srv, 2, nil) // supersedes revision 1
	start := time.Now()
	_ = old.Close()
	took := time.Since(start)
	// The process ends only at SIGKILL, two grace periods (4 s) after its
	// close began: alive here unless Close waited for it.
	if syscall.Kill(oldPID, 0) != nil {
		t.Errorf("Close of the last lease waited %v for the superseded process to end; want it closed in the background", took)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(oldPID, 0) == nil {
		t.Error("the superseded process outlives Connector.Close")
	}
	assertNoLeftovers(t, tag)
}
