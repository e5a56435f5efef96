//lint:file-ignore SA1019 logging is deprecated from protocol 2026-07-28 only; agt speaks 2025-11-25, where it is current

package serverlog

import (
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestLevel(t *testing.T) {
	t.Parallel()
	for l, want := range map[mcp.LoggingLevel]slog.Level{
		"debug": slog.LevelDebug, "info": slog.LevelInfo, "notice": slog.LevelInfo, "warning": slog.LevelWarn,
		"error": slog.LevelError, "emergency": slog.LevelError, "made-up": slog.LevelError, "": slog.LevelError,
	} {
		if got := Level(l); got != want {
			t.Errorf("Level(%q) = %v; want %v", l, got, want)
		}
	}
}

func TestKnown(t *testing.T) {
	t.Parallel()
	for l, want := range map[mcp.LoggingLevel]bool{
		"debug": true, "info": true, "notice": true, "warning": true, "error": true, "critical": true, "alert": true, "emergency": true,
		"": false, "Info": false, "warn": false, "trace": false, "info ": false,
	} {
		if got := Known(l); got != want {
			t.Errorf("Known(%q) = %v; want %v", l, got, want)
		}
	}
}

// A flood passes a burst, then about the rate; every line held back is
// counted once.
func TestGateBoundsAFlood(t *testing.T) {
	t.Parallel()
	var g Gate
	const n = 10_000
	start := time.Now()
	passed := 0
	for range n {
		if g.Pass() {
			passed++
		}
	}
	// The most the rate can add while the loop ran, rounded up.
	refill := int(time.Since(start).Seconds()*Rate) + 1
	if passed < Burst || passed > Burst+refill {
		t.Errorf("%d of %d lines passed; want the burst %d plus at most %d", passed, n, Burst, refill)
	}
	if got := g.TakeDropped(); got != int64(n-passed) {
		t.Errorf("TakeDropped = %d; want %d", got, n-passed)
	}
	if got := g.TakeDropped(); got != 0 {
		t.Errorf("a second TakeDropped = %d; want 0", got)
	}
}
