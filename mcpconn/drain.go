package mcpconn

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// A request's response and the connection under it (issue 25 item 11).
//
// The go-sdk reads the end of a request's event stream (what follows
// the answer) after it has handed the answer on, so that net/http can
// put the connection back in its pool; it reads it with the request's
// context, which is the call's, and a call's context ends when the call
// returns. A cancel that came first made net/http drop the connection,
// and the next request opened a new one (about one in two calls).
//
// So a streamable HTTP POST that sends a request goes with a context of
// its own (streamLease), which the request's context ends only while the
// answer has not come: a call abandoned before its answer (the caller's
// cancel, the tool timeout, the longest call time) has its request or
// stream cut at once, as before. Once the wire layer has read the answer
// (eventBody), the stream has drainGrace and maxDrainBytes more to reach
// its end, whatever the call does; past either it is cut. The session's
// close, or a bound broken, cuts it at once.

const (
	// drainGrace is how long a response stream may go on after the
	// answer it carries, for its end to return the connection to the
	// pool: a server ends the stream as it sends the answer, so the end
	// is normally there already.
	drainGrace = 250 * time.Millisecond
	// maxDrainBytes bounds what a response stream may send after its
	// answer (nothing reads it: the go-sdk discards it).
	maxDrainBytes = 64 << 10
)

// errDrainCut is the cause of a response stream cut because it did not
// end within drainGrace or maxDrainBytes of its answer.
var errDrainCut = errors.New("the response stream did not end after its answer")

// errSessionClosing is the cause of a response stream cut by the
// session's close.
var errSessionClosing = errors.New("the session closed")

// streamLease is the context of one POST, detached from the request's
// (see above).
type streamLease struct {
	cancel context.CancelCauseFunc
	grace  time.Duration

	mu        sync.Mutex
	stopOrig  func() bool
	stopClose func() bool // nil: no session close to follow
	answered  bool
	ended     bool
	timer     *time.Timer
}

// detach returns req with a context of its own that carries the same
// values, and its lease: it ends when ctx ends before the answer came,
// when closing ends, or when end is called (the body is closed).
func detach(req *http.Request, closing context.Context, grace time.Duration) (*http.Request, *streamLease) {
	orig := req.Context()
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(orig))
	if grace <= 0 {
		grace = drainGrace
	}
	l := &streamLease{cancel: cancel, grace: grace}
	// Under the lock: a context that has ended runs its func at once.
	l.mu.Lock()
	l.stopOrig = context.AfterFunc(orig, func() { l.abandon(context.Cause(orig)) })
	if closing != nil {
		l.stopClose = context.AfterFunc(closing, func() { l.end(errSessionClosing) })
	}
	l.mu.Unlock()
	return req.WithContext(ctx), l
}

// abandon is the request's own context ending: the stream is cut unless
// its answer came.
func (l *streamLease) abandon(cause error) {
	l.mu.Lock()
	cut := !l.answered
	l.mu.Unlock()
	if cut {
		l.end(cause)
	}
}

// answer notes that the stream carried its answer: from now on only the
// grace bounds it.
func (l *streamLease) answer() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.answered || l.ended {
		return
	}
	l.answered = true
	l.timer = time.AfterFunc(l.grace, func() { l.end(errDrainCut) })
}

// end ends the lease: the request's context is cancelled with cause (a
// request or stream still going is cut; one done is not affected).
func (l *streamLease) end(cause error) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return
	}
	l.ended = true
	t, stopOrig, stopClose := l.timer, l.stopOrig, l.stopClose
	l.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	stopOrig()
	if stopClose != nil {
		stopClose()
	}
	l.cancel(cause)
}

// leasedBody is a response body that is not an event stream (the
// go-sdk reads it whole before it hands the answer on): it ends its
// lease when closed.
type leasedBody struct {
	io.ReadCloser
	lease *streamLease
}

func (b *leasedBody) Close() error {
	err := b.ReadCloser.Close()
	b.lease.end(nil)
	return err
}

// endsWithSession returns req with a context that also ends when closing
// ends, and the func that releases it once the response is done.
func endsWithSession(req *http.Request, closing context.Context) (*http.Request, func()) {
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(closing, func() { cancel(errSessionClosing) })
	return req.WithContext(ctx), func() { stop(); cancel(nil) }
}

// releasingBody is a response body whose request context is released
// when it is closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
