package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProberOptions configures a Prober. A nil *ProberOptions means defaults.
// How tools are loaded is the Connector's (ConnectorOptions.Schema), so
// that a probe and a Run always agree.
type ProberOptions struct {
	// SchemaCache keeps the schemas the probes compiled, so that probing a
	// server again (or a Run given the same cache) does not compile its
	// unchanged schemas again; the result is the same, and failures are
	// compiled again each time. Nil means the Prober's own. Unused when
	// ConnectorOptions.Schema is set.
	SchemaCache *SchemaCache
}

// Prober starts or connects a registered server exactly as a Run does
// (through the same Connector), performs the handshake and tools/list
// (or takes a modern server's listing, still fresh by its ttlMs, from
// the Connector's listing cache: ProbeReport.ListingCached), compiles
// every tool's inputSchema, closes, and reports. It
// never calls a tool. A probe runs the configured command or contacts the
// URL: it is not a static check and gives no sandbox. A Prober is safe for
// concurrent use; probes run independently.
type Prober struct {
	repo    resource.Repository
	conn    *Connector
	schemas *SchemaCache
}

// NewProber returns a Prober reading documents from repo and connecting
// through c; opts may be nil.
func NewProber(repo resource.Repository, c *Connector, opts *ProberOptions) *Prober {
	p := &Prober{repo: repo, conn: c, schemas: new(SchemaCache)}
	if opts != nil && opts.SchemaCache != nil {
		p.schemas = opts.SchemaCache
	}
	return p
}

// ProbeReport is the outcome of one probe. Its JSON form is what `agt mcp
// probe --json` prints.
//
// mcp is the package github.com/modelcontextprotocol/go-sdk/mcp.
type ProbeReport struct {
	Reference resource.Ref `json:"reference"`
	// Revision is the revision of the document that was probed.
	Revision int64 `json:"revision"`
	// Entry is the name of the server entry inside mcpServers.
	Entry string `json:"entry,omitempty"`
	// Transport is "stdio", "http", "sse" or "dial".
	Transport string `json:"transport,omitempty"`
	// Server is the name and version the server reported; nil if the
	// handshake failed.
	Server *ServerReport `json:"server,omitempty"`
	// ProtocolVersion is the protocol version the server and agt agreed
	// on (see Protocol eras in the package doc), "" if the handshake
	// failed.
	ProtocolVersion string                  `json:"protocol_version,omitempty"`
	Capabilities    *mcp.ServerCapabilities `json:"capabilities,omitempty"`
	// ListingCached reports a listing the Connector's listing cache
	// answered: the server said, with ttlMs, that an earlier listing of
	// the same registration was still fresh, and the probe sent no
	// tools/list (see Listing cache in the package doc).
	ListingCached bool `json:"listing_cached,omitempty"`
	// Tools has one entry per listed tool the registration offers, in
	// server order.
	Tools []ToolReport `json:"tools"`
	// Excluded counts the listed tools the registration's enabled_tools
	// and disabled_tools leave out: they are not in Tools, and a Run
	// neither lists nor calls them. Not an error.
	Excluded int `json:"excluded,omitempty"`
	// OK is true when the server connected, listed its tools, and every
	// tool in Tools is usable (within its bounds, not requiring tasks, its
	// inputSchema compiled). It is strict: one tool left out makes it
	// false, although a Run still offers the others; the entries of Tools
	// that are OK are what a Run would offer.
	OK bool `json:"ok"`
	// Error says why the probe failed before its tools could be checked,
	// without the server's output (see StdoutHead and StderrTail).
	Error string `json:"error,omitempty"`
	// StdoutHead is the first line a stdio server wrote on stdout in place
	// of the handshake's answer, when that line was not JSON-RPC (the
	// *Error's StdoutHead). StderrTail is the end of a stdio server's
	// stderr when the probe failed. Error holds neither. Both are for the
	// server's operator: a server may print a token in a banner, its
	// environment or an earlier call's arguments, so a report shown to a
	// model leaves them out (the framework's mcp_probe does unless its
	// host opts in).
	StdoutHead string `json:"stdout_head,omitempty"`
	StderrTail string `json:"stderr_tail,omitempty"`
	// Timings, in milliseconds: connect is start plus handshake.
	DurationMS int64 `json:"duration_ms"`
	ConnectMS  int64 `json:"connect_ms"`
	ListMS     int64 `json:"list_ms"`
	CompileMS  int64 `json:"compile_ms"`
}

// ServerReport is the server's self-description from the handshake.
type ServerReport struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// ToolReport is the load result of one tool.
type ToolReport struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Error says why the tool is left out (LoadedTool.Err), "" when OK.
	Error string `json:"error,omitempty"`
	// Err is the error Error renders, nil when OK, for errors.Is and
	// errors.As (a *toolschema.SchemaError, a *LimitError, ...); it is
	// not part of the JSON form.
	Err error `json:"-"`
}

// Probe probes the MCP resource ref.
//
// It returns a nil report and an error when the document cannot be read
// (resource.ErrNotFound, store errors). When the server cannot be started,
// connected or listed, it returns the report (Error, StdoutHead and
// StderrTail filled in) and the *Error. Tools whose schema fails to compile only make the
// report not OK: the error is nil.
func (p *Prober) Probe(ctx context.Context, ref resource.Ref) (*ProbeReport, error) {
	start := time.Now()
	res, err := p.repo.Get(ctx, resource.Key{Kind: resource.KindMCP, Ref: ref})
	if err != nil {
		return nil, fmt.Errorf("mcpconn: probe %s: %w", ref, err)
	}
	rep := &ProbeReport{Reference: ref, Revision: res.Revision, Tools: []ToolReport{}}
	defer func() { rep.DurationMS = time.Since(start).Milliseconds() }()
	fail := func(err error) (*ProbeReport, error) {
		// The report carries the server's output in its own fields, so
		// that a reader who must not see it (a model) can be given the
		// rest.
		rep.Error = ErrorText(err, false)
		var e *Error
		if errors.As(err, &e) {
			rep.StdoutHead, rep.StderrTail = e.StdoutHead, e.StderrTail
		}
		return rep, err
	}

	name, srv, err := resource.DecodeMCP(res.Data)
	if err != nil {
		return fail(&Error{Ref: ref, Op: "connect", Kind: ErrInvalidServer, Detail: "the document cannot be decoded", Err: err})
	}
	rep.Entry, rep.Transport = name, srv.Transport()

	t0 := time.Now()
	// Never a lease on a shared connection (a probe tests a start of its
	// own); with the revision, a modern server's listing may come from
	// the Connector's listing cache.
	s, err := p.conn.connect(ctx, ref, srv, &ConnectOptions{Revision: res.Revision}, nil)
	rep.ConnectMS = time.Since(t0).Milliseconds()
	if err != nil {
		return fail(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	rep.Transport = s.Transport()
	if info := s.ServerInfo(); info != nil {
		rep.Server = &ServerReport{Name: info.Name, Version: info.Version, Title: info.Title}
	}
	rep.ProtocolVersion, rep.Capabilities = s.ProtocolVersion(), s.Capabilities()

	t1 := time.Now()
	tools, err := s.Tools(ctx)
	rep.ListMS = time.Since(t1).Milliseconds()
	rep.ListingCached = s.cachedWalks.Load() > 0
	if err != nil {
		if e := (*Error)(nil); errors.As(err, &e) && e.StderrTail == "" {
			e.StderrTail = s.StderrTail()
		}
		return fail(err)
	}

	// Close (waiting for the process to end) overlaps the compilation.
	closed = true
	closeDone := make(chan struct{})
	go func() {
		defer close(closeDone)
		s.Close()
	}()
	defer func() { <-closeDone }()

	t2 := time.Now()
	loaded, excluded := p.conn.LoadTools(tools, srv, p.schemas)
	rep.Excluded = len(excluded)
	rep.Tools = make([]ToolReport, len(loaded))
	for i, lt := range loaded {
		rep.Tools[i] = ToolReport{Name: lt.Name, OK: lt.Err == nil, Err: lt.Err}
		if lt.Err != nil {
			rep.Tools[i].Error = lt.Err.Error()
		}
	}
	rep.OK = true
	for _, tr := range rep.Tools {
		rep.OK = rep.OK && tr.OK
	}
	rep.CompileMS = time.Since(t2).Milliseconds()
	return rep, nil
}
