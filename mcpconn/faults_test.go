package mcpconn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// Every fault mode of the fake server gives its clear error within its
// timeout, and leaves no process of the group and no zombie behind (issue
// 4, SPEC R2.2-R2.3). Goroutine leaks are checked for the whole package in
// TestMain.
func TestFaultModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		mutate func(srv *resource.MCPServer)
		// call, when set, is called after a successful connect.
		call      string
		callArgs  string
		cancelAt  time.Duration // cancel the caller's ctx after this long
		wantConn  error         // sentinel expected from Connect
		wantCall  error         // error expected from CallTool
		wantMsg   []string      // substrings of the error message
		wantTail  string        // substring of the stderr tail in the error
		maxElapse time.Duration // generous bound: the step must not hang
	}{
		{name: "exits at start", args: []string{"-fault", "exit-at-start"},
			wantConn: mcpconn.ErrHandshake, wantMsg: []string{"exited during startup", "exit status 3"},
			wantTail: "exiting at start", maxElapse: 15 * time.Second},
		{name: "exits at start, fault chosen by the document's env",
			mutate:   func(s *resource.MCPServer) { s.Env = map[string]string{mcptest.FaultsEnv: "exit-at-start"} },
			wantConn: mcpconn.ErrHandshake, wantMsg: []string{"exit status 3"}, wantTail: "exiting at start",
			maxElapse: 15 * time.Second},
		{name: "never answers the handshake", args: []string{"-fault", "no-handshake"},
			mutate:   func(s *resource.MCPServer) { s.StartupTimeoutMS = 500 },
			wantConn: mcpconn.ErrHandshake, wantMsg: []string{"startup timeout of 500ms", "startup_timeout_ms"},
			wantTail: "never answering", maxElapse: 15 * time.Second},
		{name: "banner on stdout", args: []string{"-fault", "banner"},
			wantConn: mcpconn.ErrHandshake, wantMsg: []string{"non-JSON on stdout", "Server starting", "logs to stderr"},
			maxElapse: 15 * time.Second},
		{name: "command not found",
			mutate:   func(s *resource.MCPServer) { s.Command = "agt-no-such-command-4711" },
			wantConn: mcpconn.ErrStart, wantMsg: []string{"not found in the PATH"}, maxElapse: 5 * time.Second},
		{name: "crashes during a call", args: []string{"-fault", "crash-on-call"},
			call: mcptest.ToolCrash, wantCall: mcpconn.ErrUnavailable,
			wantMsg: []string{"server process ended", "exit status 70"}, wantTail: "crashing during a call",
			maxElapse: 15 * time.Second},
		{name: "slow tool hits tool_timeout_ms",
			mutate: func(s *resource.MCPServer) { s.ToolTimeoutMS = 300 },
			call:   mcptest.ToolSleep, callArgs: `{"ms":600000}`,
			wantCall: context.DeadlineExceeded, wantMsg: []string{"tool timeout of 300ms"}, maxElapse: 15 * time.Second},
		{name: "caller cancels a slow call",
			call: mcptest.ToolSleep, callArgs: `{"ms":600000}`, cancelAt: 200 * time.Millisecond,
			wantCall: context.Canceled, wantMsg: []string{"cancelled by the caller"}, maxElapse: 15 * time.Second},
		{name: "server spawns a grandchild", args: []string{"-fault", "spawn-child"},
			call: mcptest.ToolEcho, callArgs: `{"text":"hi"}`, maxElapse: 15 * time.Second},
		{name: "server ignores SIGTERM", args: []string{"-fault", "ignore-sigterm"},
			call: mcptest.ToolEcho, callArgs: `{"text":"hi"}`, maxElapse: 15 * time.Second},
		{name: "launched through a shell",
			mutate: func(s *resource.MCPServer) {
				// sh stays the parent (a command follows), the server and its
				// grandchild are its descendants: all in one group.
				s.Args = []string{"-c", `"$FAKEMCP" "$@"; echo after >&2`, "sh", "-tag", s.Args[1], "-fault", "spawn-child"}
				s.Env = map[string]string{"FAKEMCP": s.Command}
				s.Command = "sh"
			},
			call: mcptest.ToolEcho, callArgs: `{"text":"hi"}`, maxElapse: 15 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, tag := fakeStdio(t, tt.args...)
			if tt.mutate != nil {
				tt.mutate(&srv)
			}
			c := quickConnector(nil)
			start := time.Now()
			s, err := c.Connect(context.Background(), "fault", srv, nil)
			if tt.wantConn != nil {
				checkErr(t, err, tt.wantConn, tt.wantMsg, tt.wantTail)
				if s != nil {
					t.Errorf("Connect returned a session with an error")
				}
				if d := time.Since(start); d > tt.maxElapse {
					t.Errorf("Connect took %s; want it to give up within its timeout", d)
				}
				assertNoLeftovers(t, tag)
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if tt.call != "" {
				ctx := context.Background()
				if tt.cancelAt > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					time.AfterFunc(tt.cancelAt, cancel)
					defer cancel()
				}
				callStart := time.Now()
				res, err := s.CallTool(ctx, tt.call, []byte(tt.callArgs))
				if tt.wantCall != nil {
					checkErr(t, err, tt.wantCall, tt.wantMsg, tt.wantTail)
				} else if err != nil || res.IsError {
					t.Errorf("CallTool = %v, %v; want a result", res, err)
				}
				if d := time.Since(callStart); d > tt.maxElapse {
					t.Errorf("CallTool took %s", d)
				}
			}
			closeStart := time.Now()
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if d := time.Since(closeStart); d > tt.maxElapse {
				t.Errorf("Close took %s", d)
			}
			assertNoLeftovers(t, tag)
		})
	}
}

func checkErr(t *testing.T, err, want error, msgs []string, tail string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v; want errors.Is %v", err, want)
	}
	for _, m := range msgs {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not say %q", err, m)
		}
	}
	if tail != "" {
		var e *mcpconn.Error
		if !errors.As(err, &e) || !strings.Contains(e.StderrTail, tail) {
			t.Errorf("stderr tail of %v lacks %q", err, tail)
		}
	}
}

// After a tool timeout the session stays usable: the request was cancelled,
// not the connection.
func TestToolTimeoutKeepsSession(t *testing.T) {
	t.Parallel()
	srv, tag := fakeStdio(t)
	srv.ToolTimeoutMS = 200
	s, err := quickConnector(nil).Connect(context.Background(), "timeout", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CallTool(context.Background(), mcptest.ToolSleep, []byte(`{"ms":600000}`))
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, mcpconn.ErrUnavailable) {
		t.Fatalf("CallTool = %v; want a tool timeout", err)
	}
	res, err := s.CallTool(context.Background(), mcptest.ToolEcho, []byte(`{"text":"still here"}`))
	if err != nil || resultText(res) != "still here" {
		t.Errorf("echo after timeout = %v, %v", res, err)
	}
	s.Close()
	assertNoLeftovers(t, tag)
}

// The per-call timeout cancels the request on the server
// (notifications/cancelled reaches the tool's context).
func TestToolTimeoutCancelsOnServer(t *testing.T) {
	t.Parallel()
	counters := &mcptest.Counters{}
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{Counters: counters})})
	s, err := c.Connect(context.Background(), "cancel", resource.MCPServer{ToolTimeoutMS: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CallTool(context.Background(), mcptest.ToolSleep, []byte(`{"ms":600000}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("CallTool = %v; want DeadlineExceeded", err)
	}
	poll.Until(t, "the server to see the cancellation", func() bool { return counters.Cancelled() > 0 })
	if got := counters.Cancelled(); got != 1 {
		t.Errorf("server saw %d cancelled calls; want 1", got)
	}
}
