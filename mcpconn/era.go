package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol revisions a Connector speaks (see Protocol eras in the
// package doc).
const (
	// ModernProtocolVersion is the current MCP revision (2026-07-28:
	// server/discover, per-request _meta, no initialize, no sessions),
	// which a Connector prefers.
	ModernProtocolVersion = "2026-07-28"
	// LegacyProtocolVersion is the newest revision with the initialize
	// handshake, which a Connector falls back to.
	LegacyProtocolVersion = "2025-11-25"
)

const methodDiscover = "server/discover"

// modernVersion reports whether v is a modern protocol version.
func modernVersion(v string) bool { return v >= ModernProtocolVersion }

// eraKey names what an era is cached for: a stdio server's launch (its
// reference and document) or an HTTP origin.
type eraKey struct {
	ref    resource.Ref
	doc    [32]byte // stdio: the document's digest
	origin string   // remote: scheme://host:port
}

// eraCache remembers the era of each server a Connector reached, so
// that a legacy stdio server that ignores server/discover costs the
// probe once, not at every start.
type eraCache struct {
	mu  sync.Mutex
	era map[eraKey]string // the protocol version negotiated
}

func (c *eraCache) get(k eraKey) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.era[k]
}

func (c *eraCache) set(k eraKey, version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.era == nil {
		c.era = map[eraKey]string{}
	}
	if len(c.era) >= maxCachedEras {
		clear(c.era) // a host with this many servers starts over
	}
	c.era[k] = version
}

func (c *eraCache) forget(k eraKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.era, k)
}

// maxCachedEras bounds an eraCache.
const maxCachedEras = 4096

// discoverProbe bounds the wait for the answer to the server/discover
// request the go-sdk sends first on a stdio connection: when none came
// within the timeout, the connection hands the go-sdk an error answer of
// its own, and the go-sdk falls back to initialize, as it does for a
// server that answered with an error. A late answer is dropped (the
// go-sdk forgot the request); a late result shows a modern server that
// was slow to start (lateModern).
type discoverProbe struct {
	timeout time.Duration

	mu       sync.Mutex
	id       jsonrpc.ID
	sent     bool
	answered bool
	fired    bool // the timeout passed without an answer
	given    bool // the error answer of ours was handed on
	// late: after the timeout the server showed itself modern: a result
	// to server/discover, or an UnsupportedProtocolVersion answer to the
	// fallback's initialize that names a modern version agt speaks. The
	// server may answer the two in either order, and the go-sdk stops
	// reading at the refusal: either answer alone tells.
	late     bool
	initID   jsonrpc.ID // the fallback's initialize, once given
	initSent bool
	// only lists the versions of a modern server's
	// UnsupportedProtocolVersion answer when none is one agt speaks: the
	// go-sdk would fall back to initialize, which the spec forbids.
	only  []string
	timer *time.Timer
	wake  func() // ends the Read in progress when the timeout passes
}

// written notes the server/discover request and starts the timeout.
func (p *discoverProbe) written(req *jsonrpc.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent {
		return // a retry (the go-sdk's negotiation): still one bound
	}
	p.id, p.sent = req.ID, true
	if p.timeout <= 0 {
		return
	}
	p.timer = time.AfterFunc(p.timeout, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.answered {
			return
		}
		p.fired = true
		if p.wake != nil {
			p.wake()
		}
	})
}

// owed reports whether the error answer of ours is due now.
func (p *discoverProbe) owed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fired && !p.given
}

// waiting reports whether a Read may have to end for the timeout (the
// probe was not answered yet, or not even sent: the go-sdk reads before
// it writes), and sets wake to end it.
func (p *discoverProbe) waiting(wake func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answered || p.fired {
		return false
	}
	p.wake = wake
	return true
}

func (p *discoverProbe) doneWaiting() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wake = nil
}

// answer is the error answer of ours to the unanswered request.
func (p *discoverProbe) answer() *jsonrpc.Response {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.given = true
	return &jsonrpc.Response{ID: p.id, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
		Message: "mcpconn: no answer to server/discover within the era probe timeout (ConnectorOptions.Limits.EraProbeTimeout): taken for a legacy server"}}
}

// read judges a response: drop reports one to hand no one (the answer to
// the probe after ours was given).
func (p *discoverProbe) read(m *jsonrpc.Response) (drop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.initSent && m.ID == p.initID {
		if p.given && modernRefusal(m.Error) {
			p.late = true
		}
		return false
	}
	if !p.sent || m.ID != p.id {
		return false
	}
	if p.given {
		if m.Error == nil {
			p.late = true
		}
		return true
	}
	if !p.fired {
		p.answered = true
		if p.timer != nil {
			p.timer.Stop()
		}
	}
	if vs, ok := unsupportedVersions(m.Error); ok && !slices.ContainsFunc(vs, func(v string) bool {
		return slices.Contains(mcpdoc.ProtocolVersions(), v)
	}) {
		p.only = boundVersions(vs)
	}
	return false
}

// initWritten notes the initialize request of the go-sdk's fallback.
func (p *discoverProbe) initWritten(req *jsonrpc.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.initID, p.initSent = req.ID, true
}

// modernRefusal reports an UnsupportedProtocolVersion error naming a
// modern version agt speaks: a modern server's answer to initialize.
func modernRefusal(err error) bool {
	vs, ok := unsupportedVersions(err)
	return ok && slices.ContainsFunc(vs, func(v string) bool {
		return modernVersion(v) && slices.Contains(mcpdoc.ProtocolVersions(), v)
	})
}

// unsupportedVersions reads an UnsupportedProtocolVersion error: the
// versions the server says it supports, and whether err is one (with
// data that decodes).
func unsupportedVersions(err error) ([]string, bool) {
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != mcp.CodeUnsupportedProtocolVersion {
		return nil, false
	}
	var data mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(wire.Data, &data) != nil {
		return nil, false
	}
	return data.Supported, true
}

// boundVersions keeps at most 8 versions of a server's list, each
// bounded, for an error.
func boundVersions(vs []string) []string {
	var out []string
	for _, v := range vs[:min(len(vs), 8)] {
		out = append(out, quoteName(v))
	}
	return out
}

// refuseLegacy returns the error that keeps the go-sdk from falling back
// to initialize after a modern server named only versions agt does not
// speak; nil otherwise (and for a nil probe). It is the cause of the
// failed handshake whatever error the go-sdk returns: the refused write
// makes it close the connection, the server exits, and the exit may end
// the handshake before the go-sdk reports the write's error.
func (p *discoverProbe) refuseLegacy() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.only == nil {
		return nil
	}
	return &noMutualVersionError{supported: p.only}
}

// noMutualVersionError: a modern server speaks no version agt speaks.
type noMutualVersionError struct{ supported []string }

func (e *noMutualVersionError) Error() string {
	return "the server speaks only the protocol versions " + strings.Join(e.supported, ", ") +
		" (its UnsupportedProtocolVersion answer to server/discover), none of which this client speaks (" + strings.Join(mcpdoc.ProtocolVersions(), ", ") + ")"
}

// lateModern reports a server shown modern after the timeout (late).
func (p *discoverProbe) lateModern() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.late
}

func (p *discoverProbe) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
	}
}

// readProbed is Connection.Read while the probe may still time out: the
// read ends when it does, and the error answer of ours is returned
// (ours reports it). A late answer of the server's to the probe is
// dropped: the go-sdk was answered.
func readProbed(ctx context.Context, conn mcp.Connection, p *discoverProbe) (jsonrpc.Message, error) {
	for {
		if p.owed() {
			return p.answer(), nil
		}
		rctx, cancel := context.WithCancel(ctx)
		if !p.waiting(cancel) {
			cancel()
			rctx = ctx
		}
		msg, err := conn.Read(rctx)
		p.doneWaiting()
		cancel()
		if err != nil && ctx.Err() == nil && p.owed() {
			// The go-sdk's stdio connection keeps what it had not read
			// yet: nothing is lost by ending the read.
			continue
		}
		if m, ok := msg.(*jsonrpc.Response); ok && err == nil && p.read(m) {
			continue
		}
		return msg, err
	}
}

// eraPlan is how one Connect speaks to its server: the version the
// go-sdk asks for ("" prefers the modern one and falls back), and the
// probe bound.
type eraPlan struct {
	version string // the ClientSessionOptions.ProtocolVersion
	pinned  bool   // by the document or the Connector: never changed
	cached  bool   // from the era cache: forgotten when it fails
	key     eraKey
	probe   time.Duration // 0: the discover is not bounded apart
}
