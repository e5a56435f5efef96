package mcptest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerName and ServerVersion are what the fake server reports in its
// initialize result.
const (
	ServerName    = "agt-fakemcp"
	ServerVersion = "1.0.0"
)

// Fault selects a misbehaviour of the fake server, for tests of the host.
type Fault string

// The fault modes. Process faults act only in the binary (Main, Command);
// NewServer ignores them. Tool faults act in both.
const (
	// FaultExitAtStart (process): print a message on stderr and exit with
	// status 3 before reading anything.
	FaultExitAtStart Fault = "exit-at-start"
	// FaultNoHandshake (process): read stdin and never answer.
	FaultNoHandshake Fault = "no-handshake"
	// FaultBanner (process): print the line Banner on stdout, then serve; a
	// client sees non-JSON where the initialize result should be.
	FaultBanner Fault = "banner"
	// FaultSpawnChild (process): start a grandchild process that sleeps until
	// killed, so hosts can prove they end the whole process group.
	FaultSpawnChild Fault = "spawn-child"
	// FaultIgnoreSIGTERM (process): ignore SIGTERM and keep running after
	// stdin closes, so only SIGKILL ends the server.
	FaultIgnoreSIGTERM Fault = "ignore-sigterm"

	// The hostile faults (process, stdio only but for
	// FaultHostileContent) replace the server with a hand-written JSON-RPC
	// peer that attacks its client; each exits 0 when stdin closes.

	// FaultRefuseInitialize (process): answer initialize with the JSON-RPC
	// error RefuseInitializeCode, RefuseInitializeMessage.
	FaultRefuseInitialize Fault = "refuse-initialize"
	// FaultOldProtocol (process): answer initialize with the protocol
	// version OldProtocolVersion, which no client speaks.
	FaultOldProtocol Fault = "old-protocol"
	// FaultEndlessLine (process): answer initialize with a line that never
	// ends.
	FaultEndlessLine Fault = "endless-line"
	// FaultNotificationFlood (process): after the handshake, send log
	// notifications as fast as the pipe takes them, and answer nothing.
	FaultNotificationFlood Fault = "notification-flood"
	// FaultEndlessListing (process): answer every tools/list with a page of
	// EndlessListingPageTools tiny tools (about 6 MB; -page-size sets
	// another count) and a fresh cursor, forever.
	FaultEndlessListing Fault = "endless-listing"
	// FaultHostileContent (process; stdio, or streamable HTTP with -http):
	// content that a decoder bound would turn into a lost session: a
	// listing of HostileContentTools tools one of which
	// (ToolDeepOutputSchema) nests past the go-sdk's bound, a tool whose
	// result nests DeepResultLevels deep (ToolDeepResult), and one that
	// sends an error answer with a null id before its result
	// (ToolNullIDError).
	FaultHostileContent Fault = "hostile-content"
	// FaultEchoSecret (process, stdio and -http): a peer that sends its
	// secret back in every channel a server has, in several forms (see
	// EchoSecretEnv and the tools ToolEchoSecret, ToolFailSecret,
	// ToolErrorSecret); with FaultBanner it first prints it on stdout.
	FaultEchoSecret Fault = "echo-secret"
	// FaultDropSession (process; streamable HTTP with -http, and not
	// -sse): a server that ends sessions the way the Python SDK's
	// streamable HTTP session manager does. It offers no standalone
	// stream (a GET gets 405 Method Not Allowed) and adds the tool
	// ToolDropSession, which answers and then ends its session: every
	// later request with that session's id gets 404 Not Found with the
	// JSON-RPC error body DropSessionBody and never reaches the server.
	FaultDropSession Fault = "drop-session"

	// FaultCrashOnCall (tool): add the tool "crash", which ends the process
	// with status 70 while the call is in flight; over HTTP it drops every
	// connection and session instead, and through Dial the connection
	// (ServerOptions.Crash).
	FaultCrashOnCall Fault = "crash-on-call"
	// FaultContractDrift (tool): add the drift tools (ToolDriftLax and
	// the others), whose handlers disagree with their input schemas one
	// way each, for the contract checker; ToolDriftCrash ends the process
	// as the crash tool does (ServerOptions.Crash).
	FaultContractDrift Fault = "contract-drift"
	// FaultManyTools (tool): add 5,000 small tools "bulk_0000".."bulk_4999",
	// served over several tools/list pages.
	FaultManyTools Fault = "many-tools"
	// FaultInvalidSchema (tool): add "bad_invalid_schema", whose inputSchema
	// is not a valid JSON Schema.
	FaultInvalidSchema Fault = "invalid-schema"
	// FaultRootString (tool): add "bad_root_string", whose root inputSchema
	// declares type "string".
	FaultRootString Fault = "root-string"
	// FaultExternalRef (tool): add "bad_external_ref", whose inputSchema
	// references a schema on another host.
	FaultExternalRef Fault = "external-ref"
	// FaultToolMetadata (tool): add ToolMetaRich, listed with a title,
	// annotations, the outputSchema MetaRichOutputSchema, the _meta
	// MetaRichMeta (exact bytes on the wire: key order, an integer past
	// 2^64) and execution.taskSupport "optional", and ToolTaskRequired,
	// ToolTaskOptional and ToolTaskForbidden with that taskSupport. Each
	// echoes its text when called.
	FaultToolMetadata Fault = "tool-metadata"
	// FaultClientFeatures (tool): add the tools that use what a client
	// offers: ask, ask_many (elicitation), sample (sampling), list_roots,
	// progress, log, add_tool (a tool added during the session, and
	// notifications/tools/list_changed; break_listing makes later
	// listings fail), rounds (input in several rounds). In a session of
	// protocol 2026-07-28 the tools that ask the client (ask, sample,
	// list_roots, rounds) ask by multi round-trip (input_required
	// results); in a legacy one by server requests.
	FaultClientFeatures Fault = "client-features"
	// FaultContentKinds (tool): add the tool "content" (ToolContent),
	// which answers with the exact result its kind argument names
	// (ContentKinds, ContentResult): every content block type, one no
	// protocol defines, exact structuredContent, an error result with
	// several blocks, and malformed results.
	FaultContentKinds Fault = "content-kinds"
	// FaultParamHeaders (tool): add ToolParamHeaders, whose parameters
	// carry x-mcp-header annotations and which answers with the
	// Mcp-Param-* headers it got, and the tools of BadParamHeaderTools,
	// whose annotations are invalid.
	FaultParamHeaders Fault = "param-headers"
	// FaultTasks (tool): add the task tools (ToolTaskWork,
	// ToolTaskOptional, ToolTaskAsk, ToolTaskFail, ToolTaskCancelled,
	// ToolTaskTTL, ToolTaskForever, ToolTaskUnasked, ToolTaskStats) and
	// the tasks methods, in both eras: the tasks of 2025-11-25
	// (capability tasks, params.task, tasks/get, tasks/result,
	// tasks/list, tasks/cancel) and the extension TasksExtension of
	// 2026-07-28 (tasks/get, tasks/update, tasks/cancel). See TaskIn.
	FaultTasks Fault = "tasks"
)

// Banner is the line FaultBanner prints on stdout: a server that logs its
// start there, token included, as some do.
const Banner = "Server starting with token " + BannerToken + " (fakemcp, fault banner)"

// BannerToken is the credential-like part of Banner.
const BannerToken = "tok_8c1fBANNERe2d94a"

// The tools of FaultToolMetadata and what the server lists for them.
const (
	ToolMetaRich      = "meta_rich"
	ToolTaskRequired  = "task_required"
	ToolTaskOptional  = "task_optional"
	ToolTaskForbidden = "task_forbidden"
	MetaRichTitle     = "Rich metadata"
	// MetaRichOutputSchema and MetaRichMeta are the exact bytes listed
	// (compact: the go-sdk compacts a result).
	MetaRichOutputSchema = `{"type":"object","properties":{"z":{"type":"integer","maximum":12345678901234567890},"a":{"type":"number","minimum":1e-400}},"required":["z"]}`
	MetaRichMeta         = `{"z.example/id":12345678901234567890,"a.example/ui":{"y":[1.50,"é"],"x":null}}`
)

// toolMetadataWire holds the fields FaultToolMetadata writes into the
// listing as exact bytes: execution is not a field of the go-sdk's Tool,
// and its Meta and OutputSchema would be re-encoded.
var toolMetadataWire = map[string]map[string]json.RawMessage{
	ToolMetaRich: {"outputSchema": json.RawMessage(MetaRichOutputSchema), "_meta": json.RawMessage(MetaRichMeta),
		"execution": json.RawMessage(`{"taskSupport":"optional"}`)},
	ToolTaskRequired:  {"execution": json.RawMessage(`{"taskSupport":"required"}`)},
	ToolTaskOptional:  {"execution": json.RawMessage(`{"taskSupport":"optional"}`)},
	ToolTaskForbidden: {"execution": json.RawMessage(`{"taskSupport":"forbidden"}`)},
}

// rawResult is a result whose bytes are written as they are.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// withWireFields returns lr with the fields of wire (as
// toolMetadataWire) spliced into its tools.
func withWireFields(lr *mcp.ListToolsResult, wire map[string]map[string]json.RawMessage) (mcp.Result, error) {
	data, err := json.Marshal(lr)
	if err != nil {
		return nil, err
	}
	var page map[string]json.RawMessage
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(data, &page); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(page["tools"], &tools); err != nil {
		return nil, err
	}
	for _, t := range tools {
		var name string
		_ = json.Unmarshal(t["name"], &name)
		for k, v := range wire[name] {
			t[k] = v
		}
	}
	if page["tools"], err = json.Marshal(tools); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(page)
	return &rawResult{raw: raw}, err
}

// AllFaults lists every fault mode, in documentation order.
var AllFaults = []Fault{
	FaultExitAtStart, FaultNoHandshake, FaultBanner, FaultSpawnChild, FaultIgnoreSIGTERM,
	FaultRefuseInitialize, FaultOldProtocol, FaultEndlessLine, FaultNotificationFlood, FaultEndlessListing, FaultHostileContent, FaultEchoSecret, FaultDropSession,
	FaultCrashOnCall, FaultManyTools, FaultInvalidSchema, FaultRootString, FaultExternalRef, FaultToolMetadata, FaultClientFeatures,
	FaultContentKinds, FaultParamHeaders, FaultBreakStream, FaultTasks, FaultContractDrift,
}

// ManyToolsCount is how many extra tools FaultManyTools adds.
const ManyToolsCount = 5000

// Names of the tools that are always present.
const (
	ToolEnvironment = "environment"
	ToolNoteCreate  = "note_create"
	ToolNoteList    = "note_list"
	ToolNoteDelete  = "note_delete"
	ToolSearch      = "search"
	ToolTree        = "tree"
	ToolSleep       = "sleep"
	ToolEcho        = "echo"
	ToolCrash       = "crash" // only with FaultCrashOnCall
)

// Limits the tools enforce through their input schemas. Contract tests probe
// exactly at and just past each one.
const (
	SearchLimitMin     = 1
	SearchLimitMax     = 100
	SearchQueryMaxLen  = 200
	NoteTitleMaxLen    = 80
	NoteBodyMaxLen     = 2000
	NoteTagsMax        = 5
	SleepMaxMS         = 600000
	EchoTextMaxLen     = 4096
	TreeNameMaxLen     = 64
	ownerPatternSource = `^[a-z][a-z0-9_-]{0,31}$`
)

// OwnerPattern is the pattern of note owners and callers.
var OwnerPattern = regexp.MustCompile(ownerPatternSource)

// ServerOptions configures the fake server. A nil *ServerOptions means no
// faults and no counters.
type ServerOptions struct {
	// Faults lists the fault modes to turn on; nil means none. Process
	// faults are ignored by NewServer (see Fault).
	Faults []Fault
	// Counters, when non-nil, counts every tools/call request the server
	// receives (valid or not) and every call cancelled by the client. Nil
	// means no counting.
	Counters *Counters
	// Crash is called by the "crash" tool (FaultCrashOnCall). Nil means
	// the tool returns a protocol error instead. Main sets it to end the
	// process on stdio, and over HTTP to end every connection and
	// session, as a server that restarted (the process serves on, so a
	// client that connects again gets a new session); Dial, when it is
	// nil, to end the connection of the call (a new one works).
	Crash func()
	// OnCall, when non-nil, is called with the tool name of every tools/call
	// request the server receives, before the tool runs. Nil means no hook.
	OnCall func(name string)
	// PageSize is the number of tools per tools/list page; 0 means the
	// go-sdk default (1000).
	PageSize int
	// Era is the protocol revisions the server speaks; "" means
	// EraDual.
	Era Era
	// TTLMs and CacheScope, when TTLMs is above 0, are the ttlMs and
	// cacheScope of every tools/list result (MCP 2026-07-28, SEP-2549),
	// set with the go-sdk's ServerOptions.SetCacheable. The go-sdk puts
	// them on a listing in either era, as a go-sdk v1.8 server does; a
	// legacy client has no use for them. CacheScope "" means "public".
	// 0 means the go-sdk's default: ttlMs 0 (stale at once), public.
	TTLMs      int
	CacheScope string

	// requestIDs is set by Main on stdio: the ids of the tools/call
	// requests read, for AskIn.Names "request".
	requestIDs *requestIDs
	// dropSession is set by Main over streamable HTTP with
	// FaultDropSession: it ends the session with the given id.
	dropSession func(id string)
	// tasks, when set, is the task store of FaultTasks, shared by the
	// servers of one Dial; nil means a store of the server's own.
	tasks *taskStore
}

func (o *ServerOptions) has(f Fault) bool { return o != nil && slices.Contains(o.Faults, f) }

// setCacheable is the go-sdk's SetCacheable of TTLMs and CacheScope, nil
// without a TTL.
func (o *ServerOptions) setCacheable() func(context.Context, mcp.Request, *mcp.Cacheable) {
	if o == nil || o.TTLMs <= 0 {
		return nil
	}
	ttl, scope := o.TTLMs, cmp.Or(o.CacheScope, "public")
	return func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
		if _, ok := req.(*mcp.ListToolsRequest); ok {
			c.TTLMs, c.CacheScope = ttl, scope
		}
	}
}

// Counters counts what a fake server was asked to do. The zero value is
// ready to use and safe for concurrent use.
type Counters struct {
	calls     atomic.Int64
	cancelled atomic.Int64
	lists     atomic.Int64
	mu        sync.Mutex
	byTool    map[string]int64
	tasks     taskCounts
}

// Tasks returns the task counters (FaultTasks): tasks created and tasks
// requests received, as ToolTaskStats reports them.
func (c *Counters) Tasks() TaskStats { return c.tasks.stats() }

// Lists returns the number of tools/list requests received (each page
// is one).
func (c *Counters) Lists() int64 { return c.lists.Load() }

// Calls returns the number of tools/call requests received.
func (c *Counters) Calls() int64 { return c.calls.Load() }

// CallsOf returns the number of tools/call requests received for one tool.
func (c *Counters) CallsOf(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byTool[name]
}

// Cancelled returns the number of tool calls whose context the client
// cancelled (notifications/cancelled) while the tool was running.
func (c *Counters) Cancelled() int64 { return c.cancelled.Load() }

func (c *Counters) record(name string) {
	c.calls.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byTool == nil {
		c.byTool = make(map[string]int64)
	}
	c.byTool[name]++
}

// NewServer returns the fake server with its tools, for in-process use
// (mcp.NewInMemoryTransports, or Dial). Each call returns a fresh server with
// an empty notes store.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
func NewServer(opts *ServerOptions) *mcp.Server {
	pageSize, era := 0, defaultEra
	if opts != nil {
		pageSize = opts.PageSize
		if opts.Era != "" {
			era = opts.Era
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: ServerVersion},
		&mcp.ServerOptions{PageSize: pageSize, Instructions: "agt fake MCP server for tests", SupportedProtocolVersions: era.versions(),
			SetCacheable: opts.setCacheable()})
	s.AddReceivingMiddleware(eraMiddleware(era))
	f := &fake{opts: opts, notes: map[string]note{}}
	f.addTools(s)
	var cf *clientFeatures
	if opts.has(FaultClientFeatures) {
		cf = &clientFeatures{server: s, changed: make(chan struct{}, 1)}
		if opts != nil {
			cf.ids = opts.requestIDs
		}
		cf.add(s)
		s.AddSendingMiddleware(cf.sent)
	}

	wire := map[string]map[string]json.RawMessage{}
	if opts.has(FaultToolMetadata) {
		maps.Copy(wire, toolMetadataWire)
	}
	if opts.has(FaultTasks) {
		x := &tasks{store: opts.tasks, counters: opts.Counters}
		if x.store == nil {
			x.store = newTaskStore()
		}
		addTaskTools(s, x)
		maps.Copy(wire, taskWireFields())
	}

	overrides := map[string]json.RawMessage{}
	if opts.has(FaultInvalidSchema) {
		overrides["bad_invalid_schema"] = json.RawMessage(`{"type":"object","properties":{"x":{"type":"no-such-type","minimum":"ten"}}}`)
	}
	if opts.has(FaultRootString) {
		overrides["bad_root_string"] = json.RawMessage(`{"type":"string","maxLength":10}`)
	}
	if opts.has(FaultExternalRef) {
		overrides["bad_external_ref"] = json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"https://schemas.example.com/x.json"}}}`)
	}
	if opts.has(FaultParamHeaders) {
		addParamHeaderTools(s, overrides)
	}
	for name := range overrides {
		// Registered with a harmless object schema (the SDK refuses a
		// non-object root), then rewritten in tools/list below.
		s.AddTool(&mcp.Tool{Name: name, Description: "a tool with a broken inputSchema (fault mode)",
			InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "unreachable for a careful host"}}}, nil
			})
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" && cf != nil {
				cf.fireLate()
			}
			if method == "tools/call" && opts != nil {
				name := ""
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
					name = p.Name
				}
				if opts.Counters != nil {
					opts.Counters.record(name)
				}
				if opts.OnCall != nil {
					opts.OnCall(name)
				}
				if opts.has(FaultContentKinds) {
					if res, ok := contentAnswer(req); ok {
						return res, nil
					}
				}
			}
			if method == "tools/list" && opts != nil && opts.Counters != nil {
				opts.Counters.lists.Add(1)
			}
			if method == "tools/list" && cf != nil && cf.listingBroken() {
				return nil, errors.New("the tool listing is broken (add_tool break_listing)")
			}
			res, err := next(ctx, method, req)
			if method == "tools/list" && err == nil && len(overrides) > 0 {
				if lr, ok := res.(*mcp.ListToolsResult); ok {
					for _, t := range lr.Tools {
						if raw, ok := overrides[t.Name]; ok {
							t.InputSchema = raw
						}
					}
				}
			}
			if lr, ok := res.(*mcp.ListToolsResult); ok && method == "tools/list" && err == nil && len(wire) > 0 {
				return withWireFields(lr, wire)
			}
			return res, err
		}
	})
	return s
}

type fake struct {
	opts   *ServerOptions
	mu     sync.Mutex
	notes  map[string]note
	nextID int
}

type note struct {
	ID       string   `json:"id"`
	Owner    string   `json:"owner"`
	Title    string   `json:"title"`
	Body     string   `json:"body,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	Priority string   `json:"priority,omitempty"`
}

// schemaFor infers the input schema of In with jsonschema.For and lets
// refine add bounds, enums and patterns to it: the Go type stays the one
// definition of both the schema and the server's argument parsing.
func schemaFor[In any](refine func(s *jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcptest: schema of %T: %v", *new(In), err))
	}
	if refine != nil {
		refine(s)
	}
	return s
}

func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// EnvironmentIn is the input of the environment tool.
type EnvironmentIn struct {
	// Names lists the variables whose values to report.
	Names []string `json:"names,omitempty" jsonschema:"environment variables whose values to report"`
}

// EnvironmentOut is what the environment tool reports about its process.
type EnvironmentOut struct {
	Cwd  string   `json:"cwd"`
	Args []string `json:"args"`
	// EnvNames holds the names of all variables, sorted.
	EnvNames []string `json:"env_names"`
	// Env holds the values of the requested variables that are set.
	Env map[string]string `json:"env,omitempty"`
	// EnvDigests holds Digest of each value in Env, and ArgDigests of
	// each of Args: a client that masks the values it gave the server in
	// what the server sends back (agt does) can still check them.
	EnvDigests map[string]string `json:"env_digests,omitempty"`
	ArgDigests []string          `json:"arg_digests"`
	PID        int               `json:"pid"`
	PGID       int               `json:"pgid"`
}

// Digest is what the environment tool reports for a value in
// EnvironmentOut.EnvDigests and ArgDigests: its SHA-256, in hex.
func Digest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

// NoteCreateIn is the input of note_create.
type NoteCreateIn struct {
	Owner    string   `json:"owner" jsonschema:"who owns the note; only the owner may delete it"`
	Title    string   `json:"title"`
	Body     string   `json:"body,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	Priority string   `json:"priority,omitempty" jsonschema:"low, normal or high"`
}

// NoteCreateOut is the output of note_create.
type NoteCreateOut struct {
	ID string `json:"id"`
}

// NoteListIn is the input of note_list.
type NoteListIn struct {
	Owner string `json:"owner,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// NoteListOut is the output of note_list.
type NoteListOut struct {
	Notes []NoteView `json:"notes"`
}

// NoteView is one listed note.
type NoteView struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
	Title string `json:"title"`
}

// NoteDeleteIn is the input of note_delete.
type NoteDeleteIn struct {
	ID     string `json:"id"`
	Caller string `json:"caller" jsonschema:"who asks; must be the note's owner"`
}

// SearchIn is the input of search.
type SearchIn struct {
	Query  string        `json:"query"`
	Limit  int           `json:"limit" jsonschema:"how many results, 1 to 100"`
	Sort   string        `json:"sort,omitempty" jsonschema:"relevance or newest"`
	Filter *SearchFilter `json:"filter,omitempty"`
}

// SearchFilter is the nested object of search.
type SearchFilter struct {
	Tags  []string `json:"tags,omitempty"`
	After string   `json:"after,omitempty" jsonschema:"a date YYYY-MM-DD"`
}

// SearchOut is the output of search.
type SearchOut struct {
	Results []string `json:"results"`
}

// TreeIn is the input of tree.
type TreeIn struct {
	Root Node `json:"root"`
}

// Node is the recursive type of tree, published as $defs/node.
type Node struct {
	Name     string `json:"name"`
	Children []Node `json:"children,omitempty"`
}

// TreeOut is the output of tree.
type TreeOut struct {
	Nodes int `json:"nodes"`
	Depth int `json:"depth"`
}

// SleepIn is the input of sleep.
type SleepIn struct {
	MS int `json:"ms" jsonschema:"milliseconds to sleep, 0 to 600000"`
}

// SleepOut is the output of sleep.
type SleepOut struct {
	SleptMS int64 `json:"slept_ms"`
}

// EchoIn is the input of echo.
type EchoIn struct {
	Text string `json:"text"`
}

// BulkIn is the input of each many-tools tool.
type BulkIn struct {
	N int `json:"n,omitempty"`
}

func (f *fake) addTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: ToolEnvironment, Title: "Environment",
		Description: "Reports the server process's working directory, arguments and environment.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: schemaFor[EnvironmentIn](func(s *jsonschema.Schema) {
			s.Properties["names"].MaxItems = jsonschema.Ptr(64)
		})}, f.environment)

	ownerRefine := func(p *jsonschema.Schema) { p.Pattern = ownerPatternSource }
	mcp.AddTool(s, &mcp.Tool{Name: ToolNoteCreate, Title: "Create note",
		Description: "Creates a note. Titles are unique per owner.",
		InputSchema: schemaFor[NoteCreateIn](func(s *jsonschema.Schema) {
			ownerRefine(s.Properties["owner"])
			s.Properties["title"].MinLength = jsonschema.Ptr(1)
			s.Properties["title"].MaxLength = jsonschema.Ptr(NoteTitleMaxLen)
			s.Properties["body"].MaxLength = jsonschema.Ptr(NoteBodyMaxLen)
			s.Properties["tags"].MaxItems = jsonschema.Ptr(NoteTagsMax)
			s.Properties["tags"].Items.MinLength = jsonschema.Ptr(1)
			s.Properties["priority"].Enum = []any{"low", "normal", "high"}
		})}, f.noteCreate)
	mcp.AddTool(s, &mcp.Tool{Name: ToolNoteList, Title: "List notes",
		Description: "Lists notes, optionally of one owner.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: schemaFor[NoteListIn](func(s *jsonschema.Schema) {
			ownerRefine(s.Properties["owner"])
			s.Properties["limit"].Minimum = jsonschema.Ptr(float64(SearchLimitMin))
			s.Properties["limit"].Maximum = jsonschema.Ptr(float64(SearchLimitMax))
		})}, f.noteList)
	mcp.AddTool(s, &mcp.Tool{Name: ToolNoteDelete, Title: "Delete note",
		Description: "Deletes a note; only its owner may.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: jsonschema.Ptr(true)},
		InputSchema: schemaFor[NoteDeleteIn](func(s *jsonschema.Schema) {
			s.Properties["id"].Pattern = `^n[0-9]+$`
			ownerRefine(s.Properties["caller"])
		})}, f.noteDelete)
	mcp.AddTool(s, &mcp.Tool{Name: ToolSearch, Title: "Search",
		Description: "Searches a fixed corpus.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: schemaFor[SearchIn](func(s *jsonschema.Schema) {
			s.Properties["query"].MinLength = jsonschema.Ptr(1)
			s.Properties["query"].MaxLength = jsonschema.Ptr(SearchQueryMaxLen)
			s.Properties["limit"].Minimum = jsonschema.Ptr(float64(SearchLimitMin))
			s.Properties["limit"].Maximum = jsonschema.Ptr(float64(SearchLimitMax))
			s.Properties["sort"].Enum = []any{"relevance", "newest"}
			filter := s.Properties["filter"]
			filter.Properties["after"].Pattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
			filter.Properties["tags"].MaxItems = jsonschema.Ptr(NoteTagsMax)
		})}, f.search)
	mcp.AddTool(s, &mcp.Tool{Name: ToolTree, Title: "Tree",
		Description: "Counts the nodes of a recursive tree.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: treeSchema()}, f.tree)
	mcp.AddTool(s, &mcp.Tool{Name: ToolSleep, Title: "Sleep",
		Description: "Sleeps for ms milliseconds, or until the call is cancelled.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: schemaFor[SleepIn](func(s *jsonschema.Schema) {
			s.Properties["ms"].Minimum = jsonschema.Ptr(0.0)
			s.Properties["ms"].Maximum = jsonschema.Ptr(float64(SleepMaxMS))
		})}, f.sleep)
	mcp.AddTool(s, &mcp.Tool{Name: ToolEcho, Title: "Echo",
		Description: "Returns its text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: schemaFor[EchoIn](func(s *jsonschema.Schema) {
			s.Properties["text"].MaxLength = jsonschema.Ptr(EchoTextMaxLen)
		})}, f.echo)

	if f.opts.has(FaultCrashOnCall) {
		mcp.AddTool(s, &mcp.Tool{Name: ToolCrash, Description: "Ends the server process (over HTTP, every session; in process, the connection) during the call (fault mode)."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				if f.opts.Crash == nil {
					return nil, nil, errors.New("crash is not possible here: ServerOptions.Crash is not set")
				}
				f.opts.Crash()
				return nil, nil, errors.New("still alive")
			})
	}
	if f.opts.has(FaultContractDrift) {
		addDriftTools(s, f.opts.Crash)
	}
	if f.opts.has(FaultDropSession) {
		addDropSessionTool(s, f.opts.dropSession)
	}
	if f.opts.has(FaultBreakStream) {
		addBreakStreamTools(s, activeBreaker)
	}
	if f.opts.has(FaultToolMetadata) {
		echo := func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return textResult("%s", in.Text), nil, nil
		}
		mcp.AddTool(s, &mcp.Tool{Name: ToolMetaRich, Title: MetaRichTitle,
			Description: "Lists every piece of tool metadata (fault mode).",
			Annotations: &mcp.ToolAnnotations{Title: "Rich (annotations)", ReadOnlyHint: true, OpenWorldHint: jsonschema.Ptr(false)},
			InputSchema: schemaFor[EchoIn](nil)}, echo)
		for _, name := range []string{ToolTaskRequired, ToolTaskOptional, ToolTaskForbidden} {
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Lists an execution.taskSupport (fault mode).",
				InputSchema: schemaFor[EchoIn](nil)}, echo)
		}
	}
	if f.opts.has(FaultContentKinds) {
		addContentTool(s)
	}
	if f.opts.has(FaultManyTools) {
		bulkSchema := schemaFor[BulkIn](nil)
		for i := range ManyToolsCount {
			mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("bulk_%04d", i), Description: "one of many",
				InputSchema: bulkSchema},
				func(ctx context.Context, req *mcp.CallToolRequest, in BulkIn) (*mcp.CallToolResult, any, error) {
					return textResult("%d", in.N), nil, nil
				})
		}
	}
}

// treeSchema infers the schema of TreeIn with Node published once under
// $defs/node and referenced recursively (jsonschema.For refuses cycles, so
// the recursive occurrence is mapped to a $ref).
func treeSchema() *jsonschema.Schema {
	ref := &jsonschema.Schema{Ref: "#/$defs/node"}
	withRef := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[Node](): ref}}
	root, err := jsonschema.For[TreeIn](withRef)
	if err != nil {
		panic(fmt.Sprintf("mcptest: tree schema: %v", err))
	}
	// The node definition: Node's own fields, with its Children's items
	// pointing back at the definition.
	nodeDef, err := jsonschema.For[nodeFields](withRef)
	if err != nil {
		panic(fmt.Sprintf("mcptest: node schema: %v", err))
	}
	nodeDef.Properties["name"].MinLength = jsonschema.Ptr(1)
	nodeDef.Properties["name"].MaxLength = jsonschema.Ptr(TreeNameMaxLen)
	nodeDef.Properties["children"].MaxItems = jsonschema.Ptr(50)
	root.Defs = map[string]*jsonschema.Schema{"node": nodeDef}
	return root
}

// nodeFields has Node's layout under another name, so that inferring it is
// not replaced by the $ref that stands for Node. The conversion below keeps
// the two in step at compile time.
type nodeFields struct {
	Name     string `json:"name"`
	Children []Node `json:"children,omitempty"`
}

var _ = Node(nodeFields{})

func (f *fake) environment(ctx context.Context, req *mcp.CallToolRequest, in EnvironmentIn) (*mcp.CallToolResult, EnvironmentOut, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, EnvironmentOut{}, fmt.Errorf("getwd: %w", err)
	}
	out := EnvironmentOut{Cwd: cwd, Args: os.Args[1:], PID: os.Getpid(), PGID: processGroup()}
	for _, a := range out.Args {
		out.ArgDigests = append(out.ArgDigests, Digest(a))
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		out.EnvNames = append(out.EnvNames, name)
	}
	sort.Strings(out.EnvNames)
	for _, name := range in.Names {
		if v, ok := os.LookupEnv(name); ok {
			if out.Env == nil {
				out.Env, out.EnvDigests = map[string]string{}, map[string]string{}
			}
			out.Env[name], out.EnvDigests[name] = v, Digest(v)
		}
	}
	return nil, out, nil
}

func (f *fake) noteCreate(ctx context.Context, req *mcp.CallToolRequest, in NoteCreateIn) (*mcp.CallToolResult, NoteCreateOut, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Business rule, beyond the schema: titles are unique per owner.
	for _, n := range f.notes {
		if n.Owner == in.Owner && n.Title == in.Title {
			return nil, NoteCreateOut{}, errors.New("conflict: this owner already has a note with that title")
		}
	}
	if len(f.notes) >= 1000 {
		return nil, NoteCreateOut{}, errors.New("the notes store is full (1000 notes)")
	}
	f.nextID++
	id := fmt.Sprintf("n%d", f.nextID)
	f.notes[id] = note{ID: id, Owner: in.Owner, Title: in.Title, Body: in.Body, Tags: in.Tags, Priority: in.Priority}
	return nil, NoteCreateOut{ID: id}, nil
}

func (f *fake) noteList(ctx context.Context, req *mcp.CallToolRequest, in NoteListIn) (*mcp.CallToolResult, NoteListOut, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := NoteListOut{Notes: []NoteView{}}
	for _, n := range f.notes {
		if in.Owner == "" || n.Owner == in.Owner {
			out.Notes = append(out.Notes, NoteView{ID: n.ID, Owner: n.Owner, Title: n.Title})
		}
	}
	sort.Slice(out.Notes, func(i, j int) bool { return out.Notes[i].ID < out.Notes[j].ID })
	if in.Limit > 0 && len(out.Notes) > in.Limit {
		out.Notes = out.Notes[:in.Limit]
	}
	return nil, out, nil
}

func (f *fake) noteDelete(ctx context.Context, req *mcp.CallToolRequest, in NoteDeleteIn) (*mcp.CallToolResult, struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.notes[in.ID]
	if !ok {
		return nil, struct{}{}, errors.New("not found: no note with that id")
	}
	// Permission check of the server's own, for a schema-valid call.
	if n.Owner != in.Caller {
		return nil, struct{}{}, errors.New("permission denied: only the note's owner may delete it")
	}
	delete(f.notes, in.ID)
	return textResult("deleted"), struct{}{}, nil
}

var corpus = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}

func (f *fake) search(ctx context.Context, req *mcp.CallToolRequest, in SearchIn) (*mcp.CallToolResult, SearchOut, error) {
	out := SearchOut{Results: []string{}}
	for _, w := range corpus {
		if strings.Contains(w, in.Query) && len(out.Results) < in.Limit {
			out.Results = append(out.Results, w)
		}
	}
	if in.Sort == "newest" {
		slices.Reverse(out.Results)
	}
	return nil, out, nil
}

func (f *fake) tree(ctx context.Context, req *mcp.CallToolRequest, in TreeIn) (*mcp.CallToolResult, TreeOut, error) {
	var walk func(n Node, depth int) (count, maxDepth int)
	walk = func(n Node, depth int) (int, int) {
		count, maxDepth := 1, depth
		for _, c := range n.Children {
			cc, cd := walk(c, depth+1)
			count += cc
			maxDepth = max(maxDepth, cd)
		}
		return count, maxDepth
	}
	nodes, depth := walk(in.Root, 1)
	return nil, TreeOut{Nodes: nodes, Depth: depth}, nil
}

func (f *fake) sleep(ctx context.Context, req *mcp.CallToolRequest, in SleepIn) (*mcp.CallToolResult, SleepOut, error) {
	start := time.Now()
	t := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil, SleepOut{SleptMS: time.Since(start).Milliseconds()}, nil
	case <-ctx.Done():
		if f.opts != nil && f.opts.Counters != nil {
			f.opts.Counters.cancelled.Add(1)
		}
		return nil, SleepOut{}, ctx.Err()
	}
}

func (f *fake) echo(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
	return textResult("%s", in.Text), nil, nil
}
