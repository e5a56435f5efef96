package mcpconn

import (
	"sync/atomic"

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
