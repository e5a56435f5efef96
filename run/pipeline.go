package run

import (
	"context"
	"encoding/json"

	"github.com/agtsdk/agt/internal/text"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is one tool call the model made.
type Call struct {
	// ID is the model's tool_call_id: non-empty and unique in its batch.
	ID string
	// Name is the tool alias, as listed by Run.Tools.
	Name string
	// Arguments must be a JSON object. Empty means {}.
	Arguments json.RawMessage
}

// Batch is the set of calls of one model step.
type Batch struct {
	// ID names the batch in the audit; empty is allowed.
	ID string
	// Agent must equal the Run's agent (the batch identity check).
	Agent resource.Ref
	// Calls run concurrently; their results keep this order.
	Calls []Call
}

// Outcome is what Execute returns: the answer to every call of the batch,
// a rejected one included (the package documentation, A model loop).
type Outcome struct {
	// BatchID is the batch's ID.
	BatchID string
	// Results holds one Result per call, in call order.
	Results []Result
	// Refresh is nil when no call changed the Run's configuration, else the
	// report of the refresh done at the end of the batch.
	Refresh *RefreshReport
}

// Notice is the text a host should add to the model's next message about
// this batch: when a refresh or a restart failed, "configuration saved,
// but load failed: ..."; else empty.
func (o Outcome) Notice() string {
	if o.Refresh == nil {
		return ""
	}
	return o.Refresh.Notice
}

// BatchError rejects a whole batch at the batch checks: a
// malformed batch (CodeInvalidArguments), a wrong agent identity or a failed
// delegation check (CodeUnauthorized), or a tool that is not in the snapshot
// (CodeUnknownTool). No call of the batch ran; the Outcome Execute returns
// with it still holds a failed Result per call, for the model. Test for it
// with errors.As.
type BatchError struct {
	// Code is why the batch was rejected.
	Code Code
	// CallID names the offending call; empty for batch-wide problems.
	CallID string
	// Message says what is wrong; it never holds argument values.
	Message string
	// NotOffered is set, with CodeUnknownTool, when the batch named the
	// alias of a tool a mounted server listed but the Run does not offer:
	// the registration's enabled_tools or disabled_tools exclude it, or it
	// was left out (SkippedTools). Message says which, so the model learns
	// it too. The name is not a misspelling of another tool: a host that
	// suggests the nearest tool for an unknown name should not for this
	// one.
	NotOffered bool
}

// Error implements error.
func (e *BatchError) Error() string {
	if e.CallID != "" {
		return "run: batch rejected: " + string(e.Code) + ": call " + quoteID(e.CallID) + ": " + e.Message
	}
	return "run: batch rejected: " + string(e.Code) + ": " + e.Message
}

// ToolError renders the rejection in the ToolError format, for hosts that
// answer every call of a rejected batch with it.
func (e *BatchError) ToolError() json.RawMessage {
	return renderToolError(e.Code, e.Message, nil)
}

// SourceKind says where a tool comes from.
type SourceKind string

// The source kinds.
const (
	// SourceMCP is a tool of a mounted MCP server.
	SourceMCP SourceKind = "mcp"
	// SourceHost is a tool the host registered (HostTool).
	SourceHost SourceKind = "host"
	// SourceFramework is a host tool marked ManagementOnly: agt's framework
	// tools (resource_write and friends).
	SourceFramework SourceKind = "framework"
)

// Source names a tool's origin.
type Source struct {
	// Kind is where the tool comes from.
	Kind SourceKind `json:"kind"`
	// Ref is the MCP resource reference; empty for host tools.
	Ref resource.Ref `json:"reference,omitempty"`
	// Tool is the remote tool name (MCP) or the host tool's name.
	Tool string `json:"tool"`
}

// String renders the source as "mcp:REF:TOOL" or "host:NAME" or
// "framework:NAME", the form policy.Rules patterns match.
func (s Source) String() string {
	if s.Kind == SourceMCP {
		return string(s.Kind) + ":" + string(s.Ref) + ":" + s.Tool
	}
	return string(s.Kind) + ":" + s.Tool
}

// Request is one call as the later stages see it: the Permission, the
// interceptors and host tool handlers; and, in Origin.Calls, the handlers
// of what a server sends during the call.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
type Request struct {
	// BatchID and CallID identify the call.
	BatchID, CallID string
	// Agent is the Run's agent.
	Agent resource.Ref
	// RunID is Options.RunID ("" when the host gave none).
	RunID string
	// Alias is the tool name the model used.
	Alias string
	// Source is where the tool comes from.
	Source Source
	// Description is the tool's description.
	Description string
	// Annotations are the MCP server's hints (read-only, destructive, ...);
	// nil for host tools and servers that send none. Hints, not guarantees.
	// Shared by every call of the tool: do not modify.
	Annotations *mcp.ToolAnnotations
	// Arguments are the call's arguments. After the batch checks they have
	// passed the schema. Do not modify them: the Run validates and executes
	// its own copy, so changing these bytes changes nothing the tool
	// receives (a host tool's Handler gets that copy).
	Arguments json.RawMessage
}

// Verdict is a permission verdict.
type Verdict string

// The verdicts.
const (
	// Allow lets the call run.
	Allow Verdict = "allow"
	// Deny refuses it: the call gets permission_denied.
	Deny Verdict = "deny"
	// Ask means no decision: someone else must decide. The zero Verdict
	// reads as Ask. A Run treats an undecided call as denied; there is no
	// implicit allow.
	Ask Verdict = "ask"
)

// Decision is a Permission's answer, recorded in the audit.
type Decision struct {
	// Verdict is the decision; the zero value means Ask.
	Verdict Verdict `json:"verdict"`
	// By names who decided ("rules", "human", "review", ...).
	By string `json:"by,omitempty"`
	// Reason says why, for the audit and the model.
	Reason string `json:"reason,omitempty"`
}

// Permission decides whether a validated call may run. It is a
// fixed stage between validation and the interceptors, so it always sees the
// final arguments. Implementations must be safe for concurrent use; package
// policy provides the usual ones. An error fails the call (with CodeOf of
// the error) and never allows it.
type Permission interface {
	Check(ctx context.Context, req Request) (Decision, error)
}

// Interceptor wraps the execution of an allowed call. Interceptors run in
// Options order, the first one outermost:
//
//	first(before) -> second(before) -> execute -> second(after) -> first(after)
//
// An interceptor may return without calling next (the call then does not
// run), change the context, or change the Result; it cannot change the
// arguments, which the Permission has already seen, nor run the tool twice
// (the Permission allowed one execution). A returned error becomes the
// call's failure (CodeOf). Implementations must be safe for concurrent use.
//
// next runs the rest of the chain and then the tool. It always returns a
// Result; a failure is a Result with a Code. The tool runs at most once per
// call, and only while the chain runs: calling next a second time, or after
// Intercept returned, runs nothing and returns a CodeInternal Result.
type Interceptor interface {
	Intercept(ctx context.Context, req Request, next func(context.Context) Result) (Result, error)
}

// interceptorFunc adapts a function to Interceptor (Before, After).
type interceptorFunc func(ctx context.Context, req Request, next func(context.Context) Result) (Result, error)

func (f interceptorFunc) Intercept(ctx context.Context, req Request, next func(context.Context) Result) (Result, error) {
	return f(ctx, req, next)
}

// Before adapts a callback that runs before the call. An error stops the
// call, which fails with CodeOf(err) (return an *Error to choose the
// code), and the rest of the chain and the tool do not run. Otherwise the
// context it returns is the one the rest of the chain and the call get
// (derive it from ctx: another would drop the batch's cancellation and
// deadline); nil means ctx, unchanged. Per-call state goes there, as
// context values: an After placed later in Options.Interceptors reads it
// from its ctx.
//
//	type startKey struct{}
//	opts.Interceptors = []run.Interceptor{
//		run.Before(func(ctx context.Context, req run.Request) (context.Context, error) {
//			return context.WithValue(ctx, startKey{}, time.Now()), nil
//		}),
//		run.After(func(ctx context.Context, req run.Request, res run.Result) run.Result {
//			start, _ := ctx.Value(startKey{}).(time.Time)
//			log.Printf("%s took %s", req.CallID, time.Since(start))
//			return res
//		}),
//	}
//
// Order matters: the Before comes first, so the After runs inside it and
// sees its context; an After placed before it gets the outer context,
// without the value. A context that must be cancelled when the call
// returns (a deadline of its own) needs an Interceptor, which can defer
// its cancel.
func Before(f func(ctx context.Context, req Request) (context.Context, error)) Interceptor {
	return interceptorFunc(func(ctx context.Context, req Request, next func(context.Context) Result) (Result, error) {
		inner, err := f(ctx, req)
		if err != nil {
			return Result{}, err
		}
		if inner == nil {
			inner = ctx
		}
		return next(inner), nil
	})
}

// After adapts a callback that runs after the call, failed or not, and may
// replace its Result. Its ctx is the one the interceptors before it in
// Options.Interceptors passed on: it holds what a Before placed earlier
// put there (see Before).
func After(f func(ctx context.Context, req Request, res Result) Result) Interceptor {
	return interceptorFunc(func(ctx context.Context, req Request, next func(context.Context) Result) (Result, error) {
		return f(ctx, req, next(ctx)), nil
	})
}

func quoteID(id string) string {
	b, _ := json.Marshal(text.Bound(id, 64))
	return string(b)
}
