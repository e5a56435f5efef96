package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// issue 29 item 2: a server's form is asked on the terminal field by
// field (in name order: age, name, note, score, status, verified); an
// answer that does not fit is asked again, at most three times; an empty
// line keeps the default; n declines, c cancels; a URL is shown to open.
func TestElicitationOnTheTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       string
		answers    string // the permission's y first
		wantStdout []string
		wantStderr []string
	}{
		{"form", `{}`, "y\ny\nabc\n41\n\nhi there\n\n2\nn\n",
			[]string{`\"action\":\"accept\"`, `\"age\":41`, `\"name\":\"Ann\"`, `\"note\":\"hi there\"`, `\"score\":95.5`, `\"status\":\"inactive\"`, `\"verified\":false`},
			[]string{"asks for input: Who are you?", "Fill in the form (6 fields", "age [integer]", "type a whole number", "2) inactive", "name [string] (default \"Ann\")"}},
		{"decline", `{}`, "y\nn\n", []string{`\"action\":\"decline\"`}, []string{"declined"}},
		{"cancel", `{}`, "y\nc\n", []string{`\"action\":\"cancel\"`}, nil},
		{"three misfits", `{}`, "y\ny\nx\n1.5\nx\n", []string{`\"action\":\"cancel\"`}, []string{"3 answers to age did not fit: the form is cancelled"}},
		{"end of input", `{}`, "y\ny\n41\n\x04", []string{`\"action\":\"cancel\"`}, []string{"stdin ended: the form is cancelled"}},
		{"url", `{"mode":"url"}`, "y\ny\n", []string{`\"action\":\"accept\"`}, []string{"asks you to open a URL: Sign in", mcptest.AskURL}},
	}
	for _, e := range eras {
		db := registerClientFeatures(t, e)
		for _, tt := range tests {
			t.Run(string(e)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				controller, terminal := openPTY(t)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := agtCommand(ctx, t, nil, db, "agent", "call", "a1", "mcp__fake__ask", tt.args)
				cmd.Stdin = terminal
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				// The answers wait in the terminal's input until agt reads
				// them, one line per read.
				if _, err := controller.Write([]byte(tt.answers)); err != nil {
					t.Fatal(err)
				}
				if err := cmd.Run(); err != nil {
					t.Fatalf("agt agent call: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
				}
				for _, w := range tt.wantStdout {
					if !strings.Contains(out.String(), w) {
						t.Errorf("stdout does not hold %s:\n%s", w, out.String())
					}
				}
				for _, w := range tt.wantStderr {
					if !strings.Contains(errb.String(), w) {
						t.Errorf("stderr does not say %q:\n%s", w, errb.String())
					}
				}
			})
		}
	}
}

// issue 29 item 2: while a call runs, its progress is one line on a
// terminal's stderr, rewritten in place and erased at the end.
func TestProgressLineOnATerminal(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db := registerClientFeatures(t, e)
			controller, terminal := openPTY(t)
			cmd := agtCommand(context.Background(), t, nil, db, "agent", "call", "a1", "mcp__fake__progress", `{"steps":3,"ms":1}`, "--yes")
			cmd.Stderr = terminal
			var out bytes.Buffer
			cmd.Stdout = &out
			_, seen := readTerminal(controller, "")
			if err := cmd.Run(); err != nil {
				t.Fatalf("agt agent call: %v", err)
			}
			terminal.Close() // the reader gets EIO once it has read everything
			got := <-seen
			if !strings.Contains(got, "progress 3/3: step 3") || !strings.HasSuffix(got, "\r\x1b[K") {
				t.Errorf("terminal stderr = %q, want the progress line, erased at the end", got)
			}
			if !strings.Contains(out.String(), "steps=3") {
				t.Errorf("stdout = %s", out.String())
			}
		})
	}
}

// issue 29 item 4: on a terminal, agt secret set asks for the value at a
// prompt that does not echo it; the value typed is stored.
func TestSecretPromptDoesNotEcho(t *testing.T) {
	t.Parallel()
	const value = "typed-S3cret-value"
	db := filepath.Join(t.TempDir(), "agt.db")
	controller, terminal := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd, seen := startSecretPrompt(ctx, t, db, controller, terminal, &out)
	if _, err := controller.Write([]byte(value + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agt secret set: %v", err)
	}
	terminal.Close()
	if got := <-seen; strings.Contains(got, value) {
		t.Errorf("the terminal echoed the value: %q", got)
	}
	if !strings.Contains(out.String(), "stored secret tok") {
		t.Errorf("stdout = %q", out.String())
	}
	s := &secretStore{path: filepath.Join(filepath.Dir(db), secretsFile), mode: storeFile}
	if v, err := s.Resolve(ctx, "fake", "tok"); v != value || err != nil {
		t.Errorf("the store resolves tok to a value of %d bytes (%v), want the one typed", len(v), err)
	}
}

// startSecretPrompt starts agt secret set tok on terminal, its stdout to
// out, and returns once agt asks for the value; seen gets all the
// terminal showed (readTerminal).
func startSecretPrompt(ctx context.Context, t *testing.T, db string, controller, terminal *os.File, out io.Writer) (cmd *exec.Cmd, seen <-chan string) {
	t.Helper()
	cmd = agtCommand(ctx, t, fileSecrets, db, "secret", "set", "tok")
	cmd.Stdin, cmd.Stderr, cmd.Stdout = terminal, terminal, out
	prompted, seen := readTerminal(controller, "(not shown): ")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-prompted:
	case <-ctx.Done():
		t.Fatal("no prompt")
	}
	return cmd, seen
}

// readTerminal reads what a terminal shows, through its controller, until
// the terminal side is closed (the read then fails with EIO): all gets
// the whole text; prompted is closed once the text holds prompt.
func readTerminal(controller *os.File, prompt string) (prompted <-chan struct{}, all <-chan string) {
	p, seen := make(chan struct{}), make(chan string, 1)
	go func() {
		var buf bytes.Buffer
		chunk := make([]byte, 4096)
		open := true
		for {
			n, err := controller.Read(chunk)
			buf.Write(chunk[:n])
			if open && strings.Contains(buf.String(), prompt) {
				close(p)
				open = false
			}
			if err != nil {
				seen <- buf.String()
				return
			}
		}
	}()
	return p, seen
}

// echoOn reports whether the terminal echoes what is typed.
func echoOn(t *testing.T, terminal *os.File) bool {
	t.Helper()
	var tio syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, terminal.Fd(), ioctlGetTermios, uintptr(unsafe.Pointer(&tio))); e != 0 {
		t.Fatalf("terminal attributes: %v", e)
	}
	return tio.Lflag&syscall.ECHO != 0
}

// The secret prompt turns the terminal's echo off; a SIGINT, SIGTERM,
// SIGQUIT or SIGHUP while it waits ends agt with the echo on again, as it
// found it (SIGQUIT and SIGHUP would end it at once, echo off).
func TestSecretPromptRestoresEchoOnSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			controller, terminal := openPTY(t)
			if !echoOn(t, terminal) {
				t.Fatal("the new terminal does not echo")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd, _ := startSecretPrompt(ctx, t, db, controller, terminal, io.Discard)
			if echoOn(t, terminal) {
				t.Fatal("the prompt echoes")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if code := exitCode(t, cmd, err); code == 0 {
				t.Errorf("agt secret set ended by %v: exit 0", sig)
			}
			if !echoOn(t, terminal) {
				t.Errorf("after %v the terminal's echo is still off", sig)
			}
		})
	}
}
