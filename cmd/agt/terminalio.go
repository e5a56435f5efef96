package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The terminal a person answers on: one reader of stdin's lines for every
// question (the permission, the elicitation forms), and one progress line
// on stderr.

// maxAnswerBytes bounds one line typed as an answer; the rest of a longer
// line is read and dropped.
const maxAnswerBytes = 4096

// errLineTooLong is the answer of a line longer than maxAnswerBytes.
var errLineTooLong = fmt.Errorf("the line is longer than %d bytes", maxAnswerBytes)

// termInput reads stdin one line at a time for the questions agt asks. A
// read that a deadline abandoned stays in flight and its line goes to the
// next question, so no typed line is lost; it reads a byte at a time, so
// nothing past the line is taken from stdin.
type termInput struct {
	mu   sync.Mutex
	next chan lineRead // the read in flight, or nil
}

type lineRead struct {
	line string
	err  error
}

// readLine returns the next line of r without its line break; io.EOF
// when r ended before a line (Ctrl-D on a terminal), errLineTooLong for a
// line longer than maxAnswerBytes, ctx's error when ctx ends first.
func (t *termInput) readLine(ctx context.Context, r io.Reader) (string, error) {
	t.mu.Lock()
	if t.next == nil {
		ch := make(chan lineRead, 1)
		t.next = ch
		go func() {
			line, err := readBoundedLine(r)
			ch <- lineRead{line, err}
		}()
	}
	ch := t.next
	t.mu.Unlock()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case got := <-ch:
		t.mu.Lock()
		t.next = nil
		t.mu.Unlock()
		return got.line, got.err
	}
}

// readBoundedLine reads up to a line break, keeping at most
// maxAnswerBytes.
func readBoundedLine(r io.Reader) (string, error) {
	var buf []byte
	long := false
	b := make([]byte, 1)
	for {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			if len(buf) < maxAnswerBytes {
				buf = append(buf, b[0])
			} else {
				long = true
			}
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(buf) > 0 {
				break
			}
			return "", err
		}
	}
	if long {
		return "", errLineTooLong
	}
	if n := len(buf); n > 0 && buf[n-1] == '\r' {
		buf = buf[:n-1]
	}
	return string(buf), nil
}

// statusLine is the one line on a terminal's stderr that a long call
// rewrites in place (its progress). Without a terminal it writes nothing.
// Other output to stderr clears it first (clear), so no line is left half
// overwritten.
type statusLine struct {
	mu     sync.Mutex
	raw    io.Writer // stderr unfiltered, nil: no terminal
	shown  bool
	paused bool // a question is on the terminal: the line waits
}

// set replaces the line with text, which must be safe to show (shown).
func (s *statusLine) set(text string) {
	if s == nil || s.raw == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused {
		return
	}
	fmt.Fprintf(s.raw, "\r\x1b[K%s", text)
	s.shown = true
}

// pause erases the line and keeps it away until resume: a question is
// asked on the terminal.
func (s *statusLine) pause() {
	s.clear()
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
}

func (s *statusLine) resume() {
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
}

// clear erases the line, if any.
func (s *statusLine) clear() {
	if s == nil || s.raw == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		fmt.Fprint(s.raw, "\r\x1b[K")
		s.shown = false
	}
}
