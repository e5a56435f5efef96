package mcpconn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A request lost on the way (issue 25 item 6): in the modern era a
// streamable HTTP response stream that breaks loses its request for good
// (no session, no Last-Event-ID), while the session itself is fine (the
// next request is a new POST). What CallTool then does is in Protocol
// eras in the package doc.

// callLoss is how a call's request was lost.
type callLoss int

const (
	lossNone callLoss = iota
	// lossNotSent: the POST failed before the whole request was written
	// (refused, reset, DNS): the server cannot have run it.
	lossNotSent
	// lossUnanswered: the request was sent and its response stream
	// ended without the answer: the tool may or may not have run.
	lossUnanswered
)

// lostCall judges a failed request of the call: a loss in the modern era
// over streamable HTTP, or lossNone for every other failure (which keeps
// its own error: the caller, a bound, the session's close or end, an
// answer of the server's, the legacy era's resumption).
func (s *Session) lostCall(ctx, cctx context.Context, call *inflightCall, err error) callLoss {
	if err == nil || s.transport != "http" || !modernVersion(s.protocolVersion) ||
		ctx.Err() != nil || cctx.Err() != nil || s.closed.Load() || s.guard.breach() != nil || s.dropped.Load() ||
		call.answer() != nil || call.refusal() != nil {
		return lossNone
	}
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire) && rejectedByTransport(wire):
		if call.sent.Load() {
			return lossUnanswered
		}
		return lossNotSent
	case unanswered(err):
		return lossUnanswered
	}
	return lossNone
}

// unanswered reports the go-sdk's error for a request whose response
// stream ended without its answer and without an event id to resume it
// by (its processStream). The go-sdk does not export it: the message is
// the contract.
func unanswered(err error) bool {
	return strings.Contains(err.Error(), "request terminated without response")
}

// mayReissue reports whether a lost request of the tool name may be sent
// again: one that never left cannot have run; one that was sent only for
// a tool whose listing (the session's last, Session.Tools) marks it
// readOnlyHint or idempotentHint, so that running it twice has the
// effect of running it once. The hints are the server's word, not a
// guarantee: a server that marks a tool with side effects read-only
// gets it run twice (Protocol eras in the package doc).
func (s *Session) mayReissue(name string, loss callLoss) bool {
	return loss == lossNotSent || (loss == lossUnanswered && s.hints.safe(name))
}

// lostCallError is the error of a call whose request was lost, after
// the one re-issue it may have had (again).
func (s *Session) lostCallError(name string, loss callLoss, again bool, err error) error {
	op := callOp(name)
	if loss == lossNotSent {
		// Twice refused on the way: the server cannot be reached.
		detail := "the request could not be sent to the server, so it did not run"
		if again {
			detail = "the request could not be sent to the server, twice, so it did not run; it may be sent again once the server is back"
		}
		e := s.deadError(op, err).(*Error)
		e.Detail = detail
		return e
	}
	detail := "the response stream broke before the server's answer, and MCP 2026-07-28 does not resume streams: the outcome is unknown (the tool may or may not have run); it was not sent again because the server's listing marks the tool neither read-only nor idempotent, so check its effect before calling it again"
	if again {
		detail = "the response stream broke before the server's answer, twice (the call was sent again once, as the server's listing marks the tool read-only or idempotent): the outcome is unknown"
	}
	// The session is fine: its next request is a new POST.
	return &Error{Ref: s.ref, Op: op, Kind: ErrUnavailable, Detail: detail}
}

// toolHints remembers which tools the session's last listing marks
// readOnlyHint or idempotentHint (mayReissue).
type toolHints struct {
	mu sync.Mutex
	ok map[string]bool
	// task are the tools whose execution.taskSupport is "required".
	task map[string]bool
}

// set replaces the hints with those of a complete listing.
func (h *toolHints) set(tools []Tool) {
	safe := make(map[string]bool, len(tools))
	task := map[string]bool{}
	for _, t := range tools {
		if a := t.Annotations; a != nil && (a.ReadOnlyHint || a.IdempotentHint) {
			safe[t.Name] = true
		}
		if t.TaskSupport == taskSupportRequired {
			task[t.Name] = true
		}
	}
	h.mu.Lock()
	h.ok, h.task = safe, task
	h.mu.Unlock()
}

// taskRequired reports whether the last listing says the tool must be
// called as a task.
func (h *toolHints) taskRequired(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.task[name]
}

func (h *toolHints) safe(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ok[name]
}

// traceSent notes on the call when its request has been written whole
// (net/http's WroteRequest without an error): from then on the server
// may have it, and a failure is no longer lossNotSent.
func traceSent(req *http.Request, call *inflightCall) *http.Request {
	return req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				call.sent.Store(true)
			}
		},
	}))
}
