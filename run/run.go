//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; agt still answers them from legacy servers, and a modern server asks for them inside input_required results

package run

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agtsdk/agt/internal/toolalias"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors of New, Resume and Execute; test with errors.Is.
var (
	// ErrAgentDisabled: the agent's document has enabled=false.
	ErrAgentDisabled = errors.New("run: agent is disabled")
	// ErrClosed: the Run is closed.
	ErrClosed = errors.New("run: closed")
	// ErrFingerprintMismatch: Resume found a configuration that differs from
	// the checkpoint's; the error's message says which parts and tools.
	ErrFingerprintMismatch = errors.New("run: fingerprint mismatch")
)

// errNoPermission: Options.Permission is nil. There is no implicit allow;
// pass policy.AutoAllow() to say so explicitly. A misconfiguration, not a
// condition a host handles, so no exported sentinel.
var errNoPermission = errors.New("run: no Permission: a Run needs an explicit permission policy: set Options.Permission (policy.AutoAllow() allows everything)")

// StaticInputs are the host's inputs that a Run's fingerprint covers besides
// the tool snapshot. agt does not interpret them.
type StaticInputs struct {
	// Model, Provider and BasePrompt as the host uses them; "" is a value.
	Model, Provider, BasePrompt string
	// Permissions is the host's built-in permission config, opaque bytes;
	// nil and empty are the same.
	Permissions []byte
	// Delegation is the host's delegation config, opaque bytes; nil and
	// empty are the same.
	Delegation []byte
}

// HostTool is a tool the host implements itself. Its schema is
// compiled when the Run is created, and every call is validated against it
// before Handler runs.
type HostTool struct {
	// Name is the tool's name as the model sees it: 1 to 64 of
	// [A-Za-z0-9_-], not starting with "mcp__", unique in the Run.
	Name string
	// Description is shown to the model; "" is allowed.
	Description string
	// Schema is the JSON Schema of the arguments (toolschema.Compile rules);
	// required.
	Schema json.RawMessage
	// Handler runs an allowed, validated call; required. A returned error
	// fails the call with CodeOf(err) and the error's text as message (an
	// *Error chooses both). Set Result.Changed to report written resources.
	// It must not call Execute on its own Run (the batch it is part of
	// holds the snapshot).
	Handler func(ctx context.Context, req Request) (Result, error)
	// Precheck, when set, sees a call's arguments at the validate stage,
	// before the schema does; an error fails the call as a validation
	// failure would (an *Error chooses its code, message and violations;
	// another error gets CodeOf(err)), and nothing else runs. It lets a
	// tool refuse an argument its schema no longer lists with a message of
	// its own rather than the schema's generic one (the framework tools
	// refuse the removed allow_mcp this way). A panic fails the call with
	// CodeInternal. nil means none.
	Precheck func(args json.RawMessage) error
	// Authorize, when set, runs at the batch checks, before any call of the
	// batch runs, with the call's arguments not yet validated; an error (or
	// a panic) rejects the whole batch with CodeUnauthorized (delegation).
	// nil means no check.
	Authorize func(ctx context.Context, req Request) error
	// ManagementOnly marks a framework tool: it is listed and callable only
	// when the agent may manage resources (a manager or an agent with the
	// resource_management capability), and its Source kind is
	// SourceFramework. false means every agent gets it.
	ManagementOnly bool
}

// Options configure New and Resume. Agent, Repository and Permission are
// required.
type Options struct {
	// Agent is the agent this Run executes; required.
	Agent resource.Ref
	// Repository holds the agent and MCP documents; required.
	Repository resource.Repository
	// Connector starts and connects the mounted servers; nil means
	// mcpconn.NewConnector(nil), the Run's own, which Close closes (so
	// its shared servers are this Run's alone; give Runs one Connector
	// to share them).
	Connector *mcpconn.Connector
	// Permission decides every validated call; required: New fails
	// without one.
	// A Permission with a method Validate() error (policy.Rules, First,
	// Chain) is validated first: New fails with its error.
	Permission Permission
	// Interceptors wrap execution, first = outermost; nil means none.
	Interceptors []Interceptor
	// WrapExecute, when set, wraps every Execute of the Run: it gets the
	// batch and execute, which runs it (refreshes at the batch boundary
	// included). It calls execute once, before it returns, with ctx or a
	// context derived from it (a span, a deadline), and returns
	// execute's error or one of its own. Execute returns the Outcome of
	// the batch whatever the wrapper returns, and the wrapper's error when
	// it has one, else execute's. A second call of execute (concurrent or
	// not) runs nothing and fails; a wrapper that returns without calling
	// it fails every call with CodeInternal and Execute with the
	// wrapper's error, or a CodeInternal one. agtotel's Instrument sets
	// it for the batch span. Nil means none.
	WrapExecute func(ctx context.Context, b Batch, execute func(context.Context) (Outcome, error)) (Outcome, error)
	// Auditor receives one Record per call, refresh, server request and
	// lost connection; nil means no audit.
	Auditor Auditor
	// HostTools are the host's own tools (and the framework tools); nil
	// means none.
	HostTools []HostTool
	// FailOnMountError makes any mount that fails to load fail New (and
	// Resume) with an error that wraps its MountError (errors.As); false
	// means the failure is reported by MountErrors and the other mounts
	// load.
	FailOnMountError bool
	// Static are the host inputs the fingerprint covers; zero means empty.
	Static StaticInputs
	// Logger receives what must never reach the model: the value and stack
	// of a host callback that panicked (also in the call's audit Record),
	// and of an Auditor that panicked; and the error of a
	// ClientFeatures.Elicit or Sample that failed rather than refused
	// (the server reads only that the client could not answer). Nil means
	// slog.Default().
	Logger *slog.Logger
	// ServerStderrToModel lets the text the model reads (Result.Message of
	// a failed call, RefreshReport.Notice) include what a stdio server
	// wrote: the end of its stderr, and the first line of its stdout when
	// that was not JSON-RPC (mcpconn.Error's StderrTail and StdoutHead).
	// false (the zero value) keeps them out: a server may print its
	// environment on stderr, echo an argument of an earlier call, or print
	// a token in a banner. The Go errors (MountErrors, RefreshReport.Err)
	// and the audit (Record.Message) keep them either way.
	ServerStderrToModel bool
	// SchemaCache holds the compiled tool schemas; give the same one to
	// many Runs to compile each schema once (agt.Host does, for all its
	// Runs). Nil means a cache of the Run's own, which its refreshes
	// share.
	SchemaCache *mcpconn.SchemaCache

	// RunID names the Run for the host: it is copied to every Request
	// and audit Record. "" means none.
	RunID string
	// ClientFeatures are what the Run offers its mounted servers as an
	// MCP client: elicitation, sampling, roots, and the log lines and
	// notifications it hears. Nil means none: no capability is declared,
	// the servers' requests are refused, log lines are asked at "info".
	ClientFeatures *ClientFeatures
	// Limits bounds the batches, the listed tools of the Run, restarts,
	// re-listings and sampling (Limits). Nil means every default; a zero
	// field means its default.
	Limits *Limits
}

// ClientFeatures are what a Run offers its mounted servers as an MCP
// client (Options.ClientFeatures). Each nil field means the feature is
// not offered.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
type ClientFeatures struct {
	// Elicit answers a mounted server's elicitation/create (form and URL
	// modes), with the call in flight that caused it (from.Calls): ask
	// the Run's user, and return accept with the content, decline or
	// cancel. Nil means the Run offers no elicitation: the capability is
	// not declared and the servers' requests are refused. An accepted
	// form gets the requested schema's defaults for the properties it
	// leaves out, and must then match the schema (mcpconn.Handlers).
	Elicit func(ctx context.Context, from Origin, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// Sample answers a mounted server's sampling/createMessage with the
	// Run's model, billed to the call in flight (from.Calls). Nil means
	// the Run offers no sampling: the capability is not declared and the
	// requests are refused. A request is refused before Sample runs when
	// no call of the server is in flight, or when a call in flight has
	// used its Limits.MaxSamplingPerCall requests; Sample may refuse more by
	// returning an error wrapping mcpconn.ErrRefused (an
	// *mcpconn.RefusedError says why).
	Sample func(ctx context.Context, from Origin, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// Roots are the roots the Run's servers get (roots/list), each with a
	// file:// URI; SetRoots changes them and tells the servers. Nil means
	// the Run declares no roots capability (roots/list is refused, and
	// SetRoots fails); an empty non-nil slice declares it with no roots
	// yet. New copies it.
	Roots []*mcp.Root
	// LogLevel is the least severe level of the log lines
	// (notifications/message) the Run asks its mounted servers for: one
	// of debug, info, notice, warning, error, critical, alert, emergency
	// (RFC 5424's severities, as MCP names them). "" means "info"; any
	// other value fails New (and Resume). It is asked of every mount's
	// server, restarts and refreshes included, in either protocol era:
	// a server of protocol 2025-11-25 and earlier that declares the
	// logging capability gets logging/setLevel right after the handshake;
	// a server of the 2026-07-28 revision, which has no setLevel, gets
	// it with each request (_meta io.modelcontextprotocol/logLevel).
	// agt's connections speak 2025-11-25 today: setLevel is what servers
	// get. Lines below the level are not sent, so neither Observe nor
	// Logger sees them. Runs that share a server share it only with Runs
	// asking the same level (a server has one level per connection).
	LogLevel mcp.LoggingLevel
	// Observe receives the notifications the mounted servers send:
	// progress of a call, log lines, tool list changes, with the calls in
	// flight. It is called one notification at a time per server, on the
	// server's reader: it must return quickly. Nil means none (the log
	// lines and progress still go to Logger, at a bounded rate).
	Observe func(ctx context.Context, n Notification)
}

// Limits bounds what one Run does (Options.Limits). Every field's zero
// value means its default, given in its comment; a nil Options.Limits
// means all defaults. The bounds of one server's session are
// mcpconn.Limits, set on the Connector.
type Limits struct {
	// MaxConcurrency bounds the calls of one batch that run at once; 0
	// means 16.
	MaxConcurrency int
	// MaxBatchCalls bounds the calls in one batch; 0 means 256.
	MaxBatchCalls int
	// MaxToolsPerRun bounds the MCP tools of one Run, all mounts
	// together, as listed (each server's own bound is
	// mcpconn.Limits.MaxTools). The mounts are counted in the agent's
	// order; a mount that takes the Run past the bound fails to load
	// (error wrapping mcpconn.ErrLimit), the mounts before it stay. 0
	// means 10000.
	MaxToolsPerRun int
	// MaxListBytesPerRun bounds the listed bytes of one Run's MCP tools
	// (names, titles, descriptions, input and output schemas, _meta;
	// tools the registrations exclude included), all mounts together,
	// counted the same way. 0 means 64 MiB.
	MaxListBytesPerRun int
	// MaxRestarts bounds how often one mount whose connection was lost
	// (its process exited, the remote server dropped the session) is
	// restarted in this Run. Only a loss charged to the Run counts: any
	// loss of a server that is not shared, and a loss of a shared server
	// while calls of this Run were in flight on it (mcpconn.Loss.Charged);
	// a shared server lost to another Run's calls, or to none, is
	// restarted without counting. 0 means 5; a negative value means never
	// (not even uncharged).
	MaxRestarts int
	// RestartBackoff is the least time between two restarts of one mount;
	// it doubles with each restart charged to the Run, up to 5 minutes
	// (the first waits nothing, the second RestartBackoff, the third twice
	// that...). 0 means 1 s.
	RestartBackoff time.Duration
	// MinRelistInterval is the least time between two re-listings of one
	// mount's tools after its server said they changed
	// (notifications/tools/list_changed): the first re-listing comes at
	// the next batch boundary, a change inside the interval is remembered
	// and applied at the first boundary after it. So a server that says
	// its tools changed before every batch costs one tools/list per
	// interval, not one per batch. 0 means 10 s.
	MinRelistInterval time.Duration
	// MaxSamplingPerCall bounds the sampling requests the servers may
	// make during one call (a request made while several calls of its
	// server are in flight counts for each). 0 means 10; negative means
	// none.
	MaxSamplingPerCall int
}

// The defaults of Limits.
const (
	defaultMaxConcurrency     = 16
	defaultMaxBatchCalls      = 256
	defaultMaxToolsPerRun     = 10_000
	defaultMaxListBytesPerRun = 64 << 20
	defaultMaxRestarts        = 5
	defaultRestartBackoff     = time.Second
	defaultMinRelistInterval  = 10 * time.Second
	defaultMaxSamplingPerCall = 10
)

// limits are Options.Limits resolved: every default applied, in this one
// place.
type limits struct {
	maxConc, maxCalls, maxTools, maxBytes int
	// maxRestarts: 0 means never.
	maxRestarts                    int
	restartBackoff, relistInterval time.Duration
	// maxSamples: 0 means none.
	maxSamples int32
}

// resolve applies the defaults of Limits to l (nil: all defaults). A zero
// field, and a negative one where its comment gives it no meaning, is its
// default.
func (l *Limits) resolve() limits {
	var in Limits
	if l != nil {
		in = *l
	}
	return limits{
		maxConc:        cmp.Or(max(in.MaxConcurrency, 0), defaultMaxConcurrency),
		maxCalls:       cmp.Or(max(in.MaxBatchCalls, 0), defaultMaxBatchCalls),
		maxTools:       cmp.Or(max(in.MaxToolsPerRun, 0), defaultMaxToolsPerRun),
		maxBytes:       cmp.Or(max(in.MaxListBytesPerRun, 0), defaultMaxListBytesPerRun),
		maxRestarts:    max(cmp.Or(in.MaxRestarts, defaultMaxRestarts), 0),
		restartBackoff: cmp.Or(max(in.RestartBackoff, 0), defaultRestartBackoff),
		relistInterval: cmp.Or(max(in.MinRelistInterval, 0), defaultMinRelistInterval),
		maxSamples:     int32(min(max(cmp.Or(in.MaxSamplingPerCall, defaultMaxSamplingPerCall), 0), 1<<30)),
	}
}

// maxMounts bounds the MCP resources one agent may mount; an agent document
// with more fails New (and a refresh).
const maxMounts = 256

const (
	// maxParallelMounts bounds how many servers start at once.
	maxParallelMounts = 16
	// maxCallIDLen bounds a call ID.
	maxCallIDLen = 256
)

// Run is one execution of an agent: an immutable snapshot of its tools and
// the connections behind them, and the batch pipeline. A Run is safe for
// concurrent use; its connections belong to it and Close ends them.
type Run struct {
	schemas     *mcpconn.SchemaCache
	agent       resource.Ref
	repo        resource.Repository
	connector   *mcpconn.Connector
	permission  Permission
	chain       []Interceptor
	wrapExecute func(context.Context, Batch, func(context.Context) (Outcome, error)) (Outcome, error)
	auditor     Auditor
	hostTools   []*compiledHostTool
	maxConc     int
	maxCalls    int
	failOnMount bool
	maxTools    int
	maxBytes    int
	static      staticDigests
	logger      *slog.Logger
	// stderrToModel is Options.ServerStderrToModel.
	stderrToModel bool
	runID         string
	// hooks answer what the mounted servers send on their own.
	hooks *serverHooks
	// tasks are the Run's durable tasks.
	tasks *runTasks
	// ownConnector: the Run made connector (Options.Connector nil), and
	// Close closes it.
	ownConnector bool

	maxRestarts    int
	restartBackoff time.Duration
	// relistInterval is Options.Limits.MinRelistInterval resolved.
	relistInterval time.Duration
	// now is the clock of re-listings (tests move it).
	now func() time.Time

	// life ends at Close: it bounds the work a refresh does for the Run.
	life    context.Context
	endLife context.CancelFunc
	// refreshing serializes refreshes (one token); Close never takes it.
	refreshing chan struct{}
	// work counts the refreshes in progress and the retirements running in
	// the background; Close waits for them. Add only under mu while open.
	work sync.WaitGroup

	snap   atomic.Pointer[snapshot]
	closed atomic.Bool
	// mu guards the switch of snapshots, closed's change, and the fields
	// below. It is never held while anything starts, lists or stops.
	mu sync.Mutex
	// replaced holds the snapshots a refresh replaced while batches still
	// used them; their mounts stay open until the last of those batches
	// ends (Close closes them too).
	replaced map[*snapshot]struct{}
	// behind is set while the snapshot is behind the saved configuration
	// (the last refresh failed); pending names the mounts that failed to
	// load then. A write to one of them, or to the agent, retries.
	behind  bool
	pending map[resource.Ref]bool
	// restarts counts the restarts of each mount in this Run.
	restarts map[resource.Ref]*restartState
}

// restartState is the restart history of one mounted reference.
type restartState struct {
	count int       // restarts charged to the Run (MaxRestarts)
	last  time.Time // the last restart, charged or not
}

type compiledHostTool struct {
	HostTool
	schema *toolschema.Schema
}

// mount is one connected MCP server of a snapshot. Snapshots share a mount
// while its resource revision is unchanged.
type mount struct {
	ref      resource.Ref
	revision int64
	session  *mcpconn.Session
	tools    []*tool
	skipped  []SkippedTool
	// excluded are the names of the listed tools the registration's
	// enabled_tools and disabled_tools leave out, so that a call of one
	// says so (notOffered).
	excluded []string
	// server is the document the mount was connected with: a restart
	// uses it again (never an edit another writer saved since).
	server resource.MCPServer
	// listed counts the tools and bytes the server listed, for the
	// Run-wide bounds.
	listedTools, listedBytes int
	// holders counts the snapshots that hold the mount and are current or
	// still in use; at zero its connection closes. Guarded by Run.mu.
	holders int
	// dead is set when a call found the connection lost; a refresh then
	// restarts the mount (within Options.Limits.MaxRestarts) instead of keeping
	// it.
	dead atomic.Bool
	// lossAudited: the loss of the connection was audited
	// ("server_lost"), once.
	lossAudited atomic.Bool
	// conn is the session's share count: a mount made by re-listing the
	// tools of a live session shares it with the mount it replaces.
	conn *sharedSession
	// listedGen is the session's count of tools/list_changed
	// notifications (Session.ToolsChanged) when these tools were listed.
	listedGen uint64
	// relisted: the mount was made by re-listing a live session's tools
	// after the server said they changed.
	relisted  bool
	closeOnce sync.Once
}

// sharedSession counts the mounts that hold one session: the last to
// close closes it.
type sharedSession struct {
	refs atomic.Int32
	// relistFailed is the ToolsChanged count at which re-listing failed:
	// the Run tries again only when the server says its tools changed
	// again.
	relistFailed atomic.Uint64
	// lastRelist is when the tools were last re-listed (UnixNano; 0:
	// never), for Options.Limits.MinRelistInterval.
	lastRelist atomic.Int64
}

// lost reports whether the mount's connection is gone: a call found it
// dead, or the session saw its server exit or drop it.
func (m *mount) lost() bool { return m.dead.Load() || m.session.Lost() }

// loss says how the lost mount's connection was lost; a connection a
// call found dead that the session does not report lost is the mount's
// own.
func (m *mount) loss() mcpconn.Loss {
	if l, ok := m.session.Loss(); ok {
		return l
	}
	return mcpconn.Loss{Shared: m.server.Shared, Charged: true, Count: 1}
}

// toolsStale reports whether the mount's tools are to be listed again
// now: its server said they changed since the mount listed them
// (notifications/tools/list_changed), re-listing has not already failed
// at that point, and the last re-listing is at least
// Options.Limits.MinRelistInterval ago (a change sooner waits for a later
// boundary: the count of changes remembers it).
func (r *Run) toolsStale(m *mount) bool {
	g := m.session.ToolsChanged()
	if g == m.listedGen {
		return false
	}
	if m.conn == nil {
		return true
	}
	if g == m.conn.relistFailed.Load() {
		return false
	}
	last := m.conn.lastRelist.Load()
	return last == 0 || r.now().Sub(time.Unix(0, last)) >= r.relistInterval
}

// close lets go of the mount's share of its session, once; the last
// share closes it.
func (m *mount) close() {
	m.closeOnce.Do(func() {
		if m.conn == nil || m.conn.refs.Add(-1) <= 0 {
			// The error is the child's exit status after the stop
			// sequence; nothing is left to do with it.
			_ = m.session.Close()
		}
	})
}

// tool is one entry of a snapshot.
type tool struct {
	info        ToolInfo
	annotations *mcp.ToolAnnotations
	schema      *toolschema.Schema
	mount       *mount            // MCP tools
	host        *compiledHostTool // host and framework tools
}

type snapshot struct {
	// use counts the batches running on this snapshot. Once a refresh has
	// replaced it, the last batch to leave closes the connections the
	// refresh dropped (retire), in the background: no batch ever waits
	// for another.
	use struct {
		sync.Mutex
		n        int
		replaced bool
	}

	refs   []resource.Ref // the agent's mounts, in its order
	manage bool
	mounts map[resource.Ref]*mount
	// restarted lists the mounts this snapshot reconnected because their
	// connection was lost; restartFailed, those whose restart failed (the
	// lost mount stays, and is reported).
	restarted     []resource.Ref
	restartFailed []MountError
	failed        []MountError
	failedAt      map[resource.Ref]int64 // revision a failed mount had; -1 unknown
	byAlias       map[string]*tool
	list          []ToolInfo // sorted by Name
	skipped       []SkippedTool
	fp            fingerprint
}

// ToolInfo is what the model should see of one tool, plus its origin.
// For an MCP tool, Title, Description, Annotations, OutputSchema and Meta
// are the server's, within mcpconn's bounds; a host
// tool has only a Description. The slices and the pointer are shared: do
// not modify them.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
type ToolInfo struct {
	// Name is the alias the model calls.
	Name string `json:"name"`
	// Title is the tool's human-readable name; "" when the server gave
	// none (annotations.title may hold one).
	Title string `json:"title,omitempty"`
	// Description is the tool's description.
	Description string `json:"description,omitempty"`
	// Annotations are the server's hints (read-only, destructive, ...);
	// nil when it gave none. Hints from a server, not guarantees.
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// InputSchema is the exact schema the server (or host) gave.
	InputSchema json.RawMessage `json:"input_schema"`
	// OutputSchema is the exact outputSchema the server gave, nil when
	// none; agt does not check results against it.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Meta is the exact _meta the server gave the tool, nil when none.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Source is where the tool comes from.
	Source Source `json:"source"`
	// SchemaDigest is toolschema's digest of the schema.
	SchemaDigest string `json:"schema_digest"`
	// ProtocolVersion is the MCP protocol version agt and the tool's
	// server agreed on (mcpconn.Session.ProtocolVersion: the modern
	// revision, or a legacy one the server fell back to or the
	// registration pinned); "" for a host tool.
	ProtocolVersion string `json:"protocol_version,omitempty"`
}

// ServerInstructions are the instructions one mounted server gave in its
// handshake: the server's own text, which a host may put in the model's
// prompt. Text is at most 32 KiB, cut at a
// UTF-8 boundary when the server sent more (Truncated).
type ServerInstructions struct {
	// Ref is the mounted MCP resource.
	Ref resource.Ref `json:"reference"`
	// Text is what the server wrote.
	Text string `json:"text"`
	// Truncated is set when the server's text was longer and cut.
	Truncated bool `json:"truncated,omitempty"`
}

// MountError reports a mounted MCP resource that did not load.
type MountError struct {
	// Ref is the mounted reference.
	Ref resource.Ref
	// Err says why: not found, start or handshake failure, list failure.
	// When the server wrote on stderr, Err is (or wraps) an *mcpconn.Error
	// that carries the tail, so Err's message holds it once.
	Err error
	// StderrTail is the end of the server's stderr, when there was one.
	StderrTail string
}

// Error implements error: "mount REF: " and Err's message.
func (e MountError) Error() string {
	return "mount " + string(e.Ref) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e MountError) Unwrap() error { return e.Err }

// SkippedTool reports a tool left out of the snapshot: its schema did not
// compile, its server listed its name twice, its x-mcp-header annotations are
// invalid or name a header of the registration (mcpconn: Protocol eras),
// or its name, title, description, outputSchema or _meta is over
// mcpconn's bounds. A
// tool the registration's enabled_tools or disabled_tools leave out is not
// a SkippedTool: it is simply not offered.
type SkippedTool struct {
	// Alias is the name the tool would have had.
	Alias string
	// Source is where it comes from.
	Source Source
	// Err says why it was left out.
	Err error
}

// New reads the agent's document, connects every mounted MCP server in
// parallel, lists and compiles their tools and returns the Run. A mount that
// fails is reported by MountErrors (or fails New, with an error wrapping its
// MountError, when Options.FailOnMountError is set); a tool whose schema fails to compile is
// left out and reported by SkippedTools. A host tool with a bad schema, a nil
// Permission, a missing or disabled agent fail New.
func New(ctx context.Context, opts *Options) (*Run, error) {
	r, err := newRun(opts)
	if err != nil {
		return nil, err
	}
	r.tasks = newRunTasks(ctx, r.repo, r.runID, r.logger)
	s, fresh, err := r.build(ctx, nil)
	if err != nil {
		closeMounts(fresh)
		return nil, err
	}
	if r.failOnMount && len(s.failed) > 0 {
		closeMounts(fresh)
		errs := make([]error, len(s.failed))
		for i := range s.failed {
			errs[i] = s.failed[i]
		}
		return nil, fmt.Errorf("run: mount failed to load: %w", errors.Join(errs...))
	}
	r.mu.Lock()
	r.hold(s)
	r.snap.Store(s)
	r.mu.Unlock()
	return r, nil
}

func newRun(opts *Options) (*Run, error) {
	if opts == nil || opts.Permission == nil {
		return nil, errNoPermission
	}
	if v, ok := opts.Permission.(interface{ Validate() error }); ok {
		// A policy that can tell it is misconfigured (a rule that can never
		// match) says so before any call depends on it.
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("run: Options.Permission: %w", err)
		}
	}
	if _, err := resource.ParseRef(string(opts.Agent)); err != nil {
		return nil, fmt.Errorf("run: Options.Agent: %w", err)
	}
	if opts.Repository == nil {
		return nil, errors.New("run: Options.Repository is nil")
	}
	lim := opts.Limits.resolve()
	r := &Run{
		schemas:       cmp.Or(opts.SchemaCache, new(mcpconn.SchemaCache)),
		agent:         opts.Agent,
		repo:          opts.Repository,
		connector:     opts.Connector,
		permission:    opts.Permission,
		chain:         append([]Interceptor(nil), opts.Interceptors...),
		wrapExecute:   opts.WrapExecute,
		auditor:       opts.Auditor,
		maxConc:       lim.maxConc,
		maxCalls:      lim.maxCalls,
		failOnMount:   opts.FailOnMountError,
		maxTools:      lim.maxTools,
		maxBytes:      lim.maxBytes,
		static:        digestStatic(opts.Static),
		logger:        cmp.Or(opts.Logger, slog.Default()),
		replaced:      map[*snapshot]struct{}{},
		stderrToModel: opts.ServerStderrToModel,
		refreshing:    make(chan struct{}, 1),
		restarts:      map[resource.Ref]*restartState{},
		maxRestarts:   lim.maxRestarts,

		restartBackoff: lim.restartBackoff,
		relistInterval: lim.relistInterval,
		now:            time.Now,
		runID:          opts.RunID,
	}
	hooks, err := newServerHooks(r, opts.ClientFeatures, lim.maxSamples)
	if err != nil {
		return nil, err
	}
	r.hooks = hooks
	r.life, r.endLife = context.WithCancel(context.Background())
	for i, ic := range r.chain {
		if ic == nil {
			return nil, fmt.Errorf("run: Options.Interceptors[%d] is nil", i)
		}
	}
	if r.connector == nil {
		r.connector = mcpconn.NewConnector(nil)
		r.ownConnector = true
	}
	seen := make(map[string]bool, len(opts.HostTools))
	for _, ht := range opts.HostTools {
		if !validHostToolName(ht.Name) {
			return nil, fmt.Errorf("run: host tool %s: a name is 1 to 64 of [A-Za-z0-9_-] and does not start with %q", quoteID(ht.Name), toolalias.Prefix)
		}
		if seen[ht.Name] {
			return nil, fmt.Errorf("run: host tool %q is registered twice", ht.Name)
		}
		seen[ht.Name] = true
		if ht.Handler == nil {
			return nil, fmt.Errorf("run: host tool %q has no Handler", ht.Name)
		}
		sc, err := r.schemas.Compile(ht.Schema)
		if err != nil {
			return nil, fmt.Errorf("run: host tool %q: schema: %w", ht.Name, err)
		}
		r.hostTools = append(r.hostTools, &compiledHostTool{HostTool: ht, schema: sc})
	}
	return r, nil
}

func validHostToolName(n string) bool {
	if n == "" || len(n) > toolalias.MaxLen || strings.HasPrefix(n, toolalias.Prefix) {
		return false
	}
	for i := 0; i < len(n); i++ {
		if !toolalias.NameByte(n[i]) {
			return false
		}
	}
	return true
}

// acquire returns the current snapshot, counted as in use: give it back
// with release.
func (r *Run) acquire() *snapshot {
	for {
		s := r.snap.Load()
		s.use.Lock()
		if !s.use.replaced {
			s.use.n++
			s.use.Unlock()
			return s
		}
		s.use.Unlock() // replaced meanwhile: take the new one
	}
}

// release gives back a snapshot taken by acquire. The last batch to leave
// a replaced snapshot lets go of its mounts; those no other snapshot holds
// close in the background.
func (r *Run) release(s *snapshot) {
	s.use.Lock()
	s.use.n--
	last := s.use.n == 0 && s.use.replaced
	s.use.Unlock()
	if last {
		r.retireLater(s)
	}
}

// hold counts s as a holder of its mounts; under mu.
func (r *Run) hold(s *snapshot) {
	for _, m := range s.mounts {
		m.holders++
	}
}

// letGo ends s's hold on its mounts and returns those nothing holds any
// more; under mu.
func (r *Run) letGo(s *snapshot) []*mount {
	delete(r.replaced, s)
	var free []*mount
	for _, m := range s.mounts {
		if m.holders--; m.holders == 0 {
			free = append(free, m)
		}
	}
	return free
}

// retireLater lets go of a replaced snapshot whose last batch ended, and
// closes the freed mounts in a goroutine that Close waits for; once the
// Run is closed, Close closes them itself.
func (r *Run) retireLater(s *snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed.Load() {
		return
	}
	free := r.letGo(s)
	if len(free) == 0 {
		return
	}
	r.work.Add(1)
	go func() {
		defer r.work.Done()
		closeMounts(free)
	}()
}

// Agent returns the Run's agent.
func (r *Run) Agent() resource.Ref { return r.agent }

// Tools lists the tools the model should see, sorted by name.
func (r *Run) Tools() []ToolInfo {
	return append([]ToolInfo(nil), r.snap.Load().list...)
}

// Instructions returns the instructions of the current snapshot's loaded
// mounts that gave any, in the agent's order of mounts: at most 256
// entries of at most 32 KiB each. A refresh that
// reconnects a mount brings its new instructions.
func (r *Run) Instructions() []ServerInstructions {
	s := r.snap.Load()
	var out []ServerInstructions
	for _, ref := range s.refs {
		m := s.mounts[ref]
		if m == nil || m.session.Instructions() == "" {
			continue
		}
		out = append(out, ServerInstructions{Ref: ref, Text: m.session.Instructions(), Truncated: m.session.InstructionsTruncated()})
	}
	return out
}

// MountErrors lists the mounts of the current snapshot that did not load.
func (r *Run) MountErrors() []MountError {
	return append([]MountError(nil), r.snap.Load().failed...)
}

// SkippedTools lists the tools left out of the current snapshot.
func (r *Run) SkippedTools() []SkippedTool {
	return append([]SkippedTool(nil), r.snap.Load().skipped...)
}

// Close ends every connection of the Run, those a refresh is about to
// unload included. Calls still running get unavailable; later Execute
// calls get ErrClosed. Close does not wait for running batches. It is
// idempotent.
//
// A refresh in progress is cancelled: the servers it was starting are
// stopped, and its report says the Run closed, never that it switched.
// Close returns once every connection and process of the Run has ended:
// about the process-termination grace of the Connector
// (mcpconn.ConnectorOptions.Limits.TerminateGrace, 2 s by default) for a server
// that does not exit when its stdin closes, twice that for one that also
// ignores SIGTERM. A shared server's connection is the Connector's: Close
// lets go of the Run's lease on it, and never closes it under another Run
// (see Shared servers in the package doc).
func (r *Run) Close() error {
	r.mu.Lock()
	if r.closed.Swap(true) {
		r.mu.Unlock()
		return nil
	}
	r.endLife()
	s := r.snap.Load()
	open := map[*mount]struct{}{}
	for _, snap := range append([]*snapshot{s}, slices.Collect(maps.Keys(r.replaced))...) {
		for _, m := range snap.mounts {
			open[m] = struct{}{}
		}
	}
	ms := slices.Collect(maps.Keys(open))
	r.mu.Unlock()
	closeMounts(ms)
	r.work.Wait()
	if r.ownConnector {
		// No other Run can take its shared connections: they end now,
		// not an idle time later.
		_ = r.connector.Close()
	}
	return nil
}

// closeMounts closes the sessions in parallel: each may wait out a grace
// period for its process.
func closeMounts(ms []*mount) {
	var wg sync.WaitGroup
	for _, m := range ms {
		if m == nil || m.session == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.close()
		}()
	}
	wg.Wait()
}

// build reads the configuration and returns a complete candidate snapshot.
// Mounts of prev whose resource revision is unchanged are reused as they
// are; fresh lists the mounts connected for this candidate (the caller
// closes them if it drops the candidate).
func (r *Run) build(ctx context.Context, prev *snapshot) (s *snapshot, fresh []*mount, err error) {
	agentRes, err := r.repo.Get(ctx, resource.Key{Kind: resource.KindAgent, Ref: r.agent})
	if err != nil {
		return nil, nil, fmt.Errorf("run: agent %s: %w", r.agent, err)
	}
	doc, err := resource.DecodeAgent(agentRes.Data)
	if err != nil {
		return nil, nil, fmt.Errorf("run: agent %s: %w", r.agent, err)
	}
	if !doc.IsEnabled() {
		return nil, nil, fmt.Errorf("%w: %s", ErrAgentDisabled, r.agent)
	}
	if len(doc.MCPs) > maxMounts {
		return nil, nil, fmt.Errorf("run: agent %s mounts %d MCP resources; the limit is %d", r.agent, len(doc.MCPs), maxMounts)
	}
	refs := make([]resource.Ref, 0, len(doc.MCPs))
	seen := make(map[resource.Ref]bool, len(doc.MCPs))
	for _, ref := range doc.MCPs {
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}

	type loaded struct {
		m         *mount
		reused    bool
		restarted bool
		rev       int64
		err       *MountError
	}
	out := make([]loaded, len(refs))
	sem := make(chan struct{}, maxParallelMounts)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			m, rev, reused, restarted, merr := r.loadMount(ctx, ref, prev)
			out[i] = loaded{m: m, reused: reused, restarted: restarted, rev: rev, err: merr}
		}()
	}
	wg.Wait()

	s = &snapshot{
		refs:     refs,
		manage:   doc.CanManage(),
		mounts:   make(map[resource.Ref]*mount, len(refs)),
		failedAt: map[resource.Ref]int64{},
		byAlias:  map[string]*tool{},
	}
	var runTools, runBytes int
	for i, l := range out {
		if l.err != nil && l.m != nil {
			// A failed restart: the lost mount stays, reported.
			s.restartFailed = append(s.restartFailed, *l.err)
			l.err = nil
		}
		if l.err == nil {
			// The Run-wide bounds, in the agent's order of mounts.
			runTools += l.m.listedTools
			runBytes += l.m.listedBytes
			if lerr := r.overRunBounds(runTools, runBytes); lerr != nil {
				if !l.reused {
					closeMounts([]*mount{l.m})
				}
				runTools -= l.m.listedTools
				runBytes -= l.m.listedBytes
				l.err = &MountError{Ref: refs[i], Err: lerr}
			}
		}
		if l.err != nil {
			s.failed = append(s.failed, *l.err)
			s.failedAt[refs[i]] = l.rev
			continue
		}
		s.mounts[refs[i]] = l.m
		if l.restarted {
			s.restarted = append(s.restarted, refs[i])
		}
		if !l.reused {
			fresh = append(fresh, l.m)
		}
	}
	s.index(r.hostTools, refs)
	s.fp = r.static.fingerprint(r.agent, s.list)
	return s, fresh, nil
}

// overRunBounds returns the bound that tools and bytes listed by the
// mounts so far go past, or nil.
func (r *Run) overRunBounds(tools, bytes int) error {
	switch {
	case tools > r.maxTools:
		return &mcpconn.LimitError{Option: "run.Options.Limits.MaxToolsPerRun", What: "the tools listed by the Run's mounts", Limit: int64(r.maxTools), Unit: "tools"}
	case bytes > r.maxBytes:
		return &mcpconn.LimitError{Option: "run.Options.Limits.MaxListBytesPerRun", What: "the tools listed by the Run's mounts", Limit: int64(r.maxBytes), Unit: "bytes"}
	}
	return nil
}

// loadMount returns the mount for ref: prev's when the resource revision is
// unchanged, else a new connection with its tools compiled.
//
// A mount of prev at the same revision whose connection was lost is
// restarted when Options.Limits.MaxRestarts and the backoff allow it (restarted
// is then true); when they do not, or the restart fails, the lost mount is
// kept as it is (reused, with merr set for a failed restart).
func (r *Run) loadMount(ctx context.Context, ref resource.Ref, prev *snapshot) (m *mount, rev int64, reused, restarted bool, merr *MountError) {
	var old *mount
	fail := func(err error, tail string) (*mount, int64, bool, bool, *MountError) {
		merr := &MountError{Ref: ref, Err: err, StderrTail: tail}
		if old != nil {
			return old, rev, true, false, merr // a failed restart keeps the lost mount
		}
		return nil, rev, false, false, merr
	}
	rev = -1
	res, err := r.repo.Get(ctx, resource.Key{Kind: resource.KindMCP, Ref: ref})
	if err != nil {
		return fail(err, "")
	}
	rev = res.Revision
	if prev != nil {
		if o := prev.mounts[ref]; o != nil && o.revision == res.Revision {
			if !o.lost() && r.toolsStale(o) {
				// Same session, new listing (not a restart: MaxRestarts
				// does not count it); a new mount, reported as relisted.
				m, merr := r.relistMount(ctx, o)
				if merr != nil {
					return o, rev, true, false, merr
				}
				return m, rev, false, true, nil
			}
			if !o.lost() || !r.takeRestart(o) {
				return o, rev, true, false, nil
			}
			old = o
		}
	}
	_, srv, err := resource.DecodeMCP(res.Data)
	if err != nil {
		return fail(err, "")
	}
	m, merr = r.connectMount(ctx, ref, res.Revision, srv)
	if merr != nil {
		return fail(merr.Err, merr.StderrTail)
	}
	return m, rev, false, old != nil, nil
}

// connectMount connects the server srv of the resource ref at revision rev
// and loads its tools: the one way a mount is made, for a load and a
// restart alike.
func (r *Run) connectMount(ctx context.Context, ref resource.Ref, rev int64, srv resource.MCPServer) (*mount, *MountError) {
	// With the revision, a registration that says "shared" is a lease on
	// the Connector's one connection for it (mcpconn: Shared connections).
	sess, err := r.connector.Connect(ctx, ref, srv, &mcpconn.ConnectOptions{Handlers: r.hooks.handlers(ref), Revision: rev, Share: true})
	if err != nil {
		var ce *mcpconn.Error
		tail := ""
		if errors.As(err, &ce) {
			tail = ce.StderrTail
		}
		return nil, &MountError{Ref: ref, Err: err, StderrTail: tail}
	}
	gen := sess.ToolsChanged() // before the listing: a change during it lists again
	listed, err := sess.Tools(ctx)
	if err != nil {
		tail := sess.StderrTail()
		_ = sess.Close()
		if ce := (*mcpconn.Error)(nil); errors.As(err, &ce) && ce.StderrTail == "" {
			ce.StderrTail = tail // the error is this call's own
		}
		return nil, &MountError{Ref: ref, Err: fmt.Errorf("tools/list: %w", err), StderrTail: tail}
	}
	m := &mount{ref: ref, revision: rev, server: srv, session: sess, listedTools: len(listed), listedGen: gen, conn: &sharedSession{}}
	m.conn.refs.Store(1)
	r.loadTools(m, listed)
	return m, nil
}

// relistError marks the failure of re-listing a live session's tools
// after its server said they changed: the old tools stay.
type relistError struct{ err error }

func (e *relistError) Error() string {
	return "tools/list after the server said its tools changed: " + e.err.Error()
}
func (e *relistError) Unwrap() error { return e.err }

// relistMount lists the tools of o's live session again, after its
// server said they changed (notifications/tools/list_changed), and
// returns a mount that shares o's session with the new tools. On a
// failure o stays as it is, and the Run tries again only after the
// server's next change notice.
func (r *Run) relistMount(ctx context.Context, o *mount) (*mount, *MountError) {
	o.conn.lastRelist.Store(r.now().UnixNano())
	gen := o.session.ToolsChanged()
	listed, err := o.session.Tools(ctx)
	if err != nil {
		o.conn.relistFailed.Store(gen)
		return nil, &MountError{Ref: o.ref, Err: &relistError{err}, StderrTail: o.session.StderrTail()}
	}
	m := &mount{ref: o.ref, revision: o.revision, server: o.server, session: o.session, listedTools: len(listed),
		listedGen: gen, conn: o.conn, relisted: true}
	o.conn.refs.Add(1)
	r.loadTools(m, listed)
	return m, nil
}

// loadTools fills m's tools from what its server listed.
func (r *Run) loadTools(m *mount, listed []mcpconn.Tool) {
	ref := m.ref
	// The one load path, the Prober's too: checks, duplicates, compilation
	// with the Connector's schema options (the shared cache serves the
	// defaults).
	for _, t := range listed {
		m.listedBytes += len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema) + len(t.OutputSchema) + len(t.Meta)
	}
	// Tools the registration excludes are not reported: that is its
	// configuration, not a failure (a probe counts them). The mount keeps
	// their names for the error of a call that names one.
	loaded, excluded := r.connector.LoadTools(listed, m.server, r.schemas)
	m.excluded = excluded
	for _, lt := range loaded {
		src := Source{Kind: SourceMCP, Ref: ref, Tool: lt.Name}
		alias := Alias(ref, lt.Name)
		if lt.Err != nil {
			m.skipped = append(m.skipped, SkippedTool{Alias: alias, Source: src, Err: lt.Err})
			continue
		}
		m.tools = append(m.tools, &tool{
			info: ToolInfo{
				Name:            alias,
				Title:           lt.Title,
				Description:     lt.Description,
				Annotations:     lt.Annotations,
				InputSchema:     lt.Schema.Raw(),
				OutputSchema:    lt.OutputSchema,
				Meta:            lt.Meta,
				Source:          src,
				SchemaDigest:    lt.Schema.Digest(),
				ProtocolVersion: m.session.ProtocolVersion(),
			},
			annotations: lt.Annotations,
			schema:      lt.Schema,
			mount:       m,
		})
	}
}

// takeRestart reports whether the lost mount m may be restarted now
// (Options.Limits.MaxRestarts, Options.Limits.RestartBackoff), and counts the restart
// when its loss is charged to the Run.
func (r *Run) takeRestart(m *mount) bool {
	charged := m.loss().Charged
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.restartAllowed(m.ref, time.Now(), charged) {
		return false
	}
	st := r.restarts[m.ref]
	if st == nil {
		st = &restartState{}
		r.restarts[m.ref] = st
	}
	if charged {
		st.count++
	}
	st.last = time.Now()
	return true
}

// auditLosses audits each mount of s whose connection is lost, once per
// lost connection ("server_lost").
func (r *Run) auditLosses(ctx context.Context, batchID string, s *snapshot) {
	if r.auditor == nil {
		return
	}
	for _, ref := range s.refs {
		m := s.mounts[ref]
		if m == nil || !m.lost() || !m.lossAudited.CompareAndSwap(false, true) {
			continue
		}
		loss := m.loss()
		r.mu.Lock()
		restarts := 0
		if st := r.restarts[ref]; st != nil {
			restarts = st.count
		}
		r.mu.Unlock()
		r.audit(ctx, Record{Event: eventServerLost, Time: time.Now(), Agent: r.agent, RunID: r.runID, BatchID: batchID,
			Source: Source{Kind: SourceMCP, Ref: ref}, Code: CodeUnavailable,
			Shared: loss.Shared, Charged: loss.Charged, Losses: loss.Count, Restarts: restarts})
	}
}

// restartAllowed says whether a lost mount of ref may be restarted now,
// for a loss charged to the Run or not: an uncharged one is not counted
// against MaxRestarts, but keeps to the backoff. Under mu.
func (r *Run) restartAllowed(ref resource.Ref, now time.Time, charged bool) bool {
	st := r.restarts[ref]
	switch {
	case r.maxRestarts == 0:
		return false
	case st == nil:
		return true
	case charged && st.count >= r.maxRestarts:
		return false
	}
	return !now.Before(st.last.Add(r.backoffAfter(st.count)))
}

// maxRestartBackoff caps the doubling of Options.Limits.RestartBackoff.
const maxRestartBackoff = 5 * time.Minute

// backoffAfter is the least time after the count-th restart before the
// next one: RestartBackoff doubled count-1 times, at most
// maxRestartBackoff.
func (r *Run) backoffAfter(count int) time.Duration {
	d := r.restartBackoff
	for i := 1; i < count && d < maxRestartBackoff; i++ {
		d *= 2
	}
	return min(d, maxRestartBackoff)
}

// restartDue reports whether a mount of s lost its connection and may be
// restarted now, or its server said its tools changed.
func (r *Run) restartDue(s *snapshot) bool {
	for _, m := range s.mounts {
		if !m.lost() && r.toolsStale(m) {
			return true
		}
		if m.lost() {
			charged := m.loss().Charged
			r.mu.Lock()
			ok := r.restartAllowed(m.ref, time.Now(), charged)
			r.mu.Unlock()
			if ok {
				return true
			}
		}
	}
	return false
}

// restartHint tells the model what happens to the lost mount ref, whose
// loss a call of the Run saw (so it is charged to the Run).
func (r *Run) restartHint(ref resource.Ref) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.restarts[ref]
	switch {
	case r.maxRestarts == 0:
		return "the server is not restarted in this run"
	case st != nil && st.count >= r.maxRestarts:
		return fmt.Sprintf("the server was restarted %d times in this run, the most allowed; it is not restarted again", st.count)
	case st == nil || !time.Now().Before(st.last.Add(r.backoffAfter(st.count))):
		return "the server will be restarted at the end of this batch; the call was not sent again"
	}
	return "the server will be restarted at a later batch boundary (after a backoff); the call was not sent again"
}

// index fills byAlias, list and skipped from the host tools and mounts.
func (s *snapshot) index(hostTools []*compiledHostTool, refs []resource.Ref) {
	for _, ht := range hostTools {
		if ht.ManagementOnly && !s.manage {
			continue
		}
		kind := SourceHost
		if ht.ManagementOnly {
			kind = SourceFramework
		}
		s.byAlias[ht.Name] = &tool{
			info: ToolInfo{
				Name:         ht.Name,
				Description:  ht.Description,
				InputSchema:  ht.schema.Raw(),
				Source:       Source{Kind: kind, Tool: ht.Name},
				SchemaDigest: ht.schema.Digest(),
			},
			schema: ht.schema,
			host:   ht,
		}
	}
	for _, ref := range refs {
		m := s.mounts[ref]
		if m == nil {
			continue
		}
		for _, t := range m.tools {
			// Distinct pairs have distinct aliases, and host tool names
			// never start with the alias prefix; this guards the 40-bit
			// hash.
			if _, dup := s.byAlias[t.info.Name]; dup {
				s.skipped = append(s.skipped, SkippedTool{Alias: t.info.Name, Source: t.info.Source, Err: errors.New("alias already taken by another tool")})
				continue
			}
			s.byAlias[t.info.Name] = t
		}
		s.skipped = append(s.skipped, m.skipped...)
	}
	s.list = make([]ToolInfo, 0, len(s.byAlias))
	for _, t := range s.byAlias {
		s.list = append(s.list, t.info)
	}
	sort.Slice(s.list, func(i, j int) bool { return s.list[i].Name < s.list[j].Name })
}
