package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrURLElicitationRequired: the server answered the call with URL
// elicitation required (JSON-RPC error -32042, MCP 2025-11-25): the user
// must first complete one or more steps in a browser (a third-party
// authorization, a payment, a secret the client must not see). The call
// had no result. Each elicitation the answer listed went to
// Handlers.Elicit, as a server's url-mode elicitation/create does; the
// error's Detail says how the user answered and whether calling again may
// succeed (once the user has finished), in agt's words: it never holds a
// URL or the server's text, which are for the user, through the handler.
var ErrURLElicitationRequired = errors.New("mcpconn: the server requires the user to complete a URL elicitation first")

// requiredElicitations returns the JSON-RPC error of a call answered with
// URL elicitation required, or nil.
func requiredElicitations(err error) *jsonrpc.Error {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code == mcp.CodeURLElicitationRequired {
		return wire
	}
	return nil
}

// askRequired hands the elicitations of a URL elicitation required answer
// (wire) to the call's Elicit handler, one after the other, each as a
// url-mode elicitation/create of the call would be (bounds, refusals,
// Served reports), and returns the call's error. It stops at the first
// the user does not accept: the call cannot succeed without it. cctx is
// the call's context, still live.
func (s *Session) askRequired(cctx context.Context, name string, call *inflightCall, wire *jsonrpc.Error) error {
	var data struct {
		Elicitations []json.RawMessage `json:"elicitations"`
	}
	_ = json.Unmarshal(wire.Data, &data) // unreadable data lists none
	list := data.Elicitations
	var outcomes []*request
	switch {
	case s.serve == nil:
		// No handlers: nothing declared, nobody to ask.
	case len(list) == 0:
		outcomes = append(outcomes, s.refuseRequired(cctx, call, "the error lists no elicitation the client can read"))
	case len(list) > s.serve.max.requests:
		outcomes = append(outcomes, s.refuseRequired(cctx, call, fmt.Sprintf("the error lists more than %d elicitations (ConnectorOptions.Limits.MaxServerRequests)", s.serve.max.requests)))
	default:
		for _, raw := range list {
			rq := s.askOneRequired(cctx, call, raw)
			outcomes = append(outcomes, rq)
			if rq.outcome != OutcomeAccepted {
				break
			}
		}
	}
	return &Error{Ref: s.ref, Op: callOp(name), Kind: ErrURLElicitationRequired, Detail: requiredDetail(len(list), outcomes)}
}

// askOneRequired asks the call's Elicit handler for one elicitation of a
// URL elicitation required answer.
func (s *Session) askOneRequired(cctx context.Context, call *inflightCall, raw json.RawMessage) *request {
	p := &mcp.ElicitParams{}
	invalid := ""
	switch {
	case json.Unmarshal(raw, p) != nil:
		p, invalid = &mcp.ElicitParams{Mode: "url"}, "the elicitation is malformed"
	case p.Mode != "url":
		invalid = "an elicitation a URL elicitation required error lists must be in url mode"
	case p.ElicitationID == "":
		invalid = "the elicitation has no elicitationId"
	case p.URL == "":
		invalid = "the elicitation has no url"
	case p.RequestedSchema != nil:
		invalid = "a url-mode elicitation has no requestedSchema"
	}
	_, rq, _ := s.answerRequest(cctx, MethodElicit, p, call, call.tag, attrLive, invalid, func(hctx context.Context, rq *request) (mcp.Result, error) {
		return s.elicit(hctx, &mcp.ElicitRequest{Session: s.cs, Params: p})
	})
	return rq
}

// refuseRequired reports a URL elicitation required answer that cannot be
// asked at all, as one refused url-mode elicitation of the call.
func (s *Session) refuseRequired(cctx context.Context, call *inflightCall, reason string) *request {
	_, rq, _ := s.answerRequest(cctx, MethodElicit, &mcp.ElicitParams{Mode: "url"}, call, call.tag, attrLive, reason, nil)
	return rq
}

// requiredDetail says, in agt's words, what became of a URL elicitation
// required answer listing n elicitations, of which those in asked were
// handed to the session's handlers (none: the session has none).
func requiredDetail(n int, asked []*request) string {
	steps := "a step"
	if n > 1 {
		steps = fmt.Sprintf("%d steps", n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the server requires the user to complete %s in a browser before this call can succeed (URL elicitation required, error %d)", steps, mcp.CodeURLElicitationRequired)
	var last *request
	if len(asked) > 0 {
		last = asked[len(asked)-1]
	}
	switch {
	case last == nil || (last.outcome == OutcomeRefused && last.reason == reasonNotDeclared):
		b.WriteString("; the client has no elicitation handler to show it to the user, so the call cannot succeed here")
	case last.outcome == OutcomeAccepted:
		b.WriteString("; the user was shown it and accepted: the call may succeed if made again once the user has finished")
	case last.outcome == OutcomeDeclined:
		b.WriteString("; the user declined it: the call cannot succeed without it")
	case last.outcome == OutcomeCancelled:
		b.WriteString("; the user dismissed it: the call cannot succeed until the user completes it")
	default:
		b.WriteString("; it could not be shown to the user (" + last.reason + "), so the call cannot succeed as it is")
	}
	return b.String()
}
