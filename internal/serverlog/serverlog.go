//lint:file-ignore SA1019 logging is deprecated from protocol 2026-07-28 only; agt speaks 2025-11-25, where it is current

package serverlog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// The lines of one server that a Gate lets through: a burst, then a
// rate; the others are counted.
const (
	Burst = 100
	Rate  = 20 // per second
)

// Known reports whether l is a level of MCP log lines: one of debug,
// info, notice, warning, error, critical, alert, emergency (RFC 5424's
// syslog severities, least severe first).
func Known(l mcp.LoggingLevel) bool {
	switch l {
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
		return true
	}
	return false
}

// Level is the slog level of a server's line at MCP level l: error,
// critical, alert, emergency and any unknown level are errors.
func Level(l mcp.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelError
}

// Gate is the token bucket of one server's lines: Burst lines, then Rate
// per second. The zero value is a full bucket; a Gate is safe for
// concurrent use.
type Gate struct {
	mu      sync.Mutex
	lines   *rate.Limiter // made on first use
	dropped int64
}

// Pass reports whether one more line may go, and counts it as dropped
// when not.
func (g *Gate) Pass() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lines == nil {
		g.lines = rate.NewLimiter(Rate, Burst)
	}
	if !g.lines.Allow() {
		g.dropped++
		return false
	}
	return true
}

// TakeDropped returns how many lines were dropped since the last call.
func (g *Gate) TakeDropped() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.dropped
	g.dropped = 0
	return n
}

// Data is the attribute "data" of a server's line: a string as it is,
// anything else as its JSON (json.RawMessage), which a JSON handler writes
// as JSON and a text handler as a quoted string, never in Go's syntax for
// maps and slices. The JSON is p.Data encoded again: the go-sdk hands the
// data over decoded, so object keys come sorted and numbers as float64
// wrote them. p.Data has been bounded before it gets here (mcpconn: data
// whose JSON is over the bound is a string holding its start), so the JSON
// is bounded too.
func Data(p *mcp.LoggingMessageParams) slog.Attr {
	if s, ok := p.Data.(string); ok {
		return slog.String("data", s)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<" as it was sent, not \u003c
	if err := enc.Encode(p.Data); err != nil {
		return slog.String("data", "(not JSON)")
	}
	return slog.Any("data", json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
}
