package mcpconn

import (
	"errors"
	"net/url"
	"strings"

	"github.com/agtsdk/agt/resource"
)

// Sentinel errors; test with errors.Is. Every error of Connect, Tools and
// CallTool that is not the caller's own context is an *Error wrapping one of
// them.
var (
	// ErrNoAbsoluteCwd: a stdio document without an absolute cwd, such as a
	// record saved before cwd was required. Nothing was started.
	ErrNoAbsoluteCwd = errors.New("mcpconn: stdio server has no absolute cwd")
	// ErrInvalidServer: the document cannot describe a server to start or
	// reach (unknown type, relative command, missing URL...). Nothing was
	// started.
	ErrInvalidServer = errors.New("mcpconn: invalid server document")
	// ErrNotAllowed: the launch allowlist
	// (ConnectorOptions.LaunchEnv.Allow) does not admit the server's
	// command, cwd or url origin. Nothing was started or contacted.
	ErrNotAllowed = errors.New("mcpconn: server not in the launch allowlist")
	// ErrStart: the server could not be started or reached (command not
	// found, cwd missing, connection refused).
	ErrStart = errors.New("mcpconn: server did not start")
	// ErrSecret: a secret reference (${env:NAME}, ${secret:NAME}) of the
	// document could not be resolved, so nothing was started or
	// contacted. The message names the reference, never a value.
	ErrSecret = errors.New("mcpconn: secret reference not resolved")
	// ErrHandshake: the server started but the MCP initialize handshake
	// failed: it exited early, never answered within the startup timeout,
	// wrote non-JSON on stdout, or spoke an unsupported protocol.
	ErrHandshake = errors.New("mcpconn: handshake failed")
	// ErrUnavailable: the connection died or was closed while in use.
	ErrUnavailable = errors.New("mcpconn: server unavailable")
	// ErrBadResult: the server answered a tool call with a result that is
	// malformed (not an object, content that is not an array of typed
	// blocks, a known block type with fields of the wrong JSON type) or
	// holds more than 10000 content blocks. The connection is fine and
	// the session stays usable.
	ErrBadResult = errors.New("mcpconn: malformed tool result")
)

// Error is the error of a connection step. It wraps its Kind (one of the
// sentinels above, or nil) and its cause, so errors.Is works for both (for
// example ErrHandshake and context.DeadlineExceeded).
type Error struct {
	// Ref is the resource the server was started for.
	Ref resource.Ref
	// Op is the step that failed: "connect", "list tools" or "call tool NAME".
	Op string
	// Kind is the sentinel that classifies the failure, or nil.
	Kind error
	// Detail explains the failure in a sentence for people.
	Detail string
	// StdoutHead is the first line a stdio server wrote on stdout where
	// the handshake's answer should have been, when that line is not
	// JSON-RPC (at most 80 bytes, control characters replaced by
	// U+FFFD); "" otherwise. Like StderrTail it is the server's output,
	// for its operator: a server may print a token in its banner.
	StdoutHead string
	// StderrTail is the end of the server's stderr, if it had one.
	StderrTail string
	// Err is the underlying cause, or nil.
	Err error

	// refused: the server answered the handshake with a refusal (a
	// JSON-RPC error, a version agt does not speak); lateModern: a stdio
	// server answered server/discover after the era probe timeout.
	// Connect starts again once on either (Protocol eras).
	refused, lateModern bool
}

// Error returns the message, with the server's output when there is
// some: the stdout head on the line after "--- server stdout (first
// line) ---", then the stderr tail on the lines after "--- server stderr
// (tail) ---". ErrorText(err, false) leaves both out.
func (e *Error) Error() string { return e.text(true) }

func (e *Error) text(withOutput bool) string {
	var b strings.Builder
	b.WriteString("mcpconn: ")
	if e.Ref != "" {
		b.WriteString(string(e.Ref))
		b.WriteString(": ")
	}
	b.WriteString(e.Op)
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(ErrorText(e.Err, withOutput))
	}
	if withOutput && e.StdoutHead != "" {
		b.WriteString(stdoutHeading)
		b.WriteString(e.StdoutHead)
	}
	if withOutput && e.StderrTail != "" {
		b.WriteString(stderrHeading)
		b.WriteString(strings.TrimRight(e.StderrTail, "\n"))
	}
	return b.String()
}

// The headings that start a server's output in Error's message.
const (
	stdoutHeading = "\n--- server stdout (first line) ---\n"
	stderrHeading = "\n--- server stderr (tail) ---\n"
)

// maxErrorDepth bounds the walk of an error tree in ErrorText.
const maxErrorDepth = 64

// ErrorText returns err's message, with the server output (stdout head
// and stderr tail) of the *Errors in err's tree (errors.Unwrap, and
// Unwrap() []error as errors.Join makes) when withServerOutput is true,
// and without any when it is false.
//
// What a stdio server writes is for its operator: a server may print its
// environment on stderr, echo an argument of an earlier call, or print a
// token in a banner on stdout. Text that a model reads is made with
// withServerOutput false unless the host chose otherwise; Go errors, logs
// and the audit keep the output. Wrappers that quote the message of an
// *Error (fmt.Errorf with %w, errors.Join) are handled. The result fails
// closed: if a wrapper changed the text so that the output cannot be
// found, it is the *Error's own message without the output and without
// the wrappers' words; text from an *Error that a wrapper flattened
// (fmt.Errorf with %v) is cut at its first output heading.
func ErrorText(err error, withServerOutput bool) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	if withServerOutput {
		return msg
	}
	var withOutput []*Error
	complete := walkErrors(err, 0, func(e *Error) {
		if e.StderrTail != "" || e.StdoutHead != "" {
			withOutput = append(withOutput, e)
		}
	})
	if !complete {
		if len(withOutput) > 0 {
			return withOutput[0].text(false)
		}
		return "the error is wrapped too deeply to be shown without a server's output"
	}
	for _, e := range withOutput {
		full, short := e.text(true), e.text(false)
		switch {
		case strings.Contains(msg, full):
			msg = strings.ReplaceAll(msg, full, short)
		case strings.Contains(msg, short):
			// Outer errors replaced already: e is quoted without its
			// output, as a part of their short text.
		default:
			return short
		}
	}
	for _, heading := range []string{stdoutHeading, stderrHeading} {
		if i := strings.Index(msg, heading); i >= 0 {
			msg = msg[:i]
		}
	}
	return msg
}

// walkErrors calls f for every *Error in err's tree, outer ones first. It
// returns false if the tree is deeper than maxErrorDepth.
func walkErrors(err error, depth int, f func(*Error)) bool {
	if err == nil {
		return true
	}
	if depth > maxErrorDepth {
		return false
	}
	if e, ok := err.(*Error); ok {
		f(e)
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walkErrors(u.Unwrap(), depth+1, f)
	case interface{ Unwrap() []error }:
		complete := true
		for _, inner := range u.Unwrap() {
			complete = walkErrors(inner, depth+1, f) && complete
		}
		return complete
	}
	return true
}

// Unwrap returns the Kind and the cause.
func (e *Error) Unwrap() []error {
	out := make([]error, 0, 2)
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// hideURLs returns err with every http(s) URL in its message cut to its
// scheme and host, the rest written as one resource.Mask
// ("https://host/[redacted]"). Stricter than resource's URL masking (internal/resourcefn.MaskURL), which keeps
// a plain path so that an operator knows the endpoint: a token in a path
// need not look like one, and these messages reach logs and models. A remote server's URL often carries a token in its path
// or query; the go-sdk and net/http quote it in their errors, which can
// reach logs or a model. errors.Is and errors.As still see err.
func hideURLs(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var b strings.Builder
	rest, changed := msg, false
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		start := i
		for start > 0 && isSchemeByte(rest[start-1]) {
			start--
		}
		end := i + len("://")
		for end < len(rest) && !strings.ContainsRune(" \t\r\n\"'<>`", rune(rest[end])) {
			end++
		}
		// Punctuation that ends the run belongs to the sentence, as in
		// "(http://host:port);": left in, the URL does not parse and even
		// its host is lost.
		for end > i+len("://") && strings.IndexByte(").,;:!?]}", rest[end-1]) >= 0 {
			end--
		}
		scheme := strings.ToLower(rest[start:i])
		b.WriteString(rest[:start])
		if scheme == "http" || scheme == "https" {
			u, perr := url.Parse(rest[start:end])
			if perr == nil && u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" {
				b.WriteString(rest[start:end]) // nothing to hide
			} else {
				b.WriteString(rest[start:i] + "://")
				if perr == nil {
					b.WriteString(u.Host)
				}
				b.WriteString("/" + resource.Mask)
				changed = true
			}
		} else {
			b.WriteString(rest[start:end])
		}
		rest = rest[end:]
	}
	if !changed {
		return err
	}
	b.WriteString(rest)
	return &hiddenURLError{msg: b.String(), err: err}
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

type hiddenURLError struct {
	msg string
	err error
}

func (e *hiddenURLError) Error() string { return e.msg }
func (e *hiddenURLError) Unwrap() error { return e.err }
