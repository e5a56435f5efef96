package run

import "github.com/agtsdk/agt/mcpconn"

// Bounds of a SchemaCache: when a new schema would pass either, the cache
// starts over.
const (
	SchemaCacheMaxEntries = mcpconn.SchemaCacheMaxEntries
	SchemaCacheMaxBytes   = mcpconn.SchemaCacheMaxBytes
)

// SchemaCache is the compiled-schema cache of mcpconn, which Runs and
// Probers share: give the same one to the Runs of a host
// (Options.SchemaCache) and to its Prober (mcpconn.ProberOptions), and a
// schema a probe compiled is not compiled again by a Run.
type SchemaCache = mcpconn.SchemaCache

// NewSchemaCache returns an empty SchemaCache.
func NewSchemaCache() *SchemaCache { return mcpconn.NewSchemaCache() }
