package mcpconn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testClock is the listing cache's clock in tests: time moves only when
// the test says.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock(c *mcpconn.Connector) *testClock {
	clk := &testClock{t: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	mcpconn.SetListingClock(c, clk.now)
	return clk
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// listOnce connects a session of ref at revision rev, lists its tools and
// closes it; cached reports a listing the cache answered.
func listOnce(t *testing.T, c *mcpconn.Connector, ref resource.Ref, srv resource.MCPServer, rev int64) (tools []mcpconn.Tool, cached bool) {
	t.Helper()
	ctx := context.Background()
	s, err := c.Connect(ctx, ref, srv, &mcpconn.ConnectOptions{Revision: rev, Share: rev > 0})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer s.Close()
	tools, err = s.Tools(ctx)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	return tools, mcpconn.CachedWalks(s) > 0
}

var toolsCmp = cmpopts.IgnoreUnexported(mcpconn.Tool{})

// modernHTTP serves the fake server in era modern over streamable HTTP in
// the test process, listing with ttlMs ttl, and counts what it is asked.
func modernHTTP(t *testing.T, ttl int, scope string, faults ...mcptest.Fault) (resource.MCPServer, *mcptest.Counters) {
	counters := &mcptest.Counters{}
	url := mcptest.ServeHTTP(t, &mcptest.ServerOptions{Era: mcptest.EraModern, TTLMs: ttl, CacheScope: scope, Counters: counters, Faults: faults})
	return resource.MCPServer{Type: resource.TransportHTTP, URL: url}, counters
}

// Issue 25 items 7 and 9: a modern server's listing with ttlMs is listed
// once for many sessions of the same registration and revision, with the
// same exact bytes each time; a legacy session lists every time, though
// the go-sdk server sends ttlMs in either era; a session without a
// revision (Connect) never uses the cache.
func TestListingCacheHit(t *testing.T) {
	t.Parallel()
	const sessions = 4
	for _, tc := range []struct {
		name      string
		transport string // "http", "dial" or "stdio" (the binary: not counted)
		era       mcptest.Era
		pin       string
		rev       int64
		wantLists int64
		scope     string
	}{
		{"http/modern", resource.TransportHTTP, mcptest.EraModern, "", 3, 1, ""},
		{"http/dual", resource.TransportHTTP, mcptest.EraDual, "", 3, 1, ""},
		{"http/legacy", resource.TransportHTTP, mcptest.EraLegacy, "", 3, sessions, ""},
		{"http/dual pinned legacy", resource.TransportHTTP, mcptest.EraDual, mcpdoc.EraLegacy, 3, sessions, ""},
		{"http/modern without revision", resource.TransportHTTP, mcptest.EraModern, "", 0, sessions, ""},
		{"dial/modern", "dial", mcptest.EraModern, "", 3, 1, ""},
		{"dial/legacy", "dial", mcptest.EraLegacy, "", 3, sessions, ""},
		// Private: the same credentials reuse it, a Dial transport's are
		// unknown.
		{"http/modern private", resource.TransportHTTP, mcptest.EraModern, "", 3, 1, "private"},
		{"dial/modern private", "dial", mcptest.EraModern, "", 3, sessions, "private"},
		{"stdio/modern", resource.TransportStdio, mcptest.EraModern, "", 3, 1, ""},
		{"stdio/legacy", resource.TransportStdio, mcptest.EraLegacy, "", 3, sessions, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			counters := &mcptest.Counters{}
			opts := &mcptest.ServerOptions{Era: tc.era, TTLMs: 60000, CacheScope: tc.scope, Counters: counters, Faults: []mcptest.Fault{mcptest.FaultToolMetadata}}
			var (
				srv   resource.MCPServer
				copts mcpconn.ConnectorOptions
			)
			switch tc.transport {
			case resource.TransportHTTP:
				srv = resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.ServeHTTP(t, opts)}
			case "dial":
				copts.Dial = mcptest.Dial(opts)
				srv = resource.MCPServer{Type: resource.TransportStdio, Command: "fake", Cwd: "/"}
			default:
				srv, _ = fakeStdio(t, "-era", string(tc.era), "-ttl-ms", "60000", "-fault", "tool-metadata")
			}
			srv.ProtocolVersion = tc.pin
			c := quickConnector(&copts)
			defer c.Close()
			first, cached := listOnce(t, c, "tools/fake", srv, tc.rev)
			if cached {
				t.Errorf("the first listing came from the cache")
			}
			hits := int64(0)
			for range sessions - 1 {
				tools, cached := listOnce(t, c, "tools/fake", srv, tc.rev)
				if cached {
					hits++
				}
				if diff := cmp.Diff(first, tools, toolsCmp); diff != "" {
					t.Errorf("a later listing differs from the first (-first +later):\n%s", diff)
				}
			}
			if got, want := sessions-hits, tc.wantLists; got != want {
				t.Errorf("%d of %d listings were sent to the server, want %d", got, sessions, want)
			}
			if tc.transport != resource.TransportStdio {
				if got := counters.Lists(); got != tc.wantLists {
					t.Errorf("the server saw %d tools/list requests, want %d", got, tc.wantLists)
				}
			}
		})
	}
}

// Issue 25 item 7, SEP-2549 freshness: a listing is fresh while now <
// received + ttlMs, and listed again once it is not.
func TestListingCacheExpires(t *testing.T) {
	t.Parallel()
	srv, counters := modernHTTP(t, 5000, "")
	c := quickConnector(nil)
	defer c.Close()
	clk := newTestClock(c)
	for i, step := range []struct {
		advance   time.Duration
		wantLists int64
	}{
		{0, 1},
		{4999 * time.Millisecond, 1},
		{time.Millisecond, 2}, // received + ttlMs: stale
		{time.Second, 2},
	} {
		clk.add(step.advance)
		listOnce(t, c, "tools/fake", srv, 1)
		if got := counters.Lists(); got != step.wantLists {
			t.Errorf("step %d: the server saw %d tools/list requests, want %d", i, got, step.wantLists)
		}
	}
}

// Issue 25 item 7: a hostile ttlMs is never trusted unbounded: the
// largest one a server can send is capped at MaxListingTTL (default 10
// minutes); a negative one, and 0, are stale at once; a host can lower
// the cap, or turn the cache off.
func TestListingCacheHostileTTL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		ttl    int
		maxTTL time.Duration
		fresh  time.Duration // 0: never cached
	}{
		{"max int", math.MaxInt, 0, mcpconn.DefaultLimits().MaxListingTTL},
		{"one year, capped by the host", int((365 * 24 * time.Hour).Milliseconds()), time.Minute, time.Minute},
		{"negative", -5, 0, 0},
		{"cache off", 60000, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, counters := modernHTTP(t, tc.ttl, "")
			c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxListingTTL: tc.maxTTL}})
			defer c.Close()
			clk := newTestClock(c)
			listOnce(t, c, "tools/fake", srv, 1)
			if tc.fresh == 0 {
				listOnce(t, c, "tools/fake", srv, 1)
				if got := counters.Lists(); got != 2 {
					t.Errorf("the server saw %d tools/list requests, want 2 (nothing cached)", got)
				}
				return
			}
			clk.add(tc.fresh - time.Millisecond)
			if _, cached := listOnce(t, c, "tools/fake", srv, 1); !cached {
				t.Errorf("not cached %s after the listing", tc.fresh-time.Millisecond)
			}
			clk.add(time.Millisecond)
			if _, cached := listOnce(t, c, "tools/fake", srv, 1); cached {
				t.Errorf("still cached %s after the listing, past the cap", tc.fresh)
			}
		})
	}
}

// tokenResolver answers ${secret:tok} with the token of the moment.
type tokenResolver struct{ tok atomic.Pointer[string] }

func (r *tokenResolver) set(v string) { r.tok.Store(&v) }

func (r *tokenResolver) Resolve(_ context.Context, _ resource.Ref, name string) (string, error) {
	return *r.tok.Load(), nil
}

// Issue 25 item 7, SEP-2549 cacheScope: a private listing never crosses
// credentials (here the Authorization header, resolved from a secret:
// the document and its revision stay the same); a public one does.
func TestListingCacheScope(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scope string
		// wantLists after listing with tokens A, A, B, B, A.
		wantLists []int64
	}{
		{"private", []int64{1, 1, 2, 2, 3}},
		{"public", []int64{1, 1, 1, 1, 1}},
	} {
		t.Run(tc.scope, func(t *testing.T) {
			t.Parallel()
			srv, counters := modernHTTP(t, 60000, tc.scope)
			srv.Headers = map[string]string{"Authorization": "Bearer ${secret:tok}"}
			secrets := &tokenResolver{}
			c := quickConnector(&mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: secrets}})
			defer c.Close()
			for i, tok := range []string{"token-of-alice-0001", "token-of-alice-0001", "token-of-bob-00002", "token-of-bob-00002", "token-of-alice-0001"} {
				secrets.set(tok)
				listOnce(t, c, "tools/fake", srv, 1)
				if got := counters.Lists(); got != tc.wantLists[i] {
					t.Errorf("listing %d: the server saw %d tools/list requests, want %d", i, got, tc.wantLists[i])
				}
			}
		})
	}
}

// Issue 25 item 7: a registration's new revision lists again, and the
// listing of the old one is dropped (not kept beside it, nor stored
// again by a late session of the old revision).
func TestListingCacheRevision(t *testing.T) {
	t.Parallel()
	srv, counters := modernHTTP(t, 60000, "")
	c := quickConnector(nil)
	defer c.Close()
	for i, step := range []struct {
		rev       int64
		wantLists int64
	}{{1, 1}, {1, 1}, {2, 2}, {2, 2}, {1, 3}, {2, 3}} {
		listOnce(t, c, "tools/fake", srv, step.rev)
		if got := counters.Lists(); got != step.wantLists {
			t.Errorf("step %d (revision %d): the server saw %d tools/list requests, want %d", i, step.rev, got, step.wantLists)
		}
		if got := mcpconn.ListingCacheLen(c); got != 1 {
			t.Errorf("step %d: the cache holds %d listings, want 1", i, got)
		}
	}
}

// Issue 25 item 7, SEP-2549 "Interaction with Notifications": a
// notifications/tools/list_changed of the server, read by any session of
// the registration, invalidates its cached listing at once. (A modern
// session hears it only on subscriptions/listen; here a legacy session of
// the same registration and dual server does: the registration's
// listing is dropped whichever session heard.)
func TestListingCacheListChanged(t *testing.T) {
	t.Parallel()
	counters := &mcptest.Counters{}
	c := quickConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{Era: mcptest.EraDual, TTLMs: 60000,
		Counters: counters, Faults: []mcptest.Fault{mcptest.FaultClientFeatures}})})
	defer c.Close()
	srv := resource.MCPServer{Type: resource.TransportStdio, Command: "fake", Cwd: "/"}
	ctx := context.Background()
	listOnce(t, c, "tools/fake", srv, 1)
	if _, cached := listOnce(t, c, "tools/fake", srv, 1); !cached {
		t.Fatalf("the second listing was not cached")
	}
	legacy := srv
	legacy.ProtocolVersion = mcpdoc.EraLegacy
	s, err := c.Connect(ctx, "tools/fake", legacy, &mcpconn.ConnectOptions{Revision: 1, Share: true})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, mcptest.ToolAddTool, json.RawMessage(`{"name":"added"}`)); err != nil {
		t.Fatalf("CallTool add_tool: %v", err)
	}
	if s.ToolsChanged() == 0 {
		t.Fatalf("no notifications/tools/list_changed read before add_tool's result")
	}
	if _, cached := listOnce(t, c, "tools/fake", srv, 1); cached {
		t.Errorf("the listing came from the cache after the server said its tools changed")
	}
	if got := counters.Lists(); got != 2 {
		t.Errorf("the server saw %d tools/list requests, want 2", got)
	}
}

// Issue 25 item 7: the go-sdk's own listing cache (per session, trusting
// any ttlMs) never answers a walk of agt's: with agt's cache off, a
// session that lists twice sends two tools/list, and both listings carry
// the exact bytes of the wire.
func TestListingCacheGoSDKDisarmed(t *testing.T) {
	t.Parallel()
	srv, counters := modernHTTP(t, 60000, "", mcptest.FaultToolMetadata)
	c := quickConnector(&mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{MaxListingTTL: -1}})
	defer c.Close()
	ctx := context.Background()
	s, err := c.Connect(ctx, "tools/fake", srv, &mcpconn.ConnectOptions{Revision: 1, Share: true})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer s.Close()
	for i := range 2 {
		tools, err := s.Tools(ctx)
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		var meta string
		for _, tool := range tools {
			if tool.Name == mcptest.ToolMetaRich {
				meta = string(tool.Meta)
			}
		}
		if meta != mcptest.MetaRichMeta {
			t.Errorf("listing %d: _meta of %s is %q, want the exact bytes %q", i, mcptest.ToolMetaRich, meta, mcptest.MetaRichMeta)
		}
	}
	if got := counters.Lists(); got != 2 {
		t.Errorf("the server saw %d tools/list requests, want 2", got)
	}
}

// Issue 25 items 1 and 7: a probe reports the negotiated version, and a
// probe of the same registration revision within a modern server's
// ttlMs takes its listing from the cache (ProbeReport.ListingCached),
// compiling nothing with the same SchemaCache (here for a shared
// registration: a probe's session is its own, never a lease).
func TestProbeListingCached(t *testing.T) {
	t.Parallel()
	srv, counters := modernHTTP(t, 60000, "")
	srv.Shared = true
	repo := newMemRepo()
	repo.store(t, "tools/fake", srv)
	c := quickConnector(nil)
	defer c.Close()
	var compiled atomic.Int64
	p := mcpconn.NewProber(repo, c, &mcpconn.ProberOptions{SchemaCache: mcpconn.CountingSchemaCache(&compiled)})
	var reports []*mcpconn.ProbeReport
	for range 2 {
		rep, err := p.Probe(context.Background(), "tools/fake")
		if err != nil || !rep.OK {
			t.Fatalf("Probe: %v, report %+v", err, rep)
		}
		reports = append(reports, rep)
	}
	if reports[0].ListingCached || !reports[1].ListingCached {
		t.Errorf("ListingCached = %v, %v; want false, true", reports[0].ListingCached, reports[1].ListingCached)
	}
	for i, rep := range reports {
		if rep.ProtocolVersion != mcpconn.ModernProtocolVersion {
			t.Errorf("probe %d: ProtocolVersion = %q, want %q", i, rep.ProtocolVersion, mcpconn.ModernProtocolVersion)
		}
	}
	if got := counters.Lists(); got != 1 {
		t.Errorf("the server saw %d tools/list requests for two probes, want 1", got)
	}
	if n := int64(len(reports[0].Tools)); compiled.Load() > n {
		t.Errorf("%d schemas compiled for two probes of %d tools", compiled.Load(), n)
	}
}

// Issue 25 item 7: with OAuth the credentials of a session are a token
// that changes under it, so a private listing is not kept; a public one
// is.
func TestListingCacheOAuth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scope     string
		wantLists int64
	}{{"private", 3}, {"public", 1}} {
		t.Run(tc.scope, func(t *testing.T) {
			t.Parallel()
			counters := &mcptest.Counters{}
			server := mcptest.NewServer(&mcptest.ServerOptions{Era: mcptest.EraModern, TTLMs: 60000, CacheScope: tc.scope, Counters: counters})
			f := newOAuthFixture(t)
			f.srv.URL = serveProtected(t, f.as, "/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
				&mcp.StreamableHTTPOptions{Stateless: true}))
			f.login(t)
			lists0 := counters.Lists() // the login's own listing
			for range 3 {
				listOnce(t, f.c, "remote", f.srv, 1)
			}
			if got := counters.Lists() - lists0; got != tc.wantLists {
				t.Errorf("the server saw %d tools/list requests for 3 sessions, want %d", got, tc.wantLists)
			}
		})
	}
}

// bufferedWriter keeps what a handler writes, for rewriteTTL.
type bufferedWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *bufferedWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

// Issue 25 item 7: a hostile ttlMs the go-sdk cannot decode as an int (a
// float, past int64, a string) fails the listing as malformed, naming the
// member and never the value, without taking the connection for lost;
// null reads as 0, stale at once.
func TestListingCacheTTLNotAnInt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ttl    string
		listOK bool
	}{{"1e300", false}, {"9223372036854775808", false}, {"1.5", false}, {`"600000"`, false}, {"null", true}} {
		t.Run(tc.ttl, func(t *testing.T) {
			t.Parallel()
			counters := &mcptest.Counters{}
			server := mcptest.NewServer(&mcptest.ServerOptions{Era: mcptest.EraModern, TTLMs: 600000, Counters: counters})
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				bw := &bufferedWriter{ResponseWriter: w}
				h.ServeHTTP(bw, r)
				_, _ = w.Write(bytes.ReplaceAll(bw.buf.Bytes(), []byte(`"ttlMs":600000`), []byte(`"ttlMs":`+tc.ttl)))
			}))
			defer ts.Close()
			c := quickConnector(nil)
			defer c.Close()
			srv := resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL}
			ctx := context.Background()
			for range 2 {
				s, err := c.Connect(ctx, "tools/fake", srv, &mcpconn.ConnectOptions{Revision: 1, Share: true})
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				_, err = s.Tools(ctx)
				switch {
				case tc.listOK && err != nil:
					t.Errorf("Tools: %v", err)
				case !tc.listOK && (err == nil || !strings.Contains(err.Error(), "the tools/list result is malformed") ||
					!strings.Contains(err.Error(), `"ttlMs"`) || strings.Contains(err.Error(), strings.Trim(tc.ttl, `"`))):
					t.Errorf("Tools: %v; want the malformed result, naming ttlMs and not the value", err)
				}
				if s.Lost() {
					t.Errorf("the session is lost after a malformed listing")
				}
				if _, err := s.CallTool(ctx, mcptest.ToolEcho, json.RawMessage(`{"text":"x"}`)); err != nil {
					t.Errorf("CallTool after the listing: %v", err)
				}
				s.Close()
			}
			if got := counters.Lists(); got != 2 {
				t.Errorf("the server saw %d tools/list requests for 2 sessions, want 2 (nothing cached)", got)
			}
		})
	}
}

// Issue 25 item 7, SEP-2549 "Clients MAY re-fetch before the TTL expires
// if they have reason to believe the data has changed": a call the server
// refuses as an unknown tool or invalid params drops the cached listing;
// a call that succeeds does not.
func TestListingCacheDroppedByUnknownTool(t *testing.T) {
	t.Parallel()
	srv, counters := modernHTTP(t, 60000, "")
	c := quickConnector(nil)
	defer c.Close()
	ctx := context.Background()
	for i, step := range []struct {
		tool      string
		wantLists int64 // after this session listed and called tool
	}{{mcptest.ToolEcho, 1}, {"no_such_tool", 1}, {mcptest.ToolEcho, 2}, {mcptest.ToolEcho, 2}} {
		s, err := c.Connect(ctx, "tools/fake", srv, &mcpconn.ConnectOptions{Revision: 1, Share: true})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		if _, err := s.Tools(ctx); err != nil {
			t.Fatalf("Tools: %v", err)
		}
		_, err = s.CallTool(ctx, step.tool, json.RawMessage(`{"text":"x"}`))
		if (err != nil) != (step.tool != mcptest.ToolEcho) {
			t.Errorf("step %d: CallTool %s: %v", i, step.tool, err)
		}
		s.Close()
		if got := counters.Lists(); got != step.wantLists {
			t.Errorf("step %d: the server saw %d tools/list requests, want %d", i, got, step.wantLists)
		}
	}
}

// Issue 25 items 3 and 7: a call refused with HeaderMismatch (its
// Mcp-Param-* headers were made from a cached listing the tool no longer
// matches) drops the cached listing, so the relist before the call is
// sent again asks the server, and the call goes through with the headers
// of the new listing. Here the first listing, the one cached, lacks the
// tool's x-mcp-header annotations.
func TestListingCacheHeaderMismatch(t *testing.T) {
	t.Parallel()
	counters := &mcptest.Counters{}
	server := mcptest.NewServer(&mcptest.ServerOptions{Era: mcptest.EraModern, TTLMs: 60000, Counters: counters,
		Faults: []mcptest.Fault{mcptest.FaultParamHeaders}})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var first atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := &bufferedWriter{ResponseWriter: w}
		h.ServeHTTP(bw, r)
		out := bw.buf.Bytes()
		if bytes.Contains(out, []byte(`"x-mcp-header"`)) && first.CompareAndSwap(false, true) {
			out = bytes.ReplaceAll(out, []byte(`"x-mcp-header"`), []byte(`"x-not-header"`))
		}
		_, _ = w.Write(out)
	}))
	defer ts.Close()
	c := quickConnector(nil)
	defer c.Close()
	srv := resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL}
	ctx := context.Background()
	listOnce(t, c, "tools/fake", srv, 1)
	s, err := c.Connect(ctx, "tools/fake", srv, &mcpconn.ConnectOptions{Revision: 1, Share: true})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer s.Close()
	if _, err := s.Tools(ctx); err != nil || mcpconn.CachedWalks(s) != 1 {
		t.Fatalf("Tools: %v, cached walks %d; want the cached listing", err, mcpconn.CachedWalks(s))
	}
	res, err := s.CallTool(ctx, mcptest.ToolParamHeaders, json.RawMessage(paramHeaderArgs))
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if diff := cmp.Diff(wantParamHeaders, resultText(res)); diff != "" {
		t.Errorf("headers the server got (-want +got):\n%s", diff)
	}
	if got := counters.Lists(); got != 2 {
		t.Errorf("the server saw %d tools/list requests, want 2", got)
	}
}
