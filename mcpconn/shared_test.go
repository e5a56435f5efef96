//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; agt still answers them from legacy servers, and a modern server asks for them inside input_required results

package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// sharedConnector is a quick Connector with a short idle time, closed
// at the end of the test.
func sharedConnector(t *testing.T, idle time.Duration) *mcpconn.Connector {
	t.Helper()
	c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{SharedIdleTimeout: idle}})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// lease connects a shared session at revision rev.
func lease(t *testing.T, c *mcpconn.Connector, ref resource.Ref, srv resource.MCPServer, rev int64, h *mcpconn.Handlers) *mcpconn.Session {
	t.Helper()
	s, err := c.Connect(context.Background(), ref, srv, &mcpconn.ConnectOptions{Handlers: h, Revision: rev, Share: rev > 0})
	if err != nil {
		t.Fatalf("Connect: %v", err)
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
			s, err := c.Connect(context.Background(), "files", srv, &mcpconn.ConnectOptions{Revision: 1, Share: true})
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
		t.Fatalf("Connect: %v", err)
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
	poll.Until(t, "the idle shared connection closes", func() bool { return c.SharedConnections() == 0 })
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
	if _, err := c.Connect(context.Background(), "files", srv, &mcpconn.ConnectOptions{Revision: 1, Share: true}); !errors.Is(err, mcpconn.ErrUnavailable) {
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
	p, err := c.Connect(context.Background(), "files", shared, nil)
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
	poll.Until(t, "the process of the old revision exits after its last session", func() bool { return syscall.Kill(oldPID, 0) != nil })
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
		poll.Until(t, "every lease sees the crash", s.Lost)
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
			s, err := c.Connect(context.Background(), "files", srv, &mcpconn.ConnectOptions{Revision: 1, Share: true})
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
			s, err := c.Connect(context.Background(), "files", srv, &mcpconn.ConnectOptions{Revision: 1, Share: true})
			if s != nil {
				_ = s.Close()
			}
			errs <- err
		}()
	}
	poll.Until(t, "the shared server's process starts", func() bool { return len(processesWithTag(t, tag)) == 1 })
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
	c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{TerminateGrace: grace, SharedIdleTimeout: time.Hour}})
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
