package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair, or skips the test where there is
// none.
func openPTY(t *testing.T) (controller, terminal *os.File) {
	t.Helper()
	controller, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { controller.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, controller.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlock pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, controller.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("pseudo-terminal number: %v", e)
	}
	terminal, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { terminal.Close() })
	return controller, terminal
}

// SPEC R4.2: without --yes, agent call asks a person on the terminal, and
// runs the call only on yes.
func TestCallAsksOnTheTerminal(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	log := filepath.Join(t.TempDir(), "calls.log")
	registerFake(t, db, "fake", "-call-log", log)
	mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "fake")

	tests := []struct {
		answer   string
		wantCode int
		want     string
		calls    int
	}{
		{"n\n", 1, "refused on the terminal", 0},
		{"y\n", 0, `"results"`, 1},
	}
	for _, tt := range tests {
		controller, terminal := openPTY(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, agtBinary, "--db", db, "agent", "call", "helper", "mcp__fake__search", `{"query":"a","limit":1}`)
		cmd.Stdin = terminal
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		// The answer waits in the terminal's input until agt reads it.
		if _, err := controller.Write([]byte(tt.answer)); err != nil {
			t.Fatal(err)
		}
		err := cmd.Run()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.wantCode || !strings.Contains(out.String(), tt.want) {
			t.Errorf("answer %q: exit %d, stdout %s", tt.answer, code, out.String())
		}
		if !strings.Contains(errb.String(), "Allow it? [y/N]") || !strings.Contains(errb.String(), "mcp:fake:search") {
			t.Errorf("answer %q: the question on stderr is %q", tt.answer, errb.String())
		}
		if got := len(calls(t, log)); got != tt.calls {
			t.Errorf("answer %q: the server received %d calls in all, want %d", tt.answer, got, tt.calls)
		}
	}
}

// Long operations report progress on stderr when it is a terminal, and
// stay quiet for scripts.
func TestProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "fake")

	r := mustRun(t, db, 0, "mcp", "probe", "fake")
	if strings.Contains(r.stderr, "probing") {
		t.Errorf("progress printed to a stderr that is not a terminal: %q", r.stderr)
	}

	controller, terminal := openPTY(t)
	cmd := exec.Command(agtBinary, "--db", db, "mcp", "probe", "fake")
	cmd.Stderr = terminal
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	seen := make(chan string, 1)
	go func() {
		var buf bytes.Buffer
		chunk := make([]byte, 4096)
		for {
			n, err := controller.Read(chunk)
			buf.Write(chunk[:n])
			if err != nil || strings.Contains(buf.String(), "\n") {
				seen <- buf.String()
				return
			}
		}
	}()
	if err := cmd.Run(); err != nil {
		t.Fatalf("agt mcp probe with a terminal on stderr: %v", err)
	}
	terminal.Close() // the reader gets EIO if nothing came
	if got := <-seen; !strings.Contains(got, "probing fake") {
		t.Errorf("terminal stderr = %q, want progress", got)
	}
}
