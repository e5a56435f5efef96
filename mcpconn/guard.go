package mcpconn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/agtsdk/agt/internal/weborigin"
	"golang.org/x/time/rate"
)

// ErrLimit is wrapped by every error that reports a server going past one
// of the bounds a Connector keeps (message size, message rate, listing
// size, a redirect to another origin); test with errors.Is. The *LimitError
// in the chain says which bound.
var ErrLimit = errors.New("mcpconn: the server went past a limit")

// LimitError says which bound a server went past. Its message names the
// option that sets the bound; it never holds the server's data.
type LimitError struct {
	// Option names the setting that holds the bound, such as
	// "ConnectorOptions.Limits.MaxMessageBytes".
	Option string
	// What says what went past it, such as "a message from the server".
	What string
	// Limit is the bound, in the unit What counts.
	Limit int64
	// Unit is what Limit counts: "bytes", "tools", "messages per second".
	Unit string
}

func (e *LimitError) Error() string {
	if e.Unit == "" {
		return "mcpconn: " + e.What + " (" + e.Option + ")"
	}
	return fmt.Sprintf("mcpconn: %s exceeds %d %s (%s)", e.What, e.Limit, e.Unit, e.Option)
}

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// peerGuard keeps the bounds of one session on what its server sends: the
// size of one message and the rate of the messages the server starts
// (notifications and requests). The byte readers feed it before the go-sdk
// decodes anything: the stdio reader, every HTTP response body and event
// stream, and the message reader of the other transports. The first bound
// broken trips it for good: the reader that saw it returns the error, and
// onTrip ends the session's requests in flight.
type peerGuard struct {
	maxMessage int
	rate       int           // server-started messages per second, sustained
	limiter    *rate.Limiter // rate, after a burst of burstSeconds' worth

	mu      sync.Mutex
	credits int // replies still owed to us (streamable HTTP: one per POST)

	tripped atomic.Pointer[LimitError]
	onTrip  func()
}

// maxOwedReplies caps the replies the streamable reader lets pass
// uncounted, so requests never answered cannot buy a server a flood.
const maxOwedReplies = 10_000

func newPeerGuard(maxMessage, perSecond int) *peerGuard {
	// A rate whose burst does not fit an int gets the largest burst, not
	// an overflowed one that would refuse every message.
	burst := math.MaxInt
	if perSecond <= math.MaxInt/burstSeconds {
		burst = perSecond * burstSeconds
	}
	return &peerGuard{maxMessage: maxMessage, rate: perSecond,
		limiter: rate.NewLimiter(rate.Limit(perSecond), burst), onTrip: func() {}}
}

// burstSeconds: a server may send this many seconds' worth of messages at
// once (a batch of progress or log notifications) before the rate counts.
const burstSeconds = 10

// trip records the first breach, runs onTrip once, and returns the
// breach that stands.
func (g *peerGuard) trip(e *LimitError) *LimitError {
	if g.tripped.CompareAndSwap(nil, e) {
		g.onTrip()
		return e
	}
	return g.tripped.Load()
}

// breach returns the bound the server broke, or nil.
func (g *peerGuard) breach() *LimitError { return g.tripped.Load() }

func (g *peerGuard) tooLarge() *LimitError {
	return g.trip(&LimitError{Option: "ConnectorOptions.Limits.MaxMessageBytes", What: "a message from the server",
		Limit: int64(g.maxMessage), Unit: "bytes"})
}

// owe notes a request whose reply the streamable reader will count.
func (g *peerGuard) owe() {
	g.mu.Lock()
	g.credits = min(g.credits+1, maxOwedReplies)
	g.mu.Unlock()
}

// message counts one message of the server's. owed: it may be the reply
// to a request of ours (see owe), which the rate does not count. A message
// the server started that goes past the rate trips the guard.
func (g *peerGuard) message(owed bool) error {
	if e := g.breach(); e != nil {
		return e
	}
	if owed {
		g.mu.Lock()
		paid := g.credits > 0
		if paid {
			g.credits--
		}
		g.mu.Unlock()
		if paid {
			return nil
		}
	}
	if g.limiter.Allow() {
		return nil
	}
	return g.trip(&LimitError{Option: "ConnectorOptions.Limits.MaxServerMessageRate",
		What:  "the messages the server sends on its own (notifications and requests)",
		Limit: int64(g.rate), Unit: "messages per second"})
}

// redirected refuses a redirect to another origin: the registration's
// headers belong to its own origin only. The error names that origin
// (scheme://host:port, as the launch allowlist writes it), never the
// path or query, which may carry a token.
func (g *peerGuard) redirected(to *url.URL) *LimitError {
	return g.trip(&LimitError{Option: "the server's url",
		What: "the server redirected to another origin (" + boundServerText(weborigin.Of(to)) + "); the registered headers go only to the registered origin, so the redirect is not followed: register the new url if it is trusted"})
}

// lineGuard bounds the lines of a stdio server's stdout: one line is one
// JSON-RPC message.
type lineGuard struct {
	guard *peerGuard
	line  int // bytes of the current line so far
}

// lineEnds accounts for p, the next bytes of stdout: it appends the index
// of each '\n' in p to ends, and returns the guard's error once a line is
// longer than the message bound.
func (l *lineGuard) lineEnds(p []byte, ends []int) ([]int, error) {
	off := 0
	for {
		i := bytes.IndexByte(p[off:], '\n')
		if i < 0 {
			l.line += len(p) - off
			break
		}
		if l.line+i > l.guard.maxMessage {
			return ends, l.guard.tooLarge()
		}
		ends = append(ends, off+i)
		l.line, off = 0, off+i+1
	}
	if l.line > l.guard.maxMessage {
		return ends, l.guard.tooLarge()
	}
	return ends, nil
}

// boundedBody bounds an HTTP response body that is not an event stream
// as one message (an event stream is bounded event by event by the wire
// layer, eventBody). Its Read fails with the guard's *LimitError as soon
// as the bound is passed, so the reader stops within one buffer of it.
type boundedBody struct {
	io.ReadCloser
	guard *peerGuard
	n     int // bytes of the body so far
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if e := b.guard.breach(); e != nil {
		return 0, e
	}
	n, err := b.ReadCloser.Read(p)
	b.n += n
	if b.n > b.guard.maxMessage {
		return 0, b.guard.tooLarge()
	}
	return n, err
}
