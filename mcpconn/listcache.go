package mcpconn

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of a Connector's listing cache: at most listingCacheMaxEntries
// listings of at most listingCacheMaxBytes together; a listing larger than
// listingMaxBytes is not kept. When a new listing would pass a bound, the
// expired listings go first, then those that expire soonest.
const (
	listingCacheMaxEntries = 256
	listingCacheMaxBytes   = 64 << 20
	listingMaxBytes        = listingCacheMaxBytes / 8
)

// listingKey names what a cached listing answers: one registration at
// one revision and document, listed at one protocol version by a client
// that declared the same capabilities (a modern request carries them in
// its _meta, and a server may list other tools for another client).
type listingKey struct {
	ref      resource.Ref
	rev      int64
	doc      [sha256.Size]byte
	caps     uint8
	logLevel string
	version  string
}

// listing is one cached tools/list walk: its tools as the server listed
// them (the exact bytes), fresh until expires.
type listing struct {
	key     listingKey
	tools   []Tool
	bytes   int
	expires time.Time
	// private: the listing may serve only the credentials cred (a
	// cacheScope other than "public", or one page of the walk so).
	private bool
	cred    [sha256.Size]byte
}

// listingCache keeps the tools/list walks of modern servers that said,
// with ttlMs, how long they stay fresh (MCP 2026-07-28 caching), so that
// another session of the same registration (a Run's mount, a probe)
// within that time lists nothing. The compiled schemas are the
// SchemaCache's: a cached listing brings the same bytes, so a Run or
// Prober given the same SchemaCache compiles nothing either.
type listingCache struct {
	maxTTL time.Duration // <= 0: nothing is kept
	now    func() time.Time

	mu sync.Mutex
	m  map[listingKey]*listing
	// bytes is the size of the listings held.
	bytes int
	// gen counts, per reference, the invalidations (a change notice):
	// a walk that began before one is not kept. epoch counts the times
	// gen was cleared, which a walk's generation also names.
	gen   map[resource.Ref]uint64
	next  uint64
	epoch uint64
}

// listingGen is the generation of a reference when a walk began.
type listingGen struct{ gen, epoch uint64 }

func newListingCache(maxTTL time.Duration) *listingCache {
	return &listingCache{maxTTL: maxTTL, now: time.Now}
}

// enabled reports whether the cache keeps anything.
func (c *listingCache) enabled() bool { return c != nil && c.maxTTL > 0 }

// get returns a copy of the fresh listing for key that the credentials
// cred may see, or nil. A listing of an older revision of the same
// reference is dropped.
func (c *listingCache) get(key listingKey, cred [sha256.Size]byte) []Tool {
	if !c.enabled() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropOlder(key)
	l := c.m[key]
	if l == nil {
		return nil
	}
	if !c.now().Before(l.expires) {
		c.remove(l)
		return nil
	}
	if l.private && l.cred != cred {
		return nil
	}
	return cloneTools(l.tools)
}

// begin returns the generation of ref, for put.
func (c *listingCache) begin(ref resource.Ref) listingGen {
	if !c.enabled() {
		return listingGen{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return listingGen{gen: c.gen[ref], epoch: c.epoch}
}

// put keeps the listing of a walk that began at generation g and whose
// pages said it stays fresh for ttl from received: not when ttl is 0 or
// less, when its reference was invalidated since the walk began, or when
// it is larger than listingMaxBytes. ttl is capped at maxTTL.
func (c *listingCache) put(key listingKey, g listingGen, received time.Time, ttl time.Duration, private bool, cred [sha256.Size]byte, tools []Tool) {
	if !c.enabled() || ttl <= 0 {
		return
	}
	size := listingSize(tools)
	if size > listingMaxBytes {
		return
	}
	ttl = min(ttl, c.maxTTL)
	c.mu.Lock()
	defer c.mu.Unlock()
	if g.epoch != c.epoch || g.gen != c.gen[key.ref] {
		return // a change notice came during the walk
	}
	for k := range c.m {
		if k.ref == key.ref && k.rev > key.rev {
			return // a session of a registration since changed
		}
	}
	c.dropOlder(key)
	if old := c.m[key]; old != nil {
		c.remove(old)
	}
	c.makeRoom(size)
	if c.m == nil {
		c.m = map[listingKey]*listing{}
	}
	l := &listing{key: key, tools: cloneTools(tools), bytes: size, expires: received.Add(ttl), private: private, cred: cred}
	c.m[key] = l
	c.bytes += size
}

// invalidate drops every listing of ref and makes a walk in progress for
// it not kept: its server said its tools changed.
func (c *listingCache) invalidate(ref resource.Ref) {
	if !c.enabled() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.gen) >= listingCacheMaxEntries*4 {
		// Bounded: the walks in progress of every reference are not
		// kept.
		clear(c.gen)
		c.epoch++
	}
	if c.gen == nil {
		c.gen = map[resource.Ref]uint64{}
	}
	c.next++
	c.gen[ref] = c.next
	for k, l := range c.m {
		if k.ref == ref {
			c.remove(l)
		}
	}
}

// dropOlder drops the listings of key's reference at an older revision:
// the registration changed. Under mu.
func (c *listingCache) dropOlder(key listingKey) {
	for k, l := range c.m {
		if k.ref == key.ref && k.rev < key.rev {
			c.remove(l)
		}
	}
}

// makeRoom drops listings until one of size bytes fits: the expired
// ones, then those that expire soonest. Under mu.
func (c *listingCache) makeRoom(size int) {
	now := c.now()
	for _, l := range c.m {
		if !now.Before(l.expires) {
			c.remove(l)
		}
	}
	for len(c.m) > 0 && (len(c.m) >= listingCacheMaxEntries || c.bytes+size > listingCacheMaxBytes) {
		var soonest *listing
		for _, l := range c.m {
			if soonest == nil || l.expires.Before(soonest.expires) {
				soonest = l
			}
		}
		c.remove(soonest)
	}
}

// remove drops l. Under mu.
func (c *listingCache) remove(l *listing) {
	delete(c.m, l.key)
	c.bytes -= l.bytes
}

// len returns the number of listings held, for tests.
func (c *listingCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// listingSize is what a listing holds, in bytes.
func listingSize(tools []Tool) int {
	n := 0
	for _, t := range tools {
		n += len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema) + len(t.OutputSchema) + len(t.Meta) + 64
	}
	return n
}

// cloneTools copies tools and their bytes: a listing in the cache is
// never shared with a caller that may change it.
func cloneTools(tools []Tool) []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		t.InputSchema = bytes.Clone(t.InputSchema)
		t.OutputSchema = bytes.Clone(t.OutputSchema)
		t.Meta = bytes.Clone(t.Meta)
		if t.Annotations != nil {
			a := *t.Annotations
			t.Annotations = &a
		}
		out[i] = t
	}
	return out
}

// listingTTL is how long one page of a listing stays fresh by its ttlMs
// (MCP 2026-07-28, basic caching: 0, absent or negative is stale at
// once), capped at max before any arithmetic, so that no ttlMs overflows.
func listingTTL(ttlMS int, max time.Duration) time.Duration {
	if ttlMS <= 0 {
		return 0
	}
	if int64(ttlMS) >= max.Milliseconds() {
		return max
	}
	return time.Duration(ttlMS) * time.Millisecond
}

// publicScope reports whether a cacheScope lets a listing cross
// credentials: "public" only; "private", absent or anything else keeps it
// to the credentials that listed it.
func publicScope(scope string) bool { return scope == "public" }

// credentialDigest names the credentials a session was made with (the
// values it resolved and sends), for a private cached listing
// (listingCache): only the same values see it.
func credentialDigest(values []string) [sha256.Size]byte {
	h := sha256.New()
	for _, v := range values {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		h.Write([]byte(v))
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// headerCredentials names the credentials of a remote session: its URL
// and headers as resolved (an OAuth token is not among them; see
// Session.cacheListing).
func headerCredentials(url string, headers map[string]string) [sha256.Size]byte {
	values := []string{url}
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		values = append(values, k, headers[k])
	}
	return credentialDigest(values)
}

// cacheListings lets the session s, just connected, use the Connector's
// listing cache: only in the modern era (a legacy listing carries no
// ttlMs that means anything), and only for a registration read at a
// revision (opts.Revision above 0).
func (c *Connector) cacheListings(s *Session, srv resource.MCPServer, opts *ConnectOptions, version string) {
	if opts.Revision <= 0 || !c.listings.enabled() || !modernVersion(version) {
		return
	}
	k, err := newSharedKey(s.ref, opts.Revision, srv, opts.Handlers)
	if err != nil {
		return
	}
	s.cacheable = true
	s.listKey = listingKey{ref: k.ref, rev: k.rev, doc: k.doc, caps: k.caps, logLevel: string(k.logLevel), version: version}
}

// listingWalk follows one tools/list walk of a session for the cache:
// the freshness and scope its pages state.
type listingWalk struct {
	s        *Session
	gen      listingGen
	received time.Time // before the first request: no page is older
	ttl      time.Duration
	private  bool
}

// beginWalk starts following a walk of s.
func (s *Session) beginWalk() *listingWalk {
	w := &listingWalk{s: s, ttl: -1}
	if s.cacheable {
		w.gen, w.received = s.listings.begin(s.ref), s.listings.now()
	}
	return w
}

// page notes the freshness of one page: the walk is fresh as long as its
// least fresh page. It also keeps the go-sdk's own cache of the page
// (per session, keyed by cursor, trusting any ttlMs) from ever answering
// a later walk of the session: its answer would have no wire copy, so
// neither exact bytes nor bounds, and would outlive MaxListingTTL and
// this cache's invalidations. The go-sdk keeps the result it returned
// and drops an entry whose ttlMs is 0 when asked for it.
func (w *listingWalk) page(res *mcp.ListToolsResult) {
	ttl, scope := res.TTLMs, res.CacheScope
	res.TTLMs = 0
	if !w.s.cacheable {
		return
	}
	d := listingTTL(ttl, w.s.listings.maxTTL)
	if w.ttl < 0 || d < w.ttl { // the least, and 0 once 0
		w.ttl = d
	}
	w.private = w.private || !publicScope(scope)
}

// noWireCopy notes a page read in the go-sdk's decoded form: the walk's
// listing is not the exact bytes, and is not kept.
func (w *listingWalk) noWireCopy() { w.ttl = 0 }

// end keeps the walk's listing, when its pages said it stays fresh. A
// private listing of a session with OAuth or a Dial transport is not
// kept: its credentials (the token of the moment, whatever the host's
// transport carries) are not the session's cred.
func (w *listingWalk) end(tools []Tool) {
	s := w.s
	if !s.cacheable || (w.private && (s.oauth != nil || s.transport == "dial")) {
		return
	}
	s.listings.put(s.listKey, w.gen, w.received, w.ttl, w.private, s.cred, tools)
}

// listingSuspect drops the cached listings of the session's registration
// when a call's protocol error says the server no longer has the tool as
// listed (MCP 2026-07-28 caching: a client may re-fetch before the TTL
// ends when an error suggests a change): an unknown tool or invalid
// params (-32602) for arguments agt checked against the listed schema,
// or Mcp-Param-* headers that no longer match (HeaderMismatch, -32020).
// The next session lists anew.
func (s *Session) listingSuspect(err error) {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && (wire.Code == jsonrpc.CodeInvalidParams || wire.Code == mcp.CodeHeaderMismatch) {
		s.listings.invalidate(s.ref)
	}
}
