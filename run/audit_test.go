package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, ok := fakeBinary.Load().(string); ok && code == 0 {
		// Every server process any test started must be gone: Close and
		// refreshes wait for them.
		if pids := leftoverProcesses(bin); len(pids) > 0 {
			fmt.Fprintf(os.Stderr, "leftover fake server processes: %v\n", pids)
			code = 1
		}
	}
	mcptest.RemoveBuilt()
	if code == 0 {
		// Every Run, session and server goroutine must be gone.
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// The audit holds one record per call with the stage, decision, code and
// violation paths, and never an argument value.
func TestSlogAuditorNeverLogsArguments(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		mu := &lockedWriter{w: &bytes.Buffer{}}
		logger := slog.New(slog.NewJSONHandler(mu, nil))
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Auditor: run.NewSlogAuditor(logger),
			Permission: policy.Rules{Deny: []string{"*note_delete"}, Allow: []string{"*"}}})
		const secret = "hunter2-secret-value"
		out, err := r.Execute(context.Background(), batch(
			call("ok", echo, `{"text":"`+secret+`"}`),
			call("bad", search, `{"query":"`+secret+`","limit":1000}`),
			call("denied", delNote, `{"id":"n1","caller":"mallory"}`),
		))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]run.Code{"", run.CodeInvalidArguments, run.CodePermissionDenied}, codes(out)); diff != "" {
			t.Fatalf("codes (-want +got):\n%s", diff)
		}
		logged := mu.String()
		if strings.Contains(logged, secret) || strings.Contains(logged, "mallory") {
			t.Errorf("the audit log holds an argument value:\n%s", logged)
		}
		for _, want := range []string{`"call_id":"bad"`, `"violation_paths":["/limit"]`, `"stage":"validate"`, `"by":"rules"`, `"code":"permission_denied"`, `"source":"mcp:notes:echo"`} {
			if !strings.Contains(logged, want) {
				t.Errorf("the audit log lacks %s:\n%s", want, logged)
			}
		}
	})
}

// Failures raised by stages become Results with their codes; a Permission
// error never allows the call; After can replace a Result.
func TestStageFailures(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		permErr := permissionFunc(func(context.Context, run.Request) (run.Decision, error) {
			return run.Decision{Verdict: run.Allow}, errors.New("policy store down")
		})
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Permission: permErr})
		out, _ := r.Execute(context.Background(), batch(call("c", echo, `{"text":"x"}`)))
		if out.Results[0].Code != run.CodeInternal || mem.counters.Calls() != 0 {
			t.Errorf("a Permission error: %+v, server calls %d", out.Results[0], mem.counters.Calls())
		}

		undecided := permissionFunc(func(context.Context, run.Request) (run.Decision, error) { return run.Decision{}, nil })
		r = newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Permission: undecided})
		out, _ = r.Execute(context.Background(), batch(call("c", echo, `{"text":"x"}`)))
		if out.Results[0].Code != run.CodePermissionDenied {
			t.Errorf("an undecided call ran: %+v", out.Results[0])
		}

		refuse := run.Before(func(context.Context, run.Request) (context.Context, error) {
			return nil, errorf(run.CodeUnauthorized, "quota used up")
		})
		r = newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Interceptors: []run.Interceptor{refuse}})
		out, _ = r.Execute(context.Background(), batch(call("c", echo, `{"text":"x"}`)))
		if diff := cmp.Diff(run.Result{CallID: "c", Name: echo, Code: run.CodeUnauthorized, Message: "quota used up"}, out.Results[0], cmpopts.IgnoreUnexported(run.Result{})); diff != "" {
			t.Errorf("Before refusal (-want +got):\n%s", diff)
		}

		redact := run.After(func(_ context.Context, _ run.Request, res run.Result) run.Result {
			res.Content = []byte(`[{"type":"text","text":"redacted"}]`)
			return res
		})
		r = newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Interceptors: []run.Interceptor{redact}})
		out, _ = r.Execute(context.Background(), batch(call("c", echo, `{"text":"x"}`)))
		if string(out.Results[0].Content) != `[{"type":"text","text":"redacted"}]` {
			t.Errorf("After did not replace the result: %s", out.Results[0].Content)
		}
	})
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// A panicking host callback fails its own call only.
func TestPanickingHandlerFailsOnlyItsCall(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		boom := run.HostTool{Name: "boom", Schema: []byte(`{"type":"object"}`),
			Handler: func(context.Context, run.Request) (run.Result, error) { panic("handler bug") }}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{boom}})
		out, err := r.Execute(context.Background(), batch(call("a", "boom", `{}`), call("b", echo, `{"text":"x"}`)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]run.Code{run.CodeInternal, ""}, codes(out)); diff != "" {
			t.Errorf("codes (-want +got):\n%s", diff)
		}
	})
}

// Issue 12 §4: a panicking callback's value and stack reach the audit and
// the host's Logger, never the model; an Auditor's own panic reaches the
// Logger.
func TestPanicValueAndStackReachTheAuditNotTheModel(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		boom := run.HostTool{Name: "boom", Schema: []byte(`{"type":"object"}`),
			Handler: func(context.Context, run.Request) (run.Result, error) { panic("handler bug 4f2a") }}
		var audit auditLog
		logged := &lockedWriter{w: &bytes.Buffer{}}
		logger := slog.New(slog.NewTextHandler(logged, nil))
		perm := permissionFunc(func(_ context.Context, req run.Request) (run.Decision, error) {
			if req.CallID == "p" {
				panic("permission bug 9c1e")
			}
			return run.Decision{Verdict: run.Allow, By: "test"}, nil
		})
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{boom},
			Auditor: &audit, Logger: logger, Permission: perm})
		out, err := r.Execute(context.Background(), batch(call("h", "boom", `{}`), call("p", "boom", `{}`)))
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range out.Results {
			if res.Code != run.CodeInternal || strings.Contains(string(res.ForModel()), "bug") {
				t.Errorf("result %s: %s %s; want internal without the panic value", res.CallID, res.Code, res.ForModel())
			}
		}
		panics := map[string]string{}
		for _, rec := range audit.records("call") {
			panics[rec.CallID] = rec.Panic
		}
		for id, want := range map[string]string{"h": "handler bug 4f2a", "p": "permission bug 9c1e"} {
			if !strings.Contains(panics[id], want) || !strings.Contains(panics[id], "goroutine") {
				t.Errorf("audit of %s: Panic = %.200q; want the value and a stack", id, panics[id])
			}
			if !strings.Contains(logged.String(), want) {
				t.Errorf("the Logger did not get %q", want)
			}
		}

		r2 := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Auditor: panickingAuditor{}, Logger: logger})
		if _, err := r2.Execute(context.Background(), batch(call("e", run.Alias(notes, mcptest.ToolEcho), `{"text":"x"}`))); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logged.String(), "auditor bug") {
			t.Error("the Auditor's panic did not reach the Logger")
		}
	})
}

// Issue 23 item 9 (c): a lost connection is logged at Warn with whether
// the server is shared, whether the loss is the Run's, and the losses in
// a row, so a shared server's crash loop shows in the slog audit too.
func TestSlogAuditorLogsServerLoss(t *testing.T) {
	t.Parallel()
	mu := &lockedWriter{w: &bytes.Buffer{}}
	run.NewSlogAuditor(slog.New(slog.NewJSONHandler(mu, nil))).Audit(context.Background(), run.Record{
		Event: "server_lost", Agent: testAgent, RunID: "alice", BatchID: "b7", Source: run.Source{Kind: run.SourceMCP, Ref: "files"},
		Code: run.CodeUnavailable, Shared: true, Charged: false, Losses: 3, Restarts: 1})
	var got map[string]any
	if err := json.Unmarshal([]byte(mu.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, mu.String())
	}
	delete(got, "time")
	want := map[string]any{"level": "WARN", "msg": "agt.server_lost", "agent": "writer", "run_id": "alice", "batch_id": "b7",
		"source": "mcp:files:", "shared": true, "charged": false, "losses": 3.0, "restarts": 1.0, "code": "unavailable", "duration": 0.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the logged loss (-want +got):\n%s", diff)
	}
}
