package mcpconn

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agtsdk/agt/internal/taskcall"
	"github.com/agtsdk/agt/internal/text"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session is one open connection to an MCP server, made by Connector.Connect.
// Its methods are safe for concurrent use; Close ends it.
type Session struct {
	ref         resource.Ref
	transport   string
	toolTimeout time.Duration
	maxCall     time.Duration // ConnectorOptions.Limits.MaxCallDuration
	maxRounds   int           // ConnectorOptions.Limits.MaxInputRounds
	tasks       taskBounds    // ConnectorOptions.Limits, resolved
	grace       time.Duration

	cs            *mcp.ClientSession
	proc          *process        // stdio only
	httpTransport *http.Transport // remote with a per-session transport only
	capture       *toolsListCapture
	guard         *peerGuard
	screen        *messageScreen // what the go-sdk may read of the server (screen.go)
	probe         *discoverProbe // stdio with the era probe on only
	calls         inflightCalls
	serve         *serving // handlers and bounds of what the server sends on its own
	client        *mcp.Client
	// params are the x-mcp-header bindings of the latest listing, for
	// the Mcp-Param-* headers of calls (modern era, streamable HTTP).
	params paramHeaderTable
	// toolsChanged counts the notifications/tools/list_changed read.
	toolsChanged atomic.Uint64
	// hints are the read-only and idempotent tools of the last listing
	// (lostcall.go).
	hints toolHints
	// notes carries the notifications read to their handlers, in order
	// (deliverNotifications); nil when no notification handler is set.
	notes *noteQueue
	// send is the go-sdk's sending path of the session's own client (nil
	// for the shared client); recv its receiving path below the
	// session's middleware (the go-sdk's checks and the client's
	// handlers), which answers the requests of an input_required answer.
	send    mcp.MethodHandler
	recv    mcp.MethodHandler
	answers *httpAnswers  // remote only
	oauth   *oauthSession // remote with an "oauth" field only
	// lease is set on a lease on a shared connection: its methods act on
	// lease.base for this lease only (shared.go).
	lease *lease
	// streamMark is the secret prefix of the marks that tie a message of
	// a call's own event stream to the call (attribution.go).
	streamMark string
	// lossLeases are the leases whose calls were in flight when the
	// connection was lost (Loss.Charged); guarded by lossMu.
	lossMu     sync.Mutex
	lossLeases map[*Session]struct{}

	// listings is the Connector's listing cache; the session uses it
	// under listKey when cacheable (Connector.cacheListings). cred names
	// the credentials the session was made with (a private listing
	// serves only them).
	listings  *listingCache
	cacheable bool
	listKey   listingKey
	cred      [sha256.Size]byte
	// cachedWalks counts the walks Tools answered from the cache.
	cachedWalks atomic.Uint64

	serverInfo      *mcp.Implementation
	protocolVersion string
	capabilities    *mcp.ServerCapabilities
	instructions    string
	instructionsCut bool

	// toolsTurn admits one tools/list walk at a time (the capture holds
	// one result); a caller waits for its turn under its own ctx, as the
	// leases of a shared connection do for each other's walks.
	toolsTurn chan struct{}
	// listen is the first listing's wait for the server to acknowledge
	// the session's subscriptions/listen; nil: the session opens none
	// (no Handlers.ToolsChanged).
	listen   *listenAck
	closing  context.Context
	closeNow context.CancelFunc // cancels requests in flight: the SDK's Close waits for them
	closed   atomic.Bool
	lost     atomic.Bool // the connection ended without Close
	// dropped: the streamable HTTP server ended the session (it answered
	// a request of it with 404 Not Found); the session is lost.
	dropped   atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Tool is a tool as the server listed it. Every field is the server's
// text: checkTool bounds it, and LoadTools leaves out a tool past a bound.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
type Tool struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// InputSchema holds the exact bytes the server sent (not a map round
	// trip: key order and large integers are kept).
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema holds the exact bytes of the output schema, or nil.
	// agt does not compile it nor check results against it.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Meta holds the exact bytes of the tool's _meta, or nil.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// TaskSupport is the taskSupport of the tool's execution object (MCP
	// 2025-11-25) as the server sent it: "forbidden", "optional" or
	// "required" (the protocol's strings, kept as plain strings: agt
	// reads them, a host only shows them); "" when absent or any other
	// value, read as "forbidden", the protocol's default. A tool that
	// requires tasks is called as a task where the server runs them (see
	// Tasks in the package doc).
	TaskSupport string `json:"-"`

	// unreadable is why the listing could not be read for this tool (it
	// nests too deep for its page), or why the go-sdk left it out (its
	// x-mcp-header annotations are invalid): only Name is known, and
	// LoadTools leaves it out with this reason.
	unreadable error
}

// The values of Tool.TaskSupport.
const (
	taskSupportForbidden = "forbidden"
	taskSupportOptional  = "optional"
	taskSupportRequired  = "required"
)

// modernHTTP reports whether the session speaks the modern era over
// streamable HTTP, where calls carry Mcp-Param-* headers.
func (s *Session) modernHTTP() bool {
	return s.transport == resource.TransportHTTP && modernVersion(s.protocolVersion)
}

// remote reports whether the session reaches its server by URL.
func (s *Session) remote() bool {
	return s.transport == resource.TransportHTTP || s.transport == resource.TransportSSE
}

// Ref returns the reference the session was connected for.
func (s *Session) Ref() resource.Ref { return s.ref }

// Transport returns how the session was made: "stdio", "http", "sse", or
// "dial" when ConnectorOptions.Dial supplied the transport.
func (s *Session) Transport() string { return s.transport }

// ServerInfo returns the server's name and version from the handshake.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
func (s *Session) ServerInfo() *mcp.Implementation { return s.serverInfo }

// ProtocolVersion returns the protocol version the server agreed to.
func (s *Session) ProtocolVersion() string { return s.protocolVersion }

// Capabilities returns the server's capabilities from the handshake.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
func (s *Session) Capabilities() *mcp.ServerCapabilities { return s.capabilities }

// maxInstructionsBytes bounds the server instructions a Session keeps
// (the handshake's instructions): a longer text is cut at this many bytes,
// at a UTF-8 boundary, and InstructionsTruncated reports it. Fixed.
const maxInstructionsBytes = 32 << 10

// Instructions returns the server's instructions from the handshake, at
// most 32 KiB of them, cut at a UTF-8 boundary. They are the server's text: a host
// that shows them to a model shows it what the server wrote.
func (s *Session) Instructions() string { return s.instructions }

// InstructionsTruncated reports whether the server's instructions were
// longer than 32 KiB and cut.
func (s *Session) InstructionsTruncated() bool { return s.instructionsCut }

// setInstructions keeps the handshake's instructions, bounded.
func (s *Session) setInstructions(instructions string) {
	if len(instructions) <= maxInstructionsBytes {
		s.instructions = instructions
		return
	}
	s.instructions, s.instructionsCut = strings.Clone(text.Cut(instructions, maxInstructionsBytes)), true
}

// StderrTail returns the end of a stdio server's stderr so far ("" for
// other transports).
func (s *Session) StderrTail() string {
	if s.lease != nil {
		return s.lease.base.StderrTail()
	}
	if s.proc == nil {
		return ""
	}
	return s.proc.stderr.String()
}

// maxListPages bounds a tools/list walk against a server whose cursors
// never end.
const maxListPages = 1000

// Tools lists all the server's tools, following every page. The walk is
// bounded by the document's tool_timeout_ms (default 60 s) and by ctx. A
// session given ConnectOptions.Revision may get a modern server's
// listing, still fresh by its ttlMs, from the Connector's listing cache
// instead (see Listing cache in the package doc). A modern session with
// Handlers.ToolsChanged first waits, once, for the server to acknowledge
// its change listen, at most ConnectorOptions.Limits.EraProbeTimeout (see
// Change notifications in the package doc).
func (s *Session) Tools(ctx context.Context) ([]Tool, error) {
	if s.lease != nil {
		return s.leaseTools(ctx)
	}
	select {
	case s.toolsTurn <- struct{}{}:
		defer func() { <-s.toolsTurn }()
	case <-ctx.Done():
		return nil, &Error{Ref: s.ref, Op: "list tools", Detail: "cancelled by the caller while another listing of the connection ran", Err: context.Cause(ctx)}
	case <-s.closing.Done():
		if s.guard.breach() != nil {
			return nil, s.breachError("list tools")
		}
		return nil, s.closedError("list tools")
	}
	if s.closed.Load() {
		return nil, s.closedError("list tools")
	}
	if s.guard.breach() != nil {
		return nil, s.breachError("list tools")
	}
	if s.cacheable {
		if tools := s.listings.get(s.listKey, s.cred); tools != nil {
			s.cachedWalks.Add(1)
			s.params.record(tools)
			s.hints.set(tools)
			return tools, nil
		}
	}
	if err := s.awaitListen(ctx); err != nil {
		return nil, err
	}
	lctx, cancel := s.requestContext(ctx)
	defer cancel()
	s.capture.beginWalk()
	var (
		out    []Tool
		cursor string
		seen   = map[string]bool{}
		walk   = s.beginWalk()
	)
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, &Error{Ref: s.ref, Op: "list tools", Detail: fmt.Sprintf("more than %d pages", maxListPages)}
		}
		s.capture.take() // forget any stale result
		res, err := s.cs.ListTools(lctx, &mcp.ListToolsParams{Cursor: cursor})
		if le := s.capture.takeRefused(); err != nil && le != nil && ctx.Err() == nil && lctx.Err() == nil {
			return nil, &Error{Ref: s.ref, Op: "list tools", Detail: "the server's tool listing could not be read", Err: le}
		}
		if err != nil {
			if raw, _ := s.capture.take(); raw != nil && ctx.Err() == nil && lctx.Err() == nil {
				// The server answered, with a result the go-sdk cannot
				// decode (a ttlMs past an int, a member of the wrong
				// type): the listing fails, the connection is not lost.
				return nil, &Error{Ref: s.ref, Op: "list tools", Detail: "the tools/list result is malformed", Err: undecodableListing(err)}
			}
			return nil, s.classify("list tools", ctx, lctx, err)
		}
		next := res.NextCursor
		walk.page(res)
		if raw, cuts := s.capture.take(); raw != nil {
			tools, err := withWireSchemas(res.Tools, raw, cuts)
			if err != nil {
				return nil, &Error{Ref: s.ref, Op: "list tools", Detail: "the tools/list result is malformed", Err: err}
			}
			out = append(out, tools...)
		} else {
			// No wire copy (a cached result of a newer protocol): fall back
			// to the decoded form, never kept in the listing cache.
			walk.noWireCopy()
			for _, t := range res.Tools {
				out = append(out, decodedTool(t))
			}
		}
		if len(out) > s.capture.maxTools {
			// A page without a wire copy was not counted as it arrived.
			return nil, &Error{Ref: s.ref, Op: "list tools", Err: &LimitError{Option: "ConnectorOptions.Limits.MaxTools",
				What: "the server's tool listing", Limit: int64(s.capture.maxTools), Unit: "tools"}}
		}
		if next == "" {
			s.params.record(out)
			s.hints.set(out)
			walk.end(out)
			return out, nil
		}
		if seen[next] {
			return nil, &Error{Ref: s.ref, Op: "list tools", Detail: "the server repeated a pagination cursor"}
		}
		seen[next] = true
		cursor = next
	}
}

// withWireSchemas pairs the tools the go-sdk decoded from one tools/list
// page with the exact schema bytes of the same page on the wire. Keys match
// exactly, as in the go-sdk's own decoding ("InputSchema" is not
// inputSchema), and the null entries the go-sdk left out stay out; the
// wire must list the decoded tools in the same order, or the capture is
// not this page's. The tools the screen cut from the page (null on the
// wire now), and those the go-sdk left out for their x-mcp-header
// annotations, come back at their places, to be left out by LoadTools
// with the reason.
func withWireSchemas(decoded []*mcp.Tool, raw json.RawMessage, cuts []cutTool) ([]Tool, error) {
	var page map[string]json.RawMessage
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, err
	}
	var wire []map[string]json.RawMessage
	if list, ok := page["tools"]; ok {
		if err := json.Unmarshal(list, &wire); err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
	}
	out := make([]Tool, 0, len(decoded)+len(cuts))
	paired := 0
	for i, w := range wire {
		if len(cuts) > 0 && cuts[0].index == i {
			out = append(out, cuts[0].tool())
			cuts = cuts[1:]
			continue
		}
		var name string
		if w == nil || (w["name"] != nil && json.Unmarshal(w["name"], &name) != nil) {
			continue // left out by the go-sdk
		}
		if paired == len(decoded) || name != decoded[paired].Name {
			// Left out by the go-sdk for its x-mcp-header annotations
			// (filterValidTools): back with the reason, for LoadTools.
			if _, err := paramBindings(w["inputSchema"]); err != nil {
				out = append(out, Tool{Name: name, unreadable: err})
			}
			continue
		}
		out = append(out, toolMeta(decoded[paired], w))
		paired++
	}
	if paired != len(decoded) || len(cuts) > 0 {
		return nil, errors.New("the captured result does not list the decoded tools")
	}
	return out, nil
}

// undecodableListing says, value-free, why the go-sdk could not decode a
// tools/list result: the member and the type it wants, when its JSON
// decoder names them.
func undecodableListing(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return errMalformed(fmt.Sprintf("the member %s is not a JSON value of Go type %s", quoteName(te.Field), te.Type))
	}
	return errMalformed("the result does not decode as a tools/list result")
}

func decodedTool(t *mcp.Tool) Tool {
	w := map[string]json.RawMessage{}
	w["inputSchema"], _ = json.Marshal(t.InputSchema)
	if t.OutputSchema != nil {
		w["outputSchema"], _ = json.Marshal(t.OutputSchema)
	}
	if t.Meta != nil {
		w["_meta"], _ = json.Marshal(t.Meta)
	}
	return toolMeta(t, w)
}

// toolMeta builds a Tool from the go-sdk's decoding t and the same tool's
// wire object w: the schemas and _meta as their exact bytes (a JSON null
// is absent), and execution, which the go-sdk does not decode.
func toolMeta(t *mcp.Tool, w map[string]json.RawMessage) Tool {
	raw := func(key string) json.RawMessage {
		v := w[key]
		if string(v) == "null" {
			return nil
		}
		return v
	}
	return Tool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations,
		InputSchema: w["inputSchema"], OutputSchema: raw("outputSchema"), Meta: raw("_meta"),
		TaskSupport: wireTaskSupport(raw("execution"))}
}

// wireTaskSupport reads the taskSupport of a tool's execution object
// with exact keys, as the rest of the tool is read; an object that is not
// one, or a taskSupport that is not a known string, reads as absent.
func wireTaskSupport(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return ""
	}
	var ts string
	if json.Unmarshal(obj["taskSupport"], &ts) == nil {
		switch ts {
		case taskSupportForbidden, taskSupportOptional, taskSupportRequired:
			return ts
		}
	}
	return ""
}

var (
	errToolTimeout = errors.New("tool timeout")
	errCallCap     = errors.New("longest call time")
)

// CallTool calls the tool name with args (a JSON object; nil or empty means
// {}). The call is bounded by the document's tool_timeout_ms (default 60 s);
// when that or ctx ends, the request is cancelled on the server too
// (notifications/cancelled).
//
// The result is read from the exact bytes the server sent (see
// CallResult). A result with IsError set (the tool failed, or the server
// refused the arguments) is returned as a result with a nil error. Errors:
// ErrUnavailable when the connection is dead or closed, context.DeadlineExceeded
// for the tool timeout, the caller's ctx error when ctx ends, a
// *jsonrpc.Error (errors.As) for a protocol error such as an unknown tool,
// ErrBadResult for a result that is malformed (the session stays
// usable), ErrURLElicitationRequired when the server answered that
// the user must first complete a step at a URL (the elicitations went to
// Handlers.Elicit before CallTool returned), and ErrInputRequired when
// the server asked for input (input_required) that could not be given,
// or kept asking past ConnectorOptions.Limits.MaxInputRounds. A server's
// input_required answers are answered through the Handlers and the call
// sent again, all within the call's bounds (see Multi round-trip
// requests in the package doc). It returns once the
// notifications the server sent before its answer have been handled
// (see Handlers). mcpconn adds no argument value to an error; a protocol error's
// text is the server's. The request's params._meta carries the call's
// progress token and the fields of WithRequestMeta(ctx, ...).
//
// In the modern era over streamable HTTP the request carries the
// Mcp-Param-* headers of the tool's x-mcp-header annotations, as the
// session's latest listing (Tools) defines them, from args (see Protocol
// eras): arguments that cannot be mirrored (a value past the bound, an
// integer outside the safe range, a value that is not a string, integer
// or boolean) fail with a *toolschema.ArgumentError (errors.As) before
// anything is sent; a server that refuses the headers (HeaderMismatch,
// -32020: the tool changed, or the session never listed) gets one more
// try after a new listing; a call the server answered with a task never
// does (see Tasks in the package doc).
//
// In the modern era a request whose streamable HTTP response stream broke
// is sent again once only where that cannot repeat an effect (it never
// left, or the listing marks the tool read-only or idempotent); else the
// call fails with ErrUnavailable saying the outcome is unknown, and the
// session stays usable (Protocol eras in the package doc).
func (s *Session) CallTool(ctx context.Context, name string, args json.RawMessage) (*CallResult, error) {
	if s.lease != nil {
		return s.leaseCallTool(ctx, name, args)
	}
	var tasked bool
	out, err := s.callTool(ctx, name, args, &tasked)
	var wire *jsonrpc.Error
	if err != nil && !tasked && s.modernHTTP() && errors.As(err, &wire) && wire.Code == mcp.CodeHeaderMismatch &&
		ctx.Err() == nil && !s.closed.Load() {
		// The server refused the request before running the tool: its
		// Mcp-Param-* headers did not match what it expects, so its
		// definition changed since the session listed it, or the session
		// never listed. As the spec advises (transports: Client Behavior),
		// list again and send the call once more, with headers from the
		// new listing.
		if _, lerr := s.Tools(ctx); lerr == nil {
			return s.callTool(ctx, name, args, &tasked)
		}
	}
	return out, err
}

// callTool is CallTool, once. It sets *tasked when the call became a
// task (or resumed one): its error, whatever it is, is not the refusal
// of a call the server never ran.
func (s *Session) callTool(ctx context.Context, name string, args json.RawMessage, tasked *bool) (*CallResult, error) {
	if s.closed.Load() {
		return nil, s.closedError(callOp(name))
	}
	if s.guard.breach() != nil {
		return nil, s.breachError(callOp(name))
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	} else if !json.Valid(args) {
		return nil, &Error{Ref: s.ref, Op: callOp(name), Detail: "the arguments are not valid JSON"}
	}
	var hdr http.Header
	if s.modernHTTP() {
		var bad []toolschema.Violation
		if hdr, bad = paramHeaders(s.params.get(name), args); bad != nil {
			return nil, &Error{Ref: s.ref, Op: callOp(name), Detail: "the arguments cannot be mirrored into the tool's HTTP headers (x-mcp-header); the call was not sent",
				Err: &toolschema.ArgumentError{Violations: bad}}
		}
	}
	cctx, cancel, clock := s.callContext(ctx)
	defer cancel()
	if hdr != nil {
		cctx = withParamHeaders(cctx, hdr)
	}
	cctx, call := s.calls.begin(cctx, clock)
	defer s.calls.end(call)
	if tc := taskcall.From(ctx); tc != nil && tc.Resume != "" {
		// A task the server created for this call before (a host that
		// restarted): followed, not sent again.
		if len(tc.Resume) > maxTaskIDBytes || !utf8.ValidString(tc.Resume) {
			return nil, &Error{Ref: s.ref, Op: callOp(name), Detail: fmt.Sprintf("the task to resume is not a task id (UTF-8, at most %d bytes)", maxTaskIDBytes)}
		}
		*tasked = true
		return s.followTask(ctx, cctx, name, call, &taskView{id: tc.Resume}, true)
	}
	if set := s.legacyTaskParam(name); set != nil {
		// 2025-11-25: the tool must be called as a task.
		cctx = context.WithValue(cctx, taskWireKey{}, &taskWire{keep: true, set: set})
	}
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	setRequestMeta(ctx, params)
	s.callLogLevel(params)
	// Every call carries its own token: progress names its call exactly,
	// and restarts its idle timeout.
	params.SetProgressToken(call.token)
	for round := 0; ; round++ {
		out, ask, task, err := s.callOnce(ctx, cctx, name, call, params)
		if task != nil {
			*tasked = true
			return s.followTask(ctx, cctx, name, call, task, false)
		}
		if err != nil || ask == nil {
			return out, err
		}
		// input_required (see Multi round-trip requests in the package
		// doc): an answer, so the server is alive, as progress says.
		call.clock.progress()
		if round == s.maxRounds {
			return nil, s.inputError(name, roundsDetail(s.maxRounds))
		}
		answers, err := s.answerRound(ctx, cctx, name, call, ask)
		if err != nil {
			return nil, err
		}
		// The call again, as a new request (a new JSON-RPC id): the same
		// params, the answers and the requestState as it came.
		again := *params
		again.InputResponses, again.RequestState = answers, ask.state
		params = &again
	}
}

// callOnce sends one tools/call request of the call and returns its
// result, or what an input_required answer asks.
func (s *Session) callOnce(ctx, cctx context.Context, name string, call *inflightCall, params *mcp.CallToolParams) (*CallResult, *inputRound, *taskView, error) {
	lostBefore := s.Lost()
	res, err := s.cs.CallTool(cctx, params)
	if loss := s.lostCall(ctx, cctx, call, err); loss != lossNone {
		// A modern response stream that broke: sent again once where
		// that cannot repeat an effect, else the outcome is unknown.
		again := s.mayReissue(name, loss)
		if again {
			first := loss
			res, err = s.cs.CallTool(cctx, params)
			if loss = s.lostCall(ctx, cctx, call, err); loss != lossNone {
				loss = max(loss, first) // sent once: unknown
			}
		}
		if loss != lossNone {
			s.awaitNotes(ctx, call)
			if loss == lossNotSent {
				s.noteLostCall(call.tag) // the server is out of reach: lost
			}
			return nil, nil, nil, s.lostCallError(name, loss, again, err)
		}
	}
	s.awaitNotes(ctx, call)
	if wire := requiredElicitations(err); wire != nil && ctx.Err() == nil && cctx.Err() == nil && !s.closed.Load() {
		// The server's answer: the user must act first. No result, no
		// loss: the elicitations go to the host, the call's error says
		// what became of them.
		return nil, nil, nil, s.askRequired(cctx, name, call, wire)
	}
	// A remote server that answered the call's request with 404 no
	// longer knew the session: it was lost before the request came.
	goneBefore := lostBefore || call.sessionGone.Load()
	if err != nil && call.sessionGone.Load() && ctx.Err() == nil && !s.closed.Load() {
		// Whatever the 404's body (the Python SDK's is a JSON-RPC error,
		// "Session not found", which the go-sdk hands on as the call's
		// answer): the call never ran, and the session is lost.
		return nil, nil, nil, s.droppedError(callOp(name), true)
	}
	out, ask, task, err := s.callResult(ctx, cctx, name, call, res, err)
	// Closed under the call because it was lost (a shared connection is
	// closed once a new one replaces it) is lost too.
	if err != nil && !goneBefore && errors.Is(err, ErrUnavailable) && (!s.closed.Load() || s.lost.Load()) {
		s.noteLostCall(call.tag)
	}
	return out, ask, task, err
}

// awaitNotes returns once the notifications the session read before the
// call's answer have been handled (their handlers returned), so a call's
// result never overtakes its progress and log lines: the go-sdk hands a
// call its answer at once, the notifications before it to a queue of
// their own. It waits at most the tool timeout for a handler that does
// not return, and never past ctx or the session's close.
func (s *Session) awaitNotes(ctx context.Context, call *inflightCall) {
	s.notes.wait(ctx, call.notesToAwait(), s.closing.Done(), s.toolTimeout)
}

// noteLostCall records a call that failed because the connection was
// lost under it (it was in flight then): for a lease's call, the loss is
// that lease's (Loss.Charged).
func (s *Session) noteLostCall(tag any) {
	lc, ok := tag.(*leaseCall)
	if !ok {
		return
	}
	s.lossMu.Lock()
	defer s.lossMu.Unlock()
	if s.lossLeases == nil {
		s.lossLeases = map[*Session]struct{}{}
	}
	s.lossLeases[lc.lease] = struct{}{}
}

// Loss says how a session's connection was lost (Session.Loss).
type Loss struct {
	// Shared is set for a lease on a shared connection (see Shared
	// connections in the package doc).
	Shared bool
	// Charged says the loss is the session's own: always for a session
	// that is not shared (its connection is its alone); for a lease,
	// when calls of its own were in flight when the connection was lost
	// (they failed with ErrUnavailable). A lease with none in flight
	// lost the connection to another session's call, or to the server
	// alone. A Run counts only a charged loss against its MaxRestarts.
	Charged bool
	// Count is how many times in a row the shared connection of the
	// lease's registration (reference, revision, document, declared
	// capabilities) was lost, this loss included: each lost connection
	// that a new one replaced while sessions used it counts, so a server
	// that keeps crashing counts up (a crash loop), and one that starts
	// anew after its sessions let go of it starts at 1. 1 for a session
	// that is not shared.
	Count int
}

// Loss reports how the session's connection was lost; ok is false while
// it is not lost (Lost), and for a closed session.
func (s *Session) Loss() (loss Loss, ok bool) {
	if !s.Lost() {
		return Loss{}, false
	}
	if s.lease == nil {
		return Loss{Charged: true, Count: 1}, true
	}
	b := s.lease.base
	b.lossMu.Lock()
	_, charged := b.lossLeases[s]
	b.lossMu.Unlock()
	return Loss{Shared: true, Charged: charged, Count: s.lease.conn.losses + 1}, true
}

// callContext bounds one call: the tool timeout counts from the start or
// from the last progress the server reported for the call, and is held
// while a host handler answers a request for the call; the whole call
// never takes longer than the larger of MaxCallDuration and the tool
// timeout. The call ends when the session closes.
func (s *Session) callContext(ctx context.Context) (context.Context, context.CancelFunc, *callClock) {
	total, capCause := s.maxCall, errCallCap
	if total <= s.toolTimeout {
		total, capCause = s.toolTimeout, errToolTimeout
	}
	tctx, cancelTotal := context.WithTimeoutCause(ctx, total, capCause)
	cctx, cancel := context.WithCancelCause(tctx)
	clock := newCallClock(s.toolTimeout, func() { cancel(errToolTimeout) })
	stop := context.AfterFunc(s.closing, func() { cancel(context.Canceled) })
	return cctx, func() { stop(); clock.stop(); cancel(context.Canceled); cancelTotal() }, clock
}

// callOp names a call in errors; built only on failure (hot path).
func callOp(name string) string { return "call tool " + quoteName(name) }

// requestContext bounds one request by the tool timeout and ends it when
// the session closes.
func (s *Session) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithTimeoutCause(ctx, s.toolTimeout, errToolTimeout)
	stop := context.AfterFunc(s.closing, cancel)
	return rctx, func() { stop(); cancel() }
}

// quoteName quotes a tool name for an error, bounded: names come from the
// server or the model.
func quoteName(name string) string {
	return fmt.Sprintf("%q", text.Bound(name, 128))
}

// classify turns an error of a request into the documented error contract.
func (s *Session) classify(op string, ctx, rctx context.Context, err error) error {
	var wire *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return &Error{Ref: s.ref, Op: op, Detail: "cancelled by the caller", Err: context.Cause(ctx)}
	case s.guard.breach() != nil:
		return s.breachError(op)
	case errors.Is(context.Cause(rctx), errCallCap):
		return &Error{Ref: s.ref, Op: op, Detail: fmt.Sprintf("no result within the longest call time of %s (ConnectorOptions.Limits.MaxCallDuration), although the server reported progress; the request was cancelled", s.maxCall),
			Err: context.DeadlineExceeded}
	case errors.Is(context.Cause(rctx), errToolTimeout):
		return &Error{Ref: s.ref, Op: op, Detail: fmt.Sprintf("no answer within the tool timeout of %s (tool_timeout_ms); the request was cancelled", s.toolTimeout),
			Err: context.DeadlineExceeded}
	case s.closed.Load():
		return s.closedError(op)
	case s.dropped.Load():
		// The error is the go-sdk's reading of the 404 (a JSON-RPC error
		// body, or its own "session not found"), or one of a request that
		// met the end of the session.
		return s.droppedError(op, false)
	case errors.Is(err, mcp.ErrConnectionClosed):
		return s.deadError(op, err)
	case errors.As(err, &wire) && !rejectedByTransport(wire):
		return &Error{Ref: s.ref, Op: op, Detail: "the server answered with a protocol error", Err: err}
	default:
		return s.deadError(op, err)
	}
}

// rejectedByTransport reports the go-sdk's own error for a request that
// never reached the server (an HTTP request that failed: refused, reset,
// DNS): the server is unavailable, it did not answer with an error. The
// go-sdk does not export it; it is code -32005 with this message.
func rejectedByTransport(wire *jsonrpc.Error) bool {
	return wire.Code == -32005 && wire.Message == "rejected by transport"
}

// breachError reports a server that went past a bound: the session
// ended then.
func (s *Session) breachError(op string) error {
	e := &Error{Ref: s.ref, Op: op, Kind: ErrUnavailable, Detail: "the session was ended because the server went past a limit", Err: s.guard.breach()}
	if s.proc != nil {
		e.StderrTail = s.proc.stderr.String()
	}
	return e
}

// droppedError reports a session its streamable HTTP server ended (it
// answered with 404 Not Found): the session is lost. notSent: the
// request that failed is the one that got the 404, so it never reached a
// session and did not run; a caller may send it again on a new session.
// The go-sdk's error is left out: it quotes the session id.
func (s *Session) droppedError(op string, notSent bool) error {
	s.lost.Store(true)
	detail := "the server ended the session (HTTP 404 Not Found)"
	if notSent {
		detail += ", so the request never reached it and did not run; it may be sent again on a new session"
	}
	return &Error{Ref: s.ref, Op: op, Kind: ErrUnavailable, Detail: detail}
}

func (s *Session) closedError(op string) error {
	return &Error{Ref: s.ref, Op: op, Kind: ErrUnavailable, Detail: "the session is closed"}
}

// deadError reports a connection that died under a request, with the exit
// status and stderr of a process that ended. The session is lost from
// now on, not once watch sees it (a remote server's session may only be
// found gone at its next request): the session's next call, a Run's next
// batch, and the other leases of a shared connection must not take it
// for alive.
func (s *Session) deadError(op string, err error) error {
	s.lost.Store(true)
	if s.remote() {
		err = hideURLs(err)
	}
	e := &Error{Ref: s.ref, Op: op, Kind: ErrUnavailable, Detail: "the connection to the server is lost", Err: err}
	if s.proc != nil {
		// The pipe closes a moment before the exit is reaped.
		if s.proc.awaitExit(time.Second) {
			e.Detail = "the server process ended (" + s.proc.exitStatus() + ")"
			s.proc.awaitStderr(500 * time.Millisecond) // its last words
		}
		e.StderrTail = s.proc.stderr.String()
	}
	return e
}

// Lost reports whether the connection ended on its own: the server
// process exited, the remote server dropped the session, a request could
// not reach the server or its answer broke off (a call failed with
// ErrUnavailable), or the server went past a bound. A lost session fails
// every call with ErrUnavailable; only a new Connect brings the server
// back. A session ended by Close is not lost.
func (s *Session) Lost() bool {
	if s.closed.Load() {
		return false
	}
	if s.lease != nil {
		return s.lease.base.gone()
	}
	if s.lost.Load() || s.dropped.Load() || s.guard.breach() != nil {
		return true
	}
	if s.proc != nil {
		select {
		case <-s.proc.exited:
			return true
		default:
		}
	}
	return false
}

// watch marks the session lost when its connection ends; it returns when
// the connection does (Close included).
func (s *Session) watch() {
	_ = s.cs.Wait()
	if !s.closed.Load() {
		s.lost.Store(true)
	}
}

// Close ends the session: it closes the connection and, for a stdio
// server, ends its whole process group (stdin close, grace period, SIGTERM,
// SIGKILL) and reaps it. The server's own exit status is not an error.
// Close is idempotent; calls in flight fail with ErrUnavailable.
func (s *Session) Close() error {
	if s.lease != nil {
		return s.leaseClose()
	}
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeNow()
		if s.cs != nil {
			_ = s.cs.Close() // errors here report the peer's state, not ours
		}
		s.release()
	})
	return s.closeErr
}

// release frees what Connect acquired: the process and the HTTP transport.
func (s *Session) release() {
	s.closeNow()
	if s.proc != nil {
		if err := s.proc.stop(s.grace); err != nil {
			s.closeErr = &Error{Ref: s.ref, Op: "close", Detail: "ending the server process failed", Err: err}
		}
	}
	if s.httpTransport != nil {
		s.httpTransport.CloseIdleConnections()
	}
}
