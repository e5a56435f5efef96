package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/agtsdk/agt/internal/text"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// runner holds the connection of a check, connected again after a case
// that crashed or timed out.
type runner struct {
	c   *mcpconn.Connector
	ref resource.Ref
	srv resource.MCPServer
	o   Options
	rep *Report
	s   *mcpconn.Session
}

func (r *runner) connect(ctx context.Context) error {
	s, err := r.c.Connect(ctx, r.ref, r.srv, nil)
	if err != nil {
		return err
	}
	r.s = s
	return nil
}

func (r *runner) close() {
	if r.s != nil {
		_ = r.s.Close()
		r.s = nil
	}
}

// genCase is one case of a tool: its arguments and what the case is
// about. Arguments never appear in a report.
type genCase struct {
	name       string
	args       []byte
	path       string // JSON pointer in the arguments
	schemaPath string
	// valid is the validator's verdict on args; violation its first
	// violation when invalid.
	valid     bool
	violation toolschema.Violation
	// raw marks bytes agt's validator refuses though no schema can.
	raw bool
	// canaries are generated strings of args; an error that contains one
	// leaked it.
	canaries []string
	// business is the expectation of a business case, nil for a
	// generated one.
	business *Case
}

func (r *runner) runTool(ctx context.Context, w toolWork) {
	tr := ToolReport{Name: w.tool.Name, Classes: map[Class]int{}, Outcomes: []Outcome{}}
	start := time.Now()
	defer func() {
		tr.DurationMS = time.Since(start).Milliseconds()
		r.rep.Tools = append(r.rep.Tools, tr)
	}()
	if w.err != nil {
		tr.Error = "its input schema does not compile: " + w.err.Error()
		return
	}
	for i, gc := range w.cases {
		if ctx.Err() != nil || r.s == nil {
			tr.NotRun = len(w.cases) - i
			return
		}
		class, msg := r.runCase(ctx, w.tool.Name, gc)
		if class == "" {
			// Not sent (see runCase): said in the notes, not counted.
			r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("%s: case %q was not sent: %s", w.tool.Name, gc.name, msg))
			continue
		}
		tr.Cases++
		tr.Classes[class]++
		tr.Outcomes = append(tr.Outcomes, Outcome{Case: gc.name, Class: class, Path: gc.path, SchemaPath: gc.schemaPath})
		if class == Accepted || class == Refused {
			continue
		}
		r.rep.Findings = append(r.rep.Findings, Finding{Tool: w.tool.Name, Case: gc.name, Class: class, Path: gc.path, SchemaPath: gc.schemaPath, Message: msg})
	}
}

// runCase calls the tool with one case and classifies the answer. A case
// that crashed or timed out connects again for the next one. A case the
// session refused to send (over streamable HTTP in 2026-07-28, arguments
// its tool's x-mcp-header annotations cannot mirror into headers) gets the
// class "" and why.
func (r *runner) runCase(ctx context.Context, tool string, gc genCase) (Class, string) {
	cctx, cancel := context.WithTimeout(ctx, r.o.CaseTimeout)
	res, err := r.s.CallTool(cctx, tool, gc.args)
	timedOut := cctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err != nil {
		var wire *jsonrpc.Error
		var unsent *toolschema.ArgumentError
		switch {
		case errors.As(err, &unsent):
			return "", "the arguments cannot be mirrored into the tool's HTTP headers (x-mcp-header)"
		case timedOut || errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			r.reconnect(ctx)
			return TimedOut, fmt.Sprintf("no answer within %s", r.o.CaseTimeout)
		case ctx.Err() != nil:
			return TimedOut, "the check's timeout ended during the call"
		case errors.Is(err, mcpconn.ErrUnavailable):
			r.reconnect(ctx)
			return Crashed, "the connection was lost during the call (the server exited or ended the session)"
		case errors.As(err, &wire):
			return r.classifyError(gc, wire.Code == jsonrpc.CodeInvalidParams, true, wire.Message)
		default:
			return ProtocolError, "the call failed: " + mcpconn.ErrorText(err, false)
		}
	}
	if res.IsError {
		return r.classifyError(gc, false, false, resultText(res.ContentJSON))
	}
	return r.classifyResult(gc, resultText(res.ContentJSON)+"\n"+string(res.Structured))
}

// reconnect starts the server again after a crash or a timeout; on failure
// the remaining cases are not run.
func (r *runner) reconnect(ctx context.Context) {
	r.close()
	if ctx.Err() != nil {
		return
	}
	if err := r.connect(ctx); err != nil {
		r.rep.Notes = append(r.rep.Notes, "the server could not be started again after a crash or timeout: "+mcpconn.ErrorText(err, false))
	}
}

// classifyResult classes an answer that is not an error.
func (r *runner) classifyResult(gc genCase, text string) (Class, string) {
	if bc := gc.business; bc != nil {
		if bc.Expect == ExpectError {
			return Unexpected, "the server ran the call; the case expects an error"
		}
		if !strings.Contains(text, bc.Text) {
			return Unexpected, "the result does not contain the text the case expects"
		}
		return Accepted, ""
	}
	switch {
	case gc.valid:
		return Accepted, ""
	case gc.raw:
		return Tolerated, "the server read arguments agt's validator refuses (" + gc.violation.Message + "); agt never sends them"
	default:
		return Laxer, "the schema refuses the case (" + gc.violation.Message + ") and the server ran it"
	}
}

// classifyError classes an error answer: a tool error, or a JSON-RPC
// error (protocol true; invalidParams for -32602).
func (r *runner) classifyError(gc genCase, invalidParams, protocol bool, text string) (Class, string) {
	for _, c := range gc.canaries {
		if strings.Contains(text, c) {
			return Leaked, "the server's error echoes a value of the arguments"
		}
	}
	if bc := gc.business; bc != nil {
		if bc.Expect == ExpectResult {
			return Unexpected, "the server refused the call; the case expects a result"
		}
		if !strings.Contains(text, bc.Text) {
			return Unexpected, "the error does not contain the text the case expects"
		}
		return Refused, ""
	}
	argsRefusal := invalidParams || isValidationText(text)
	switch {
	case !gc.valid:
		// Any refusal of a case the validator refuses agrees with it:
		// a tool error, -32602, or another JSON-RPC error.
		return Refused, ""
	case argsRefusal:
		return Stricter, "the schema accepts the case and the server refused it as invalid arguments"
	case protocol:
		return ProtocolError, "the server answered a schema-valid call with a JSON-RPC error"
	default:
		return Business, "the server refused a schema-valid call by its own rules"
	}
}

// validationText matches the texts SDKs give to arguments their own
// validation refused (see isValidationText).
var validationText = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`validating "arguments"`,     // go-sdk: validating "arguments": ...
	`unmarshaling arguments`,     // go-sdk: the arguments do not decode
	`input validation error`,     // TypeScript SDK: MCP error -32602: Input validation error
	`invalid arguments for tool`, // TypeScript SDK
	`-32602`,                     // any SDK that writes the code into the text
	`validation errors? for `,    // pydantic (FastMCP, the Python SDK): 1 validation error for XArguments
	`invalid params`,             // JSON-RPC's name for -32602
	`json: cannot unmarshal`,     // Go's encoding/json in a hand-written handler
	`invalid_type|invalid_format|too_big|too_small|invalid_value|unrecognized_keys`, // zod issue codes
}, "|"))

// isValidationText reports whether a tool error's text is an
// argument-validation message of a known SDK: the go-sdk's
// (validating "arguments", unmarshaling arguments), the TypeScript SDK's
// (Input validation error, Invalid arguments for tool, zod issue codes),
// pydantic's as FastMCP and the Python SDK report it (N validation error
// for ...), Go's encoding/json (json: cannot unmarshal), or any text with
// -32602 or "invalid params". A server that rewrites the SDK's texts to
// drop values keeps the SDK's prefix (as examples/server-contract does).
// A schema-valid case refused with such a text is Stricter; refused with
// another text, Business.
func isValidationText(text string) bool { return validationText.MatchString(text) }

// maxResultText bounds the text of one answer the classifier reads: the
// text blocks of its content, joined; text past it is not read.
const maxResultText = 1 << 20

// resultText joins the text blocks of a result's content array, each
// followed by a newline, cut at maxResultText bytes.
func resultText(content json.RawMessage) string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range blocks {
		if c.Type != "text" {
			continue
		}
		room := maxResultText - b.Len()
		if room <= 0 {
			break
		}
		b.WriteString(text.Cut(c.Text, room))
		if b.Len() < maxResultText {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
