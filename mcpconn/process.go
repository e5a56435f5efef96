package mcpconn

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agtsdk/agt/internal/text"
)

// process is a started stdio server: its pipes, its stderr ring and its
// process group.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of the child's stdin
	stdout *stdoutReader
	stderr *ring

	stderrR    *os.File
	stderrDone chan struct{}

	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // set before exited is closed

	stopOnce sync.Once
	stopErr  error
}

// startProcess starts path with args in dir with env, in its own process
// group, with all three pipes owned by us (no exec copying goroutines).
// scrub (nil: none) masks the connection's values in the stderr tail and
// the stdout head it keeps (the screen masks them in the messages).
func startProcess(path string, argv []string, dir string, env []string, stderrTail int, scrub *scrubber) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   argv,
		Dir:    dir,
		Env:    env,
		Stdin:  inR,
		Stdout: outW,
		Stderr: errW,
	}
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, err
	}
	// The child holds its ends now; ours would keep EOF from ever coming.
	closeAll(inR, outW, errW)
	p := &process{
		cmd:        cmd,
		stdin:      inW,
		stdout:     &stdoutReader{f: outR, scrub: scrub},
		stderr:     newRing(stderrTail, scrub),
		stderrR:    errR,
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	go func() {
		defer close(p.stderrDone)
		_, _ = io.Copy(p.stderr, errR)
	}()
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// exitStatus describes how the process ended ("exit status 3", "signal:
// killed"), or "" while it runs.
func (p *process) exitStatus() string {
	select {
	case <-p.exited:
		if p.cmd.ProcessState != nil {
			return p.cmd.ProcessState.String()
		}
		if p.waitErr != nil {
			return p.waitErr.Error()
		}
		return "exited"
	default:
		return ""
	}
}

// awaitExit waits up to d for the process to end and reports whether it did.
func (p *process) awaitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// awaitStderr waits up to d for stderr to reach its end (every holder of
// the pipe exited), so the tail holds the last lines.
func (p *process) awaitStderr(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
}

// stop ends the process and everything left in its group: close stdin,
// wait grace, SIGTERM the group, wait grace, SIGKILL the group; then the
// same for members that outlived the leader. It reaps the leader (no
// zombie) and returns an error only if the group could not be ended. It is
// idempotent.
func (p *process) stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		_ = p.stdin.Close() // MCP stdio shutdown: the server sees EOF
		if !p.awaitExit(grace) {
			_ = signalGroup(p.cmd, sigTerm)
			if !p.awaitExit(grace) {
				_ = signalGroup(p.cmd, sigKill)
				if !p.awaitExit(5 * time.Second) {
					p.stopErr = fmt.Errorf("process %d did not end after SIGKILL", p.cmd.Process.Pid)
				}
			}
		}
		// The leader is gone; children it left in the group are orphans
		// unless we end them too.
		if p.stopErr == nil && groupAlive(p.cmd) {
			_ = signalGroup(p.cmd, sigTerm)
			p.awaitGroupGone(grace)
			if groupAlive(p.cmd) {
				_ = signalGroup(p.cmd, sigKill)
				p.awaitGroupGone(5 * time.Second)
			}
		}
		// stderr ends when the last holder exits; one that escaped the
		// group (setsid) must not keep our reader goroutine alive.
		select {
		case <-p.stderrDone:
		case <-time.After(200 * time.Millisecond):
			_ = p.stderrR.Close()
			<-p.stderrDone
		}
		_ = p.stderrR.Close()
		_ = p.stdout.Close()
	})
	return p.stopErr
}

// awaitGroupGone waits up to d for the leader's group to be empty. Members
// that outlived the leader were adopted by init, or by this process when
// it is PID 1 (a container) or a child subreaper: those are reaped here,
// else they would stay zombies. Only called once the leader is reaped, so
// reaping by group never takes the leader from cmd.Wait.
func (p *process) awaitGroupGone(d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		reapGroup(p.cmd)
		if !groupAlive(p.cmd) || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stdoutReader is the child's stdout as the transport reads it; it keeps
// the first bytes so a handshake failure can say what the server printed
// instead of JSON.
type stdoutReader struct {
	f     *os.File
	scrub *scrubber // masks the connection's values in nonJSONPrefix; nil: none
	mu    sync.Mutex
	first []byte
}

const stdoutPrefixLen = 200

func (r *stdoutReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if n > 0 {
		r.mu.Lock()
		if room := stdoutPrefixLen - len(r.first); room > 0 {
			r.first = append(r.first, p[:min(n, room)]...)
		}
		r.mu.Unlock()
	}
	return n, err
}

func (r *stdoutReader) Close() error { return r.f.Close() }

// nonJSONPrefix returns the first line the server wrote on stdout if it
// cannot start a JSON-RPC message, else "", with the connection's values
// masked.
func (r *stdoutReader) nonJSONPrefix() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.TrimLeft(string(r.first), " \t\r\n")
	if s == "" || s[0] == '{' || s[0] == '[' {
		return ""
	}
	line, _, whole := strings.Cut(s, "\n")
	line = strings.TrimRight(line, "\r")
	// Masked before the cut, so no cut leaves half a value.
	line = r.scrub.text(line, false, !whole && len(r.first) == stdoutPrefixLen)
	return text.Bound(line, 80)
}

// ring keeps the last n bytes written to it.
type ring struct {
	mu    sync.Mutex
	buf   []byte
	size  int
	total int64
	scrub *scrubber // masks the connection's values in String; nil: none
}

func newRing(size int, scrub *scrubber) *ring {
	return &ring{size: size, buf: make([]byte, 0, min(size, 4096)), scrub: scrub}
}

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(len(p))
	if len(p) >= r.size {
		r.buf = append(r.buf[:0], p[len(p)-r.size:]...)
		return len(p), nil
	}
	if over := len(r.buf) + len(p) - r.size; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
	return len(p), nil
}

// String returns the kept tail, starting at a line boundary when bytes were
// dropped, with the connection's values masked (a piece of one at either
// end too: the value may go on past the kept bytes).
func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := string(r.buf)
	dropped := r.total > int64(len(r.buf))
	if dropped {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	s = r.scrub.text(s, dropped, !strings.HasSuffix(s, "\n"))
	if dropped {
		s = "[...]\n" + s
	}
	return s
}
