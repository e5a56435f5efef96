package run

import (
	"context"
	"log/slog"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// The audit events (Record.Event) and the stages of a call
// (Record.Stage): plain strings, the values an Auditor writes out. The
// table of both lists is docs/audit.md (TestAuditDocs checks it against
// these).
const (
	eventCall          = "call"
	eventRefresh       = "refresh"
	eventServerRequest = "server_request"
	eventServerLost    = "server_lost"

	stageBatch      = "batch"
	stageQueued     = "queued"
	stageValidate   = "validate"
	stagePermission = "permission"
	stageIntercept  = "intercept"
	stageExecute    = "execute"
)

// Record is one audit entry. It never holds an argument value of agt's
// making; a server's stderr tail in Message is the server's own text, and a
// server may echo an earlier call's argument there: treat Message as the
// servers' logs.
type Record struct {
	// Event says what the record is about (the table: docs/audit.md):
	//   - "call": one call of a batch, rejected batches included;
	//   - "refresh": a refresh at a batch boundary, done or failed
	//     (Refresh);
	//   - "server_request": a request a mounted server sent to the Run
	//     (elicitation, sampling, roots), answered or refused: Request,
	//     Outcome, the call (or CallIDs), never a value;
	//   - "server_lost": the connection of a mount found lost (its
	//     process exited, the remote server dropped the session), once per
	//     lost connection, at the batch boundary where the Run sees it:
	//     Source names the mount, Code is unavailable, and Shared,
	//     Charged, Losses and Restarts say how. A shared server's crash is
	//     one such record in every Run on it.
	Event string
	// Time is when the call (or refresh, or server request) started.
	Time time.Time
	// Agent is the Run's agent.
	Agent resource.Ref
	// RunID is Options.RunID.
	RunID string
	// BatchID is the batch's ID.
	BatchID string
	// CallID, Alias and Source identify the call ("call"; and
	// "server_request" when one call of the server was in flight, else
	// Source names only the server).
	CallID string
	Alias  string
	Source Source
	// CallIDs lists the calls of the server in flight when a server
	// request arrived, when there were several ("server_request").
	CallIDs []string
	// Request is the MCP method a server sent ("server_request"):
	// mcpconn.MethodElicit, MethodCreateMessage or MethodListRoots.
	Request string
	// Outcome is how a server request ended ("server_request"):
	// accepted, declined, cancelled, error or refused.
	Outcome mcpconn.RequestOutcome
	// Stage is the last stage the call entered ("call"), in pipeline
	// order: "batch" (the batch was rejected at the batch checks),
	// "queued" (the context ended before the call started), "validate",
	// "permission", "intercept" (the interceptors before execute),
	// "execute" (the tool was called).
	Stage string
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
	// Refresh is the report of a refresh ("refresh": the mounts it
	// added, removed, replaced, restarted, re-listed, and Failures); nil
	// otherwise. Shared with the batch's Outcome: do not modify.
	Refresh *RefreshReport
	// Shared, Charged, Losses and Restarts say how a mount's connection
	// was lost ("server_lost"); zero otherwise. Shared: the mount is a
	// lease on a shared server (its crash is every Run's on it).
	// Charged: the loss counts against this Run's
	// Options.Limits.MaxRestarts: always for a server that is not shared;
	// for a shared one, when calls of this Run were in flight when it was
	// lost (they failed as unavailable); a shared server lost to other
	// Runs' calls, or to none, is restarted without counting. Losses is
	// how many times in a row the server's connection was lost: for a
	// shared server, all Runs on it together, so a count that keeps
	// rising is a crash loop that every Run on it shares (a host may stop
	// sharing the registration); 1 for a server that is not shared (its
	// Run's restarts bound it). Restarts is how many restarts of the
	// mount were charged to this Run before this loss.
	Shared, Charged  bool
	Losses, Restarts int
	// Panic is the value and stack (bounded to 16 KiB) of a host callback
	// that panicked during the call: the Permission, an interceptor, a
	// host tool's Handler. Empty otherwise. It is for operators: the
	// model's Result only says that a callback panicked.
	Panic string
}

// Auditor receives one Record per call and one per refresh, and one per
// server request and lost connection. Audit is called from the goroutine
// that ran the call, so implementations must be safe for concurrent use
// and should be quick. The context is the one given to Execute (or the
// one Options.WrapExecute passed on), for calls, refreshes and losses; for a "server_request" it is the
// context the one call in flight that the request belongs to was sent
// with (the interceptors' values, such as a trace span, without its
// deadline), and context.Background() when the request came with no call
// or several in flight. A panic in Audit loses that record; its value and
// stack go to Options.Logger.
type Auditor interface {
	Audit(ctx context.Context, rec Record)
}

// slogAuditor writes Records to a slog.Logger.
type slogAuditor struct {
	logger *slog.Logger
}

// NewSlogAuditor returns an Auditor that writes each Record to l (nil
// means slog.Default()) as one line, "agt." and the event: calls at Info
// (failed ones at Warn), refreshes at Info (failed ones at Warn), server
// requests at Info (those whose handler failed, OutcomeError, at Warn),
// lost connections at Warn.
func NewSlogAuditor(l *slog.Logger) Auditor {
	if l == nil {
		l = slog.Default()
	}
	return &slogAuditor{logger: l}
}

// Audit implements Auditor.
func (a *slogAuditor) Audit(ctx context.Context, rec Record) {
	level := slog.LevelInfo
	if rec.Code != "" || rec.Message != "" && rec.Event == eventRefresh || rec.Outcome == mcpconn.OutcomeError || rec.Event == eventServerLost {
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
	if rec.Event == eventServerRequest {
		attrs = append(attrs,
			slog.String("request", rec.Request),
			slog.String("outcome", string(rec.Outcome)),
			slog.String("source", rec.Source.String()))
		if rec.CallID != "" {
			attrs = append(attrs, slog.String("call_id", rec.CallID), slog.String("alias", rec.Alias))
		}
		if len(rec.CallIDs) > 0 {
			attrs = append(attrs, slog.Any("call_ids", rec.CallIDs))
		}
	}
	if rec.Event == eventServerLost {
		attrs = append(attrs, slog.String("source", rec.Source.String()), slog.Bool("shared", rec.Shared), slog.Bool("charged", rec.Charged),
			slog.Int("losses", rec.Losses), slog.Int("restarts", rec.Restarts))
	}
	if rec.Event == eventCall {
		attrs = append(attrs,
			slog.String("call_id", rec.CallID),
			slog.String("alias", rec.Alias),
			slog.String("source", rec.Source.String()),
			slog.String("stage", rec.Stage),
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
	if d := rec.Refresh; d != nil {
		for _, l := range []struct {
			name string
			refs []resource.Ref
		}{{"added", d.Added}, {"removed", d.Removed}, {"replaced", d.Replaced}, {"restarted", d.Restarted}, {"relisted", d.Relisted}, {"failed", d.failed()}} {
			if len(l.refs) > 0 {
				attrs = append(attrs, slog.Any(l.name, l.refs))
			}
		}
	}
	if rec.Panic != "" {
		attrs = append(attrs, slog.String("panic", rec.Panic))
	}
	attrs = append(attrs, slog.Duration("duration", rec.Duration))
	a.logger.LogAttrs(ctx, level, "agt."+rec.Event, attrs...)
}
