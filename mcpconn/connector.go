package mcpconn

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/internal/text"
	"github.com/agtsdk/agt/internal/weborigin"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of a document's timeouts.
const (
	// defaultStartupTimeout bounds start plus handshake when the document
	// has no startup_timeout_ms.
	defaultStartupTimeout = 30 * time.Second
	// defaultToolTimeout bounds one tool call (and one tools/list) when the
	// document has no tool_timeout_ms.
	defaultToolTimeout = 60 * time.Second
)

// ConnectorOptions configures a Connector. A nil *ConnectorOptions means all
// defaults.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
type ConnectorOptions struct {
	// ProtocolVersion pins the MCP protocol version of every server, for
	// the whole host: a legacy version (2025-11-25 and earlier) is asked
	// for in the initialize handshake at once, without the era probe; a
	// modern one (2026-07-28) with server/discover, and a server that
	// does not speak it fails Connect instead of falling back. A
	// document's protocol_version wins over it. "" means no pin: prefer
	// the modern revision and fall back to the legacy one (see Protocol
	// eras in the package doc).
	ProtocolVersion string
	// LaunchEnv is how servers are launched: the part of the host's
	// environment a stdio server inherits, the launch allowlist (which
	// commands, working directories and URL origins may be started or
	// contacted; a refused server fails Connect with ErrNotAllowed before
	// anything starts), and how the ${secret:NAME} and ${env:NAME}
	// references of a document resolve (resource.LaunchEnv). Nil means
	// its zero value: the default inherited list, any server, no secret
	// reference resolved. NewConnector copies it. Give the same value to
	// resource.ServiceOptions.LaunchEnv (agt.New does), so that Test and
	// the writes of agent callers judge by the same allowlist.
	LaunchEnv *resource.LaunchEnv

	// Dial, when set and returning a non-nil transport, replaces starting or
	// reaching the server by the document (for embedding and in-memory
	// tests); the handshake, timeouts, raw schema capture and errors stay
	// the same. A nil transport with a nil error falls back to the
	// document. Nil means always by the document.
	Dial func(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (mcp.Transport, error)

	// HTTPTransport carries the requests to remote servers. Nil means a
	// fresh clone of http.DefaultTransport per session, closed with it.
	HTTPTransport http.RoundTripper

	// Schema bounds the compilation of each listed tool's inputSchema, for
	// probes and Runs alike (LoadTools). Nil means toolschema's defaults.
	Schema *toolschema.Options
	// Limits bounds what the sessions accept from their servers and how
	// long they wait (Limits). Nil means every default; a zero field
	// means its default (each field's doc gives it). NewConnector copies it.
	Limits *Limits
	// ClientInfo is the implementation named in the handshake. Nil means
	// {"name":"agt","version":"1"}.
	ClientInfo *mcp.Implementation

	// Logger receives what a shared server sends that belongs to no one
	// session: a log line while calls of several sessions, or none, are
	// in flight, and a request refused then (at most a burst of 100
	// lines, then 20 per second, per connection); and, for every
	// session, the messages of its server that were dropped because no
	// request can read them (agt.server_message_dropped: an answer with a
	// null id, a notification nested past 1000 levels; the reason,
	// never the data; bounded the same way). Nil means slog.Default().
	Logger *slog.Logger

	// OAuth configures the servers whose document has an "oauth" field:
	// where their tokens are kept and the host's interactive step. Nil
	// means an in-memory token store and no interactive step (a server
	// that needs a login fails Connect with ErrLoginRequired).
	OAuth *OAuthOptions
}

// Connector turns a stored MCP document into a connected Session. It is
// the only way agt starts or reaches a server: a Run and the Prober both
// use it. A Connector is safe for concurrent use.
type Connector struct {
	opts      ConnectorOptions
	lim       Limits // opts.Limits, resolved
	launchEnv resource.LaunchEnv
	info      *mcp.Implementation
	// client serves the sessions without handlers: it declares nothing.
	client *mcp.Client
	oauth  *oauthSetup
	// pool holds the shared connections.
	pool *sharedPool
	// eras remembers the era of each server reached.
	eras eraCache
	// listings keeps the listings of modern servers for their ttlMs.
	listings *listingCache
	// drainGrace replaces drainGrace (tests); 0: drainGrace.
	drainGrace time.Duration
}

// NewConnector returns a Connector; opts may be nil.
func NewConnector(opts *ConnectorOptions) *Connector {
	c := &Connector{}
	if opts != nil {
		c.opts = *opts
	}
	c.lim = c.opts.Limits.resolved()
	c.opts.Limits = nil // read c.lim
	c.listings = newListingCache(c.lim.MaxListingTTL)
	// A copy: the caller's slices may change after this call.
	if c.opts.LaunchEnv != nil {
		c.launchEnv = c.opts.LaunchEnv.Clone()
	}
	c.opts.LaunchEnv = nil // read c.launchEnv
	if c.opts.Logger == nil {
		c.opts.Logger = slog.Default()
	}
	c.pool = &sharedPool{idle: c.lim.SharedIdleTimeout, logger: c.opts.Logger, entries: map[sharedKey]*sharedConn{}, open: map[*sharedConn]struct{}{}}
	c.pool.life, c.pool.endLife = context.WithCancel(context.Background())
	c.oauth = newOAuthSetup(c.opts.OAuth, c.opts.HTTPTransport)
	c.info = c.opts.ClientInfo
	if c.info == nil {
		c.info = &mcp.Implementation{Name: "agt", Version: "1"}
	}
	// No client capabilities, and nothing answered but ping (the go-sdk
	// would answer roots/list with an empty list).
	c.client = mcp.NewClient(c.info, &mcp.ClientOptions{Capabilities: clientCapabilities(), MultiRoundTrip: noMultiRoundTrip()})
	c.client.AddReceivingMiddleware(refuseUndeclared)
	return c
}

var errStartupTimeout = errors.New("startup timeout")

// Connect starts or reaches the server srv stored under ref, runs the
// initialize handshake and returns the open Session. The caller must Close
// it. Start plus handshake are bounded by the document's
// startup_timeout_ms (default 30 s) and by ctx.
//
// opts (nil means none) are the session's own choices: the handlers of
// what the server sends on its own, the registration's revision, and
// whether to share. A session with Handlers has a go-sdk client of its own
// that declares exactly the capabilities whose handlers are set; without,
// it declares none.
//
// A document with "shared": true, given with opts.Share, is shared: the
// Session is a lease on the one connection of (ref, opts.Revision, the
// document, the capabilities its Handlers declare), made by the first
// such Connect and kept by the Connector (see Shared connections in the
// package doc). Close of a lease leaves the connection to the others.
//
// Errors: *Error wrapping ErrNoAbsoluteCwd, ErrInvalidServer, ErrStart or
// ErrHandshake, with the stderr tail; or the caller's ctx error.
func (c *Connector) Connect(ctx context.Context, ref resource.Ref, srv resource.MCPServer, opts *ConnectOptions) (*Session, error) {
	if srv.Shared && opts != nil && opts.Share {
		key, err := newSharedKey(ref, opts.Revision, srv, opts.Handlers)
		if err != nil {
			return nil, &Error{Ref: ref, Op: "connect", Kind: ErrInvalidServer, Detail: "the document cannot be encoded", Err: err}
		}
		return c.connectShared(ctx, ref, srv, opts, key)
	}
	return c.connect(ctx, ref, srv, opts, nil)
}

// connect is Connect, but never shared, or the connection of a Login when login is set.
// It speaks the era the plan says; when a cached era fails (the server
// refused the handshake) or a stdio server's answer to the probe came
// after its timeout, it starts once more with what it learned.
func (c *Connector) connect(ctx context.Context, ref resource.Ref, srv resource.MCPServer, opts *ConnectOptions, login *LoginOptions) (*Session, error) {
	plan := c.eraPlan(ref, srv)
	s, err := c.connectEra(ctx, ref, srv, opts, login, plan)
	if err == nil || plan.pinned || ctx.Err() != nil {
		return s, err
	}
	var e *Error
	if !errors.As(err, &e) {
		return s, err
	}
	switch {
	case e.lateModern:
		// A modern server slower to start than the probe timeout.
		c.eras.set(plan.key, ModernProtocolVersion)
	case plan.cached && e.refused:
		c.eras.forget(plan.key)
	default:
		return s, err
	}
	return c.connectEra(ctx, ref, srv, opts, login, c.eraPlan(ref, srv))
}

// eraPlan says how to speak to srv: the document's pin, the Connector's,
// the cached era, else the probe.
func (c *Connector) eraPlan(ref resource.Ref, srv resource.MCPServer) eraPlan {
	p := eraPlan{version: srv.ProtocolVersion, pinned: srv.ProtocolVersion != ""}
	switch p.version {
	case mcpdoc.EraModern:
		p.version = ModernProtocolVersion
	case mcpdoc.EraLegacy:
		p.version = LegacyProtocolVersion
	}
	if !p.pinned && c.opts.ProtocolVersion != "" {
		p.version, p.pinned = c.opts.ProtocolVersion, true
	}
	if p.pinned {
		return p
	}
	if srv.Transport() == resource.TransportStdio {
		p.key.ref = ref
		p.key.doc, _ = documentDigest(srv) // a document that does not encode does not start anyway
	} else if u, err := url.Parse(srv.URL); err == nil {
		p.key.origin = weborigin.Of(u)
	}
	if v := c.eras.get(p.key); v != "" {
		p.version, p.cached = v, true
	}
	if !p.cached && srv.Transport() == resource.TransportStdio {
		p.probe = c.lim.EraProbeTimeout
	}
	return p
}

// connectEra is one start of the server, speaking as plan says.
func (c *Connector) connectEra(ctx context.Context, ref resource.Ref, srv resource.MCPServer, opts *ConnectOptions, login *LoginOptions, plan eraPlan) (*Session, error) {
	startup := msOr(srv.StartupTimeoutMS, defaultStartupTimeout)
	if login != nil {
		// The person's step is part of this handshake.
		startup = login.Timeout
		if startup <= 0 {
			startup = DefaultLoginTimeout
		}
	}
	sctx, cancel := context.WithTimeoutCause(ctx, startup, errStartupTimeout)
	defer cancel()

	s := &Session{
		ref:         ref,
		transport:   srv.Transport(),
		toolTimeout: msOr(srv.ToolTimeoutMS, defaultToolTimeout),
		maxCall:     c.lim.MaxCallDuration,
		maxRounds:   c.lim.MaxInputRounds,
		tasks:       c.lim.tasks(),
		grace:       c.lim.TerminateGrace,
		capture:     newToolsListCapture(c.lim.MaxTools, c.lim.MaxListBytes),
		guard:       newPeerGuard(c.lim.MaxMessageBytes, c.lim.MaxServerMessageRate),
		toolsTurn:   make(chan struct{}, 1),
		streamMark:  newStreamMark(),
		listings:    c.listings,
	}
	s.closing, s.closeNow = context.WithCancel(context.Background())
	s.capture.calls = &s.calls // the transports capture call results too
	s.screen = &messageScreen{ref: ref, capture: s.capture, guard: s.guard, logger: c.opts.Logger}
	s.client = c.client
	if opts != nil && opts.Handlers != nil {
		s.client = c.newClient(s, opts.Handlers)
	}
	// A server past a bound is done: end what waits on it.
	s.guard.onTrip = s.closeNow
	if err := ctx.Err(); err != nil {
		return nil, &Error{Ref: ref, Op: "connect", Detail: "cancelled by the caller before the start", Err: err}
	}
	var transport mcp.Transport
	if c.opts.Dial != nil {
		t, err := c.opts.Dial(sctx, ref, srv)
		if err != nil {
			return nil, &Error{Ref: ref, Op: "connect", Kind: ErrStart, Detail: "the Dial option failed", Err: err}
		}
		if t != nil {
			// The Dial transport hands messages, not bytes: they are
			// scrubbed as they are read. Its document's references are not
			// resolved, so only its literal credentials are known.
			s.screen.scrub = newScrubber(resourcefn.CredentialValues(srv.Args, srv.Env, srv.Headers, srv.URL))
			// Its messages come as from a stdio server: the probe is
			// bounded the same way.
			s.probe = &discoverProbe{}
			if !plan.pinned && !plan.cached {
				s.probe.timeout = c.lim.EraProbeTimeout
			}
			transport = &captureTransport{inner: t, capture: s.capture, guard: s.guard, onServerMessage: s.readServerMessage, scrub: s.screen.scrub, probe: s.probe, listen: s.listen}
			s.transport = "dial"
		}
	}
	if transport == nil {
		var err error
		transport, err = c.transportFor(sctx, s, srv, opts, login, plan.probe)
		if err != nil {
			return nil, err
		}
	}

	cs, err := c.handshake(sctx, s, transport, plan.version)
	s.probe.stop()
	if err == nil && plan.pinned && modernVersion(plan.version) && !modernVersion(cs.InitializeResult().ProtocolVersion) {
		_ = cs.Close()
		err = errLegacyServer
	}
	if err != nil {
		herr := c.handshakeError(ctx, sctx, s, startup, err)
		var wire *jsonrpc.Error
		herr.refused = errors.As(err, &wire) || offeredVersion(err) != ""
		herr.lateModern = s.probe.lateModern()
		s.release()
		if s.proc != nil {
			// After release: stderr is drained once the group is gone.
			herr.StderrTail = s.proc.stderr.String()
		}
		return nil, herr
	}
	if !plan.pinned {
		c.eras.set(plan.key, cs.InitializeResult().ProtocolVersion)
	}
	if opts != nil {
		c.cacheListings(s, srv, opts, cs.InitializeResult().ProtocolVersion)
	}
	s.cs = cs
	go s.watch()
	if s.notes != nil {
		go s.deliverNotifications()
	}
	init := cs.InitializeResult()
	if init != nil {
		s.serverInfo = init.ServerInfo
		s.protocolVersion = init.ProtocolVersion
		s.capabilities = init.Capabilities
		s.setInstructions(init.Instructions)
	}
	if !listensForTools(s.protocolVersion, s.capabilities) {
		s.listen.end() // the go-sdk opened no listen: nothing to wait for
	}
	s.askLogLevel(sctx)
	return s, nil
}

// handshake runs Client.Connect; for a process it gives up as soon as the
// process exits, even if a grandchild still holds stdout open.
func (c *Connector) handshake(ctx context.Context, s *Session, t mcp.Transport, version string) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)() // a bound broken during the handshake
	// A handshake given up (startup timeout, the caller's cancel) ends the
	// session at once: what the go-sdk still sends then (notifications/
	// cancelled to a server that never answered) ends with it.
	handshakeCtx := ctx
	stopClose := context.AfterFunc(handshakeCtx, s.closeNow)
	if s.proc != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-s.proc.exited:
				cancel()
			case <-stop:
			}
		}()
	}
	cs, err := s.client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if !stopClose() && err == nil {
		// The bound ended as the handshake succeeded: the session is
		// closing already, so the handshake counts as given up.
		_ = cs.Close()
		return nil, context.Cause(handshakeCtx)
	}
	return cs, err
}

// errLegacyServer: a server pinned to a modern version answered only the
// legacy handshake.
var errLegacyServer = errors.New("the server does not speak the pinned modern protocol version: it answered only the legacy initialize handshake")

func (c *Connector) handshakeError(ctx, sctx context.Context, s *Session, startup time.Duration, err error) *Error {
	e := &Error{Ref: s.ref, Op: "connect", Kind: ErrHandshake, Err: err}
	var wire *jsonrpc.Error
	switch {
	case s.guard.breach() != nil:
		e.Detail, e.Err = "the server went past a limit during the handshake", s.guard.breach()
	case s.proc != nil && s.proc.stdout.nonJSONPrefix() != "":
		// The line itself is the server's output (a banner may print a
		// token): it goes with the stderr tail, not into the Detail.
		// The decoder's error quotes the line's first byte: the Detail says
		// it all.
		e.Detail = "the server wrote non-JSON on stdout: a stdio MCP server must write only JSON-RPC messages to stdout and its logs to stderr"
		e.StdoutHead, e.Err = boundServerText(s.proc.stdout.nonJSONPrefix()), nil
	case ctx.Err() != nil:
		e.Kind, e.Detail, e.Err = nil, "cancelled by the caller during startup", context.Cause(ctx)
	case errors.Is(context.Cause(sctx), errStartupTimeout) && s.oauth != nil && s.oauth.login:
		e.Detail = fmt.Sprintf("the login did not finish within %s (LoginOptions.Timeout)", startup)
		e.Err = context.DeadlineExceeded
	case s.oauth != nil && s.oauth.loginRequired.Load():
		e.Kind, e.Err = ErrLoginRequired, nil
		e.Detail = "the server requires an OAuth login, and no usable token is stored for this registration (log in with Connector.Login, which stores one)"
	case s.oauth != nil && s.oauth.failure.Load() != nil:
		e.Detail, e.Err = *s.oauth.failure.Load(), ErrUnauthorized
	case s.remote() && remoteRefused(s, err, e):
	case errors.As(err, &wire) && !rejectedByTransport(wire):
		// Checked before the exit: a server whose handshake failed exits
		// when its stdin closes, but the refusal is the cause.
		e.Detail = fmt.Sprintf("the server refused the initialize handshake with error %d: %s", wire.Code, boundServerText(wire.Message))
		e.Err = nil
	case s.probe.refuseLegacy() != nil:
		e.Detail, e.Err = "no protocol version in common", s.probe.refuseLegacy()
	case errors.Is(err, errLegacyServer):
		e.Detail = "the server speaks only the legacy protocol (2025-11-25 and earlier), and the protocol version is pinned to a modern one (the document's protocol_version, or ConnectorOptions.ProtocolVersion): unpin it or pin a legacy version"
		e.Err = nil
	case offeredVersion(err) != "":
		e.Detail = fmt.Sprintf("the server answered with protocol version %s, which this client does not speak (set the document's protocol_version, or ConnectorOptions.ProtocolVersion, to choose another)",
			offeredVersion(err))
		e.Err = nil
	case errors.Is(context.Cause(sctx), errStartupTimeout):
		e.Detail = fmt.Sprintf("no answer to the initialize handshake within the startup timeout of %s (startup_timeout_ms)", startup)
		e.Err = context.DeadlineExceeded
	case s.proc != nil && s.proc.awaitExit(time.Second):
		// The pipe closes a moment before the exit is reaped.
		e.Detail = "the server exited during startup (" + s.proc.exitStatus() + ")"
		e.Err = nil
	case s.remote():
		e.Kind, e.Detail = ErrStart, "the server could not be reached or refused the connection"
	}
	if s.remote() {
		e.Err = hideURLs(e.Err)
	}
	return e
}

// offeredVersion returns the protocol version, quoted and bounded, that a
// server answered the handshake with when the go-sdk refused it, else "".
// The go-sdk's error type is not exported: its message is the contract.
func offeredVersion(err error) string {
	const prefix = "unsupported protocol version: "
	msg := err.Error()
	i := strings.Index(msg, prefix)
	if i < 0 {
		return ""
	}
	q, qerr := strconv.QuotedPrefix(msg[i+len(prefix):])
	if qerr != nil {
		return ""
	}
	v, _ := strconv.Unquote(q)
	return quoteName(v)
}

// boundServerText bounds a text a server chose, for an error message.
func boundServerText(s string) string {
	s = text.Bound(s, 512)
	// A terminal would act on control characters (escape sequences that
	// rewrite the screen, bidirectional overrides that reorder what is
	// shown) in an error a CLI prints: each becomes U+FFFD (text.Unsafe,
	// the one rule).
	return strings.Map(func(r rune) rune {
		if text.Unsafe(r) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}

// transportFor builds the transport the document describes: a started
// process, or an HTTP client.
func (c *Connector) transportFor(ctx context.Context, s *Session, srv resource.MCPServer, opts *ConnectOptions, login *LoginOptions, probe time.Duration) (mcp.Transport, error) {
	switch s.transport {
	case resource.TransportStdio:
		proc, cred, err := c.start(ctx, s.ref, srv)
		if err != nil {
			return nil, err
		}
		s.cred = cred
		s.proc, s.screen.scrub = proc, proc.stdout.scrub
		s.screen.countDrops = true
		s.probe = &discoverProbe{timeout: probe}
		return &captureTransport{
			probe: s.probe, listen: s.listen,
			// The go-sdk's own line bound stays above ours (which says which
			// option to change), with room for a line masking grew.
			inner: &mcp.IOTransport{Reader: &screenedLines{lineReader: lineReader{ReadCloser: proc.stdout, bound: &lineGuard{guard: s.guard}}, screen: s.screen}, Writer: proc.stdin,
				MaxLineLength: scrubbedRoom(c.lim.MaxMessageBytes)},
			capture:         s.capture,
			guard:           s.guard,
			onServerMessage: s.readServerMessage,
		}, nil
	case resource.TransportHTTP, resource.TransportSSE:
		u, err := resource.ResolveRemote(srv, &c.launchEnv)
		if err != nil {
			return nil, launchFailure(s.ref, err)
		}
		base := c.opts.HTTPTransport
		if base == nil {
			ht := http.DefaultTransport.(*http.Transport).Clone()
			s.httpTransport = ht
			base = ht
		}
		// Resolved here, per start; the values live only in this session's
		// round tripper, and in its scrubber as the forms it masks.
		var resolved []string
		headers, err := resourcefn.ResolveHeaders(srv.Headers, keepResolved(resourcefn.BindSecrets(&c.launchEnv, ctx, string(s.ref)), &resolved))
		if se := secretError(s.ref, err); se != nil {
			return nil, se
		}
		s.screen.scrub = newScrubber(append(resolved, resourcefn.CredentialValues(srv.Args, srv.Env, srv.Headers, srv.URL)...))
		s.cred = headerCredentials(u.String(), headers)
		s.oauth, err = c.oauthFor(ctx, s, srv, login)
		if err != nil {
			return nil, err
		}
		s.answers = &httpAnswers{}
		rt := &headerRoundTripper{base: &modernHeaders{base: base, registered: headers}, headers: headers, origin: weborigin.Of(u), guard: s.guard, answers: s.answers, screen: s.screen}
		client := &http.Client{Transport: rt, CheckRedirect: rt.checkRedirect}
		var authed http.RoundTripper = rt
		if s.oauth != nil {
			// A DPoP-bound token goes with the DPoP scheme and a proof.
			authed = &dpopResourceTransport{base: rt, d: s.oauth.dpop}
			client.Transport = authed
		}
		if s.oauth != nil && s.transport == resource.TransportSSE {
			// The go-sdk's SSE transport has no OAuth hook: the round
			// tripper is it. It sits above headerRoundTripper, so the
			// 401 or 403 that Authorize reads (and the go-sdk drains) is
			// bounded like every other body, and the token goes to the
			// registered origin only.
			h, err := s.oauth.handler(ctx)
			if err != nil {
				return nil, err
			}
			client.Transport = &oauthRoundTripper{base: authed, h: h, endpoint: srv.URL}
		}
		if s.transport == resource.TransportSSE {
			s.screen.countDrops = true // its messages are counted as decoded
			return &captureTransport{
				inner:   &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: client, MaxEventSize: scrubbedRoom(c.lim.MaxMessageBytes)},
				capture: s.capture, guard: s.guard, onServerMessage: s.readServerMessage, detach: true}, nil
		}
		rt.capture, rt.streamable, rt.mark, rt.onNote, rt.dropped = s.capture, true, s.streamMark, s.readNotification, &s.dropped
		rt.closing, rt.drainGrace, rt.listen, rt.endGrace = s.closing, c.drainGrace, s.listen, s.grace
		rt.streams, rt.maxRetry = newEventStreams(c.lim.ReconnectBurst, c.lim.MinReconnectInterval), c.lim.MaxReconnectDelay
		var handlers *Handlers
		if opts != nil {
			handlers = opts.Handlers
		}
		// The go-sdk's own count of reconnections without a new event id
		// does not bind (goSDKMaxRetries); the rate bound does. The
		// standalone stream exists only for a session with something to
		// receive on it, and never holds the handshake (deferredStream).
		t := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client, MaxRetries: goSDKMaxRetries,
			MaxEventSize: scrubbedRoom(c.lim.MaxMessageBytes) + maxStreamMarkBytes, DisableStandaloneSSE: !handlers.needsServerStream()}
		if s.oauth != nil {
			if t.OAuthHandler, err = s.oauth.handler(ctx); err != nil {
				return nil, err
			}
		}
		return t, nil
	default:
		return nil, &Error{Ref: s.ref, Op: "connect", Kind: ErrInvalidServer,
			Detail: fmt.Sprintf("unknown server type %q: use stdio, http or sse", srv.Type)}
	}
}

// start resolves a stdio document by the launch rules
// (resource.ResolveLaunch, the same rules Service.Test checks) and starts
// its process, with the scrubber of the values it resolved and of the
// document's literal credentials (for the session's screen, its stderr
// tail and its stdout head).
func (c *Connector) start(ctx context.Context, ref resource.Ref, srv resource.MCPServer) (*process, [sha256.Size]byte, error) {
	var resolved []string
	l, err := resource.ResolveLaunch(srv, &c.launchEnv, keepResolved(resourcefn.BindSecrets(&c.launchEnv, ctx, string(ref)), &resolved))
	if err != nil {
		return nil, [sha256.Size]byte{}, launchFailure(ref, err)
	}
	scrub := newScrubber(append(resolved, resourcefn.CredentialValues(srv.Args, srv.Env, srv.Headers, srv.URL)...))
	proc, err := startProcess(l.Path, l.Args, l.Dir, l.Env, c.lim.StderrTailBytes, scrub)
	if err != nil {
		return nil, [sha256.Size]byte{}, &Error{Ref: ref, Op: "connect", Kind: ErrStart, Detail: "starting the process failed", Err: err}
	}
	// The credentials of a stdio server are whatever it was started
	// with: its environment (resolved secrets, inherited variables) and
	// arguments.
	return proc, credentialDigest(append(append([]string{l.Path, l.Dir}, l.Args...), l.Env...)), nil
}

// keepResolved returns resolve, which also appends each value it resolves
// to *into: the values a session scrubs from what its server sends.
func keepResolved(resolve func(kind, name string) (string, error), into *[]string) func(kind, name string) (string, error) {
	return func(kind, name string) (string, error) {
		v, err := resolve(kind, name)
		if err == nil {
			*into = append(*into, v)
		}
		return v, err
	}
}

// scrubbedRoom is the bound the go-sdk's own readers get for one message
// (a stdio line, an event) whose bytes the peerGuard bounds to
// maxMessage: above it, so the guard's error, which names the option,
// comes first, with room for what masking adds (a mask may be longer than
// the piece of a value it stands for).
func scrubbedRoom(maxMessage int) int {
	return maxMessage + min(maxMessage, math.MaxInt/8)*3 + 1
}

// secretError turns a failed secret reference into an *Error whose text
// names the field and the reference, never a value nor the resolver's
// error; nil when err is not about a reference.
func secretError(ref resource.Ref, err error) *Error {
	var se *resource.SecretError
	if !errors.As(err, &se) {
		return nil
	}
	detail := "secret reference " + se.Reference + " in " + se.Field + ": " + se.Message
	if se.Fix != "" {
		detail += " (fix: " + se.Fix + ")"
	}
	return &Error{Ref: ref, Op: "connect", Kind: ErrSecret, Detail: detail}
}

// launchFailure is the Connect error for a server the launch rules
// (resource.ResolveLaunch, resource.ResolveRemote) refuse: nothing was
// started or contacted.
func launchFailure(ref resource.Ref, err error) *Error {
	if se := secretError(ref, err); se != nil {
		return se
	}
	var le *resource.LaunchError
	if !errors.As(err, &le) {
		return &Error{Ref: ref, Op: "connect", Kind: ErrStart, Err: err}
	}
	var kind error
	switch le.Code {
	case findcode.NoAbsoluteCwd:
		kind = ErrNoAbsoluteCwd
	case findcode.CwdMissing, findcode.CommandMissing:
		kind = ErrStart
	case findcode.NotAllowed:
		kind = ErrNotAllowed
	default:
		kind = ErrInvalidServer
	}
	return &Error{Ref: ref, Op: "connect", Kind: kind, Detail: le.Message + " (fix: " + le.Fix + ")"}
}

func msOr(ms int64, def time.Duration) time.Duration {
	if ms <= 0 {
		return def
	}
	return time.Duration(ms) * time.Millisecond
}

// SchemaOptions returns ConnectorOptions.Schema, how the Connector's tools
// are compiled (nil for toolschema's defaults).
func (c *Connector) SchemaOptions() *toolschema.Options { return c.opts.Schema }
