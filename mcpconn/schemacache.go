package mcpconn

import (
	"crypto/sha256"
	"errors"
	"sync"

	"github.com/agtsdk/agt/toolschema"
)

// Bounds of a SchemaCache: when a new schema would pass either, the cache
// starts over.
const (
	schemaCacheMaxEntries = 4096
	schemaCacheMaxBytes   = 16 << 20
)

// SchemaCache holds compiled tool schemas, keyed by their exact bytes, for
// the Runs (run.Options.SchemaCache) and Probers (ProberOptions.SchemaCache)
// it is given to: a host runs many Runs of the same agents, a refresh
// reconnects servers whose tools rarely change, and a server is probed
// again after a change to its registration, so most schemas are compiled
// once. It serves the default schema options only: with
// ConnectorOptions.Schema set, LoadTools compiles with those instead. A compiled schema is
// immutable, so sharing one is safe. The cache holds at most
// 4096 schemas of at most 16 MiB source bytes together; when full it
// starts over. Failures are not cached.
// Bytes that several goroutines ask for at once, as mounts of the same
// server connecting together do, are compiled once: the others wait for
// that compilation and share its result, failure included (a later ask
// compiles again).
// The zero SchemaCache is empty and ready to use (new(SchemaCache)). It
// is safe for concurrent use and must not be copied after first use.
type SchemaCache struct {
	mu       sync.Mutex
	m        map[[sha256.Size]byte]*toolschema.Schema
	bytes    int
	inflight map[[sha256.Size]byte]*schemaFlight

	// compileFunc replaces toolschema.Compile with default options in
	// tests; nil in use.
	compileFunc func(raw []byte) (*toolschema.Schema, error)
}

// schemaFlight is one compilation in progress; done is closed once s and
// err are set.
type schemaFlight struct {
	done chan struct{}
	s    *toolschema.Schema
	err  error
}

// errCompilePanicked is what goroutines waiting on a compilation get when
// it panicked instead of returning (the panic goes on in its own
// goroutine).
var errCompilePanicked = errors.New("mcpconn: the schema's compilation failed unexpectedly")

// Len returns the number of compiled schemas the cache holds.
func (c *SchemaCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Compile returns the compiled tool schema for raw (toolschema.Compile with
// default options): the cached one, the one another goroutine is
// compiling, or a new one.
func (c *SchemaCache) Compile(raw []byte) (*toolschema.Schema, error) {
	key := sha256.Sum256(raw)
	c.mu.Lock()
	if s := c.m[key]; s != nil {
		c.mu.Unlock()
		return s, nil
	}
	if f := c.inflight[key]; f != nil {
		c.mu.Unlock()
		<-f.done
		return f.s, f.err
	}
	f := &schemaFlight{done: make(chan struct{}), err: errCompilePanicked}
	if c.inflight == nil {
		c.inflight = make(map[[sha256.Size]byte]*schemaFlight)
	}
	c.inflight[key] = f
	c.mu.Unlock()

	// Whatever happens, the flight ends: waiters are released and the
	// next ask starts anew.
	defer func() {
		c.mu.Lock()
		delete(c.inflight, key)
		if f.err == nil {
			c.store(key, len(raw), f.s)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	compile := c.compileFunc
	if compile == nil {
		compile = func(raw []byte) (*toolschema.Schema, error) { return toolschema.Compile(raw, nil) }
	}
	f.s, f.err = compile(raw)
	return f.s, f.err
}

// store keeps s under key; under mu.
func (c *SchemaCache) store(key [sha256.Size]byte, size int, s *toolschema.Schema) {
	if c.m == nil || len(c.m) >= schemaCacheMaxEntries || c.bytes+size > schemaCacheMaxBytes {
		c.m = make(map[[sha256.Size]byte]*toolschema.Schema)
		c.bytes = 0
	}
	if _, ok := c.m[key]; !ok {
		c.m[key] = s
		c.bytes += size
	}
}
