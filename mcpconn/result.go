package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/content"
)

// CallResult is the result of a tools/call, read from the exact bytes the
// server sent (captured from the wire in every transport, as the input
// schemas of a listing are): content blocks of every type, unknown ones
// included, and structuredContent byte for byte.
//
// The two changes made to the bytes: the connection's secrets are masked
// in every string (see Secrets in what servers send, in the package doc),
// and text that no JSON decoder would keep (bytes that are not valid
// UTF-8, \u escapes of lone surrogates) is replaced by U+FFFD, as every
// decoder reads it, so that the bytes stay valid in a host's request to
// its model.
type CallResult struct {
	// Content holds the content blocks, in the server's order; never nil.
	Content []content.Block
	// ContentJSON is the "content" array exactly as sent; [] when the
	// server sent none or null.
	ContentJSON json.RawMessage
	// Structured is "structuredContent" exactly as sent (key order,
	// large integers and tiny numbers kept); nil when absent or null.
	Structured json.RawMessage
	// IsError says the tool failed (the server set isError); Content then
	// says how.
	IsError bool
	// Meta is the result's "_meta" as sent, nil when absent or null.
	Meta json.RawMessage
	// Raw is the whole result object as sent.
	Raw json.RawMessage
}

// Text joins the text of the text blocks, one per line: what a failed
// call says about its failure.
func (r *CallResult) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*content.Text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

var emptyArray = json.RawMessage("[]")

// errInputRequired: a tools/call result whose resultType is
// "input_required" (the multi round-trip of protocol 2026-07-28): the
// server asks for input and the call again (readInputRequired).
var errInputRequired = errMalformed("the result asks for input (input_required)")

// errResultType: a resultType other than "complete" and
// "input_required" (an extension's the client did not declare).
var errResultType = errMalformed("the result's resultType is neither complete nor input_required")

// decodeCallResult reads a tools/call result as the go-sdk would, except
// that unknown block types are kept, nothing is re-encoded, and base64
// data is not decoded. raw is a JSON value the go-sdk's message decoder
// already checked.
func decodeCallResult(raw json.RawMessage) (*CallResult, error) {
	raw = validText(bytes.TrimSpace(raw))
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errMalformed("the result is not an object")
	}
	r := &CallResult{Raw: raw[:len(raw):len(raw)], ContentJSON: emptyArray}
	var contentJSON []byte
	var task bool // a task member that is an object (2025-11-25 CreateTaskResult)
	err := objectMembers(raw, func(key, val []byte) error {
		switch string(key) {
		case "task":
			task = len(val) > 0 && val[0] == '{'
		case "content":
			contentJSON = val
		case "structuredContent":
			r.Structured = optional(val)
		case "isError":
			switch string(val) {
			case "true":
				r.IsError = true
			case "false", "null":
				r.IsError = false
			default:
				return errMalformed("isError is not a boolean")
			}
		case "_meta":
			r.Meta = optional(val)
		case "resultType":
			// Protocol 2026-07-28: absent or "complete" is a result;
			// "input_required" asks for input instead of answering.
			switch {
			case isNull(val) || string(val) == `"complete"`:
			case string(val) == `"input_required"`:
				return errInputRequired
			case string(val) == `"task"`:
				return errTaskAnswer
			default:
				return errResultType
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if task && contentJSON == nil {
		return nil, errTaskAnswer
	}
	if r.Content, err = decodeContent(contentJSON); err != nil {
		return nil, err
	}
	if len(contentJSON) > 0 && !isNull(contentJSON) {
		r.ContentJSON = contentJSON[:len(contentJSON):len(contentJSON)]
	}
	return r, nil
}

// callResult turns what the go-sdk returned for a call into the call's
// result: the capture of the wire result when there is one, the go-sdk's
// decoded result otherwise (a result the capture could not keep), or the
// classified error. An input_required answer is no result: ask is what
// it asks (readInputRequired).
//
// The go-sdk fails the whole call when it cannot decode the result (an
// unknown content block type, base64 it refuses); the connection is fine
// then, and the capture still holds the result. So an error with a
// captured answer is a decode failure of the go-sdk's, unless the call
// ended for a reason of its own (the caller, the tool timeout, Close, a
// bound).
func (s *Session) callResult(ctx, cctx context.Context, name string, call *inflightCall, res *mcp.CallToolResult, err error) (cr *CallResult, ask *inputRound, task *taskView, _ error) {
	if err != nil && (ctx.Err() != nil || cctx.Err() != nil || s.closed.Load() || s.guard.breach() != nil) {
		return nil, nil, nil, s.classify(callOp(name), ctx, cctx, err)
	}
	bad := func(derr error) error {
		detail := "the tools/call result is malformed"
		if errors.Is(derr, ErrLimit) {
			detail = "the tools/call result is past a bound"
		}
		return &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: detail, Err: derr}
	}
	if rerr := call.refusal(); rerr != nil {
		return nil, nil, nil, bad(rerr)
	}
	raw := call.answer()
	switch {
	case raw != nil:
	case err != nil:
		// A protocol error (the answer had no result), or no answer.
		s.listingSuspect(err)
		return nil, nil, nil, s.classify(callOp(name), ctx, cctx, err)
	default:
		// No capture (it should always exist): the go-sdk's decoding,
		// re-encoded, read by the same rules.
		var merr error
		if raw, merr = json.Marshal(res); merr != nil {
			return nil, nil, nil, &Error{Ref: s.ref, Op: callOp(name), Kind: ErrBadResult, Detail: "the result could not be re-encoded", Err: merr}
		}
	}
	cr, derr := decodeCallResult(raw)
	if errors.Is(derr, errTaskAnswer) {
		// A task in place of the result (tasks.go): only to a request
		// that declared task support (2026-07-28: each does; 2025-11-25:
		// a call sent as a task).
		if !s.modern() && taskWireOf(cctx) == nil {
			return nil, nil, nil, bad(errMalformed("the server answered with a task, which the request did not ask for"))
		}
		t, terr := readTask(raw)
		if terr != nil {
			return nil, nil, nil, bad(terr)
		}
		return nil, nil, t, nil
	}
	if errors.Is(derr, errInputRequired) {
		ask, derr = readInputRequired(raw)
		if derr == nil {
			return nil, ask, nil, nil
		}
	}
	if derr != nil {
		return nil, nil, nil, bad(derr)
	}
	return cr, nil, nil, nil
}

// answer returns the captured result of the call's request, nil for an
// error answer or none.
func (c *inflightCall) answer() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw
}

// refusal returns why the answer to the call's request could not be read,
// or nil.
func (c *inflightCall) refusal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// refuse records that the first answer to request id, if it is the
// call's current request, could not be read, and why; it reports whether
// it was the call's.
func (c *inflightCall) refuse(id string, why error, notes uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id != id || c.answered {
		return false
	}
	c.refused, c.answered, c.notesBefore = why, true, notes
	return true
}

// setAnswer records the first answer to request id, if it is the call's
// current request: a later answer with the same id is not the one the
// go-sdk delivered, and an answer to an earlier request of the call (the
// go-sdk sends another for an input-required result) is not the call's
// result. result is nil for an error answer; notes is the session's
// notification mark when the answer was read (noteQueue.mark).
// It reports whether result became the call's.
func (c *inflightCall) setAnswer(id string, result json.RawMessage, notes uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id != id || c.answered {
		return false
	}
	c.raw, c.answered, c.notesBefore = result, true, notes
	return result != nil
}

// notesToAwait is the notification mark of the call's answer: 0 when it
// had none.
func (c *inflightCall) notesToAwait() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.notesBefore
}

// callWritten ties a tools/call request being sent to the call ctx
// carries (none: not a call of Session.CallTool).
func (c *toolsListCapture) callWritten(ctx context.Context, id string) {
	if c.calls != nil {
		c.calls.written(ctx, id)
	}
}

// callAnswered records an answer (result nil: an error) to request id on
// the call in flight that sent it, if any, and reports whether the call
// took the result. The result bytes are kept, not copied: every caller
// passes a fresh decoding of the message.
func (c *toolsListCapture) callAnswered(id string, result json.RawMessage) bool {
	if c.calls == nil || id == "" {
		return false
	}
	if call := c.calls.byRequest(id); call != nil {
		return call.setAnswer(id, result, c.calls.notes.mark())
	}
	return false
}

// refuseCall records, for the call in flight that sent request id, that
// its answer could not be read and why; it reports whether there was
// such a call.
func (c *toolsListCapture) refuseCall(id string, why error) bool {
	if c == nil || c.calls == nil || id == "" {
		return false
	}
	if call := c.calls.byRequest(id); call != nil {
		return call.refuse(id, why, c.calls.notes.mark())
	}
	return false
}
