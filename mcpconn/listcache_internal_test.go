package mcpconn

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/agtsdk/agt/resource"
)

// listingOf is a listing of one tool whose schema is size bytes.
func listingOf(size int) []Tool {
	schema := append([]byte(`{"type":"object","description":"`), bytes.Repeat([]byte("x"), max(0, size-34))...)
	return []Tool{{Name: "t", InputSchema: append(schema, `"}`...)}}
}

// Issue 25 item 7: the listing cache is bounded in entries and bytes
// (the expired listings go first, then those that expire soonest), and
// keeps no listing past listingMaxBytes.
func TestListingCacheBounds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var cred [sha256.Size]byte
	key := func(i int) listingKey {
		return listingKey{ref: resource.Ref(fmt.Sprintf("r%d", i)), rev: 1, version: ModernProtocolVersion}
	}
	for _, tc := range []struct {
		name             string
		n, size          int
		wantMax, wantMin int // listings held after n puts
	}{
		{"entries", listingCacheMaxEntries + 50, 100, listingCacheMaxEntries, listingCacheMaxEntries},
		{"bytes", 40, 4 << 20, listingCacheMaxBytes / (4 << 20), listingCacheMaxBytes/(4<<20) - 1},
		{"one listing too large", 1, listingMaxBytes + 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newListingCache(time.Hour)
			c.now = func() time.Time { return now }
			for i := range tc.n {
				// Each later put lives longer: the earliest go first.
				c.put(key(i), c.begin(key(i).ref), now, time.Minute+time.Duration(i)*time.Second, false, cred, listingOf(tc.size))
			}
			if got := c.len(); got > tc.wantMax || got < tc.wantMin {
				t.Errorf("the cache holds %d listings, want %d..%d", got, tc.wantMin, tc.wantMax)
			}
			if c.bytes > listingCacheMaxBytes {
				t.Errorf("the cache holds %d bytes, past its bound of %d", c.bytes, listingCacheMaxBytes)
			}
			if tc.n > 1 && c.get(key(tc.n-1), cred) == nil {
				t.Errorf("the latest listing, which expires last, was dropped")
			}
			if tc.n > 1 && c.get(key(0), cred) != nil {
				t.Errorf("the first listing, which expires first, was kept")
			}
		})
	}
}

// Issue 25 item 7: a walk that began before a change notice of its
// reference is not kept (its listing may be the old one), also after the
// generations were cleared; one of another reference is.
func TestListingCacheChangeDuringWalk(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var cred [sha256.Size]byte
	c := newListingCache(time.Hour)
	c.now = func() time.Time { return now }
	a := listingKey{ref: "a", rev: 1}
	b := listingKey{ref: "b", rev: 1}
	ga, gb := c.begin(a.ref), c.begin(b.ref)
	c.invalidate(a.ref)
	c.put(a, ga, now, time.Minute, false, cred, listingOf(10))
	c.put(b, gb, now, time.Minute, false, cred, listingOf(10))
	if c.get(a, cred) != nil {
		t.Errorf("a walk that began before the change notice was kept")
	}
	if c.get(b, cred) == nil {
		t.Errorf("a walk of another reference was not kept")
	}
	ga = c.begin(a.ref)
	for i := range listingCacheMaxEntries * 4 { // clears the generations
		c.invalidate(resource.Ref(fmt.Sprintf("other%d", i)))
	}
	c.put(a, ga, now, time.Minute, false, cred, listingOf(10))
	if c.get(a, cred) != nil {
		t.Errorf("a walk that began before the generations were cleared was kept")
	}
}

// Issue 25 item 7: a listing handed out is a copy: a caller that changes
// it changes nothing in the cache.
func TestListingCacheCopies(t *testing.T) {
	t.Parallel()
	var cred [sha256.Size]byte
	c := newListingCache(time.Hour)
	k := listingKey{ref: "a", rev: 1}
	in := listingOf(40)
	c.put(k, c.begin(k.ref), c.now(), time.Minute, false, cred, in)
	want := string(in[0].InputSchema)
	in[0].InputSchema[0] = '!'
	out := c.get(k, cred)
	out[0].InputSchema[1] = '!'
	if got := string(c.get(k, cred)[0].InputSchema); got != want {
		t.Errorf("the cached schema is %q, want %q", got, want)
	}
}
