package mcpconn

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// maxQueuedNotifications bounds the notifications read and not yet
// handed to their handler (Progress, Log, ToolsChanged: one queue per
// session, in order); more are dropped and counted
// (Session.NotificationsDropped).
const maxQueuedNotifications = 256

// noteQueue carries the notifications read from a session's server to
// their handlers, one at a time and in the order they were read
// (deliverNotifications), and counts them, so that a call can wait until
// the notifications read before its answer have been handled
// (awaitNotes): its result never overtakes the progress and log lines
// the server sent before it.
type noteQueue struct {
	ch      chan func(context.Context)
	dropped atomic.Uint64

	mu     sync.Mutex
	queued uint64 // notifications put on ch so far
	done   uint64 // of those, handled so far (in ch's order)
	// moved is closed when done grows, for the calls waiting on it; nil
	// while none waits.
	moved chan struct{}
}

func newNoteQueue() *noteQueue {
	return &noteQueue{ch: make(chan func(context.Context), maxQueuedNotifications)}
}

// put queues f, or drops it when the queue is full: a slow handler must
// not make the session hold an unbounded backlog of a flooding server's
// messages.
func (q *noteQueue) put(f func(context.Context)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case q.ch <- f:
		q.queued++
	default:
		q.dropped.Add(1)
	}
}

// mark returns how many notifications have been queued so far: a call
// answered now waits for that many to be handled. 0 for a nil queue.
func (q *noteQueue) mark() uint64 {
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// handled counts one more notification handled.
func (q *noteQueue) handled() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.done++
	if q.moved != nil {
		close(q.moved)
		q.moved = nil
	}
}

// wait returns once the first n notifications queued have been handled,
// or ctx or stop ends, or after bound.
func (q *noteQueue) wait(ctx context.Context, n uint64, stop <-chan struct{}, bound time.Duration) {
	if q == nil || n == 0 {
		return
	}
	var timeout <-chan time.Time
	for {
		q.mu.Lock()
		if q.done >= n {
			q.mu.Unlock()
			return
		}
		if q.moved == nil {
			q.moved = make(chan struct{})
		}
		moved := q.moved
		q.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(bound)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-timeout:
			return
		}
	}
}
