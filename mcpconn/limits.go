package mcpconn

import "time"

// Limits bounds what a Connector's sessions accept from their servers and
// how long they wait for them. Every field's zero value (or a value below
// zero, but for MaxListingTTL) means its default, given in its comment;
// a nil ConnectorOptions.Limits means all defaults.
type Limits struct {
	// MaxTools bounds the tools one server may list, all pages together;
	// the walk fails as soon as a page goes past it, before the page is
	// decoded. 0 means 10000.
	MaxTools int
	// MaxListBytes bounds the bytes of one tools/list walk, all pages
	// together, counted as the pages arrive. 0 means 32 MiB.
	MaxListBytes int
	// MaxMessageBytes bounds one message from a server, whatever the
	// transport: a stdio line, an HTTP response body, one server-sent
	// event. A longer message ends the session with a *LimitError as soon
	// as the bound is passed. 0 means 16 MiB.
	MaxMessageBytes int
	// MaxServerMessageRate bounds the messages per second a server sends
	// on its own (notifications and requests; replies are not counted),
	// after a burst of ten seconds' worth. A server past it is closed as
	// misbehaving, with a *LimitError. 0 means 1000 per second.
	MaxServerMessageRate int
	// ReconnectBurst and MinReconnectInterval bound the rate at which one
	// streamable HTTP event stream (a call's, a listing's or the
	// standalone stream) is reconnected after the server ended it: at
	// most ReconnectBurst reconnections at once, each after the delay the
	// server asked for, then at most one per MinReconnectInterval, however
	// short a retry the server asks for (a reconnection sooner waits). A
	// server that polls (it ends the stream after a priming event and asks
	// for a short retry, as the protocol allows) keeps its session for
	// ever; one that ends its streams in a loop costs one request per
	// interval and stream. 0 means 10 and 1 s.
	ReconnectBurst       int
	MinReconnectInterval time.Duration
	// MaxReconnectDelay bounds the wait before a reconnection that a
	// streamable HTTP server may ask for with the retry field of its
	// event stream; a longer one waits this long. 0 means 30 s. A call's
	// reconnections all end with its tool timeout anyway.
	MaxReconnectDelay time.Duration

	// MaxCallDuration bounds one tool call in all. A call's timeout
	// (tool_timeout_ms) is an idle timeout: each progress notification
	// the server sends for the call restarts it, and it is held while a
	// handler answers a request of the server for the call; but no call
	// lasts longer than MaxCallDuration (or tool_timeout_ms, when that is
	// longer). 0 means 10 minutes.
	MaxCallDuration time.Duration
	// MaxInputRounds bounds the rounds of one tool call a server may ask
	// for input in (input_required answers, the multi round-trip of
	// protocol 2026-07-28; see Multi round-trip requests in the package
	// doc): past it the call fails with ErrInputRequired and is not sent
	// again. 0 means 10.
	MaxInputRounds int
	// MinTaskPollInterval is the least time between two polls of one
	// task a server runs for a call (see Tasks in the package doc),
	// whatever the server suggests; a task whose server suggests none is
	// polled at twice this. 0 means 1 s.
	MinTaskPollInterval time.Duration
	// MaxTaskPollInterval is the most: a server that suggests longer is
	// polled at this interval. 0 means 30 s.
	MaxTaskPollInterval time.Duration
	// TaskTTL is how long a task is asked to live when the client asks
	// for it (protocol 2025-11-25; the server may choose another). 0 means
	// 1 h.
	TaskTTL time.Duration

	// MaxServerRequests bounds the requests of one server (elicitation,
	// sampling, roots) a session answers at once, a shared connection
	// for all its sessions together; more are refused. 0 means 4.
	MaxServerRequests int
	// MaxServerRequestTime bounds the answer to one request of a server:
	// the handler's context ends then. 0 means 10 minutes.
	MaxServerRequestTime time.Duration
	// MaxElicitationBytes bounds one elicitation request (its message,
	// url and requested schema as JSON); a larger one is refused. 0 means
	// 64 KiB.
	MaxElicitationBytes int
	// MaxSamplingMessages bounds the messages of one sampling request; a
	// request with more is refused. 0 means 100.
	MaxSamplingMessages int
	// MaxSamplingBytes bounds one sampling request as JSON; a larger one
	// is refused. 0 means 1 MiB.
	MaxSamplingBytes int
	// MaxNotificationBytes bounds the server's text in one progress or
	// log notification handed to a handler (a longer text is cut, with
	// "..."). 0 means 8 KiB.
	MaxNotificationBytes int

	// EraProbeTimeout bounds the wait for a stdio server's answer to the
	// server/discover probe: a server silent that long is taken for a
	// legacy one that ignores unknown methods, and gets the initialize
	// handshake. It also bounds how long a session's first Session.Tools
	// waits for a modern server to acknowledge the session's
	// subscriptions/listen (Change notifications in the package doc).
	// 0 means 2 s.
	EraProbeTimeout time.Duration
	// MaxListingTTL caps how long a modern server's tools/list result is
	// reused by the Connector's other sessions of the same registration
	// (see Listing cache in the package doc), whatever ttlMs the server
	// sent. 0 means 10 minutes; less than 0 turns the cache off: every
	// session lists.
	MaxListingTTL time.Duration
	// SharedIdleTimeout is how long a shared connection (see Shared
	// connections in the package doc) stays open after the last session
	// using it closed, for the next one to take; then it closes. 0 means
	// 30 s.
	SharedIdleTimeout time.Duration
	// TerminateGrace is how long Close waits after closing a stdio
	// server's stdin, and again after SIGTERM, before escalating, and how
	// long it waits for a streamable HTTP server to answer the DELETE
	// that ends its session. 0 means 2 s.
	TerminateGrace time.Duration
	// StderrTailBytes is how much of a stdio server's stderr is kept for
	// errors and Session.StderrTail. 0 means 8 KiB.
	StderrTailBytes int
}

// The defaults of Limits.
const (
	defaultMaxTools             = 10000
	defaultMaxListBytes         = 32 << 20
	defaultMaxMessageBytes      = 16 << 20
	defaultMaxServerMessageRate = 1000
	defaultReconnectBurst       = 10
	defaultMinReconnectInterval = time.Second
	defaultMaxReconnectDelay    = 30 * time.Second
	defaultMaxCallDuration      = 10 * time.Minute
	defaultMaxInputRounds       = 10
	defaultMinTaskPoll          = time.Second
	defaultMaxTaskPoll          = 30 * time.Second
	defaultTaskTTL              = time.Hour
	defaultMaxServerRequests    = 4
	defaultMaxServerRequestTime = 10 * time.Minute
	defaultMaxElicitationBytes  = 64 << 10
	defaultMaxSamplingMessages  = 100
	defaultMaxSamplingBytes     = 1 << 20
	defaultMaxNotificationBytes = 8 << 10
	defaultEraProbeTimeout      = 2 * time.Second
	defaultMaxListingTTL        = 10 * time.Minute
	defaultSharedIdleTimeout    = 30 * time.Second
	defaultTerminateGrace       = 2 * time.Second
	defaultStderrTail           = 8 << 10
)

// resolved returns l (nil: the zero Limits) with every unset field set to
// its default.
func (l *Limits) resolved() Limits {
	var r Limits
	if l != nil {
		r = *l
	}
	for _, d := range []struct {
		v   *int
		def int
	}{
		{&r.MaxTools, defaultMaxTools}, {&r.MaxListBytes, defaultMaxListBytes}, {&r.MaxMessageBytes, defaultMaxMessageBytes},
		{&r.MaxServerMessageRate, defaultMaxServerMessageRate}, {&r.ReconnectBurst, defaultReconnectBurst},
		{&r.MaxInputRounds, defaultMaxInputRounds}, {&r.MaxServerRequests, defaultMaxServerRequests},
		{&r.MaxElicitationBytes, defaultMaxElicitationBytes}, {&r.MaxSamplingMessages, defaultMaxSamplingMessages},
		{&r.MaxSamplingBytes, defaultMaxSamplingBytes}, {&r.MaxNotificationBytes, defaultMaxNotificationBytes},
		{&r.StderrTailBytes, defaultStderrTail},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&r.MinReconnectInterval, defaultMinReconnectInterval}, {&r.MaxReconnectDelay, defaultMaxReconnectDelay},
		{&r.MaxCallDuration, defaultMaxCallDuration}, {&r.MinTaskPollInterval, defaultMinTaskPoll},
		{&r.MaxTaskPollInterval, defaultMaxTaskPoll}, {&r.TaskTTL, defaultTaskTTL},
		{&r.MaxServerRequestTime, defaultMaxServerRequestTime}, {&r.EraProbeTimeout, defaultEraProbeTimeout},
		{&r.SharedIdleTimeout, defaultSharedIdleTimeout}, {&r.TerminateGrace, defaultTerminateGrace},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if r.MaxListingTTL == 0 {
		r.MaxListingTTL = defaultMaxListingTTL
	}
	r.MaxTaskPollInterval = max(r.MaxTaskPollInterval, r.MinTaskPollInterval)
	return r
}
