//lint:file-ignore SA1019 sampling and roots are deprecated from protocol 2026-07-28 on, where a server still asks for them inside an input_required result

package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Multi round-trip requests (SEP-2322, protocol 2026-07-28): a server
// that needs input during a tools/call answers with resultType
// "input_required", the requests it needs answered (inputRequests:
// elicitation/create, sampling/createMessage, roots/list, by a key of the
// server's) and an opaque requestState; the client answers each request
// and sends the call again, as a new request, with the answers
// (inputResponses) and the requestState exactly as it came. agt runs
// that loop itself (the go-sdk's middleware is off: noMultiRoundTrip),
// so that every request goes through the session's handlers with the
// bounds, refusals and reports of a server's request of the legacy era
// (answerRequest), tied to its call exactly.

// ErrInputRequired: the server answered the call with input_required (a
// multi round-trip request, MCP 2026-07-28) and the call could not go
// on: a request for input was refused or could not be answered (no
// handler declared its capability, the handler refused or failed, a
// bound), or the server still asked after ConnectorOptions.Limits.MaxInputRounds
// rounds. The call has no result and was not sent again. The error's
// Detail says which in agt's words; it never holds the server's text or
// its requestState. An elicitation the user declined or dismissed is an
// answer, not this error: it goes back to the server, which decides.
var ErrInputRequired = errors.New("mcpconn: the server asked for input the client could not give")

// maxRequestStateBytes bounds the requestState of an input_required
// answer, as its JSON string on the wire: a longer one fails the call
// with ErrBadResult (a *LimitError), and nothing is sent again. Fixed.
const maxRequestStateBytes = 1 << 20

// inputRound is what one input_required answer asks: the requests, in
// the order of their keys, and the requestState to echo.
type inputRound struct {
	requests []inputRequest
	state    string
}

// inputRequest is one entry of an answer's inputRequests.
type inputRequest struct {
	key    string
	method string
	// params is *mcp.ElicitParams, *mcp.CreateMessageWithToolsParams or
	// *mcp.ListRootsParams (nil pointers of those when the request had
	// none).
	params mcp.Params
	// invalid says why the request cannot be asked ("" when it can).
	invalid string
}

// readInputRequired reads an input_required result from the bytes the
// server sent (before any text repair: the requestState is echoed as the
// server wrote it).
func readInputRequired(raw json.RawMessage) (*inputRound, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errMalformed("the result is not an object")
	}
	var requests, state json.RawMessage
	if err := objectMembers(raw, func(key, val []byte) error {
		switch string(key) {
		case "inputRequests":
			requests = optional(val)
		case "requestState":
			state = optional(val)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if requests == nil && state == nil {
		return nil, errMalformed("an input_required result has neither inputRequests nor requestState")
	}
	round := &inputRound{}
	if state != nil {
		if state[0] != '"' {
			return nil, errMalformed("the requestState is not a string")
		}
		if len(state) > maxRequestStateBytes {
			return nil, &LimitError{Option: "MaxRequestStateBytes (fixed)", What: "the requestState of an input_required result",
				Limit: maxRequestStateBytes, Unit: "bytes"}
		}
		s, ok := exactString(state)
		if !ok {
			return nil, errMalformed("the requestState is not valid Unicode text (bytes that are not UTF-8, or an escaped lone surrogate), so it cannot be sent back exactly")
		}
		round.state = s
	}
	if requests == nil {
		return round, nil
	}
	if requests[0] != '{' {
		return nil, errMalformed("inputRequests is not an object")
	}
	byKey := map[string]inputRequest{}
	if err := objectMembers(requests, func(key, val []byte) error {
		r, err := readInputRequest(string(key), val)
		if err != nil {
			return err
		}
		byKey[r.key] = r // a later duplicate wins, as in every decoder
		return nil
	}); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		round.requests = append(round.requests, byKey[k])
	}
	return round, nil
}

// readInputRequest reads one entry of inputRequests: {"method", "params"}.
func readInputRequest(key string, val []byte) (inputRequest, error) {
	r := inputRequest{key: key}
	if len(val) == 0 || val[0] != '{' {
		return r, errMalformed("an input request is not an object")
	}
	var method, params []byte
	if err := objectMembers(val, func(k, v []byte) error {
		switch string(k) {
		case "method":
			method = v
		case "params":
			params = optional(v)
		}
		return nil
	}); err != nil {
		return r, err
	}
	if json.Unmarshal(method, &r.method) != nil {
		return r, errMalformed("an input request has no method")
	}
	decode := func(p any) {
		if params != nil && json.Unmarshal(params, p) != nil {
			r.invalid = "the request is malformed"
		}
	}
	switch r.method {
	case MethodElicit:
		var p *mcp.ElicitParams
		if params != nil {
			p = &mcp.ElicitParams{}
			decode(p)
		}
		r.params = p
	case MethodCreateMessage:
		var p *mcp.CreateMessageWithToolsParams
		if params != nil {
			p = &mcp.CreateMessageWithToolsParams{}
			decode(p)
		}
		r.params = p
	case MethodListRoots:
		r.params = &mcp.ListRootsParams{} // roots/list takes no params
	default:
		return r, errMalformed("an input request's method is not elicitation/create, sampling/createMessage or roots/list")
	}
	return r, nil
}

// exactString decodes the JSON string b and reports whether the value is
// exactly what b says: not when b holds bytes that are not UTF-8 or a \u
// escape of a lone surrogate, which every JSON decoder (and encoder)
// replaces with U+FFFD, so that no client could send them back.
func exactString(b []byte) (string, bool) {
	var s string
	if !utf8.Valid(b) || json.Unmarshal(b, &s) != nil {
		return "", false
	}
	if !strings.ContainsRune(s, utf8.RuneError) {
		return s, true
	}
	// Each U+FFFD of the value must be one the server wrote: as such, or
	// as the escape \ufffd.
	written := 0
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\' && i+1 < len(b) && b[i+1] == 'u':
			if r, ok := hex4(b, i+2); ok && r == utf8.RuneError {
				written++
			}
			i += 5
		case b[i] == '\\':
			i++
		default:
			if r, n := utf8.DecodeRune(b[i:]); r == utf8.RuneError && n == 3 {
				written++
				i += n - 1
			}
		}
	}
	return s, written == strings.Count(s, string(utf8.RuneError))
}

// answerRound asks the session's handlers for the requests of one
// input_required answer of the call, one after the other in the order of
// their keys, and returns the answers for the retry. Each goes through
// answerRequest as a server's request naming the call would (the call's
// tag alone, its bounds, Served); an elicitation the user declines is an
// answer. A request that cannot be answered fails the call with
// ErrInputRequired: one that no handler declared, that is malformed or
// past a bound is refused before any is asked (the host is not asked
// for input that cannot reach the server); one the handler refuses or
// fails stops the asking there.
func (s *Session) answerRound(ctx, cctx context.Context, name string, call *inflightCall, round *inputRound) (mcp.InputResponseMap, error) {
	if len(round.requests) == 0 {
		return nil, nil // the server was busy (load shedding): the retry carries the state alone
	}
	if s.serve == nil {
		// No handlers: the session declared nothing, and nobody is told.
		return nil, s.inputError(name, inputDetail(round.requests[0].method, OutcomeRefused, reasonNotDeclared))
	}
	first := round.requests[0]
	if n := len(round.requests); n > s.serve.max.requests {
		rq := s.refuseInput(cctx, call, first, fmt.Sprintf("the server asked for more than %d inputs at once (ConnectorOptions.Limits.MaxServerRequests)", s.serve.max.requests))
		return nil, s.inputError(name, inputDetail(first.method, rq.outcome, rq.reason))
	}
	h := &s.serve.h
	for _, r := range round.requests {
		reason := r.invalid
		if reason == "" {
			reason = s.overBounds(r.method, r.params)
		}
		declared := (r.method == MethodElicit && h.Elicit != nil) || (r.method == MethodCreateMessage && h.CreateMessage != nil) ||
			(r.method == MethodListRoots && h.Roots != nil)
		if !declared || reason != "" {
			rq := s.refuseInput(cctx, call, r, reason)
			return nil, s.inputError(name, inputDetail(r.method, rq.outcome, rq.reason))
		}
	}
	answers := make(mcp.InputResponseMap, len(round.requests))
	for _, r := range round.requests {
		res, rq, err := s.answerRequest(cctx, r.method, r.params, call, call.tag, attrLive, "", func(hctx context.Context, rq *request) (mcp.Result, error) {
			switch p := r.params.(type) {
			case *mcp.ElicitParams:
				return s.recv(hctx, MethodElicit, &mcp.ElicitRequest{Session: s.cs, Params: p})
			case *mcp.CreateMessageWithToolsParams:
				return s.recv(hctx, MethodCreateMessage, &mcp.CreateMessageWithToolsRequest{Session: s.cs, Params: p})
			}
			return s.listRoots(hctx, rq)
		})
		if err == nil {
			if ir, ok := res.(mcp.InputResponse); ok && !isNilResult(res) {
				answers[r.key] = ir
				continue
			}
			// Cannot happen: the adapters fail a request without an answer.
			return nil, s.inputError(name, inputDetail(r.method, OutcomeError, "the handler returned no answer"))
		}
		if ctx.Err() != nil || cctx.Err() != nil || s.closed.Load() {
			return nil, s.classify(callOp(name), ctx, cctx, err)
		}
		return nil, s.inputError(name, inputDetail(r.method, rq.outcome, rq.reason))
	}
	return answers, nil
}

// isNilResult reports a typed nil answer.
func isNilResult(res mcp.Result) bool {
	switch r := res.(type) {
	case *mcp.ElicitResult:
		return r == nil
	case *mcp.CreateMessageWithToolsResult:
		return r == nil
	case *mcp.ListRootsResult:
		return r == nil
	}
	return res == nil
}

// refuseInput refuses one request of an input_required answer without
// asking a handler (reason "": its capability was not declared), and
// reports it to Served as a refused request of the call.
func (s *Session) refuseInput(cctx context.Context, call *inflightCall, r inputRequest, reason string) *request {
	_, rq, _ := s.answerRequest(cctx, r.method, r.params, call, call.tag, attrLive, reason, nil)
	return rq
}

func (s *Session) inputError(name, detail string) error {
	return &Error{Ref: s.ref, Op: callOp(name), Kind: ErrInputRequired, Detail: detail}
}

// inputDetail says, in agt's words, why a request of an input_required
// answer stopped the call.
func inputDetail(method string, outcome RequestOutcome, reason string) string {
	what := "roots"
	switch method {
	case MethodElicit:
		what = "an elicitation"
	case MethodCreateMessage:
		what = "a sampling request"
	}
	how := "it was refused"
	if outcome == OutcomeError {
		how = "the client could not answer it"
	}
	if reason != "" {
		how += " (" + reason + ")"
	}
	return "the server asked for input (" + what + ") before it can complete the call, and " + how +
		": the call has no result and was not sent again"
}

// roundsDetail says that the server asked for more rounds than allowed.
func roundsDetail(max int) string {
	return fmt.Sprintf("the server still asked for input after %d rounds (ConnectorOptions.Limits.MaxInputRounds): the call has no result and was not sent again", max)
}
