package run

import (
	"crypto/sha256"
	"sync"

	"github.com/agtsdk/agt/toolschema"
)

// Bounds of a SchemaCache: when a new schema would pass either, the cache
// starts over.
const (
	SchemaCacheMaxEntries = 4096
	SchemaCacheMaxBytes   = 16 << 20
)

// SchemaCache holds compiled tool schemas, keyed by their exact bytes, for
// the Runs it is given to (Options.SchemaCache): a host runs many Runs of
// the same agents, and a refresh reconnects servers whose tools rarely
// change, so most schemas are compiled once. A compiled schema is
// immutable, so sharing one is safe. The cache holds at most
// SchemaCacheMaxEntries schemas of at most SchemaCacheMaxBytes source
// bytes together; when full it starts over. Failures are not cached. The
// zero value is an empty cache, ready to use; a SchemaCache is safe for
// concurrent use and must not be copied after first use.
type SchemaCache struct {
	mu    sync.Mutex
	m     map[[sha256.Size]byte]*toolschema.Schema
	bytes int
}

// NewSchemaCache returns an empty SchemaCache.
func NewSchemaCache() *SchemaCache { return &SchemaCache{} }

// Len returns the number of compiled schemas the cache holds.
func (c *SchemaCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// compile returns the compiled tool schema for raw.
func (c *SchemaCache) compile(raw []byte) (*toolschema.Schema, error) {
	key := sha256.Sum256(raw)
	c.mu.Lock()
	s := c.m[key]
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := toolschema.Compile(raw, nil)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= SchemaCacheMaxEntries || c.bytes+len(raw) > SchemaCacheMaxBytes {
		c.m = make(map[[sha256.Size]byte]*toolschema.Schema)
		c.bytes = 0
	}
	if _, ok := c.m[key]; !ok {
		c.m[key] = s
		c.bytes += len(raw)
	}
	return s, nil
}
