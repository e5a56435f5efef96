//lint:file-ignore SA1019 sampling, roots and logging are current in protocol 2025-11-25

package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const featRef = resource.Ref("tools/fake")

// featuresRun is a Run of an agent that mounts the fake server with the
// client-features tools over stdio, in era e.
func featuresRun(t *testing.T, e mcptest.Era, opts *run.Options) *run.Run {
	t.Helper()
	repo := newRepo(t)
	putMCP(t, repo, featRef, stdioServer(t, "-era", string(e), "-fault", string(mcptest.FaultClientFeatures)))
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{featRef}})
	opts.Repository = repo
	if opts.Connector == nil {
		opts.Connector = mcpconn.NewConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{TerminateGrace: 300 * time.Millisecond}})
	}
	return newRun(t, opts)
}

// featuresInMemory is featuresRun with the server in process (mcptest.Dial),
// for a test in a synctest bubble.
func featuresInMemory(t *testing.T, e mcptest.Era, opts *run.Options) *run.Run {
	t.Helper()
	repo, mem := setupEra(t, e, featRef)
	mem.opts.Faults = []mcptest.Fault{mcptest.FaultClientFeatures}
	opts.Repository = repo
	opts.Connector = mem.connector()
	return newRun(t, opts)
}

func featCall(id, tool, args string) run.Call { return call(id, run.Alias(featRef, tool), args) }

// listenOpen waits until the client-features server of mount ref has
// acknowledged the listen of r's session, in an era that has one: a
// modern server tells only an acknowledged listen of a tools change, and
// Connect does not wait for it.
func listenOpen(t *testing.T, r *run.Run, ref resource.Ref, e mcptest.Era) {
	t.Helper()
	if e == mcptest.EraLegacy {
		return
	}
	poll.Until(t, "the listen to be acknowledged", func() bool {
		var got mcptest.ListensOut
		if err := json.Unmarshal([]byte(text(t, execute(t, r, call("listens", run.Alias(ref, mcptest.ToolListens), `{}`)).Results[0])), &got); err != nil {
			t.Fatal(err)
		}
		return got.Open == 1
	})
}

// text is the text of a result's first content block.
func text(t *testing.T, res run.Result) string {
	t.Helper()
	var blocks []struct{ Text string }
	if err := json.Unmarshal(res.Content, &blocks); err != nil || len(blocks) == 0 {
		t.Fatalf("content %s: %v", res.Content, err)
	}
	return blocks[0].Text
}

func execute(t *testing.T, r *run.Run, calls ...run.Call) run.Outcome {
	t.Helper()
	out, err := r.Execute(context.Background(), batch(calls...))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An elicitation reaches Options.ClientFeatures.Elicit with the call that caused it; the
// accepted form gets its defaults; the audit names the call and the
// outcome and holds no value.
func TestElicitationReachesHostWithItsCall(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		audit := &auditLog{}
		var mu sync.Mutex
		var froms []run.Origin
		r := featuresRun(t, e, &run.Options{
			RunID:        "run-7",
			Auditor:      audit,
			Interceptors: []run.Interceptor{tagCalls},
			ClientFeatures: &run.ClientFeatures{Elicit: func(_ context.Context, from run.Origin, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				froms = append(froms, from)
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"note": "private-answer"}}, nil
			}},
		})
		out := execute(t, r, featCall("c1", mcptest.ToolAsk, `{}`))
		var got mcp.ElicitResult
		if err := json.Unmarshal([]byte(text(t, out.Results[0])), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"name": "Ann", "age": 30.0, "score": 95.5, "status": "active", "verified": true, "note": "private-answer"}
		if diff := cmp.Diff(want, got.Content); diff != "" {
			t.Errorf("content the server got (-want +got):\n%s", diff)
		}
		cc := run.Request{Agent: testAgent, RunID: "run-7", BatchID: "b1", CallID: "c1", Alias: run.Alias(featRef, mcptest.ToolAsk),
			Source: run.Source{Kind: run.SourceMCP, Ref: featRef, Tool: mcptest.ToolAsk}}
		mu.Lock()
		if diff := cmp.Diff([]run.Origin{{Mount: featRef, Calls: []run.Request{cc}}}, froms, ignoreCallView); diff != "" {
			t.Errorf("origin (-want +got):\n%s", diff)
		}
		mu.Unlock()
		recs := audit.records("server_request")
		if len(recs) != 1 {
			t.Fatalf("server request records: %+v", recs)
		}
		rec := recs[0]
		if rec.Request != mcpconn.MethodElicit || rec.Outcome != mcpconn.OutcomeAccepted || rec.CallID != "c1" || rec.BatchID != "b1" ||
			rec.RunID != "run-7" || rec.Source != cc.Source || rec.Alias != cc.Alias {
			t.Errorf("record %+v", rec)
		}
		// The Auditor gets the context the call was sent with (a trace span).
		if tags := audit.tag("server_request"); !slices.Equal(tags, []any{"c1"}) {
			t.Errorf("the Auditor's context of the request carries %v, want the call's value c1", tags)
		}
		raw, _ := json.Marshal(rec)
		for _, v := range []string{"private-answer", "Ann", "Who are you"} {
			if strings.Contains(string(raw), v) {
				t.Errorf("the audit record holds %q: %s", v, raw)
			}
		}
	})
}

// Without handlers nothing is declared: each request is refused and
// audited as refused. The eras differ: a legacy go-sdk server does not
// even send an elicitation the client did not declare, and sampling and
// roots requests reach the client and are answered -32601; a modern
// server asks all three in input_required, and the client refuses each
// without asking the host (issue 25 item 4), the call failing with the
// reason.
func TestUndeclaredRequestsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		era     mcptest.Era
		refusal string   // in the message of a refused sampling or roots call
		refused []string // the audit: request, outcome, call
	}{
		{mcptest.EraLegacy, "code -32601", []string{"roots/list refused r", "sampling/createMessage refused s"}},
		{mcptest.EraDual, "the capability was not declared", []string{"elicitation/create refused a", "roots/list refused r", "sampling/createMessage refused s"}},
	} {
		t.Run(string(tc.era), func(t *testing.T) {
			t.Parallel()
			audit := &auditLog{}
			r := featuresRun(t, tc.era, &run.Options{Auditor: audit})
			if res := execute(t, r, featCall("a", mcptest.ToolAsk, `{}`)).Results[0]; res.Code != run.CodeToolError {
				t.Errorf("elicitation: %s %s", res.Code, res.Message)
			}
			for _, c := range []run.Call{featCall("s", mcptest.ToolSample, `{}`), featCall("r", mcptest.ToolListRoots, `{}`)} {
				if res := execute(t, r, c).Results[0]; res.Code != run.CodeToolError || !strings.Contains(res.Message, tc.refusal) {
					t.Errorf("%s: %s %s", res.CallID, res.Code, res.Message)
				}
			}
			if got := text(t, execute(t, r, featCall("caps", mcptest.ToolClientCaps, `{}`)).Results[0]); got != `{}` {
				t.Errorf("capabilities declared: %s", got)
			}
			var kinds []string
			for _, rec := range audit.records("server_request") {
				kinds = append(kinds, string(rec.Request)+" "+string(rec.Outcome)+" "+rec.CallID)
			}
			slices.Sort(kinds)
			if diff := cmp.Diff(tc.refused, kinds); diff != "" {
				t.Errorf("audit (-want +got):\n%s", diff)
			}
		})
	}
}

// Sampling is billed to the call in flight: past MaxSamplingPerCall the
// server is refused, and the next call has its own budget.
func TestSamplingBudgetPerCall(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		audit := &auditLog{}
		var calls int
		var mu sync.Mutex
		r := featuresRun(t, e, &run.Options{
			Auditor: audit,
			Limits:  &run.Limits{MaxSamplingPerCall: 2},
			ClientFeatures: &run.ClientFeatures{Sample: func(_ context.Context, from run.Origin, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				mu.Lock()
				calls++
				mu.Unlock()
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "ok"}}, nil
			}},
		})
		out := execute(t, r, featCall("s1", mcptest.ToolSample, `{"times":3}`))
		if res := out.Results[0]; res.Code != run.CodeToolError || !strings.Contains(res.Message, "MaxSamplingPerCall") {
			t.Errorf("third request: %s %s", res.Code, res.Message)
		}
		out = execute(t, r, featCall("s2", mcptest.ToolSample, `{"times":2}`))
		if got := text(t, out.Results[0]); got != "model said: ok | ok" {
			t.Errorf("next call: %s", got)
		}
		mu.Lock()
		if calls != 4 {
			t.Errorf("Sample ran %d times, want 4", calls)
		}
		mu.Unlock()
		var got []string
		for _, rec := range audit.records("server_request") {
			got = append(got, rec.CallID+" "+string(rec.Outcome)+" "+rec.Message)
		}
		want := []string{"s1 accepted ", "s1 accepted ", "s1 refused the call has used its 2 sampling requests (run.Options.Limits.MaxSamplingPerCall)",
			"s2 accepted ", "s2 accepted "}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

// A Sample that fails (a model API's 429) rather than refuses is logged
// to Options.Logger with its error, as the server reads only that the
// client could not answer; a refusal is the server's to read, not logged.
func TestFailedSampleIsLogged(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		for _, tc := range []struct {
			name   string
			err    error
			logged bool
		}{
			{"failed", errors.New("model API: 429 Too Many Requests"), true},
			{"refused", &mcpconn.RefusedError{Reason: "the user said no"}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				logs := &lockedWriter{w: new(bytes.Buffer)}
				r := featuresRun(t, e, &run.Options{
					Logger: slog.New(slog.NewTextHandler(logs, nil)),
					ClientFeatures: &run.ClientFeatures{Sample: func(context.Context, run.Origin, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
						return nil, tc.err
					}},
				})
				execute(t, r, featCall("s1", mcptest.ToolSample, `{}`))
				got := logs.String()
				if logged := strings.Contains(got, "agt.server_request_failed") && strings.Contains(got, "429 Too Many Requests") &&
					strings.Contains(got, "Options.ClientFeatures.Sample"); logged != tc.logged {
					t.Errorf("logged = %v, want %v; log:\n%s", logged, tc.logged, got)
				}
				if !tc.logged && got != "" {
					t.Errorf("a refusal was logged:\n%s", got)
				}
			})
		}
	})
}

// Roots are declared only when given; SetRoots changes them.
func TestRootsAndSetRoots(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		r := featuresRun(t, e, &run.Options{ClientFeatures: &run.ClientFeatures{Roots: []*mcp.Root{{URI: "file:///a", Name: "a"}}}})
		if got := text(t, execute(t, r, featCall("r1", mcptest.ToolListRoots, `{}`)).Results[0]); got != `["file:///a"]` {
			t.Errorf("roots %s", got)
		}
		if err := r.SetRoots([]*mcp.Root{{URI: "file:///b"}, {URI: "file:///c"}}); err != nil {
			t.Fatal(err)
		}
		if got := text(t, execute(t, r, featCall("r2", mcptest.ToolListRoots, `{}`)).Results[0]); got != `["file:///b","file:///c"]` {
			t.Errorf("roots after SetRoots %s", got)
		}
		if err := r.SetRoots([]*mcp.Root{{URI: "https://x"}}); err == nil || !strings.Contains(err.Error(), "file://") {
			t.Errorf("SetRoots of a non-file URI: %v", err)
		}
		if _, err := run.New(context.Background(), &run.Options{
			Agent:          testAgent,
			Repository:     newRepo(t),
			Permission:     allowAll{},
			ClientFeatures: &run.ClientFeatures{Roots: []*mcp.Root{nil}},
		}); err == nil || !strings.Contains(err.Error(), "Options.ClientFeatures.Roots") {
			t.Errorf("New with a nil root: %v", err)
		}
		r2 := featuresRun(t, e, &run.Options{})
		if err := r2.SetRoots(nil); err == nil || !strings.Contains(err.Error(), "set Options.ClientFeatures.Roots") {
			t.Errorf("SetRoots without Options.ClientFeatures.Roots: %v", err)
		}
	})
}

type allowAll struct{}

func (allowAll) Check(context.Context, run.Request) (run.Decision, error) {
	return run.Decision{Verdict: run.Allow}, nil
}

// Two calls of one server in flight: the request names both, and the
// audit lists both call IDs. Legacy era: a request naming the calls in
// flight is the legacy rule; a modern request belongs to its call
// exactly (issue 25 item 4).
func TestTwoCallsInFlight(t *testing.T) {
	t.Parallel()
	// In a synctest bubble over an in-memory server: the long call's 60
	// steps of 100 ms take no wall-clock time, and it is still in flight
	// when the ask call's elicitation arrives, whatever the machine's load.
	synctest.Test(t, testTwoCallsInFlight)
}

func testTwoCallsInFlight(t *testing.T) {
	audit := &auditLog{}
	progressed := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var origins []run.Origin
	r := featuresInMemory(t, mcptest.EraLegacy, &run.Options{
		Auditor: audit,
		// The ask call starts once the long call is surely in flight.
		Interceptors: []run.Interceptor{tagCalls, run.Before(func(ctx context.Context, req run.Request) (context.Context, error) {
			if req.CallID == "ask" {
				<-progressed
			}
			return ctx, nil
		})},
		Limits: &run.Limits{MaxConcurrency: 2},
		ClientFeatures: &run.ClientFeatures{Observe: func(_ context.Context, n run.Notification) {
			if c, ok := n.From.Call(); ok && n.Progress != nil && c.CallID == "long" {
				once.Do(func() { close(progressed) })
			}
		}, Elicit: func(_ context.Context, from run.Origin, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			mu.Lock()
			origins = append(origins, from)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		}},
	})
	out := execute(t, r, featCall("long", mcptest.ToolProgress, `{"steps":60,"ms":100}`), featCall("ask", mcptest.ToolAsk, `{}`))
	if codes := codes(out); codes[0] != "" || codes[1] != "" {
		t.Fatalf("results %+v", out.Results)
	}
	mu.Lock()
	if len(origins) != 1 || len(origins[0].Calls) != 2 || origins[0].Calls[0].CallID != "long" || origins[0].Calls[1].CallID != "ask" {
		t.Errorf("origins %+v", origins)
	}
	if _, ok := origins[0].Call(); ok {
		t.Error("Call() is unambiguous with two calls in flight")
	}
	mu.Unlock()
	recs := audit.records("server_request")
	if len(recs) != 1 || recs[0].CallID != "" || !slices.Equal(recs[0].CallIDs, []string{"long", "ask"}) || recs[0].Outcome != mcpconn.OutcomeDeclined {
		t.Errorf("records %+v", recs)
	}
	if tags := audit.tag("server_request"); !slices.Equal(tags, []any{nil}) {
		t.Errorf("with two calls in flight the Auditor's context carries %v, want neither call's", tags)
	}
}

// A request outside any call names no call; sampling then is refused.
func TestRequestsOutsideCalls(t *testing.T) {
	t.Parallel()
	sessions := make(chan *mcp.ServerSession, 1)
	// A legacy server (issue 25: a modern one asks only inside results).
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"},
		&mcp.ServerOptions{InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) { sessions <- req.Session },
			SupportedProtocolVersions: []string{mcpconn.LegacyProtocolVersion}})
	conn := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
		serverEnd, clientEnd := mcp.NewInMemoryTransports()
		_, err := server.Connect(context.WithoutCancel(ctx), serverEnd, nil)
		return clientEnd, err
	}})
	repo := newRepo(t)
	putMCP(t, repo, featRef, inMemoryServer(t))
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{featRef}})
	audit := &auditLog{}
	sampled := false
	newRun(t, &run.Options{
		Repository: repo,
		Connector:  conn,
		Auditor:    audit,
		ClientFeatures: &run.ClientFeatures{Roots: []*mcp.Root{{URI: "file:///r"}}, Sample: func(context.Context, run.Origin, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			sampled = true
			return nil, errors.New("unreachable")
		}},
	})
	ss := <-sessions
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := ss.ListRoots(ctx, nil); err != nil || len(res.Roots) != 1 {
		t.Errorf("ListRoots = %v, %v", res, err)
	}
	if _, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}, MaxTokens: 5}); err == nil || sampled {
		t.Errorf("sampling outside a call: %v (handler ran: %v)", err, sampled)
	}
	var got []string
	for _, rec := range audit.records("server_request") {
		got = append(got, string(rec.Request)+" "+string(rec.Outcome)+" "+rec.CallID+" "+rec.Source.String()+" "+rec.Message)
	}
	want := []string{"roots/list accepted  mcp:tools/fake: ", "sampling/createMessage refused  mcp:tools/fake: sampling is answered only during a tool call"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}

// slogRecords keeps the messages and attributes logged.
type slogRecords struct {
	mu    sync.Mutex
	lines []map[string]string
}

func (s *slogRecords) Enabled(context.Context, slog.Level) bool { return true }
func (s *slogRecords) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *slogRecords) WithGroup(string) slog.Handler            { return s }
func (s *slogRecords) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message, "level": r.Level.String()}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	s.mu.Lock()
	s.lines = append(s.lines, m)
	s.mu.Unlock()
	return nil
}

func (s *slogRecords) with(msg string) []map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]string
	for _, l := range s.lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// Progress and log lines reach Observe with their call, and the Logger
// at a bounded rate; progress restarts the call's idle timeout. In a
// synctest bubble over an in-memory server: the rate is measured over
// virtual time, exactly.
func TestNotificationsObservedAndLogged(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		synctest.Test(t, func(t *testing.T) {
			logs := &slogRecords{}
			var mu sync.Mutex
			var seen []string
			r := featuresInMemory(t, e, &run.Options{
				Logger: slog.New(logs),
				ClientFeatures: &run.ClientFeatures{Observe: func(_ context.Context, n run.Notification) {
					c, _ := n.From.Call()
					mu.Lock()
					seen = append(seen, run.NoteKind(n)+" "+c.CallID)
					mu.Unlock()
				}},
			})
			execute(t, r, featCall("p", mcptest.ToolProgress, `{"steps":3,"ms":1}`))
			execute(t, r, featCall("l", mcptest.ToolLog, `{"count":2}`))
			poll.Until(t, "5 notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 5 })
			mu.Lock()
			if diff := cmp.Diff([]string{"progress p", "progress p", "progress p", "log l", "log l"}, seen); diff != "" {
				t.Errorf("observed (-want +got):\n%s", diff)
			}
			mu.Unlock()
			lines := logs.with("agt.server_log")
			if len(lines) != 2 || lines[0]["call_id"] != "l" || lines[0]["mount"] != string(featRef) || lines[0]["data"] != "line 0" || lines[0]["level"] != "INFO" || lines[0]["server_level"] != "info" {
				t.Errorf("server log lines %v", lines)
			}

			// A flood: 2000 lines in one call reach the log at most at the
			// documented burst and rate.
			start := time.Now()
			execute(t, r, featCall("flood", mcptest.ToolLog, `{"count":2000}`))
			poll.Until(t, "the flood's observations", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) > 5 })
			// The queue drains what it holds over a second of virtual time,
			// in which the rate allows 20 more lines.
			time.Sleep(time.Second)
			elapsed := time.Since(start)
			n := len(logs.with("agt.server_log")) - 2
			t.Logf("2000 server log lines in %v: %d logged", elapsed, n)
			if limit := 100 + int(elapsed.Seconds()*20) + 2; n > limit {
				t.Errorf("%d lines logged in %v; the bound allows %d", n, elapsed, limit)
			}
		})
	})
}

// Issue 24 item 6: a server's structured log data reaches a text Logger
// as JSON, not in Go's map syntax ("map[event:disk free_mb:12]"); string
// data stays as it was.
func TestServerLogDataIsJSON(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		var mu sync.Mutex
		var text bytes.Buffer
		observed := 0
		r := featuresRun(t, e, &run.Options{
			Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				return text.Write(p)
			}), nil)),
			// Observe follows the Logger for each line: once it saw both,
			// both are logged.
			ClientFeatures: &run.ClientFeatures{Observe: func(_ context.Context, n run.Notification) {
				if n.Log != nil {
					mu.Lock()
					observed++
					mu.Unlock()
				}
			}},
		})
		execute(t, r, featCall("s", mcptest.ToolLog, `{"count":1,"structured":true}`))
		execute(t, r, featCall("t", mcptest.ToolLog, `{"count":1}`))
		poll.Until(t, "2 log lines", func() bool { mu.Lock(); defer mu.Unlock(); return observed == 2 })
		mu.Lock()
		defer mu.Unlock()
		logged := text.String()
		want := `data="{\"event\":\"disk\",\"free_mb\":12,\"line\":0}"`
		if !strings.Contains(logged, "call_id=s") || !strings.Contains(logged, want) || strings.Contains(logged, "map[") {
			t.Errorf("the structured line is not logged with %s:\n%s", want, logged)
		}
		if !strings.Contains(logged, `data="line 0"`) {
			t.Errorf("the string line is not logged as it was:\n%s", logged)
		}
	})
}

// writerFunc is an io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// notifications/tools/list_changed reloads the mount's tools at the batch
// boundary, on the same connection: the new tool gets its alias, the
// fingerprint changes; a listing that then fails keeps the old tools and
// says so.
func TestToolsListChangedRefreshesMount(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		audit := &auditLog{}
		r := featuresRun(t, e, &run.Options{Auditor: audit, Limits: &run.Limits{MinRelistInterval: time.Nanosecond}})
		listenOpen(t, r, featRef, e)
		pid := serverPID(t, r, featRef)
		fp := r.Fingerprint()
		late := run.Alias(featRef, "late")

		out := execute(t, r, featCall("add", mcptest.ToolAddTool, `{"name":"late"}`))
		if out.Refresh == nil || !slices.Equal(out.Refresh.Relisted, []resource.Ref{featRef}) || !out.Refresh.OK || out.Notice() != "" {
			t.Fatalf("refresh %+v", out.Refresh)
		}
		if !slices.ContainsFunc(r.Tools(), func(ti run.ToolInfo) bool { return ti.Name == late }) {
			t.Fatalf("%s is not among the tools", late)
		}
		if r.Fingerprint() == fp {
			t.Error("the fingerprint did not change")
		}
		if got := text(t, execute(t, r, call("late", late, `{"text":"hi"}`)).Results[0]); got != "hi" {
			t.Errorf("the new tool answered %q", got)
		}
		if serverPID(t, r, featRef) != pid {
			t.Error("the server was restarted; the live session should have been re-listed")
		}
		if recs := audit.records("refresh"); len(recs) != 1 || !slices.Equal(recs[0].Refresh.Relisted, []resource.Ref{featRef}) {
			t.Errorf("refresh records %+v", recs)
		}

		// The next change breaks the listing: the old snapshot stays.
		fp = r.Fingerprint()
		out = execute(t, r, featCall("add2", mcptest.ToolAddTool, `{"name":"later","break_listing":true}`))
		if out.Refresh == nil || !strings.Contains(out.Notice(), "re-listing the tools of") || len(out.Refresh.Relisted) != 0 {
			t.Fatalf("refresh %+v", out.Refresh)
		}
		if r.Fingerprint() != fp || slices.ContainsFunc(r.Tools(), func(ti run.ToolInfo) bool { return ti.Name == run.Alias(featRef, "later") }) {
			t.Error("a failed re-listing changed the snapshot")
		}
		// No new change, no new attempt.
		if out := execute(t, r, call("late2", late, `{"text":"x"}`)); out.Refresh != nil {
			t.Errorf("refreshed again without a change: %+v", out.Refresh)
		}
	})
}

// A server that says its tools changed before every batch gets one
// re-listing per MinRelistInterval, not one per batch: the first comes at
// the batch boundary, the changes after it wait, remembered, and all
// arrive at the first boundary past the interval.
func TestToolsChangedRelistingIsRateLimited(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		var mu sync.Mutex
		clock := time.Unix(1_000_000, 0)
		r := featuresRun(t, e, &run.Options{Limits: &run.Limits{MinRelistInterval: time.Minute}})
		listenOpen(t, r, featRef, e)
		run.SetClock(r, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
		has := func(name string) bool {
			return slices.ContainsFunc(r.Tools(), func(ti run.ToolInfo) bool { return ti.Name == run.Alias(featRef, name) })
		}

		if out := execute(t, r, featCall("add0", mcptest.ToolAddTool, `{"name":"t0"}`)); out.Refresh == nil || !slices.Equal(out.Refresh.Relisted, []resource.Ref{featRef}) {
			t.Fatalf("the first change: refresh %+v; want the mount re-listed", out.Refresh)
		}
		for i := 1; i <= 5; i++ {
			mu.Lock()
			clock = clock.Add(5 * time.Second) // 25 s in all: inside the interval
			mu.Unlock()
			name := fmt.Sprintf("t%d", i)
			if out := execute(t, r, featCall("add", mcptest.ToolAddTool, `{"name":"`+name+`"}`)); out.Refresh != nil {
				t.Fatalf("change %d, %d s after the re-listing: refresh %+v; want none", i, 5*i, out.Refresh)
			}
			if has(name) {
				t.Fatalf("%s listed inside the interval", name)
			}
		}
		mu.Lock()
		clock = clock.Add(35 * time.Second) // a minute after the re-listing
		mu.Unlock()
		// A batch with no change of its own: the remembered ones are applied.
		if out := execute(t, r, featCall("echo", mcptest.ToolEcho, `{"text":"x"}`)); out.Refresh == nil || !slices.Equal(out.Refresh.Relisted, []resource.Ref{featRef}) {
			t.Fatalf("past the interval: refresh %+v; want the mount re-listed", out.Refresh)
		}
		for i := range 6 {
			if name := fmt.Sprintf("t%d", i); !has(name) {
				t.Errorf("%s is not among the tools after the interval", name)
			}
		}
		if out := execute(t, r, featCall("echo2", mcptest.ToolEcho, `{"text":"x"}`)); out.Refresh != nil {
			t.Errorf("re-listed again without a change: %+v", out.Refresh)
		}
	})
}

// A panicking Elicit fails only the server's request: its stack goes to
// the Logger, the audit says error, the server is told nothing of it.
func TestElicitPanics(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		logs := &slogRecords{}
		audit := &auditLog{}
		r := featuresRun(t, e, &run.Options{
			Logger:  slog.New(logs),
			Auditor: audit,
			ClientFeatures: &run.ClientFeatures{Elicit: func(context.Context, run.Origin, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				panic("secret-in-panic")
			}},
		})
		res := execute(t, r, featCall("a", mcptest.ToolAsk, `{}`)).Results[0]
		if res.Code != run.CodeToolError || strings.Contains(res.Message, "secret-in-panic") {
			t.Errorf("result %s %s", res.Code, res.Message)
		}
		if p := logs.with("agt.panic"); len(p) != 1 || !strings.Contains(p[0]["panic"], "secret-in-panic") {
			t.Errorf("logged panics %v", p)
		}
		if recs := audit.records("server_request"); len(recs) != 1 || recs[0].Outcome != mcpconn.OutcomeError || recs[0].Message != "the handler panicked" {
			t.Errorf("records %+v", recs)
		}
	})
}
