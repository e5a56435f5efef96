package mcpconn

import (
	"sync/atomic"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
)

// CountingSchemaCache returns an empty SchemaCache that adds one to n for
// each schema it compiles (not for one it serves from the cache).
func CountingSchemaCache(n *atomic.Int64) *SchemaCache {
	return &SchemaCache{compileFunc: func(raw []byte) (*toolschema.Schema, error) {
		n.Add(1)
		return toolschema.Compile(raw, nil)
	}}
}

// LaunchEnvOf returns c's own launch environment, not a copy.
func LaunchEnvOf(c *Connector) resource.LaunchEnv { return c.launchEnv }

// SetListingClock makes c's listing cache read the time from now.
func SetListingClock(c *Connector, now func() time.Time) { c.listings.now = now }

// CachedWalks returns how many of s's tools/list walks the listing cache
// answered.
func CachedWalks(s *Session) uint64 { return s.cachedWalks.Load() }

// ListingCacheLen returns the number of listings c's cache holds.
func ListingCacheLen(c *Connector) int { return c.listings.len() }

// Listing cache bounds, for tests.
const (
	ListingCacheMaxEntries = listingCacheMaxEntries
	ListingCacheMaxBytes   = listingCacheMaxBytes
)

// SetDrainGrace sets how long a response stream of c's sessions may go
// on after its answer (drainGrace).
func SetDrainGrace(c *Connector, d time.Duration) { c.drainGrace = d }

// MaxDrainBytes bounds what a response stream may send after its answer.
const MaxDrainBytes = maxDrainBytes

// MinScrubbedBytes is the shortest value a session scrubs, for tests.
const MinScrubbedBytes = minScrubbedBytes

// Fixed bounds the external tests reach.
const (
	MaxInstructionsBytes     = maxInstructionsBytes
	MaxRequestMetaBytes      = maxRequestMetaBytes
	MaxRequestMetaKeys       = maxRequestMetaKeys
	MaxRequestStateBytes     = maxRequestStateBytes
	MaxStoredCredentialBytes = maxStoredCredentialBytes
)

// DefaultLimits returns the limits a zero Limits stands for, every field
// set (each field's comment gives its default).
func DefaultLimits() Limits { return (&Limits{}).resolved() }
