package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agtsdk/agt/internal/text"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
)

// Code is the closed set of failure codes a call's Result can carry, written
// in snake_case on the wire. The empty Code means success.
type Code string

// The codes. No other value is ever produced by this package.
const (
	// CodeInvalidArguments: the arguments are not a JSON object valid for the
	// tool's schema, or the batch is malformed.
	CodeInvalidArguments Code = "invalid_arguments"
	// CodePermissionDenied: the Permission did not allow the call.
	CodePermissionDenied Code = "permission_denied"
	// CodeUnknownTool: a call names a tool that is not in the Run's snapshot.
	CodeUnknownTool Code = "unknown_tool"
	// CodeUnauthorized: the batch's identity or a delegation check failed,
	// or the caller may not manage resources.
	CodeUnauthorized Code = "unauthorized"
	// CodeNotFound: a resource the call needs does not exist.
	CodeNotFound Code = "not_found"
	// CodeConflict: a revision did not match or a resource already exists.
	CodeConflict Code = "conflict"
	// CodeUnavailable: the tool's server is not connected (it crashed, or
	// its connection is closed).
	CodeUnavailable Code = "unavailable"
	// CodeDeadlineExceeded: the per-call timeout or the caller's deadline
	// passed.
	CodeDeadlineExceeded Code = "deadline_exceeded"
	// CodeCanceled: the caller's context was cancelled.
	CodeCanceled Code = "canceled"
	// CodeToolError: the tool ran and reported a failure (MCP isError, or a
	// protocol error answer from the server).
	CodeToolError Code = "tool_error"
	// CodeInternal: anything else; the pipeline or a handler failed.
	CodeInternal Code = "internal"
)

var allCodes = [...]Code{
	CodeInvalidArguments, CodePermissionDenied, CodeUnknownTool, CodeUnauthorized,
	CodeNotFound, CodeConflict, CodeUnavailable, CodeDeadlineExceeded, CodeCanceled,
	CodeToolError, CodeInternal,
}

// Valid reports whether c is one of the codes above.
func (c Code) Valid() bool {
	for _, k := range allCodes {
		if c == k {
			return true
		}
	}
	return false
}

// Error is a tool failure with a chosen code. A host tool handler, an
// interceptor or a Before callback returns one (as an error) to fail one
// call with that code; CodeOf reads it back.
type Error struct {
	// Code is the failure's code; an invalid or empty Code reads as
	// CodeInternal.
	Code Code
	// Message is shown to the model. It must not hold argument values.
	Message string
	// Violations are kept for CodeInvalidArguments; nil otherwise.
	Violations []toolschema.Violation
}

// Error implements error.
func (e *Error) Error() string { return "run: " + string(e.Code) + ": " + e.Message }

// CodeOf maps an error to its Code: "" for nil; the code of an *Error or a
// *BatchError; invalid_arguments for a toolschema argument error;
// deadline_exceeded and canceled for the context errors; unavailable for
// mcpconn.ErrUnavailable; not_found, conflict (ErrConflict, ErrExists) and
// unauthorized (ErrPermission) for the resource sentinels; internal for
// anything else.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var re *Error
	if errors.As(err, &re) {
		if re.Code.Valid() {
			return re.Code
		}
		return CodeInternal
	}
	var be *BatchError
	if errors.As(err, &be) && be.Code.Valid() {
		return be.Code
	}
	var ae *toolschema.ArgumentError
	switch {
	case errors.As(err, &ae):
		return CodeInvalidArguments
	case errors.Is(err, context.DeadlineExceeded):
		return CodeDeadlineExceeded
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	case errors.Is(err, mcpconn.ErrUnavailable):
		return CodeUnavailable
	case errors.Is(err, resource.ErrNotFound):
		return CodeNotFound
	case errors.Is(err, resource.ErrConflict), errors.Is(err, resource.ErrExists):
		return CodeConflict
	case errors.Is(err, resource.ErrPermission):
		return CodeUnauthorized
	}
	return CodeInternal
}

// Result is the outcome of one call, in the batch's call order. A failed call
// has a non-empty Code; a successful one has the tool's output.
type Result struct {
	// CallID is the call's ID (the model's tool_call_id).
	CallID string `json:"tool_call_id"`
	// Name is the tool alias the call named.
	Name string `json:"name"`
	// Code is empty on success, else the failure's code.
	Code Code `json:"code,omitempty"`
	// Message explains a failure to the model; empty on success.
	Message string `json:"message,omitempty"`
	// Violations lists schema violations (paths only) for
	// CodeInvalidArguments.
	Violations []toolschema.Violation `json:"violations,omitempty"`
	// Content is the tool's content blocks as a JSON array: for an MCP
	// tool the array exactly as the server sent it, every block of every
	// type (those of a failed result too); for a host tool whatever its
	// handler set. Blocks gives the typed view.
	Content json.RawMessage `json:"content,omitempty"`
	// Structured is the tool's structured result, nil if none: for an MCP
	// tool its structuredContent exactly as the server sent it (key
	// order, large integers and tiny numbers kept).
	Structured json.RawMessage `json:"structured_content,omitempty"`
	// Changed lists the resources a successful call changed. A host tool
	// that writes resources reports them here; a change to the Run's own
	// agent document or to a mounted MCP resource makes the Run refresh at
	// the end of the batch.
	Changed []resource.Key `json:"-"`
	// Written lists the resources a successful call wrote, whether the
	// write changed them or not. While the Run is behind its saved
	// configuration (a refresh failed), a write to the Run's agent, or to
	// a mounted, failing or pending MCP resource retries the refresh, even
	// when it changed nothing.
	Written []resource.Key `json:"-"`
	// Notice is what the Run adds for the model about this call's effect:
	// when the refresh its write triggered failed, "configuration saved,
	// but load failed: ...". ForModel includes it.
	Notice string `json:"notice,omitempty"`

	// blocks are Content's typed blocks, decoded once (Blocks); nil for
	// a Result the Run did not make.
	blocks *contentBlocks
}

// Failed reports whether the call failed.
func (r Result) Failed() bool { return r.Code != "" }

// toolErrorBody is the one ToolError wire format (DESIGN.md, contract).
type toolErrorBody struct {
	Error toolErrorFields `json:"error"`
}

type toolErrorFields struct {
	Code       Code                   `json:"code"`
	Message    string                 `json:"message"`
	Violations []toolschema.Violation `json:"violations,omitempty"`
}

// ToolError renders a failed Result in the ToolError format the model sees:
// {"error":{"code":...,"message":...,"violations":[{"path","schema_path",
// "message"}]}}. It returns nil for a successful Result.
func (r Result) ToolError() json.RawMessage {
	if !r.Failed() {
		return nil
	}
	return renderToolError(r.Code, r.Message, r.Violations)
}

// ForModel is what a host sends back to the model for this call:
//
//   - failed: the ToolError, and only it (the one error format); a failed
//     MCP result's blocks stay in Content and Blocks for the host.
//   - a Notice: the content blocks with a last text block holding it (the
//     structured content is then left out: the blocks carry the same
//     result for the model).
//   - content with any block that is not text (an image, audio, a
//     resource link, an embedded resource, a type agt does not know):
//     the content blocks, as sent, so an image reaches the model as an
//     image and not as base64 inside JSON.
//   - else the structured content when present, else the content blocks,
//     else [].
//
// The content blocks are Content's bytes (for an MCP tool, the array
// exactly as the server sent it); the structured content is Structured's.
func (r Result) ForModel() json.RawMessage {
	switch {
	case r.Failed():
		return r.ToolError()
	case r.Notice != "":
		return withNotice(r.Content, r.Notice)
	case len(r.Structured) > 0 && r.textOnly():
		return r.Structured
	case len(r.Content) > 0:
		return r.Content
	}
	return json.RawMessage("[]")
}

func renderToolError(code Code, msg string, v []toolschema.Violation) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the model reads "must be >= 1", not "\u003e="
	if err := enc.Encode(toolErrorBody{Error: toolErrorFields{Code: code, Message: msg, Violations: v}}); err != nil {
		// Cannot happen: strings and slices of strings only.
		return json.RawMessage(`{"error":{"code":"internal","message":"rendering the error failed"}}`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// failure builds a failed Result from an error raised by a stage. Its
// message is the model's: see modelText.
func (r *Run) failure(err error) Result {
	code := CodeOf(err)
	var res Result
	res.Code = code
	var re *Error
	var ae *toolschema.ArgumentError
	switch {
	case errors.As(err, &re):
		res.Message, res.Violations = re.Message, re.Violations
	case errors.As(err, &ae):
		res.Violations = ae.Violations
		res.Message = fmt.Sprintf("the arguments do not match the tool's input schema (%d violation(s)); fix them and call again", len(ae.Violations))
	case code == CodeDeadlineExceeded:
		res.Message = "the call did not finish in time"
	case code == CodeCanceled:
		res.Message = "the call was canceled"
	default:
		res.Message = boundMessage(r.modelText(err))
	}
	return res
}

// modelText renders err for text the model reads: without the output of
// the servers (an *mcpconn.Error anywhere in err's tree keeps its stderr
// tail and stdout head in its Go error only), unless
// Options.ServerStderrToModel. Every
// message of this package that holds an error's text and reaches the
// model (Result.Message, RefreshReport.Notice) is made here.
func (r *Run) modelText(err error) string {
	return mcpconn.ErrorText(err, r.stderrToModel)
}

// maxMessage bounds messages taken from servers and handlers.
const maxMessage = 2048

func boundMessage(s string) string { return text.Bound(s, maxMessage) }
