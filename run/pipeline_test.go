package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/agtsdk/agt/toolschema"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	notes   = resource.Ref("notes")
	echo    = run.Alias(notes, mcptest.ToolEcho)
	search  = run.Alias(notes, mcptest.ToolSearch)
	sleep   = run.Alias(notes, mcptest.ToolSleep)
	delNote = run.Alias(notes, mcptest.ToolNoteDelete)
)

// SPEC R4.2: no implicit allow.
func TestNewRefusesMissingPermission(t *testing.T) {
	t.Parallel()
	repo, mem := setup(t, notes)
	_, err := run.New(context.Background(), &run.Options{Agent: testAgent, Repository: repo, Connector: mem.connector()})
	if err == nil || !strings.Contains(err.Error(), "set Options.Permission") {
		t.Fatalf("New without Permission: got %v, want the error that names Options.Permission", err)
	}
	if _, err := run.New(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "set Options.Permission") {
		t.Fatalf("New(nil): got %v, want the error that names Options.Permission", err)
	}
}

// SPEC R5.5: host tool schemas are compiled at registration.
func TestNewRefusesBadHostTools(t *testing.T) {
	t.Parallel()
	repo, mem := setup(t)
	handler := func(context.Context, run.Request) (run.Result, error) { return run.Result{}, nil }
	tests := []struct {
		name string
		tool run.HostTool
	}{
		{"bad schema", run.HostTool{Name: "x", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":7}}}`), Handler: handler}},
		{"non-object root", run.HostTool{Name: "x", Schema: json.RawMessage(`{"type":"string"}`), Handler: handler}},
		{"no schema", run.HostTool{Name: "x", Handler: handler}},
		{"no handler", run.HostTool{Name: "x", Schema: json.RawMessage(`{"type":"object"}`)}},
		{"alias prefix", run.HostTool{Name: "mcp__notes__echo", Schema: json.RawMessage(`{"type":"object"}`), Handler: handler}},
		{"bad name", run.HostTool{Name: "a b", Schema: json.RawMessage(`{"type":"object"}`), Handler: handler}},
	}
	for _, tt := range tests {
		_, err := run.New(context.Background(), &run.Options{Agent: testAgent, Repository: repo, Connector: mem.connector(),
			Permission: policy.AutoAllow(), HostTools: []run.HostTool{tt.tool}})
		if err == nil {
			t.Errorf("%s: New succeeded, want an error", tt.name)
		}
	}
}

// SPEC R5.2: batch checks -> validate -> permission -> before -> execute ->
// after, with the first interceptor outermost; SPEC R5.3: an invalid call
// reaches neither the permission nor the interceptors nor the server.
func TestStageOrder(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		rec := &recorder{}
		perm := permissionFunc(func(ctx context.Context, req run.Request) (run.Decision, error) {
			rec.add("permission " + req.CallID)
			return run.Decision{Verdict: run.Allow, By: "test"}, nil
		})
		outer := interceptorFunc(func(ctx context.Context, req run.Request, next func(context.Context) run.Result) (run.Result, error) {
			rec.add("outer.before " + req.CallID)
			res := next(ctx)
			rec.add("outer.after " + req.CallID)
			return res, nil
		})
		before := run.Before(func(ctx context.Context, req run.Request) (context.Context, error) {
			rec.add(fmt.Sprintf("before %s (server calls so far %d)", req.CallID, mem.counters.Calls()))
			return ctx, nil
		})
		after := run.After(func(ctx context.Context, req run.Request, res run.Result) run.Result {
			rec.add(fmt.Sprintf("after %s (server calls so far %d)", req.CallID, mem.counters.Calls()))
			return res
		})
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Permission: perm,
			Interceptors: []run.Interceptor{outer, before, after}})

		out, err := r.Execute(context.Background(), batch(call("bad", echo, `{"text":7}`)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]run.Code{run.CodeInvalidArguments}, codes(out)); diff != "" {
			t.Errorf("invalid call codes (-want +got):\n%s", diff)
		}
		if got := rec.get(); len(got) != 0 {
			t.Errorf("an invalid call reached later stages: %q", got)
		}
		if n := mem.counters.Calls(); n != 0 {
			t.Errorf("server got %d calls for an invalid call, want 0", n)
		}

		out, err = r.Execute(context.Background(), batch(call("ok", echo, `{"text":"hi"}`)))
		if err != nil || out.Results[0].Failed() {
			t.Fatalf("valid call: %v %+v", err, out.Results)
		}
		want := []string{
			"permission ok",
			"outer.before ok",
			"before ok (server calls so far 0)",
			"after ok (server calls so far 1)",
			"outer.after ok",
		}
		if diff := cmp.Diff(want, rec.get()); diff != "" {
			t.Errorf("stage order (-want +got):\n%s", diff)
		}
	})
}

// SPEC R5.3, R5.4: a mixed batch; argument errors and denials do not stop
// the other calls; results keep call order and IDs.
func TestMixedBatch(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		audit := &auditLog{}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Auditor: audit,
			Permission: policy.Rules{Deny: []string{"mcp__notes__note_*"}, Allow: []string{"mcp__notes__*"}}})
		out, err := r.Execute(context.Background(), batch(
			call("c1", echo, `{"text":"one"}`),
			call("c2", search, `{"query":"x","limit":0}`),
			call("c3", delNote, `{"id":"n1","caller":"bob"}`),
			call("c4", search, `{"query":"x","limit":5}`),
			call("c5", search, `[1,2]`),
		))
		if err != nil {
			t.Fatal(err)
		}
		want := []run.Code{"", run.CodeInvalidArguments, run.CodePermissionDenied, "", run.CodeInvalidArguments}
		if diff := cmp.Diff(want, codes(out)); diff != "" {
			t.Errorf("codes (-want +got):\n%s", diff)
		}
		for i, res := range out.Results {
			if wantID := fmt.Sprintf("c%d", i+1); res.CallID != wantID {
				t.Errorf("result %d has call ID %q, want %q", i, res.CallID, wantID)
			}
		}
		if diff := cmp.Diff([]toolschema.Violation{{Path: "/limit", SchemaPath: "#/properties/limit/minimum", Message: out.Results[1].Violations[0].Message}}, out.Results[1].Violations); diff != "" {
			t.Errorf("violations (-want +got):\n%s", diff)
		}
		if got := mem.counters.Calls(); got != 2 {
			t.Errorf("server calls = %d, want 2 (only the valid, allowed ones)", got)
		}
		// The audit: one record per call, with the stage reached.
		stages := map[string]string{}
		for _, rec := range audit.records("call") {
			stages[rec.CallID] = rec.Stage
		}
		wantStages := map[string]string{"c1": "execute", "c2": "validate", "c3": "permission", "c4": "execute", "c5": "validate"}
		if diff := cmp.Diff(wantStages, stages); diff != "" {
			t.Errorf("audited stages (-want +got):\n%s", diff)
		}
	})
}

// SPEC R5.4: batch-level errors reject the whole batch and nothing runs.
func TestBatchRejections(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		authorizeCalls := 0
		delegate := run.HostTool{
			Name:   "delegate",
			Schema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}}}`),
			Handler: func(context.Context, run.Request) (run.Result, error) {
				return run.Result{}, errors.New("must not run")
			},
			Authorize: func(ctx context.Context, req run.Request) error {
				authorizeCalls++
				if strings.Contains(string(req.Arguments), "root") {
					return errorf(run.CodeUnauthorized, "this agent may not delegate to that agent")
				}
				return nil
			},
		}
		audit := &auditLog{}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{delegate}, Auditor: audit})
		ok := call("ok", echo, `{"text":"x"}`)
		tests := []struct {
			name   string
			batch  run.Batch
			code   run.Code
			callID string
		}{
			{"unknown tool", batch(ok, call("u", "mcp__other__echo", `{}`)), run.CodeUnknownTool, "u"},
			{"duplicate IDs", batch(ok, call("ok", echo, `{"text":"y"}`)), run.CodeInvalidArguments, "ok"},
			{"empty ID", batch(ok, call("", echo, `{}`)), run.CodeInvalidArguments, ""},
			{"no calls", batch(), run.CodeInvalidArguments, ""},
			{"wrong agent", run.Batch{ID: "b", Agent: "intruder", Calls: []run.Call{ok}}, run.CodeUnauthorized, ""},
			{"delegation refused", batch(ok, call("d", "delegate", `{"to":"root"}`)), run.CodeUnauthorized, "d"},
		}
		for _, tt := range tests {
			out, err := r.Execute(context.Background(), tt.batch)
			var be *run.BatchError
			if !errors.As(err, &be) || !errors.As(err, new(*run.BatchError)) {
				t.Errorf("%s: err = %v, want a *BatchError", tt.name, err)
				continue
			}
			if be.Code != tt.code || be.CallID != tt.callID {
				t.Errorf("%s: got code %q call %q, want %q %q", tt.name, be.Code, be.CallID, tt.code, tt.callID)
			}
			if len(out.Results) != len(tt.batch.Calls) {
				t.Errorf("%s: %d results for %d calls", tt.name, len(out.Results), len(tt.batch.Calls))
			}
			for _, res := range out.Results {
				if res.Code != tt.code {
					t.Errorf("%s: result %q has code %q, want %q", tt.name, res.CallID, res.Code, tt.code)
				}
			}
		}
		if n := mem.counters.Calls(); n != 0 {
			t.Errorf("server got %d calls from rejected batches, want 0", n)
		}
		if authorizeCalls != 1 {
			t.Errorf("Authorize ran %d times, want 1", authorizeCalls)
		}
		for _, rec := range audit.records("call") {
			if rec.Stage != "batch" {
				t.Errorf("audit record of a rejected batch has stage %q", rec.Stage)
			}
		}
	})
}

// SPEC R5.3 over stdio: the server's own call log proves invalid calls never
// reached it.
func TestInvalidCallsNeverReachServerStdio(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		logFile := filepath.Join(t.TempDir(), "calls.log")
		putMCP(t, repo, notes, stdioServerEra(t, e, "-call-log", logFile))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{notes}})
		r := newRun(t, &run.Options{Repository: repo})
		out, err := r.Execute(context.Background(), batch(
			call("a", search, `{"query":"x","limit":101}`),
			call("b", search, `{"query":"","limit":5}`),
			call("c", search, `{"query":"x","limit":5,"extra":1}`),
			call("d", echo, `{"text":"fine"}`),
			call("e", echo, `not json`),
		))
		if err != nil {
			t.Fatal(err)
		}
		want := []run.Code{run.CodeInvalidArguments, run.CodeInvalidArguments, run.CodeInvalidArguments, "", run.CodeInvalidArguments}
		if diff := cmp.Diff(want, codes(out)); diff != "" {
			t.Errorf("codes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{mcptest.ToolEcho}, readLines(t, logFile)); diff != "" {
			t.Errorf("calls the server received (-want +got):\n%s", diff)
		}
	})
}

// MCP results: isError is tool_error; content and structured content are
// kept as JSON; the ToolError format is the contract of DESIGN.md.
func TestResultMapping(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})
		out, err := r.Execute(context.Background(), batch(
			call("create", run.Alias(notes, mcptest.ToolNoteCreate), `{"owner":"alice","title":"t"}`),
			call("echo", echo, `{"text":"hello"}`),
		))
		if err != nil {
			t.Fatal(err)
		}
		if out.Results[0].Failed() || len(out.Results[0].Structured) == 0 {
			t.Fatalf("note_create: %+v", out.Results[0])
		}
		var created mcptest.NoteCreateOut
		if err := json.Unmarshal(out.Results[0].Structured, &created); err != nil {
			t.Fatal(err)
		}
		var blocks []map[string]any
		if err := json.Unmarshal(out.Results[1].Content, &blocks); err != nil || len(blocks) != 1 || blocks[0]["text"] != "hello" {
			t.Errorf("echo content = %s (%v), want one text block", out.Results[1].Content, err)
		}

		// SPEC R1.4: a schema-valid call refused by the server's own rules.
		out, err = r.Execute(context.Background(), batch(call("del", delNote, `{"id":"`+created.ID+`","caller":"mallory"}`)))
		if err != nil {
			t.Fatal(err)
		}
		res := out.Results[0]
		if res.Code != run.CodeToolError || res.Message == "" {
			t.Fatalf("business refusal: got %+v, want tool_error with the server's text", res)
		}
		var te struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(res.ToolError(), &te); err != nil || te.Error.Code != "tool_error" || te.Error.Message != res.Message {
			t.Errorf("ToolError() = %s (%v)", res.ToolError(), err)
		}
	})
}

// The ToolError wire format (DESIGN.md contract).
func TestToolErrorFormat(t *testing.T) {
	t.Parallel()
	res := run.Result{CallID: "c", Code: run.CodeInvalidArguments, Message: "m",
		Violations: []toolschema.Violation{{Path: "/limit", SchemaPath: "#/properties/limit/minimum", Message: "must be >= 1"}}}
	want := `{"error":{"code":"invalid_arguments","message":"m","violations":[{"path":"/limit","schema_path":"#/properties/limit/minimum","message":"must be >= 1"}]}}`
	if got := string(res.ToolError()); got != want {
		t.Errorf("ToolError:\n got %s\nwant %s", got, want)
	}
	if got := string(run.Result{Code: run.CodeUnavailable, Message: "gone"}.ToolError()); got != `{"error":{"code":"unavailable","message":"gone"}}` {
		t.Errorf("ToolError without violations: %s", got)
	}
	if (run.Result{}).ToolError() != nil {
		t.Error("a successful Result has a ToolError")
	}
}

func TestCodeOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want run.Code
	}{
		{nil, ""},
		{errorf(run.CodeConflict, "x"), run.CodeConflict},
		{fmt.Errorf("wrapped: %w", errorf(run.CodeNotFound, "x")), run.CodeNotFound},
		{&run.Error{Code: "bogus"}, run.CodeInternal},
		{&run.BatchError{Code: run.CodeUnknownTool}, run.CodeUnknownTool},
		{context.DeadlineExceeded, run.CodeDeadlineExceeded},
		{fmt.Errorf("x: %w", context.Canceled), run.CodeCanceled},
		{resource.ErrNotFound, run.CodeNotFound},
		{&resource.ConflictError{}, run.CodeConflict},
		{resource.ErrExists, run.CodeConflict},
		{resource.ErrPermission, run.CodeUnauthorized},
		{errors.New("boom"), run.CodeInternal},
	}
	for _, tt := range tests {
		if got := run.CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// The per-call timeout (tool_timeout_ms) gives deadline_exceeded and the
// server sees the call cancelled; a cancelled context gives canceled.
func TestTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e)
		srv := inMemoryServer(t)
		srv.ToolTimeoutMS = 3000 // also bounds tools/list: keep it roomy for a loaded machine
		putMCP(t, repo, notes, srv)
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{notes}})
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})

		out, err := r.Execute(context.Background(), batch(call("slow", sleep, `{"ms":60000}`), call("fast", echo, `{"text":"x"}`)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]run.Code{run.CodeDeadlineExceeded, ""}, codes(out)); diff != "" {
			t.Errorf("timeout codes (-want +got):\n%s", diff)
		}
		// The server saw the timed-out call cancelled, not left running.
		poll.Until(t, "the server to see the timed-out call cancelled", func() bool { return mem.counters.Cancelled() > 0 })

		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		go func() {
			<-started
			cancel()
		}()
		signal := run.Before(func(ctx context.Context, req run.Request) (context.Context, error) { close(started); return ctx, nil })
		r2 := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), Interceptors: []run.Interceptor{signal}})
		out, err = r2.Execute(ctx, batch(call("c", sleep, `{"ms":60000}`)))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Execute with a cancelled context: err = %v, want context.Canceled", err)
		}
		if diff := cmp.Diff([]run.Code{run.CodeCanceled}, codes(out)); diff != "" {
			t.Errorf("cancel codes (-want +got):\n%s", diff)
		}
	})
}

// A server crash mid-batch: its calls are unavailable, the other server's
// results are intact.
func TestServerCrashMidBatch(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		crashy, healthy := resource.Ref("crashy"), resource.Ref("healthy")
		repo := crashyAndOther(t, e, crashy, healthy)
		r := newRun(t, &run.Options{Repository: repo, Limits: &run.Limits{MaxConcurrency: 1}})
		out, err := r.Execute(context.Background(), batch(
			call("h1", run.Alias(healthy, mcptest.ToolEcho), `{"text":"before"}`),
			call("boom", run.Alias(crashy, mcptest.ToolCrash), `{}`),
			call("after", run.Alias(crashy, mcptest.ToolEcho), `{"text":"x"}`),
			call("h2", run.Alias(healthy, mcptest.ToolEcho), `{"text":"after"}`),
		))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]run.Code{"", run.CodeUnavailable, run.CodeUnavailable, ""}, codes(out)); diff != "" {
			t.Errorf("codes (-want +got):\n%s\n%+v", diff, out.Results)
		}
	})
}

// SPEC R7.3: aliases do not depend on mount order.
func TestAliasesStableWhenMountsReordered(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		a, b := resource.Ref("team/a"), resource.Ref("b")
		repo, mem := setupEra(t, e, a, b)
		r1 := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{b, a}})
		r2 := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})
		if diff := cmp.Diff(r1.Tools(), r2.Tools()); diff != "" {
			t.Errorf("tools differ after reordering mounts (-first +second):\n%s", diff)
		}
		if r1.Fingerprint() != r2.Fingerprint() {
			t.Error("fingerprint depends on mount order")
		}
		for _, ti := range r1.Tools() {
			if ti.Name != run.Alias(ti.Source.Ref, ti.Source.Tool) {
				t.Errorf("tool %q is not Alias(%q, %q)", ti.Name, ti.Source.Ref, ti.Source.Tool)
			}
		}
	})
}

// A tool whose schema fails to compile is left out with a reason; the rest
// load. A mount that fails is reported per mount; FailOnMountError makes it
// fatal.
func TestBadToolsAndMountsAreReported(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		bad, dead, missing := resource.Ref("bad"), resource.Ref("dead"), resource.Ref("missing")
		putMCP(t, repo, bad, stdioServerEra(t, e, "-fault", "invalid-schema,root-string,external-ref"))
		putMCP(t, repo, dead, stdioServerEra(t, e, "-fault", string(mcptest.FaultExitAtStart)))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{bad, dead, missing}})
		r := newRun(t, &run.Options{Repository: repo})

		var skipped []string
		for _, s := range r.SkippedTools() {
			skipped = append(skipped, s.Source.Tool)
			if s.Err == nil {
				t.Errorf("skipped tool %s has no reason", s.Alias)
			}
		}
		if diff := cmp.Diff([]string{"bad_external_ref", "bad_invalid_schema", "bad_root_string"}, skipped); diff != "" {
			t.Errorf("skipped tools (-want +got):\n%s", diff)
		}
		if len(r.Tools()) == 0 {
			t.Error("the good tools of the bad server did not load")
		}
		failed := map[resource.Ref]error{}
		for _, me := range r.MountErrors() {
			failed[me.Ref] = me.Err
		}
		if len(failed) != 2 || failed[dead] == nil || !errors.Is(failed[missing], resource.ErrNotFound) {
			t.Errorf("mount errors = %v, want dead (start failure) and missing (not found)", r.MountErrors())
		}

		_, err := run.New(context.Background(), &run.Options{Agent: testAgent, Repository: repo, Permission: policy.AutoAllow(), FailOnMountError: true})
		if !errors.As(err, new(run.MountError)) {
			t.Errorf("FailOnMountError: err = %v, want ErrMountFailed", err)
		}
	})
}

// -race with 64 concurrent calls; results stay in call order.
func TestSixtyFourConcurrentCalls(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		audit := &auditLog{}
		r := newRun(t, &run.Options{
			Repository:   repo,
			Connector:    mem.connector(),
			Auditor:      audit,
			Interceptors: []run.Interceptor{run.Before(func(context.Context, run.Request) (context.Context, error) { return nil, nil })},
			Limits:       &run.Limits{MaxConcurrency: 64},
		})
		var calls []run.Call
		for i := range 64 {
			args := fmt.Sprintf(`{"text":"%d"}`, i)
			if i%8 == 7 {
				args = `{"text":1}`
			}
			calls = append(calls, call(fmt.Sprintf("c%02d", i), echo, args))
		}
		out, err := r.Execute(context.Background(), batch(calls...))
		if err != nil {
			t.Fatal(err)
		}
		for i, res := range out.Results {
			if i%8 == 7 {
				if res.Code != run.CodeInvalidArguments {
					t.Errorf("call %d: code %q, want invalid_arguments", i, res.Code)
				}
				continue
			}
			var blocks []struct{ Text string }
			if err := json.Unmarshal(res.Content, &blocks); err != nil || len(blocks) != 1 || blocks[0].Text != fmt.Sprint(i) {
				t.Errorf("call %d: content %s, want its own echo", i, res.Content)
			}
		}
		if n := len(audit.records("call")); n != 64 {
			t.Errorf("%d audit records, want 64", n)
		}
	})
}

// Close ends the server processes; later Execute calls fail with ErrClosed.
func TestCloseEndsProcesses(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		putMCP(t, repo, notes, stdioServerEra(t, e, "-fault", string(mcptest.FaultSpawnChild)))
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{notes}})
		r, err := run.New(context.Background(), &run.Options{Agent: testAgent, Repository: repo, Permission: policy.AutoAllow()})
		if err != nil {
			t.Fatal(err)
		}
		env := serverEnv(t, r, notes)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if !processGone(env.PID) {
			t.Errorf("server process %d still runs after Close", env.PID)
		}
		// The fault spawned a grandchild in the server's group: it must be gone
		// too.
		if !groupGone(env.PGID) {
			t.Errorf("process group %d still has members after Close", env.PGID)
		}
		if _, err := r.Execute(context.Background(), batch(call("x", echo, `{"text":"x"}`))); !errors.Is(err, run.ErrClosed) {
			t.Errorf("Execute after Close: %v, want ErrClosed", err)
		}
	})
}

// Mounts start in parallel: every Dial of ten mounts waits until all ten
// are in flight at once, which a sequential start would never reach.
func TestMountsStartInParallel(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo := newRepo(t)
		var refs []resource.Ref
		for i := range 10 {
			ref := resource.Ref(fmt.Sprintf("m%d", i))
			refs = append(refs, ref)
			putMCP(t, repo, ref, inMemoryServer(t))
		}
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: refs})
		var mu sync.Mutex
		inFlight := 0
		all := make(chan struct{})
		dial := mcptest.Dial(&mcptest.ServerOptions{Era: e})
		conn := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error) {
			mu.Lock()
			inFlight++
			if inFlight == len(refs) {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
				return dial(ctx, ref, srv)
			case <-ctx.Done():
				return nil, errors.New("the other mounts never started: starts are sequential")
			}
		}})
		r := newRun(t, &run.Options{Repository: repo, Connector: conn, FailOnMountError: true})
		if got := len(r.Tools()); got == 0 {
			t.Error("no tools")
		}
	})
}

// SPEC R3.5: a disabled agent gets no Run; disabling it at a boundary keeps
// the old snapshot and says why. Oversized batches are rejected.
func TestDisabledAgentAndBatchBounds(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		disabled := false
		r := newRun(t, &run.Options{
			Repository: repo,
			Connector:  mem.connector(),
			HostTools: []run.HostTool{{
				Name: "disable_me", Schema: json.RawMessage(`{"type":"object"}`),
				Handler: func(ctx context.Context, req run.Request) (run.Result, error) {
					key := resource.Key{Kind: resource.KindAgent, Ref: req.Agent}
					doc := resource.AgentDocument{Enabled: &disabled, MCPs: []resource.Ref{notes}}
					data, _ := json.Marshal(doc)
					if _, err := repo.Update(ctx, key, data, resource.AnyRevision); err != nil {
						return run.Result{}, err
					}
					return run.Result{Changed: []resource.Key{key}}, nil
				},
			}},
			Limits: &run.Limits{MaxBatchCalls: 2},
		})
		_, err := r.Execute(context.Background(), batch(call("a", echo, `{"text":"1"}`), call("b", echo, `{"text":"2"}`), call("c", echo, `{"text":"3"}`)))
		var be *run.BatchError
		if !errors.As(err, &be) || be.Code != run.CodeInvalidArguments {
			t.Errorf("a batch over MaxBatchCalls: %v", err)
		}
		out, err := r.Execute(context.Background(), batch(call("d", "disable_me", `{}`)))
		if err != nil || out.Refresh == nil || out.Refresh.OK || !errors.Is(out.Refresh.Err, run.ErrAgentDisabled) {
			t.Fatalf("disabling at the boundary: %v %+v", err, out.Refresh)
		}
		if !hasTool(r, echo) {
			t.Error("the failed refresh dropped the old tools")
		}
		_, err = run.New(context.Background(), &run.Options{Agent: testAgent, Repository: repo, Connector: mem.connector(), Permission: policy.AutoAllow()})
		if !errors.Is(err, run.ErrAgentDisabled) {
			t.Errorf("New for a disabled agent: %v, want ErrAgentDisabled", err)
		}
	})
}

// A host tool's Precheck sees the arguments before the schema: its refusal
// is the call's answer (code, message, violations), even for an argument
// the closed schema would refuse with a generic message; nothing after it
// runs. A Precheck that passes leaves the schema to judge, and a panicking
// one fails only its call.
func TestHostToolPrecheck(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e)
		var handled, checked sync.Map
		tool := run.HostTool{Name: "closed",
			Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
			Precheck: func(args json.RawMessage) error {
				var m map[string]any
				_ = json.Unmarshal(args, &m)
				if _, ok := m["panic"]; ok {
					panic("precheck bug")
				}
				if _, ok := m["old"]; ok {
					return &run.Error{Code: run.CodeInvalidArguments, Message: "old was removed; leave it out",
						Violations: []toolschema.Violation{{Path: "/old", Message: "removed"}}}
				}
				return nil
			},
			Handler: func(_ context.Context, req run.Request) (run.Result, error) {
				handled.Store(req.CallID, true)
				return run.Result{}, nil
			}}
		perm := permissionFunc(func(_ context.Context, req run.Request) (run.Decision, error) {
			checked.Store(req.CallID, true)
			return run.Decision{Verdict: run.Allow, By: "test"}, nil
		})
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{tool}, Permission: perm})
		out, err := r.Execute(context.Background(), batch(
			call("old", "closed", `{"n":1,"old":true}`),
			call("other", "closed", `{"n":1,"other":true}`),
			call("ok", "closed", `{"n":1}`),
			call("panic", "closed", `{"panic":1}`),
		))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]run.Code{run.CodeInvalidArguments, run.CodeInvalidArguments, "", run.CodeInternal}, codes(out)); diff != "" {
			t.Fatalf("codes (-want +got):\n%s", diff)
		}
		if got := out.Results[0]; got.Message != "old was removed; leave it out" || len(got.Violations) != 1 || got.Violations[0].Path != "/old" {
			t.Errorf("the Precheck's refusal: %q %+v; want its own message and violation", got.Message, got.Violations)
		}
		if strings.Contains(out.Results[1].Message, "removed") {
			t.Errorf("the schema's refusal of another property carries the Precheck's message: %q", out.Results[1].Message)
		}
		for _, id := range []string{"old", "other", "panic"} {
			if _, ok := handled.Load(id); ok {
				t.Errorf("call %s was handled", id)
			}
			if _, ok := checked.Load(id); ok {
				t.Errorf("call %s reached the Permission", id)
			}
		}
		if _, ok := handled.Load("ok"); !ok {
			t.Error("the valid call was not handled")
		}
	})
}
