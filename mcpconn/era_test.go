package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// eraServer returns a document of the fake server of era e over transport
// ("stdio" or "http").
func eraServer(t *testing.T, transport string, e mcptest.Era, args ...string) resource.MCPServer {
	t.Helper()
	if e != "" {
		args = append([]string{"-era", string(e)}, args...)
	}
	if transport == resource.TransportHTTP {
		return resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, args...), StartupTimeoutMS: 20000}
	}
	srv, _ := fakeStdio(t, args...)
	return srv
}

// Issue 25 items 1, 2, 9: a Connector without a pin speaks the modern
// revision to a server that speaks it (a modern-only server failed before:
// agt asked for 2025-11-25 only) and the legacy one to a legacy server, on
// stdio and streamable HTTP, with the exact bytes of listings and
// results either way.
func TestErasConnectListCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		era       mcptest.Era
		want      string
	}{
		{resource.TransportStdio, mcptest.EraModern, mcpconn.ModernProtocolVersion},
		{resource.TransportStdio, mcptest.EraDual, mcpconn.ModernProtocolVersion},
		{resource.TransportStdio, mcptest.EraLegacy, mcpconn.LegacyProtocolVersion},
		{resource.TransportHTTP, mcptest.EraModern, mcpconn.ModernProtocolVersion},
		{resource.TransportHTTP, mcptest.EraDual, mcpconn.ModernProtocolVersion},
		{resource.TransportHTTP, mcptest.EraLegacy, mcpconn.LegacyProtocolVersion},
	} {
		t.Run(tc.transport+"/"+string(tc.era), func(t *testing.T) {
			t.Parallel()
			srv := eraServer(t, tc.transport, tc.era, "-fault", "tool-metadata")
			s := connectFake(t, srv)
			ctx := context.Background()
			if got := s.ProtocolVersion(); got != tc.want {
				t.Errorf("ProtocolVersion = %q, want %q", got, tc.want)
			}
			if info := s.ServerInfo(); info == nil || info.Name != mcptest.ServerName {
				t.Errorf("ServerInfo = %+v, want the name %q", info, mcptest.ServerName)
			}
			tools, err := s.Tools(ctx)
			if err != nil {
				t.Fatalf("Tools: %v", err)
			}
			var rich *mcpconn.Tool
			for i := range tools {
				if tools[i].Name == mcptest.ToolMetaRich {
					rich = &tools[i]
				}
			}
			if rich == nil {
				t.Fatalf("no tool %s listed", mcptest.ToolMetaRich)
			}
			if diff := cmp.Diff(mcptest.MetaRichMeta, string(rich.Meta)); diff != "" {
				t.Errorf("_meta bytes (-want +got):\n%s", diff)
			}
			res, err := s.CallTool(ctx, mcptest.ToolEcho, json.RawMessage(`{"text":"hello"}`))
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if got := resultText(res); got != "hello" {
				t.Errorf("result = %q, want hello", got)
			}
		})
	}
}

// Issue 25 item 1: a legacy stdio server that never answers
// server/discover costs the era probe timeout, not the startup timeout;
// the era is cached, so the next start skips the probe; and a pinned
// legacy version never probes at all.
func TestEraProbeSilentLegacy(t *testing.T) {
	t.Parallel()
	const probe = 500 * time.Millisecond
	srv := eraServer(t, resource.TransportStdio, mcptest.EraSilentLegacy)
	srv.StartupTimeoutMS = 20000
	c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{EraProbeTimeout: probe}})
	defer c.Close()
	// The bound that makes a probe of an hour (below) fail Connect here,
	// not the whole test binary at its -timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	connect := func(c *mcpconn.Connector, srv resource.MCPServer) time.Duration {
		t.Helper()
		start := time.Now()
		s, err := c.Connect(ctx, "tools/silent", srv, nil)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer s.Close()
		if got := s.ProtocolVersion(); got != mcpconn.LegacyProtocolVersion {
			t.Errorf("ProtocolVersion = %q, want %q", got, mcpconn.LegacyProtocolVersion)
		}
		if _, err := s.CallTool(ctx, mcptest.ToolEcho, json.RawMessage(`{"text":"x"}`)); err != nil {
			t.Errorf("CallTool: %v", err)
		}
		return took
	}
	first := connect(c, srv)
	if first < probe {
		t.Errorf("the first Connect took %s: it cannot have waited for the probe of %s", first, probe)
	}
	// Well under the startup timeout of 20 s: the probe bound, the start
	// and the handshake (a slow machine gets 10 s).
	if first > 10*time.Second {
		t.Errorf("the first Connect took %s, not bounded by the era probe", first)
	}
	t.Logf("silent legacy server: first Connect (probe) %s", first)
	cached := connect(c, srv)
	t.Logf("silent legacy server: cached Connect %s", cached)
	pinned := srv
	pinned.ProtocolVersion = mcpdoc.EraLegacy
	fresh := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{EraProbeTimeout: time.Hour}})
	defer fresh.Close()
	t.Logf("silent legacy server: pinned Connect %s", connect(fresh, pinned))
	// A probe of an hour would outlast ctx and fail Connect: the cache
	// and the pin skip it. The host-wide pin does too.
	hostPinned := quickConnector(&mcpconn.ConnectorOptions{ProtocolVersion: mcpconn.LegacyProtocolVersion, Limits: &mcpconn.Limits{EraProbeTimeout: time.Hour}})
	defer hostPinned.Close()
	connect(hostPinned, srv)
}

// Issue 25 item 1: a pin skips the detection. A pin to the modern
// revision never falls back: a legacy server fails Connect. A legacy pin
// (the one agt had by default: a legacy-only client) fails against a
// modern-only server, the case the default now covers.
func TestEraPinMismatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		era       mcptest.Era
		pin       string
	}{
		{resource.TransportStdio, mcptest.EraLegacy, mcpdoc.EraModern},
		{resource.TransportHTTP, mcptest.EraLegacy, mcpdoc.EraModern},
		{resource.TransportStdio, mcptest.EraModern, mcpconn.LegacyProtocolVersion},
		{resource.TransportHTTP, mcptest.EraModern, mcpconn.LegacyProtocolVersion},
	} {
		t.Run(tc.transport+"/"+string(tc.era), func(t *testing.T) {
			t.Parallel()
			srv := eraServer(t, tc.transport, tc.era)
			srv.ProtocolVersion = tc.pin
			c := quickConnector(nil)
			defer c.Close()
			s, err := c.Connect(context.Background(), "tools/pinned", srv, nil)
			if err == nil {
				s.Close()
				t.Fatalf("Connect of a %s server pinned to %s succeeded", tc.era, tc.pin)
			}
			if !errors.Is(err, mcpconn.ErrHandshake) {
				t.Errorf("err = %v, want ErrHandshake", err)
			}
		})
	}
}

// Issue 25 item 1: an UnsupportedProtocolVersion answer to the probe
// marks a modern server: the client retries with a version it names, and
// never falls back to initialize; a server that names none the client
// speaks fails Connect saying so, and never receives initialize.
func TestEraUnsupportedVersionNoFallback(t *testing.T) {
	t.Parallel()
	srv := eraServer(t, resource.TransportStdio, mcptest.EraFuture)
	// The server answers server/discover: a probe that timed out on a
	// slow start would send initialize and test something else.
	c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{EraProbeTimeout: time.Hour}})
	defer c.Close()
	s, err := c.Connect(context.Background(), "tools/future", srv, nil)
	if err == nil {
		s.Close()
		t.Fatal("Connect of a server of another modern revision succeeded")
	}
	var e *mcpconn.Error
	if !errors.As(err, &e) || !errors.Is(err, mcpconn.ErrHandshake) {
		t.Fatalf("err = %v, want an *Error wrapping ErrHandshake", err)
	}
	if !strings.Contains(e.Error(), mcptest.FutureProtocolVersion) {
		t.Errorf("the error does not name the server's version %s: %v", mcptest.FutureProtocolVersion, e)
	}
	if !strings.Contains(e.StderrTail, "fakemcp: refused server/discover") || strings.Contains(e.StderrTail, "refused initialize") {
		t.Errorf("want server/discover and no initialize; the server's stderr:\n%s", e.StderrTail)
	}
}

// Issue 25 item 1: the era cache is used, and dropped when it fails: a
// stdio server cached as legacy that now speaks only the modern revision
// (upgraded between two starts) refuses initialize; Connect probes again
// and speaks modern, and the cache follows.
func TestEraCacheReprobed(t *testing.T) {
	t.Parallel()
	srv := eraServer(t, resource.TransportStdio, "", "-era-file", "era.txt")
	write := func(e mcptest.Era) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(srv.Cwd, "era.txt"), []byte(e), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{EraProbeTimeout: time.Hour}})
	defer c.Close()
	connect := func(want string) {
		t.Helper()
		s, err := c.Connect(context.Background(), "tools/upgraded", srv, nil)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer s.Close()
		if got := s.ProtocolVersion(); got != want {
			t.Errorf("ProtocolVersion = %q, want %q", got, want)
		}
	}
	write(mcptest.EraLegacy)
	connect(mcpconn.LegacyProtocolVersion)
	write(mcptest.EraModern) // cached legacy: initialize is refused, then the probe
	connect(mcpconn.ModernProtocolVersion)
	write(mcptest.EraLegacy) // cached modern: the go-sdk falls back at the server's -32601
	connect(mcpconn.LegacyProtocolVersion)
}

// Issue 25 item 1: a modern-only stdio server slower to start than the
// era probe timeout answers server/discover late: the fallback's
// initialize is refused, and Connect starts it once more, as modern,
// without the bound (and caches it). The fake server holds every answer
// until the fallback's initialize came, so the probe has timed out
// whatever the machine's speed, then answers in each order: a server
// may answer initialize's refusal first, and the go-sdk stops reading at
// it (the late discover result alone told before: Connect failed).
func TestEraSlowModernServer(t *testing.T) {
	t.Parallel()
	for _, order := range []string{mcptest.SlowStartDiscoverFirst, mcptest.SlowStartInitializeFirst} {
		t.Run(order, func(t *testing.T) {
			t.Parallel()
			srv := eraServer(t, resource.TransportStdio, mcptest.EraModern, "-slow-start", order)
			c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{EraProbeTimeout: 50 * time.Millisecond}})
			defer c.Close()
			connect := func() {
				t.Helper()
				s, err := c.Connect(context.Background(), "tools/slow", srv, nil)
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				defer s.Close()
				if got := s.ProtocolVersion(); got != mcpconn.ModernProtocolVersion {
					t.Errorf("ProtocolVersion = %q, want %q", got, mcpconn.ModernProtocolVersion)
				}
			}
			connect()
			// The first start held until initialize: the probe timed out.
			if _, err := os.Stat(filepath.Join(srv.Cwd, mcptest.SlowStartMarker)); err != nil {
				t.Fatalf("the server's first start did not wait for the fallback: %v", err)
			}
			connect() // cached modern: no probe, served at once
		})
	}
}
