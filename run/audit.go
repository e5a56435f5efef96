package run

import (
	"context"
	"log/slog"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// Event says what an audit Record is about.
type Event string

// The audit events.
const (
	// EventCall is one call of a batch, rejected batches included.
	EventCall Event = "call"
	// EventRefresh is a refresh at a batch boundary, done or failed.
	EventRefresh Event = "refresh"
	// EventServerRequest is a request a mounted server sent to the Run
	// (elicitation, sampling, roots), answered or refused: Request,
	// Outcome, the call (or CallIDs), never a value.
	EventServerRequest Event = "server_request"
	// EventServerLost is the connection of a mount found lost (its
	// process exited, the remote server dropped the session), once per
	// lost connection, at the batch boundary where the Run sees it:
	// Source names the mount, Code is unavailable, Loss says whether the
	// server is shared, whether the loss is charged to the Run, and how
	// many times in a row it was lost. A shared server's crash is one
	// such record in every Run on it.
	EventServerLost Event = "server_lost"
)

// Stage is how far a call got in the pipeline.
type Stage string

// The stages, in pipeline order.
const (
	// StageBatch: the batch was rejected at the batch checks.
	StageBatch Stage = "batch"
	// StageQueued: the context ended before the call started.
	StageQueued Stage = "queued"
	// StageValidate: parsing and schema validation.
	StageValidate Stage = "validate"
	// StagePermission: the Permission check.
	StagePermission Stage = "permission"
	// StageIntercept: the interceptors before execute.
	StageIntercept Stage = "intercept"
	// StageExecute: the tool was called.
	StageExecute Stage = "execute"
)

// Record is one audit entry. It never holds an argument value of agt's
// making; a server's stderr tail in Message is the server's own text, and a
// server may echo an earlier call's argument there: treat Message as the
// servers' logs.
type Record struct {
	// Event is EventCall, EventRefresh, EventServerRequest or
	// EventServerLost.
	Event Event
	// Time is when the call (or refresh, or server request) started.
	Time time.Time
	// Agent is the Run's agent.
	Agent resource.Ref
	// RunID is Options.RunID.
	RunID string
	// BatchID is the batch's ID.
	BatchID string
	// CallID, Alias and Source identify the call (EventCall; and
	// EventServerRequest when one call of the server was in flight, else
	// Source names only the server).
	CallID string
	Alias  string
	Source Source
	// CallIDs lists the calls of the server in flight when a server
	// request arrived, when there were several (EventServerRequest).
	CallIDs []string
	// Request is what a server asked (EventServerRequest).
	Request ServerRequestKind
	// Outcome is how a server request ended (EventServerRequest):
	// accepted, declined, cancelled, error or refused.
	Outcome mcpconn.RequestOutcome
	// Stage is the last stage the call entered.
	Stage Stage
	// Decision is the permission decision; zero when the call did not reach
	// the Permission.
	Decision Decision
	// Code is the call's failure code, empty on success.
	Code Code
	// Duration is how long the call (or refresh) took.
	Duration time.Duration
	// ViolationPaths are the argument paths that failed validation.
	ViolationPaths []string
	// Message is, for a refused or failed server request, why, in agt's
	// words; for a rejected batch, the rejection message; for a call
	// that failed as unavailable (its MCP server died or the connection was
	// lost), the whole error, with the server's stderr tail; for a failed
	// refresh, "configuration saved, but load failed: " and the error with
	// the servers' output (stderr tails, a non-JSON stdout line). The text
	// the model reads leaves that output out unless
	// Options.ServerStderrToModel. Empty otherwise.
	Message string
	// Diff is what a refresh changed (EventRefresh); nil for calls.
	Diff *RefreshDiff
	// Loss is how a mount's connection was lost (EventServerLost); nil
	// otherwise.
	Loss *ServerLoss
	// Panic is the value and stack (bounded to 16 KiB) of a host callback
	// that panicked during the call: the Permission, an interceptor, a
	// host tool's Handler. Empty otherwise. It is for operators: the
	// model's Result only says that a callback panicked.
	Panic string
}

// RefreshDiff lists the mounts a refresh connected (Added), closed
// (Removed), reconnected because their resource changed (Replaced) or
// because their connection was lost (Restarted), and those that failed to
// load or restart (Failed).
type RefreshDiff struct {
	Added, Removed, Replaced, Restarted, Failed []resource.Ref
	// Relisted lists the mounts whose tools were listed again on their
	// live connection because their server said they changed.
	Relisted []resource.Ref
}

// ServerLoss says how a mount's connection was lost (EventServerLost).
type ServerLoss struct {
	// Shared: the mount is a lease on a shared server (its crash is
	// every Run's on it).
	Shared bool
	// Charged: the loss counts against this Run's Options.Limits.MaxRestarts:
	// always for a server that is not shared; for a shared one, when
	// calls of this Run were in flight when it was lost (they failed as
	// unavailable). A shared server lost to other Runs' calls, or to
	// none, is restarted without counting.
	Charged bool
	// Losses is how many times in a row the server's connection was
	// lost (mcpconn.Loss.Count): for a shared server, all Runs on it
	// together, so a count that keeps rising is a crash loop that every
	// Run on it shares (a host may stop sharing the registration); 1
	// for a server that is not shared (its Run's restarts bound it).
	Losses int
	// Restarts is how many restarts of the mount were charged to this Run
	// before this loss (Options.Limits.MaxRestarts bounds them).
	Restarts int
}

// Auditor receives one Record per call and one per refresh, and one per
// server request and lost connection. Audit is called from the goroutine
// that ran the call, so implementations must be safe for concurrent use
// and should be quick. The context is the one given to Execute, for
// calls, refreshes and losses; for an EventServerRequest it is the
// context the one call in flight that the request belongs to was sent
// with (the interceptors' values, such as a trace span, without its
// deadline), and context.Background() when the request came with no call
// or several in flight. A panic in Audit loses that record; its value and
// stack go to Options.Logger.
type Auditor interface {
	Audit(ctx context.Context, rec Record)
}

// SlogAuditor writes Records to a slog.Logger: calls at Info (failed ones at
// Warn) and refreshes at Info (failed ones at Warn).
type SlogAuditor struct {
	logger *slog.Logger
}

var _ Auditor = (*SlogAuditor)(nil)

// NewSlogAuditor returns an Auditor that logs to l; nil means slog.Default().
func NewSlogAuditor(l *slog.Logger) *SlogAuditor {
	if l == nil {
		l = slog.Default()
	}
	return &SlogAuditor{logger: l}
}

// Audit implements Auditor.
func (a *SlogAuditor) Audit(ctx context.Context, rec Record) {
	level := slog.LevelInfo
	if rec.Code != "" || rec.Message != "" && rec.Event == EventRefresh || rec.Outcome == mcpconn.OutcomeError || rec.Event == EventServerLost {
		level = slog.LevelWarn
	}
	if !a.logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("agent", string(rec.Agent)),
		slog.String("batch_id", rec.BatchID),
	)
	if rec.RunID != "" {
		attrs = append(attrs, slog.String("run_id", rec.RunID))
	}
	if rec.Event == EventServerRequest {
		attrs = append(attrs,
			slog.String("request", string(rec.Request)),
			slog.String("outcome", string(rec.Outcome)),
			slog.String("source", rec.Source.String()))
		if rec.CallID != "" {
			attrs = append(attrs, slog.String("call_id", rec.CallID), slog.String("alias", rec.Alias))
		}
		if len(rec.CallIDs) > 0 {
			attrs = append(attrs, slog.Any("call_ids", rec.CallIDs))
		}
	}
	if l := rec.Loss; l != nil {
		attrs = append(attrs, slog.String("source", rec.Source.String()), slog.Bool("shared", l.Shared), slog.Bool("charged", l.Charged),
			slog.Int("losses", l.Losses), slog.Int("restarts", l.Restarts))
	}
	if rec.Event == EventCall {
		attrs = append(attrs,
			slog.String("call_id", rec.CallID),
			slog.String("alias", rec.Alias),
			slog.String("source", rec.Source.String()),
			slog.String("stage", string(rec.Stage)),
		)
		if rec.Decision.Verdict != "" || rec.Decision.By != "" {
			attrs = append(attrs, slog.Group("decision",
				slog.String("verdict", string(rec.Decision.Verdict)),
				slog.String("by", rec.Decision.By),
				slog.String("reason", rec.Decision.Reason)))
		}
	}
	if rec.Code != "" {
		attrs = append(attrs, slog.String("code", string(rec.Code)))
	}
	if len(rec.ViolationPaths) > 0 {
		attrs = append(attrs, slog.Any("violation_paths", rec.ViolationPaths))
	}
	if rec.Message != "" {
		attrs = append(attrs, slog.String("message", rec.Message))
	}
	if d := rec.Diff; d != nil {
		for _, l := range []struct {
			name string
			refs []resource.Ref
		}{{"added", d.Added}, {"removed", d.Removed}, {"replaced", d.Replaced}, {"restarted", d.Restarted}, {"relisted", d.Relisted}, {"failed", d.Failed}} {
			if len(l.refs) > 0 {
				attrs = append(attrs, slog.Any(l.name, l.refs))
			}
		}
	}
	if rec.Panic != "" {
		attrs = append(attrs, slog.String("panic", rec.Panic))
	}
	attrs = append(attrs, slog.Duration("duration", rec.Duration))
	a.logger.LogAttrs(ctx, level, "agt."+string(rec.Event), attrs...)
}
