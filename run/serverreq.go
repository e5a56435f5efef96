//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; agt still answers them from legacy servers, and a modern server asks for them inside input_required results

package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agtsdk/agt/internal/serverlog"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Origin says where a request or notification that a mounted server sent
// on its own comes from.
type Origin struct {
	// Mount is the server's reference.
	Mount resource.Ref
	// Calls are the Run's calls to that server in flight when it arrived,
	// in the order they started; nil when none was. One call is
	// unambiguous; with several, it may belong to any of them (a server
	// does not say which). A progress notification names its call
	// exactly: Calls then holds that call only. Shared with the call: do
	// not modify.
	Calls []Request
}

// Call returns the call the message belongs to when exactly one call of
// the mount was in flight.
func (o Origin) Call() (Request, bool) {
	if len(o.Calls) != 1 {
		return Request{}, false
	}
	return o.Calls[0], true
}

// Notification is a notification a mounted server sent, for
// Options.ClientFeatures.Observe. The server's text in it is bounded (mcpconn's
// ConnectorOptions.Limits.MaxNotificationBytes) but not checked: it is the
// server's, like its stderr.
//
// Exactly one of Progress, Log, Task and ToolsChanged is set: it says
// what the notification is.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
type Notification struct {
	// From is the server and the calls in flight.
	From Origin
	// Progress is a call's progress (notifications/progress).
	Progress *mcp.ProgressNotificationParams
	// Log is a server's log line (notifications/message).
	Log *mcp.LoggingMessageParams
	// Task is a new status of the task a server runs for a call (an MCP
	// task), as the call's polls find it.
	Task *mcpconn.TaskStatus
	// ToolsChanged: the server said its tools changed
	// (notifications/tools/list_changed); the Run lists them again at
	// the next batch boundary.
	ToolsChanged bool
}

// kind names n for a log line.
func (n Notification) kind() string {
	switch {
	case n.Progress != nil:
		return "progress"
	case n.Log != nil:
		return "log"
	case n.Task != nil:
		return "task"
	}
	return "tools_changed"
}

// callTag is what a Run's MCP call carries to mcpconn (WithCallTag): its
// context, and the sampling requests charged to it.
type callTag struct {
	req Request
	// ctx is the context the call was sent with (the interceptors'
	// values, a trace span): the audit of a request of this call alone
	// carries it, without its deadline.
	ctx     context.Context
	samples atomic.Int32
}

// serverHooks is the Run's side of what its mounted servers send on
// their own: the host's handlers, the roots, the audit, the log.
type serverHooks struct {
	r          *Run
	elicit     func(ctx context.Context, from Origin, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	sample     func(ctx context.Context, from Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	observe    func(ctx context.Context, n Notification)
	logLevel   mcp.LoggingLevel // ClientFeatures.LogLevel, "info" for ""
	maxSamples int32
	// roots is nil when the Run declares no roots.
	roots atomic.Pointer[[]*mcp.Root]
	// declared: ClientFeatures.Roots was non-nil.
	rootsDeclared bool
}

// newServerHooks are the hooks of Options.ClientFeatures cf (nil: none),
// with maxSamples the resolved Limits.MaxSamplingPerCall.
func newServerHooks(r *Run, cf *ClientFeatures, maxSamples int32) (*serverHooks, error) {
	var f ClientFeatures
	if cf != nil {
		f = *cf
	}
	h := &serverHooks{r: r, elicit: f.Elicit, sample: f.Sample, observe: f.Observe, logLevel: cmp.Or(f.LogLevel, "info"), maxSamples: maxSamples}
	if !serverlog.Known(h.logLevel) {
		return nil, fmt.Errorf("run: Options.ClientFeatures.LogLevel %s is not a log level: set one of debug, info, notice, warning, error, critical, alert, emergency, or leave it empty for info", quoteID(string(h.logLevel)))
	}
	if f.Roots != nil {
		roots, err := checkRoots(f.Roots)
		if err != nil {
			return nil, fmt.Errorf("run: Options.ClientFeatures.Roots: %w", err)
		}
		h.rootsDeclared = true
		h.roots.Store(&roots)
	}
	return h, nil
}

// maxRoots bounds the roots a host may give.
const maxRoots = 1024

// checkRoots copies roots after checking them: each non-nil, with a
// file:// URI (the protocol's rule).
func checkRoots(roots []*mcp.Root) ([]*mcp.Root, error) {
	if len(roots) > maxRoots {
		return nil, fmt.Errorf("%d roots; the limit is %d", len(roots), maxRoots)
	}
	out := make([]*mcp.Root, len(roots))
	for i, r := range roots {
		if r == nil {
			return nil, fmt.Errorf("root %d is nil", i)
		}
		if !strings.HasPrefix(r.URI, "file://") {
			return nil, fmt.Errorf("root %d: a root's URI must start with file://", i)
		}
		c := *r
		out[i] = &c
	}
	return out, nil
}

// handlers returns the mcpconn handlers of one mount's session.
func (h *serverHooks) handlers(ref resource.Ref) *mcpconn.Handlers {
	lg := &serverlog.Gate{}
	hs := &mcpconn.Handlers{
		Served: func(in mcpconn.Incoming, rep mcpconn.ServedRequest) { h.audit(ref, in, rep) },
		Progress: func(ctx context.Context, in mcpconn.Incoming, p *mcp.ProgressNotificationParams) {
			from := origin(ref, in)
			if lg.Pass() {
				h.r.logger.LogAttrs(ctx, slog.LevelDebug, "agt.server_progress", append(h.logAttrs(from, lg),
					slog.Float64("progress", p.Progress), slog.Float64("total", p.Total), slog.String("message", p.Message))...)
			}
			h.notify(ctx, Notification{From: from, Progress: p})
		},
		Log: func(ctx context.Context, in mcpconn.Incoming, p *mcp.LoggingMessageParams) {
			from := origin(ref, in)
			if lg.Pass() {
				h.r.logger.LogAttrs(ctx, serverlog.Level(p.Level), "agt.server_log", append(h.logAttrs(from, lg),
					slog.String("server_level", string(p.Level)), slog.String("logger", p.Logger), serverlog.Data(p))...)
			}
			h.notify(ctx, Notification{From: from, Log: p})
		},
		LogLevel: h.logLevel,
		ToolsChanged: func(ctx context.Context, in mcpconn.Incoming) {
			h.notify(ctx, Notification{From: origin(ref, in), ToolsChanged: true})
		},
		TaskStatus: func(ctx context.Context, in mcpconn.Incoming, st mcpconn.TaskStatus) {
			from := origin(ref, in)
			if lg.Pass() {
				h.r.logger.LogAttrs(ctx, slog.LevelDebug, "agt.server_task", append(h.logAttrs(from, lg),
					slog.String("status", st.Status), slog.String("message", st.Message))...)
			}
			h.notify(ctx, Notification{From: from, Task: &st})
		},
	}
	if h.elicit != nil {
		hs.Elicit = func(ctx context.Context, in mcpconn.Incoming, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			defer h.logPanic(ctx, "Options.ClientFeatures.Elicit")
			res, err := h.elicit(ctx, origin(ref, in), p)
			h.logFailure(ctx, "Options.ClientFeatures.Elicit", ref, err)
			return res, err
		}
	}
	if h.sample != nil {
		hs.CreateMessage = func(ctx context.Context, in mcpconn.Incoming, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			if err := h.chargeSampling(in); err != nil {
				return nil, err
			}
			defer h.logPanic(ctx, "Options.ClientFeatures.Sample")
			res, err := h.sample(ctx, origin(ref, in), p)
			h.logFailure(ctx, "Options.ClientFeatures.Sample", ref, err)
			return res, err
		}
	}
	if h.rootsDeclared {
		hs.Roots = func(context.Context, mcpconn.Incoming) ([]*mcp.Root, error) {
			return slices.Clone(*h.roots.Load()), nil
		}
	}
	return hs
}

// chargeSampling counts a sampling request against every call in
// flight: a request is billed to a call, so one with none in flight, or
// with a call whose budget is spent, is refused.
func (h *serverHooks) chargeSampling(in mcpconn.Incoming) error {
	if len(in.Calls) == 0 {
		return &mcpconn.RefusedError{Reason: "sampling is answered only during a tool call"}
	}
	var charged []*callTag
	for _, t := range in.Calls {
		ct, ok := t.(*callTag)
		if !ok {
			continue
		}
		if ct.samples.Add(1) > h.maxSamples {
			for _, c := range append(charged, ct) {
				c.samples.Add(-1)
			}
			return &mcpconn.RefusedError{Reason: fmt.Sprintf("the call has used its %d sampling requests (run.Options.Limits.MaxSamplingPerCall)", h.maxSamples)}
		}
		charged = append(charged, ct)
	}
	return nil
}

// logFailure logs the error of a host handler that failed rather than
// refused (a model API that answered 429, a lost connection) to
// Options.Logger: the server reads only that the client could not
// answer, and the host would otherwise never learn why.
func (h *serverHooks) logFailure(ctx context.Context, what string, ref resource.Ref, err error) {
	if err == nil || errors.Is(err, mcpconn.ErrRefused) || ctx.Err() != nil {
		return
	}
	h.r.logger.LogAttrs(ctx, slog.LevelWarn, "agt.server_request_failed",
		slog.String("handler", what), slog.String("server", string(ref)), slog.Any("error", err))
}

// logPanic logs a host handler's panic with its stack to Options.Logger
// and panics on: mcpconn fails the request (OutcomeError).
func (h *serverHooks) logPanic(ctx context.Context, what string) {
	if p := recover(); p != nil {
		h.r.panicked(ctx, what+" panicked; the server's request failed", p)
		panic(p)
	}
}

// notify hands n to Options.ClientFeatures.Observe; a panic loses only n.
func (h *serverHooks) notify(ctx context.Context, n Notification) {
	if h.observe == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			h.r.panicked(ctx, "Options.ClientFeatures.Observe panicked; a "+n.kind()+" notification is lost", p)
		}
	}()
	h.observe(ctx, n)
}

func origin(ref resource.Ref, in mcpconn.Incoming) Origin {
	o := Origin{Mount: ref}
	for _, t := range in.Calls {
		if ct, ok := t.(*callTag); ok {
			o.Calls = append(o.Calls, ct.req)
		}
	}
	return o
}

func (h *serverHooks) logAttrs(from Origin, lg *serverlog.Gate) []slog.Attr {
	attrs := []slog.Attr{slog.String("agent", string(h.r.agent)), slog.String("mount", string(from.Mount))}
	if h.r.runID != "" {
		attrs = append(attrs, slog.String("run_id", h.r.runID))
	}
	if c, ok := from.Call(); ok {
		attrs = append(attrs, slog.String("batch_id", c.BatchID), slog.String("call_id", c.CallID), slog.String("alias", c.Alias))
	} else if len(from.Calls) > 1 {
		ids := make([]string, len(from.Calls))
		for i, c := range from.Calls {
			ids[i] = c.CallID
		}
		attrs = append(attrs, slog.Any("call_ids", ids))
	}
	if n := lg.TakeDropped(); n > 0 {
		attrs = append(attrs, slog.Int64("dropped_before", n))
	}
	return attrs
}

// audit records one request a mounted server sent: its kind, the call,
// the outcome; never a value.
func (h *serverHooks) audit(ref resource.Ref, in mcpconn.Incoming, rep mcpconn.ServedRequest) {
	if h.r.auditor == nil {
		return
	}
	from := origin(ref, in)
	actx := context.Background()
	if len(in.Calls) == 1 {
		if ct, ok := in.Calls[0].(*callTag); ok && ct.ctx != nil {
			actx = context.WithoutCancel(ct.ctx)
		}
	}
	rec := Record{Event: eventServerRequest, Time: time.Now().Add(-rep.Duration), Agent: h.r.agent, RunID: h.r.runID,
		Source: Source{Kind: SourceMCP, Ref: ref}, Request: rep.Method, Outcome: rep.Outcome, Message: rep.Reason, Duration: rep.Duration}
	if c, ok := from.Call(); ok {
		rec.BatchID, rec.CallID, rec.Alias, rec.Source = c.BatchID, c.CallID, c.Alias, c.Source
	} else {
		for _, c := range from.Calls {
			rec.CallIDs = append(rec.CallIDs, c.CallID)
		}
	}
	h.r.audit(actx, rec)
}

// errNoRoots: SetRoots on a Run whose Options.ClientFeatures.Roots was nil (no roots
// capability was declared to its servers).
var errNoRoots = errors.New("run: the Run declares no roots: set Options.ClientFeatures.Roots (an empty non-nil slice declares none yet)")

// SetRoots replaces the roots the Run's servers get (roots/list), and
// sends notifications/roots/list_changed to every mounted server. The
// Run must have declared roots (Options.ClientFeatures.Roots non-nil; else an error).
// Each root needs a file:// URI. A server that cannot be told (its
// connection is gone) gets the new roots when it next asks.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
func (r *Run) SetRoots(roots []*mcp.Root) error {
	if !r.hooks.rootsDeclared {
		return errNoRoots
	}
	if r.closed.Load() {
		return ErrClosed
	}
	checked, err := checkRoots(roots)
	if err != nil {
		return fmt.Errorf("run: SetRoots: %w", err)
	}
	r.hooks.roots.Store(&checked)
	s := r.acquire()
	defer r.release(s)
	for _, ref := range s.refs {
		if m := s.mounts[ref]; m != nil {
			_ = m.session.NotifyRootsChanged() // a lost session asks again after its restart
		}
	}
	return nil
}
