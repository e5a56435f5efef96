package mcpconn_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
)

// rewordedError quotes its cause's message changed, as hideURLs does: the
// stderr tail can no longer be found as a whole.
type rewordedError struct{ err error }

func (e rewordedError) Error() string { return strings.ToUpper(e.err.Error()) }
func (e rewordedError) Unwrap() error { return e.err }

// deep wraps err n times.
func deep(err error, n int) error {
	for range n {
		err = fmt.Errorf("w: %w", err)
	}
	return err
}

// ErrorText(err, false) leaves out the stderr tail of every *Error in err's
// tree, wrapped or joined, and never lets it through when a wrapper changed
// the text; ErrorText(err, true) and Error keep it once.
func TestErrorTextLeavesStderrOut(t *testing.T) {
	t.Parallel()
	const secret = "PASSWORD=hunter2"
	leaky := func(ref string) *mcpconn.Error {
		return &mcpconn.Error{Ref: "r", Op: "connect " + ref, Kind: mcpconn.ErrHandshake, Detail: "the server exited during startup",
			Err: errors.New("exit status 3"), StderrTail: "starting\n" + secret + "\n"}
	}
	nested := &mcpconn.Error{Ref: "r", Op: "call tool", Kind: mcpconn.ErrUnavailable, Err: leaky("inner"), StderrTail: "outer " + secret}
	tests := []struct {
		name string
		err  error
		want string // ErrorText(err, false)
	}{
		{"plain", leaky("a"), "mcpconn: r: connect a: the server exited during startup: exit status 3"},
		{"no tail", &mcpconn.Error{Ref: "r", Op: "list tools", Detail: "malformed"}, "mcpconn: r: list tools: malformed"},
		{"wrapped", fmt.Errorf("mount r: %w", leaky("a")), "mount r: mcpconn: r: connect a: the server exited during startup: exit status 3"},
		{"joined", errors.Join(leaky("a"), fmt.Errorf("tools/list: %w", leaky("b"))),
			"mcpconn: r: connect a: the server exited during startup: exit status 3\ntools/list: mcpconn: r: connect b: the server exited during startup: exit status 3"},
		{"nested", nested, "mcpconn: r: call tool: mcpconn: r: connect inner: the server exited during startup: exit status 3"},
		{"reworded", fmt.Errorf("outer: %w", rewordedError{leaky("a")}), "mcpconn: r: connect a: the server exited during startup: exit status 3"},
		{"flattened", fmt.Errorf("outer: %v", leaky("a")), "outer: mcpconn: r: connect a: the server exited during startup: exit status 3"},
		{"too deep", deep(leaky("a"), 100), "the error is wrapped too deeply to be shown without a server's output"},
		{"not mcpconn", errors.New("boom"), "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := mcpconn.ErrorText(tt.err, false); got != tt.want {
				t.Errorf("ErrorText(false) = %q\nwant             %q", got, tt.want)
			}
			if got := mcpconn.ErrorText(tt.err, true); got != tt.err.Error() {
				t.Errorf("ErrorText(true) = %q, want Error() %q", got, tt.err.Error())
			}
		})
	}
	if got := leaky("a").Error(); strings.Count(got, secret) != 1 || !strings.HasSuffix(got, "\n--- server stderr (tail) ---\nstarting\n"+secret) {
		t.Errorf("Error() = %q, want the tail once, after its heading", got)
	}
	if got := mcpconn.ErrorText(nil, false); got != "" {
		t.Errorf("ErrorText(nil) = %q", got)
	}
}

// Issue 23 item 5: a non-JSON line a server printed on stdout (a banner
// with a token) is server output, like the stderr tail: Error shows it
// after its heading, ErrorText(err, false) never, whatever wraps it.
func TestErrorTextLeavesStdoutHeadOut(t *testing.T) {
	t.Parallel()
	const banner = "starting with token tok_SECRET"
	banned := func() *mcpconn.Error {
		return &mcpconn.Error{Ref: "r", Op: "connect", Kind: mcpconn.ErrHandshake, Detail: "the server wrote non-JSON on stdout",
			StdoutHead: banner, StderrTail: "stderr line"}
	}
	const short = "mcpconn: r: connect: the server wrote non-JSON on stdout"
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"plain", banned(), short},
		{"wrapped", fmt.Errorf("mount r: %w", banned()), "mount r: " + short},
		{"reworded", fmt.Errorf("outer: %w", rewordedError{banned()}), short},
		{"flattened", fmt.Errorf("outer: %v", banned()), "outer: " + short},
		{"stdout only", &mcpconn.Error{Ref: "r", Op: "connect", StdoutHead: banner}, "mcpconn: r: connect"},
		{"too deep", deep(banned(), 100), "the error is wrapped too deeply to be shown without a server's output"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := mcpconn.ErrorText(tt.err, false)
			if got != tt.want || strings.Contains(strings.ToLower(got), "tok_secret") {
				t.Errorf("ErrorText(false) = %q\nwant             %q", got, tt.want)
			}
			if full := strings.ToLower(mcpconn.ErrorText(tt.err, true)); strings.Count(full, strings.ToLower(banner)) != 1 {
				t.Errorf("ErrorText(true) = %q, want the stdout head once", full)
			}
		})
	}
	if got := banned().Error(); !strings.HasSuffix(got, short+"\n--- server stdout (first line) ---\n"+banner+"\n--- server stderr (tail) ---\nstderr line") {
		t.Errorf("Error() = %q, want the stdout head, then the stderr tail, each after its heading", got)
	}
}
