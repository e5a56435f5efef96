package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agtsdk/agt/internal/taskcall"
	"github.com/agtsdk/agt/internal/text"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Execute runs one batch:
//
//  1. batch checks: structure, non-empty unique call IDs, the batch's agent,
//     every name in the snapshot, delegation (HostTool.Authorize). Any
//     failure returns a *BatchError and nothing runs; the Outcome then holds
//     one failed Result per call so the host can answer every tool_call_id.
//  2. per call, concurrently up to Options.Limits.MaxConcurrency, results in call
//     order: validate -> Permission -> interceptors -> execute. A failed
//     call never stops the others.
//  3. one audit Record per call.
//  4. the batch boundary: when a successful call reported a change to this
//     agent's document or to a mounted MCP resource, refresh (see
//     RefreshReport) before returning.
//
// The Outcome holds one Result per call, in call order, whatever the
// error. What the error means (*BatchError: send the Results and go on;
// any other: stop) is in the package documentation, A model loop.
//
// Options.WrapExecute, when set, wraps all of it.
func (r *Run) Execute(ctx context.Context, b Batch) (Outcome, error) {
	if r.wrapExecute == nil {
		return r.executeAll(ctx, b)
	}
	// The wrapper's execute runs the batch at most once (a second call,
	// concurrent or not, and a call after the wrapper returned run
	// nothing), and Execute returns the Outcome the batch had, however the
	// wrapper ended, so the model still gets an answer to every call.
	const idle, taken, ended = 0, 1, 2
	var (
		state int32
		done  = make(chan struct{})
		out   Outcome
		err   error
	)
	werr := func() error {
		_, werr := r.wrapExecute(ctx, b, func(ctx context.Context) (Outcome, error) {
			if !atomic.CompareAndSwapInt32(&state, idle, taken) {
				return failedOutcome(b, CodeInternal, "Options.WrapExecute called execute again, or after it returned; the calls were not run again"), errWrappedTwice
			}
			defer close(done)
			out, err = r.executeAll(ctx, b)
			return out, err
		})
		return werr
	}()
	if atomic.CompareAndSwapInt32(&state, idle, ended) {
		if werr == nil {
			werr = errNotWrapped
		}
		return failedOutcome(b, CodeInternal, "Options.WrapExecute did not run the batch"), werr
	}
	<-done // a wrapper that returned before its execute did
	if werr != nil {
		return out, werr
	}
	return out, err
}

// errWrappedTwice is what a WrapExecute that calls execute a second time
// gets: the Run sends no call twice.
var errWrappedTwice error = &Error{Code: CodeInternal, Message: "run: Options.WrapExecute called execute twice, or after it returned; set it to call execute once, before it returns"}

// errNotWrapped is Execute's error when a WrapExecute returned no error
// without running the batch: the host must learn its calls did not run.
var errNotWrapped error = &Error{Code: CodeInternal, Message: "run: Options.WrapExecute returned without calling execute; set it to call execute once"}

func (r *Run) executeAll(ctx context.Context, b Batch) (Outcome, error) {
	if r.closed.Load() {
		return failedOutcome(b, CodeUnavailable, "the run is closed; the call was not run"), ErrClosed
	}
	var restart *RefreshReport
	r.auditLosses(ctx, b.ID, r.snap.Load())
	if r.restartDue(r.snap.Load()) {
		// A server died between batches: restart it before this batch
		// rather than fail its calls (no call is ever sent twice).
		restart = r.refresh(ctx, b.ID, restartOnly)
	}
	s := r.acquire()
	if r.closed.Load() { // closed while we waited for the snapshot
		r.release(s)
		return failedOutcome(b, CodeUnavailable, "the run is closed; the call was not run"), ErrClosed
	}
	out, kind, refresh, err := r.executeBatch(ctx, s, b)
	r.release(s)
	out.Refresh = restart
	if err != nil {
		return out, err
	}
	if refresh {
		out.Refresh = mergeReports(restart, r.refresh(ctx, b.ID, kind))
		if n := out.Refresh.Notice; n != "" {
			// The model learns of a failed refresh from the write that
			// caused it, even from a host that does not relay the Notice.
			for i := range out.Results {
				if res := &out.Results[i]; !res.Failed() && (len(res.Changed) > 0 || len(res.Written) > 0) {
					res.Notice = n
				}
			}
		}
	}
	return out, ctx.Err()
}

// failedOutcome answers every call of a batch that did not run (the Run
// is closed, or a WrapExecute did not run it), so the host can still
// answer each tool_call_id.
func failedOutcome(b Batch, code Code, msg string) Outcome {
	out := Outcome{BatchID: b.ID, Results: make([]Result, len(b.Calls))}
	for i, c := range b.Calls {
		out.Results[i] = Result{CallID: c.ID, Name: c.Name, Code: code, Message: msg}
	}
	return out
}

func (r *Run) executeBatch(ctx context.Context, s *snapshot, b Batch) (Outcome, refreshKind, bool, error) {
	out := Outcome{BatchID: b.ID}
	tools, berr := r.checkBatch(ctx, s, b)
	if berr != nil {
		r.reject(ctx, s, b, berr, &out)
		return out, 0, false, berr
	}
	out.Results = make([]Result, len(b.Calls))
	if len(b.Calls) == 1 || r.maxConc == 1 {
		for i := range b.Calls {
			out.Results[i] = r.runCall(ctx, b, i, tools[i])
		}
	} else {
		sem := make(chan struct{}, r.maxConc)
		var wg sync.WaitGroup
		for i := range b.Calls {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				out.Results[i] = r.runCall(ctx, b, i, tools[i])
			}()
		}
		wg.Wait()
	}
	r.auditLosses(ctx, b.ID, s)
	kind, refresh := r.needsRefresh(s, out.Results)
	return out, kind, refresh, nil
}

// checkBatch runs the batch checks and returns each call's tool.
func (r *Run) checkBatch(ctx context.Context, s *snapshot, b Batch) ([]*tool, *BatchError) {
	n := len(b.Calls)
	switch {
	case n == 0:
		return nil, &BatchError{Code: CodeInvalidArguments, Message: "the batch has no calls"}
	case n > r.maxCalls:
		return nil, &BatchError{Code: CodeInvalidArguments, Message: fmt.Sprintf("the batch has %d calls; the limit is %d", n, r.maxCalls)}
	case b.Agent != r.agent:
		return nil, &BatchError{Code: CodeUnauthorized, Message: "the batch's agent is not this Run's agent"}
	}
	var ids map[string]struct{}
	if n > 8 {
		ids = make(map[string]struct{}, n)
	}
	tools := make([]*tool, n)
	for i, c := range b.Calls {
		if c.ID == "" {
			return nil, &BatchError{Code: CodeInvalidArguments, Message: fmt.Sprintf("call %d has an empty ID", i)}
		}
		if len(c.ID) > maxCallIDLen {
			return nil, &BatchError{Code: CodeInvalidArguments, Message: fmt.Sprintf("call %d has an ID longer than %d bytes", i, maxCallIDLen)}
		}
		dup := false
		if ids != nil {
			_, dup = ids[c.ID]
			ids[c.ID] = struct{}{}
		} else {
			for _, o := range b.Calls[:i] {
				dup = dup || o.ID == c.ID
			}
		}
		if dup {
			return nil, &BatchError{Code: CodeInvalidArguments, CallID: c.ID, Message: "the call ID is used twice in the batch"}
		}
		t := s.byAlias[c.Name]
		if t == nil {
			if why := r.notOffered(s, c.Name); why != "" {
				return nil, &BatchError{Code: CodeUnknownTool, CallID: c.ID, Message: why + "; the batch was not run", NotOffered: true}
			}
			return nil, &BatchError{Code: CodeUnknownTool, CallID: c.ID, Message: fmt.Sprintf("no tool named %s in this run; the batch was not run", quoteID(c.Name))}
		}
		tools[i] = t
	}
	for i, t := range tools {
		if t.host == nil || t.host.Authorize == nil {
			continue
		}
		if err := r.authorize(ctx, t.host, r.request(b, i, t)); err != nil {
			msg := "delegation check failed"
			var re *Error
			if errors.As(err, &re) && re.Message != "" {
				msg = re.Message
			}
			return nil, &BatchError{Code: CodeUnauthorized, CallID: b.Calls[i].ID, Message: msg + "; the batch was not run"}
		}
	}
	return tools, nil
}

// notOffered says why alias, which names no tool of s, is not offered
// when it is the alias of a tool a mounted server listed: the
// registration excluded it, or the Run left it out (SkippedTools). It is
// "" for any other name. Only a rejected batch pays for the search.
func (r *Run) notOffered(s *snapshot, alias string) string {
	for _, sk := range s.skipped {
		if sk.Alias == alias {
			return fmt.Sprintf("the tool %s was left out of this run: %s", quoteID(alias), boundMessage(r.modelText(sk.Err)))
		}
	}
	for _, ref := range s.refs {
		m := s.mounts[ref]
		if m == nil {
			continue
		}
		for _, name := range m.excluded {
			if Alias(ref, name) == alias {
				return fmt.Sprintf("the tool %s is excluded by its server's registration (enabled_tools/disabled_tools)", quoteID(alias))
			}
		}
	}
	return ""
}

// errAuthorizePanicked fails a delegation check that panicked: a host
// callback's bug must neither end the host nor let the batch through.
var errAuthorizePanicked = errors.New("the delegation check failed (it panicked)")

func (r *Run) authorize(ctx context.Context, ht *compiledHostTool, req Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked(ctx, "the delegation check (HostTool.Authorize) of "+ht.Name+" panicked", p)
			err = errAuthorizePanicked
		}
	}()
	return ht.Authorize(ctx, req)
}

// reject fills the Outcome and the audit for a rejected batch.
func (r *Run) reject(ctx context.Context, s *snapshot, b Batch, be *BatchError, out *Outcome) {
	now := time.Now()
	out.Results = make([]Result, len(b.Calls))
	for i, c := range b.Calls {
		out.Results[i] = Result{CallID: c.ID, Name: c.Name, Code: be.Code, Message: be.Message}
		if r.auditor != nil {
			// The batch may have been rejected for these very values:
			// bound them, they come from the model.
			rec := Record{Event: eventCall, Time: now, Agent: r.agent, RunID: r.runID, BatchID: b.ID, CallID: boundField(c.ID), Alias: boundField(c.Name), Stage: stageBatch, Code: be.Code, Message: be.Message}
			if t := s.byAlias[c.Name]; t != nil {
				rec.Source = t.info.Source
			}
			r.audit(ctx, rec)
		}
	}
}

// boundField cuts a model-chosen ID or name for the audit of a rejected
// batch, never inside a UTF-8 sequence.
func boundField(s string) string { return text.Bound(s, maxCallIDLen) }

func (r *Run) request(b Batch, i int, t *tool) Request {
	c := b.Calls[i]
	args := c.Arguments
	if len(args) == 0 {
		// A fresh one each time: a stage writing into its view must not
		// change the next call's.
		args = json.RawMessage("{}")
	}
	return Request{
		BatchID:     b.ID,
		CallID:      c.ID,
		Agent:       r.agent,
		RunID:       r.runID,
		Alias:       c.Name,
		Source:      t.info.Source,
		Description: t.info.Description,
		Annotations: t.annotations,
		Arguments:   args,
	}
}

// callState is what runCall learns of one call on its way through the
// stages.
type callState struct {
	stage string
	dec   Decision
	panic string // a host callback's panic value and stack, for the audit
	// next guards the tool: nextIdle until the interceptor chain calls
	// next, nextTaken once it did (the tool runs once), nextClosed once the
	// chain returned without calling it.
	next atomic.Int32
	// serverError is the whole error of an MCP call whose server is not
	// connected, the stderr tail included, for the audit; nil if none.
	// Atomic: an interceptor may run next on another goroutine.
	serverError atomic.Pointer[string]
}

const (
	nextIdle int32 = iota
	nextTaken
	nextClosed
)

// reached is the last stage the call entered.
func (cs *callState) reached() string {
	if cs.stage == stageIntercept && cs.next.Load() == nextTaken {
		return stageExecute
	}
	return cs.stage
}

// runCall takes one call through validate -> permission -> interceptors ->
// execute and audits it.
func (r *Run) runCall(ctx context.Context, b Batch, i int, t *tool) Result {
	start := time.Now()
	req := r.request(b, i, t)
	cs := &callState{stage: stageQueued}
	res := r.stages(ctx, req, t, cs).withBlocks() // an interceptor may have replaced Content
	res.CallID, res.Name = req.CallID, req.Alias
	if res.Failed() {
		res.Changed = nil
	}
	if r.auditor != nil {
		rec := Record{
			Event: eventCall, Time: start, Agent: r.agent, RunID: r.runID, BatchID: b.ID,
			CallID: req.CallID, Alias: req.Alias, Source: req.Source,
			Stage: cs.reached(), Decision: cs.dec, Code: res.Code, Duration: time.Since(start),
			Panic: cs.panic,
		}
		if msg := cs.serverError.Load(); msg != nil && res.Failed() {
			rec.Message = *msg
		}
		if len(res.Violations) > 0 {
			rec.ViolationPaths = make([]string, len(res.Violations))
			for k, v := range res.Violations {
				rec.ViolationPaths[k] = v.Path
			}
		}
		r.audit(ctx, rec)
	}
	return res
}

// audit hands rec to the Auditor. A panicking Auditor loses its record but,
// like any host callback, never ends the host.
func (r *Run) audit(ctx context.Context, rec Record) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked(ctx, "the Auditor panicked; a "+rec.Event+" record is lost", p)
		}
	}()
	r.auditor.Audit(ctx, rec)
}

// maxPanicText bounds the panic value and stack kept for the audit and
// the log.
const maxPanicText = 16 << 10

// panicked logs a host callback's panic with its value and stack to
// Options.Logger, and returns them for the audit. Neither ever reaches
// the model: the call's Result only says that a callback panicked.
func (r *Run) panicked(ctx context.Context, what string, p any) string {
	report := text.Bound(fmt.Sprintf("%v\n%s", p, debug.Stack()), maxPanicText)
	r.logger.ErrorContext(ctx, "agt.panic", slog.String("agent", string(r.agent)), slog.String("what", what), slog.String("panic", report))
	return report
}

// stages runs validate -> permission -> interceptors -> execute, recording
// the stage reached and the decision in cs. A panic in a host callback
// fails only its call (CodeInternal), as a panicking handler must not end
// the host.
//
// The Run validates and executes its own copy of the arguments:
// req.Arguments, which the Permission and the interceptors see, is only
// their view, so nothing they do to it changes what the tool receives.
func (r *Run) stages(ctx context.Context, req Request, t *tool, cs *callState) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			cs.panic = r.panicked(ctx, "a callback panicked at the "+string(cs.reached())+" stage", p)
			res = Result{Code: CodeInternal, Message: "internal error: a callback panicked at the " + string(cs.reached()) + " stage"}
		}
	}()
	if err := ctx.Err(); err != nil {
		return r.failure(err)
	}
	cs.stage = stageValidate
	args := bytes.Clone(req.Arguments)
	if t.host != nil && t.host.Precheck != nil {
		if err := t.host.Precheck(bytes.Clone(args)); err != nil {
			return r.failure(err)
		}
	}
	// A context that ends during validation fails the call with
	// deadline_exceeded or canceled (the bare context error), not
	// invalid_arguments.
	if err := t.schema.ValidateContext(ctx, args); err != nil {
		return r.failure(err)
	}
	cs.stage = stagePermission
	d, err := r.permission.Check(ctx, req)
	if err != nil && d.Verdict == Allow {
		d.Verdict = Deny // a failed check never allows, nor is audited as allowing
	}
	cs.dec = d
	if err != nil {
		res = r.failure(err)
		if res.Code == CodeInternal {
			res.Message = "the permission check failed: " + res.Message
		}
		return res
	}
	if d.Verdict != Allow {
		return denied(d)
	}
	cs.stage = stageIntercept
	return r.intercept(ctx, req, args, t, cs)
}

func denied(d Decision) Result {
	msg := "the call was not allowed"
	if d.Verdict != Deny {
		msg = "no permission policy allowed the call"
	}
	if d.By != "" {
		msg += " (by " + d.By + ")"
	}
	if d.Reason != "" {
		msg += ": " + d.Reason
	}
	return Result{Code: CodePermissionDenied, Message: boundMessage(msg)}
}

// errNextMisused fails a second call of next, or one made after the
// interceptor returned: the Permission allowed one execution.
var errNextMisused = &Error{Code: CodeInternal, Message: "an interceptor called next twice, or after it returned; the tool runs at most once per call"}

// intercept runs the interceptor chain around execute. The tool runs at
// most once, and only while the chain is running.
func (r *Run) intercept(ctx context.Context, req Request, args json.RawMessage, t *tool, cs *callState) Result {
	defer cs.next.CompareAndSwap(nextIdle, nextClosed)
	var next func(context.Context) Result = func(ctx context.Context) Result {
		if !cs.next.CompareAndSwap(nextIdle, nextTaken) {
			return r.failure(errNextMisused)
		}
		return r.execute(ctx, req, args, t, cs)
	}
	for k := len(r.chain) - 1; k >= 0; k-- {
		ic, inner := r.chain[k], next
		next = func(ctx context.Context) Result {
			res, err := ic.Intercept(ctx, req, inner)
			if err != nil {
				return r.failure(err)
			}
			return res
		}
	}
	return next(ctx)
}

// execute routes an allowed call, with the validated arguments, to its
// host tool or MCP session.
func (r *Run) execute(ctx context.Context, req Request, args json.RawMessage, t *tool, cs *callState) Result {
	if t.host != nil {
		req.Arguments = args
		res, err := t.host.Handler(ctx, req)
		if err != nil {
			return r.failure(err)
		}
		if res.Code != "" && !res.Code.Valid() {
			res.Code = CodeInternal
		}
		return res.withBlocks()
	}
	// The tag ties what the server sends during the call to it.
	tag := &callTag{req: req, ctx: ctx}
	cctx := mcpconn.WithCallTag(ctx, tag)
	task := r.tasks.call(ctx, t.mount, t.info.Source.Tool, req.CallID)
	if task != nil {
		cctx = taskcall.With(cctx, task.tc)
	}
	cr, err := t.mount.session.CallTool(cctx, t.info.Source.Tool, args)
	r.tasks.done(ctx, task, req.CallID, err, r.closed.Load(), r.logger)
	if err != nil {
		res := r.mcpFailure(t.mount.ref, err)
		if res.Code == CodeUnavailable && !r.closed.Load() {
			// A call whose response stream broke in the modern era
			// leaves its session alive (mcpconn's words say whether the
			// call may have run): nothing to restart.
			if t.mount.session.Lost() {
				t.mount.dead.Store(true)
				res.Message = boundMessage(res.Message + "; " + r.restartHint(t.mount.ref))
			}
			// mcpconn's own words, the exit status and the stderr tail; no
			// answer of the server, which may quote the arguments.
			msg := err.Error()
			cs.serverError.Store(&msg)
		}
		return res
	}
	return mcpResult(cr)
}

func (r *Run) mcpFailure(ref resource.Ref, err error) Result {
	var rpc *jsonrpc.Error
	code := CodeOf(err)
	switch {
	case code == CodeUnavailable:
		return Result{Code: code, Message: "the MCP server " + string(ref) + " is not connected: " + boundMessage(r.modelText(err))}
	case code == CodeInternal && errors.As(err, &rpc):
		return Result{Code: CodeToolError, Message: boundMessage(fmt.Sprintf("the MCP server answered with error %d: %s", rpc.Code, rpc.Message))}
	case errors.Is(err, mcpconn.ErrBadResult), errors.Is(err, mcpconn.ErrURLElicitationRequired), errors.Is(err, mcpconn.ErrInputRequired):
		// The server's answer is unusable, or says the user must act
		// first (mcpconn's words say whether calling again may succeed;
		// the URLs went to Options.ClientFeatures.Elicit, for the user, never to the
		// model), or asked for input that could not be given (refused,
		// or too many rounds: mcpconn's words say which); the
		// connection is fine.
		return Result{Code: CodeToolError, Message: boundMessage(r.modelText(err))}
	}
	return r.failure(err)
}
