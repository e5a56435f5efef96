//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; agt still answers them from legacy servers, and a modern server asks for them inside input_required results

package mcpconn

import (
	"context"
	"errors"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConnectOptions are the choices of one Connect that are not in the
// server's document. A nil *ConnectOptions means none.
type ConnectOptions struct {
	// Handlers answer what the server sends on its own during the
	// session. Nil means none: no client capability is declared, and
	// roots/list, sampling/createMessage and elicitation/create are
	// refused (method not found).
	Handlers *Handlers
	// Revision is the revision of the registration the document was read
	// at (resource.Resource.Revision). With a revision above 0, a modern
	// server's listing may come from the Connector's listing cache (see
	// Listing cache in the package doc), for the Prober too; 0 lists
	// every time. A shared connection is one per revision.
	Revision int64
	// Share asks for the shared connection of a document with "shared":
	// true: the session is then a lease on a connection shared with every
	// Connect of the same registration, Revision, document and declared
	// capabilities (see Shared connections in the package doc). false
	// means the session is its own whatever the document says (the
	// Prober's sessions are always their own: a probe tests a fresh
	// start).
	Share bool
}

// Handlers answer the requests and notifications a server sends on its
// own. Each nil field means the feature is not offered: its capability is
// not declared in the initialize handshake, and a request for it is
// refused with "method not found". Ping is always answered.
//
// The request handlers (Elicit, CreateMessage, Roots) run concurrently,
// at most ConnectorOptions.Limits.MaxServerRequests at once per session (per
// connection, all its sessions together, when it is shared), under a
// context that ends when the session closes, after
// ConnectorOptions.Limits.MaxServerRequestTime, when the server cancels the
// request, and when every call it was told of (Incoming.Calls) has
// returned (a request is about those calls).
// While a request handler runs for a call, that call's idle timeout
// (tool_timeout_ms) is held: the wait is the host's, not the server's.
//
// The notification handlers (Progress, Log, ToolsChanged) run one at a
// time, in the order the server sent them, on a goroutine of the
// session's, fed by a queue of at most 256 notifications: when the
// handlers fall that far behind, later notifications are dropped and
// counted (Session.NotificationsDropped). A progress restarts its call's
// idle timeout when it is read, not when its handler runs. A call's
// result waits for the handlers of the notifications read before it (at
// most tool_timeout_ms; see the package doc), so a notification handler
// must return without waiting for a call of its session.
//
// A handler that panics fails only its request (the server gets an
// error; Served reports OutcomeError); a host error's text never reaches
// the server.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
type Handlers struct {
	// Elicit answers elicitation/create, form and URL modes; setting it
	// declares the elicitation capability with both modes. When the
	// result accepts a form, the properties of the requested schema that
	// have a default and that Content leaves out are filled with it
	// (SEP-1034), and the go-sdk then validates Content against the
	// requested schema: a result that does not match fails the request.
	// A form's requested schema must be flat (the spec's primitive
	// properties); a URL must be http or https. The url-mode
	// elicitations of a call the server answers with URL elicitation
	// required (-32042) come here too, with that call, one after the
	// other; their answers go to no server (see ErrURLElicitationRequired).
	// The elicitations, sampling and roots requests a modern server asks
	// for inside an input_required result come to the handlers below as
	// its requests do, with their call (see Multi round-trip requests in
	// the package doc).
	Elicit func(ctx context.Context, in Incoming, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// CreateMessage answers sampling/createMessage; setting it declares
	// the sampling capability (without tools or context inclusion).
	CreateMessage func(ctx context.Context, in Incoming, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// Roots answers roots/list; setting it declares the roots capability
	// with listChanged (see Session.NotifyRootsChanged).
	Roots func(ctx context.Context, in Incoming) ([]*mcp.Root, error)
	// Progress receives notifications/progress of the session's calls:
	// in.Calls holds exactly the call whose progress token it names
	// (also shortly after that call returned). Progress for no call of
	// this session is dropped. The message is bounded
	// (ConnectorOptions.Limits.MaxNotificationBytes).
	Progress func(ctx context.Context, in Incoming, params *mcp.ProgressNotificationParams)
	// Log receives notifications/message, bounded: a Data larger than
	// ConnectorOptions.Limits.MaxNotificationBytes (as JSON) arrives as a string
	// holding its start and "...".
	Log func(ctx context.Context, in Incoming, params *mcp.LoggingMessageParams)
	// LogLevel is the least level asked of a server that declares the
	// logging capability (logging/setLevel, right after the handshake),
	// when Log is set. "" means "info"; a level the server does not know
	// only means it refuses the request (fewer or no log lines).
	LogLevel mcp.LoggingLevel
	// ToolsChanged receives notifications/tools/list_changed (also
	// counted by Session.ToolsChanged whether or not it is set). In the
	// modern era setting it is what opens the subscriptions/listen
	// stream that carries them (Protocol eras in the package doc).
	ToolsChanged func(ctx context.Context, in Incoming)
	// TaskStatus is told each new status (or status message) of the task
	// a server runs for a call (see Tasks in the package doc), as the
	// call's polls find it, with that call alone in in.Calls. It runs on
	// the call's goroutine: it must return quickly.
	TaskStatus func(ctx context.Context, in Incoming, st TaskStatus)

	// Served, when set, is told the outcome of every elicitation,
	// sampling and roots request the server sent, answered or refused
	// (ping is not reported): for an audit. It runs after the answer, on
	// the request's goroutine; it does not declare anything.
	Served func(in Incoming, rep ServedRequest)

	// shared is set on the handlers of a shared connection's own
	// session (sharedConn.handlers): requests, log lines and reports go
	// to it with the call they name, which it routes to a lease or to
	// none.
	shared *sharedConn
}

// needsServerStream reports whether the session must receive messages a
// server starts outside a call (the standalone stream of streamable
// HTTP): when a request or notification handler is set.
func (h *Handlers) needsServerStream() bool {
	return h != nil && (h.Elicit != nil || h.CreateMessage != nil || h.Roots != nil ||
		h.Progress != nil || h.Log != nil || h.ToolsChanged != nil)
}

// Incoming says where a message the server sent on its own comes from.
type Incoming struct {
	// Ref is the session's reference.
	Ref resource.Ref
	// Calls are the tags (WithCallTag) of the calls the message belongs
	// to. When the message names its call, Calls holds that call only: a
	// progress notification (by its token), a request or log line that
	// came on the event stream of a call's own POST (streamable HTTP), or
	// whose params' _meta names the call by relatedRequestId (the id of
	// its tools/call request) or progressToken (the token it carried).
	// Otherwise Calls are the session's calls in flight when the message
	// arrived, in the order they started, nil when none was: one call is
	// unambiguous; with several, the message may belong to any of them.
	// (A shared connection's lease gets only what names one of its calls;
	// see Shared connections in the package doc.)
	Calls []any
}

// The server requests Served reports.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// RequestOutcome is how a server request ended.
type RequestOutcome string

// The outcomes.
const (
	// OutcomeAccepted: answered (an elicitation the user accepted, a
	// sampling result, the roots).
	OutcomeAccepted RequestOutcome = "accepted"
	// OutcomeDeclined: an elicitation the user declined.
	OutcomeDeclined RequestOutcome = "declined"
	// OutcomeCancelled: an elicitation the user dismissed, or a request
	// whose context ended (the server cancelled it, its calls returned,
	// the session closed, MaxServerRequestTime passed).
	OutcomeCancelled RequestOutcome = "cancelled"
	// OutcomeError: the handler failed or panicked, or its answer did not
	// match the request (an elicitation's content against its schema).
	OutcomeError RequestOutcome = "error"
	// OutcomeRefused: not answered: no handler (the capability was not
	// declared), a bound (size, concurrency), a malformed request, or a
	// handler that returned an error wrapping ErrRefused.
	OutcomeRefused RequestOutcome = "refused"
)

// ServedRequest reports one request a server sent (Handlers.Served). It
// holds no value of the request or the answer.
type ServedRequest struct {
	// Method is MethodElicit, MethodCreateMessage or MethodListRoots.
	Method string
	// Mode is an elicitation's mode ("form" or "url"); "" otherwise.
	Mode string
	// Outcome is how it ended.
	Outcome RequestOutcome
	// Reason says why, for OutcomeRefused and OutcomeError, in agt's own
	// words (never the server's or the handler's text); "" otherwise.
	Reason string
	// Duration is how long it took to answer.
	Duration time.Duration
}

// ErrRefused, wrapped by a handler's error, refuses the request on
// purpose (a budget, a policy): the server is told it was refused, and
// Served reports OutcomeRefused with the text of the *RefusedError, or
// "refused by the host". Any other handler error is OutcomeError, and the
// server is told only that the client could not answer.
var ErrRefused = errors.New("mcpconn: request refused by the host")

// RefusedError refuses a server request with a reason that is safe to
// send to the server and to audit: agt's or the host's own words, never a
// value.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "refused: " + e.Reason }

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }
