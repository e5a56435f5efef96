//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; agt still answers them from legacy servers, and a modern server asks for them inside input_required results

package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two users on one shared server (issue 23 item 9): what the server sends
// reaches only the session of the call it names, and a crash is charged
// to the sessions whose calls were in flight.

// sharedServer returns a shared document of the fake server with faults,
// over stdio (with the tag of its processes, checked for leftovers at the
// end of the test) or streamable HTTP (the test's own server process).
// The server is legacy: the tests of this file assert the legacy
// routing rule of server requests on a shared session (by the calls in
// flight, the call's stream or its _meta) and the crash of a shared
// session; a modern server's requests belong to their call exactly
// (issue 25 item 4) and over HTTP it has no session.
func sharedServer(t *testing.T, transport string, faults ...mcptest.Fault) resource.MCPServer {
	t.Helper()
	args := []string{"-era", string(mcptest.EraLegacy)}
	if len(faults) > 0 {
		names := make([]string, len(faults))
		for i, f := range faults {
			names[i] = string(f)
		}
		args = append(args, "-fault", strings.Join(names, ","))
	}
	if transport == resource.TransportHTTP {
		return resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, args...), Shared: true, StartupTimeoutMS: 20000}
	}
	srv, tag := fakeStdio(t, args...)
	srv.Shared = true
	t.Cleanup(func() { assertNoLeftovers(t, tag) })
	return srv
}

// loggingConnector is a quick Connector whose Logger (the lines of a
// shared server that belong to no session) writes to the returned buffer.
func loggingConnector(t *testing.T) (*mcpconn.Connector, *lockedBuffer) {
	t.Helper()
	var logged lockedBuffer
	c := quickConnector(&mcpconn.ConnectorOptions{Logger: slog.New(slog.NewJSONHandler(&logged, nil)), Limits: &mcpconn.Limits{SharedIdleTimeout: time.Hour}})
	t.Cleanup(func() { _ = c.Close() })
	return c, &logged
}

// twoUsers leases the shared fake server (client-features) over
// transport for Alice (a) and Bob (b), each with a recorder of what
// reaches their handlers; logged is the Connector's Logger.
func twoUsers(t *testing.T, transport string) (logged *lockedBuffer, a, b *mcpconn.Session, alice, bob *seen) {
	t.Helper()
	srv := sharedServer(t, transport, mcptest.FaultClientFeatures)
	c, logged := loggingConnector(t)
	alice, bob = newSeen(), newSeen()
	a = lease(t, c, "files", srv, 1, alice.handlers())
	b = lease(t, c, "files", srv, 1, bob.handlers())
	return logged, a, b, alice, bob
}

// seen records what reaches one session's handlers.
type seen struct {
	mu       sync.Mutex
	elicited [][]any  // the calls told to Elicit
	logged   [][]any  // the calls told to Log
	reports  []string // "[calls]:outcome" told to Served
	// progress is signalled at each progress of a call (not blocking).
	progress chan struct{}
}

func newSeen() *seen { return &seen{progress: make(chan struct{}, 1)} }

func (s *seen) handlers() *mcpconn.Handlers {
	return &mcpconn.Handlers{
		Elicit: func(_ context.Context, in mcpconn.Incoming, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.elicited = append(s.elicited, in.Calls)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		Log: func(_ context.Context, in mcpconn.Incoming, _ *mcp.LoggingMessageParams) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.logged = append(s.logged, in.Calls)
		},
		Progress: func(context.Context, mcpconn.Incoming, *mcp.ProgressNotificationParams) {
			select {
			case s.progress <- struct{}{}:
			default:
			}
		},
		Served: func(in mcpconn.Incoming, rep mcpconn.ServedRequest) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.reports = append(s.reports, fmt.Sprint(in.Calls)+":"+string(rep.Outcome))
		},
	}
}

func (s *seen) get() (elicited, logged [][]any, reports []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]any(nil), s.elicited...), append([][]any(nil), s.logged...), append([]string(nil), s.reports...)
}

// inFlight starts a call of s tagged tag that reports progress until
// cancelled, and returns once it is in flight (its first progress came):
// done receives the call's error when it returns; cancel ends it.
func inFlight(t *testing.T, s *mcpconn.Session, rec *seen, tag string) (done <-chan error, cancel func()) {
	t.Helper()
	ctx, stop := context.WithCancel(mcpconn.WithCallTag(context.Background(), tag))
	ch := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, mcptest.ToolProgress, json.RawMessage(`{"steps":1000000,"ms":20}`))
		ch <- err
	}()
	select {
	case <-rec.progress:
	case err := <-ch:
		stop()
		t.Fatalf("the call %s returned before it reported progress: %v", tag, err)
	case <-time.After(20 * time.Second):
		stop()
		t.Fatalf("the call %s reported no progress in 20 s", tag)
	}
	t.Cleanup(stop)
	return ch, stop
}

// endCall cancels a call started by inFlight and waits for it.
func endCall(done <-chan error, cancel func()) {
	cancel()
	<-done
}

func callTagged(t *testing.T, s *mcpconn.Session, tag, tool string, args any) *mcpconn.CallResult {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := s.CallTool(mcpconn.WithCallTag(context.Background(), tag), tool, raw)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// Issue 23 item 9 (a): a request or a log line that names its call
// reaches that call's session alone, even while another session's call
// is in flight: over streamable HTTP the event stream of the call's own
// POST names it, on any transport _meta relatedRequestId or
// progressToken. One that names nothing on a shared server reaches no
// session (refused, and logged to the Connector), since the server does
// not say whose it is.
func TestSharedRequestGoesToTheCallItNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		transport string
		names     string
		reached   bool
	}{
		{"stdio, names nothing", resource.TransportStdio, mcptest.NamesNothing, false},
		{"stdio, progressToken", resource.TransportStdio, mcptest.NamesToken, true},
		{"stdio, relatedRequestId", resource.TransportStdio, mcptest.NamesRequest, true},
		{"http, the call's own stream", resource.TransportHTTP, mcptest.NamesNothing, true},
		{"http, progressToken", resource.TransportHTTP, mcptest.NamesToken, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logged, a, b, ha, hb := twoUsers(t, tt.transport)
			done, cancel := inFlight(t, b, hb, "b-call")

			res := callTagged(t, a, "a-call", mcptest.ToolAsk, mcptest.AskIn{Names: tt.names})
			callTagged(t, a, "a-call", mcptest.ToolLog, mcptest.LogIn{Count: 1, Names: tt.names})
			if tt.reached {
				poll.Until(t, "a's Log handler gets a's line", func() bool { _, l, _ := ha.get(); return len(l) == 1 })
			} else {
				poll.Until(t, "the Connector's Logger gets the line", func() bool { return strings.Contains(logged.String(), "agt.shared_server_log") })
			}
			endCall(done, cancel)

			elicited, lines, reports := ha.get()
			var want [][]any
			var wantReports []string
			if tt.reached {
				want, wantReports = [][]any{{"a-call"}}, []string{"[a-call]:declined"}
				if res.IsError {
					t.Errorf("a's ask failed: %s", resultText(res))
				}
			} else {
				if !res.IsError {
					t.Errorf("a's ask that names no call was answered: %s", resultText(res))
				}
				if !strings.Contains(logged.String(), "agt.shared_server_request") {
					t.Errorf("the refused request is not in the Connector's log: %s", logged.String())
				}
			}
			if diff := cmp.Diff(want, elicited); diff != "" {
				t.Errorf("a's Elicit calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("a's Log calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantReports, reports); diff != "" {
				t.Errorf("a's Served reports (-want +got):\n%s", diff)
			}
			if e, l, r := hb.get(); len(e)+len(l)+len(r) != 0 {
				t.Errorf("b, whose call was in flight, was told of a's messages: elicit %v, log %v, served %v", e, l, r)
			}
		})
	}
}

// Issue 23 item 9 (a), the attack: after Alice's call returned, the
// server sends an elicitation and a log line about it, outside any
// request, while Bob's call is in flight (the fake sends them when Bob's
// tools/call arrives). Bob's handlers never see them: what names no call
// goes to no session (refused; the Connector's Logger), and what names
// Alice's finished call goes to Alice's session (the log line) or is
// refused there (the call it is about has returned). Before, Bob's
// Elicit answered Alice's elicitation and Bob's Log got her line: Bob's
// call alone was in flight.
func TestSharedLateMessagesReachNoOtherSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		transport string
		names     string
	}{
		{"stdio, names nothing", resource.TransportStdio, mcptest.NamesNothing},
		{"stdio, names the finished call", resource.TransportStdio, mcptest.NamesToken},
		{"http, names nothing", resource.TransportHTTP, mcptest.NamesNothing},
		{"http, names the finished call", resource.TransportHTTP, mcptest.NamesToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logged, a, b, alice, bob := twoUsers(t, tt.transport)
			callTagged(t, a, "a-call", mcptest.ToolLate, mcptest.LateIn{Elicit: true, Log: true, Names: tt.names})
			done, cancel := inFlight(t, b, bob, "b-call")

			named := tt.names != mcptest.NamesNothing
			poll.Until(t, "the late elicitation is settled", func() bool {
				be, _, _ := bob.get()
				_, _, ar := alice.get()
				return len(be) > 0 || (named && len(ar) > 0) || strings.Contains(logged.String(), "agt.shared_server_request")
			})
			poll.Until(t, "the late log line is delivered", func() bool {
				_, bl, _ := bob.get()
				_, al, _ := alice.get()
				return len(bl) > 0 || (named && len(al) > 0) || strings.Contains(logged.String(), "agt.shared_server_log")
			})
			endCall(done, cancel)

			if e, l, r := bob.get(); len(e)+len(l)+len(r) != 0 {
				t.Errorf("Bob was told of the late messages about Alice's call: elicit %v, log %v, served %v", e, l, r)
			}
			elicited, lines, reports := alice.get()
			if len(elicited) != 0 {
				t.Errorf("Alice's Elicit answered a request about a call that returned: %v", elicited)
			}
			if named {
				if diff := cmp.Diff([][]any{{"a-call"}}, lines); diff != "" {
					t.Errorf("Alice's Log calls (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"[a-call]:refused"}, reports); diff != "" {
					t.Errorf("Alice's Served reports (-want +got):\n%s", diff)
				}
			} else if len(lines)+len(reports) != 0 {
				t.Errorf("Alice was told of messages that name no call: log %v, served %v", lines, reports)
			}
		})
	}
}

// Issue 23 item 9 (b), (c): each crash Bob's call causes is charged to
// Bob's session alone (Loss.Charged), and the count of losses in a row
// rises with each (a crash loop); Alice's session, with no call in
// flight, is not charged. A call of Alice's in flight at Bob's crash is
// lost with it, and then the loss is hers too.
func TestSharedCrashIsChargedToTheCallsInFlight(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{resource.TransportStdio, resource.TransportHTTP} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			srv := sharedServer(t, transport, mcptest.FaultCrashOnCall, mcptest.FaultClientFeatures)
			c := sharedConnector(t, time.Hour)
			// The same handlers declare the same capabilities: one
			// connection.
			alice, bob := newSeen(), newSeen()
			a := lease(t, c, "files", srv, 1, alice.handlers())
			b := lease(t, c, "files", srv, 1, bob.handlers())
			const crashes = 8
			for i := 1; i <= crashes; i++ {
				if _, err := b.CallTool(context.Background(), mcptest.ToolCrash, nil); !errors.Is(err, mcpconn.ErrUnavailable) {
					t.Fatalf("crash %d: %v; want ErrUnavailable", i, err)
				}
				poll.Until(t, "Alice's session sees the crash", a.Lost)
				la, _ := a.Loss()
				lb, _ := b.Loss()
				if diff := cmp.Diff(mcpconn.Loss{Shared: true, Charged: false, Count: i}, la); diff != "" {
					t.Errorf("crash %d, Alice's loss (-want +got):\n%s", i, diff)
				}
				if diff := cmp.Diff(mcpconn.Loss{Shared: true, Charged: true, Count: i}, lb); diff != "" {
					t.Errorf("crash %d, Bob's loss (-want +got):\n%s", i, diff)
				}
				_ = a.Close()
				_ = b.Close()
				a = lease(t, c, "files", srv, 1, alice.handlers())
				b = lease(t, c, "files", srv, 1, bob.handlers())
				echo(t, a, fmt.Sprintf("alice-after-%d", i))
			}

			// Alice's call in flight is lost with Bob's crash: hers too.
			done, cancel := inFlight(t, a, alice, "a-call")
			defer cancel()
			if _, err := b.CallTool(context.Background(), mcptest.ToolCrash, nil); !errors.Is(err, mcpconn.ErrUnavailable) {
				t.Fatalf("the last crash: %v", err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, mcpconn.ErrUnavailable) {
					t.Errorf("Alice's call in flight at Bob's crash = %v; want ErrUnavailable", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Alice's call in flight did not end 30 s after the crash")
			}
			poll.Until(t, "Alice's session sees the last crash", a.Lost)
			if la, _ := a.Loss(); !la.Charged || la.Count != crashes+1 {
				t.Errorf("Alice's loss with her call in flight = %+v; want charged, count %d", la, crashes+1)
			}
		})
	}
}
