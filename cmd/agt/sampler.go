//lint:file-ignore SA1019 roots and sampling are deprecated from protocol 2026-07-28 as server requests; agt still answers them in both eras (a modern server asks inside input_required results)

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/run"
)

// Sampling by a command (--sampling-command, $AGT_SAMPLING_COMMAND): agt
// has no model, so a server's sampling/createMessage goes to a program
// the operator names. It gets the request's params as JSON on stdin and
// writes a CreateMessageResult as JSON on stdout ({"role": "assistant",
// "content": {"type": "text", "text": "..."}, "model": "..."}). Its
// output is bounded, it runs at most --sampling-timeout, and its process
// group is killed when it ends, so nothing it started outlives the
// request.

// Limits of the sampling command.
const (
	// maxSamplerOutput bounds the command's stdout; more kills it.
	maxSamplerOutput = 1 << 20
	// maxSamplerStderr is the tail of its stderr kept for the operator.
	maxSamplerStderr = 2048
	// samplerWaitDelay is how long agt waits for the command's output
	// after it was killed.
	samplerWaitDelay = time.Second
)

type sampler struct {
	argv    []string
	timeout time.Duration
	e       *env
}

// sample is the run.ClientFeatures.Sample of agent call. The server
// learns only that agt refused, and why in agt's words; the operator
// also sees the command's stderr tail.
func (s *sampler) sample(ctx context.Context, from run.Origin, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	req, err := json.Marshal(p)
	if err != nil {
		return nil, &mcpconn.RefusedError{Reason: "the sampling request cannot be encoded"}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Stdin = bytes.NewReader(req)
	out := &cappedBuffer{max: maxSamplerOutput, full: cancel}
	tail := &tailBuffer{max: maxSamplerStderr}
	cmd.Stdout, cmd.Stderr = out, tail
	cmd.WaitDelay = samplerWaitDelay
	runErr := runInGroup(ctx, cmd, killGroup)
	fail := func(why string) (*mcp.CreateMessageResult, error) {
		s.e.term.status.clear()
		fmt.Fprintf(s.e.err, "sampling for server %s: the command %s: agt refused the request\n", shown(string(from.Mount), maxCellWidth), why)
		if t := strings.TrimSpace(tail.String()); t != "" {
			for _, line := range strings.Split(t, "\n") {
				fmt.Fprintf(s.e.err, "  | %s\n", shown(line, maxLineWidth))
			}
		}
		return nil, &mcpconn.RefusedError{Reason: "the sampling command of agt " + why}
	}
	switch {
	case out.over:
		return fail(fmt.Sprintf("wrote more than %d bytes", maxSamplerOutput))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail(fmt.Sprintf("did not finish within --sampling-timeout %s", s.timeout))
	case runErr != nil:
		return fail("failed (" + clip(runErr.Error()) + ")")
	}
	var res mcp.CreateMessageResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Content == nil {
		return fail(`wrote no result JSON ({"role":"assistant","content":{"type":"text","text":"..."},"model":"..."})`)
	}
	if res.Role == "" {
		res.Role = "assistant"
	}
	return &res, nil
}

// cappedBuffer keeps at most max bytes; past that it calls full once and
// drops the rest.
type cappedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
	full func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over {
		return len(p), nil
	}
	if b.buf.Len()+len(p) > b.max {
		b.over = true
		b.full()
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

// tailBuffer keeps the last max bytes written, cut at a character.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := string(b.buf)
	if len(s) > b.max {
		s = s[len(s)-b.max:]
	}
	return strings.ToValidUTF8(s, "?")
}
