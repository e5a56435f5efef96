//lint:file-ignore SA1019 logging is deprecated from protocol 2026-07-28 only; agt speaks 2025-11-25, where it is current

package serverlog

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
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

// Issue 24 item 6: a line's structured data is logged as JSON, by a text
// handler as by a JSON one, never in Go's map syntax; a string stays a
// string.
func TestDataIsJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		data       any
		text, json string
	}{
		{"object", map[string]any{"event": "disk", "free_mb": 12.0, "path": "<a&b>"},
			`data="{\"event\":\"disk\",\"free_mb\":12,\"path\":\"<a&b>\"}"`, `"data":{"event":"disk","free_mb":12,"path":"<a&b>"}`},
		{"array", []any{"a", 1.0, nil}, `data="[\"a\",1,null]"`, `"data":["a",1,null]`},
		{"number", 12.5, `data="12.5"`, `"data":12.5`},
		{"null", nil, `data="null"`, `"data":null`},
		{"string", "disk full", `data="disk full"`, `"data":"disk full"`},
		{"not JSON", func() {}, `data="(not JSON)"`, `"data":"(not JSON)"`},
	} {
		attr := Data(&mcp.LoggingMessageParams{Level: "info", Data: tc.data})
		var text, js bytes.Buffer
		slog.New(slog.NewTextHandler(&text, nil)).LogAttrs(context.Background(), slog.LevelInfo, "m", attr)
		slog.New(slog.NewJSONHandler(&js, nil)).LogAttrs(context.Background(), slog.LevelInfo, "m", attr)
		if !strings.Contains(text.String(), " "+tc.text+"\n") || strings.Contains(text.String(), "map[") {
			t.Errorf("%s: text handler wrote %q; want %s", tc.name, text.String(), tc.text)
		}
		if !strings.Contains(js.String(), ","+tc.json+"}") {
			t.Errorf("%s: JSON handler wrote %q; want %s", tc.name, js.String(), tc.json)
		}
	}
}
