package run

import (
	"crypto/sha256"
	"sync"

	"github.com/agtsdk/agt/toolschema"
)

// Compiled schemas are shared by every Run of the process, keyed by the
// exact schema bytes: a host runs many Runs of the same agents, and a
// refresh reconnects servers whose tools rarely change, so most schemas are
// compiled once. A *toolschema.Schema is immutable and safe for concurrent
// use. The cache is bounded; when full it starts over.
const (
	schemaCacheMaxEntries = 4096
	schemaCacheMaxBytes   = 16 << 20
)

type schemaCache struct {
	mu    sync.Mutex
	m     map[[sha256.Size]byte]*toolschema.Schema
	bytes int
}

var compiledSchemas = &schemaCache{}

// compile returns the compiled tool schema for raw. Failures are not cached.
func (c *schemaCache) compile(raw []byte) (*toolschema.Schema, error) {
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
	if c.m == nil || len(c.m) >= schemaCacheMaxEntries || c.bytes+len(raw) > schemaCacheMaxBytes {
		c.m = make(map[[sha256.Size]byte]*toolschema.Schema)
		c.bytes = 0
	}
	if _, ok := c.m[key]; !ok {
		c.m[key] = s
		c.bytes += len(raw)
	}
	return s, nil
}
