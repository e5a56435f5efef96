package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Era selects the MCP protocol revisions the fake server speaks (issue 25
// item 9): the modern one (2026-07-28: server/discover, per-request
// _meta, no initialize, no sessions), the legacy ones (2025-11-25 and
// earlier, with the initialize handshake), or both.
type Era string

// The eras of the fake server. The zero value is EraDual: a test that
// names no era runs in the modern one (what a client of both negotiates)
// and names EraLegacy for legacy-only behaviour.
const (
	// EraLegacy speaks 2025-11-25 and earlier only, as a server written
	// before 2026-07-28 does: server/discover is an unknown method
	// (JSON-RPC error -32601), and over streamable HTTP a request at a
	// modern version gets 400 with a plain-text body; sessions, the GET
	// stream and server requests work as before.
	EraLegacy Era = "legacy"
	// EraSilentLegacy is EraLegacy that never answers server/discover (a
	// legacy server that ignores unknown methods): a client that probes
	// waits for its probe timeout.
	EraSilentLegacy Era = "legacy-silent"
	// EraModern speaks 2026-07-28 only: initialize is refused with an
	// UnsupportedProtocolVersion error (-32022) that names the versions it
	// speaks, and over streamable HTTP it is stateless (no session, GET
	// refused with 405).
	EraModern Era = "modern"
	// EraDual speaks both: the go-sdk's own server, stateless over
	// streamable HTTP.
	EraDual Era = "dual"
	// EraFuture is a modern server of a revision no client speaks yet
	// (FutureProtocolVersion): every request, server/discover and
	// initialize included, gets an UnsupportedProtocolVersion error
	// (-32022) naming only that version, and each refused method is
	// written to stderr ("fakemcp: refused METHOD").
	EraFuture Era = "future"
)

// FutureProtocolVersion is the only version EraFuture speaks.
const FutureProtocolVersion = "2099-01-01"

// ModernProtocolVersion is the protocol version of EraModern.
const ModernProtocolVersion = "2026-07-28"

// Eras lists the eras, for the -era flag.
var Eras = []Era{EraLegacy, EraSilentLegacy, EraModern, EraDual, EraFuture}

// defaultEra is the era of a fake server started without one (the zero
// Era, and the binary without -era).
const defaultEra = EraDual

func parseEra(s string) (Era, error) {
	if s == "" {
		return defaultEra, nil
	}
	if e := Era(s); slices.Contains(Eras, e) {
		return e, nil
	}
	return "", fmt.Errorf("unknown era %q (legacy, legacy-silent, modern, dual or future)", s)
}

func (e Era) legacy() bool {
	if e == "" {
		e = defaultEra
	}
	return e == EraLegacy || e == EraSilentLegacy
}

// versions is the ServerOptions.SupportedProtocolVersions of the era.
func (e Era) versions() []string {
	if e == EraModern {
		return []string{ModernProtocolVersion}
	}
	// A legacy era keeps them all: the go-sdk would answer server/discover
	// at an excluded version with a modern error before the era's
	// middleware could answer as a legacy server does.
	return nil
}

// stateless reports whether the era's streamable HTTP handler is
// stateless (the go-sdk serves 2026-07-28 over HTTP only so).
func (e Era) stateless() bool { return !e.legacy() }

func isModern(v string) bool { return v >= ModernProtocolVersion }

// eraMiddleware makes the go-sdk server answer as a server of its era:
// a legacy one does not know server/discover, a modern-only one refuses
// initialize naming the versions it speaks.
func eraMiddleware(e Era) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch {
			case e == EraFuture && !strings.HasPrefix(method, "notifications/"):
				fmt.Fprintln(os.Stderr, "fakemcp: refused "+method)
				return nil, unsupportedVersion([]string{FutureProtocolVersion}, requestedVersion(req))
			case method == "server/discover" && e == EraSilentLegacy:
				<-ctx.Done() // never answered
				return nil, ctx.Err()
			case method == "server/discover" && e.legacy():
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: server/discover"}
			case method == "initialize" && e == EraModern:
				return nil, unsupportedVersion([]string{ModernProtocolVersion}, requestedVersion(req))
			}
			return next(ctx, method, req)
		}
	}
}

// unsupportedVersion is the UnsupportedProtocolVersion error of a
// server that speaks only the versions supported.
func unsupportedVersion(supported []string, requested string) error {
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: requested})
	return &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion,
		Message: "unsupported protocol version: this server speaks only " + strings.Join(supported, ", "), Data: data}
}

// requestedVersion is the protocol version a request asked for: its
// _meta's, or an initialize's.
func requestedVersion(req mcp.Request) string {
	if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil {
		return p.ProtocolVersion
	}
	if p := req.GetParams(); p != nil {
		if v, ok := p.GetMeta()["io.modelcontextprotocol/protocolVersion"].(string); ok {
			return v
		}
	}
	return ""
}

// legacyHTTP answers a request at a modern protocol version as a
// streamable HTTP server written before 2026-07-28 does: 400 with a
// plain-text body.
func legacyHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); isModern(v) {
			http.Error(w, "Bad Request: Unsupported protocol version (supported versions: "+
				strings.Join(slices.DeleteFunc(mcp.SupportedProtocolVersions(), isModern), ",")+")", http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}
