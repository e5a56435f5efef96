package mcpconn

import (
	"bytes"
	"errors"
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agtsdk/agt/internal/text"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
)

// LoadedTool is one listed tool, checked and compiled: the form both a
// probe and a Run take a server's tools in.
type LoadedTool struct {
	Tool
	// Schema is the compiled inputSchema; nil when Err is set.
	Schema *toolschema.Schema
	// Err says why the tool is left out: it nests too deep for its
	// listing to be read with it (a *LimitError naming MaxMessageDepth,
	// 1000 levels; only its name is known), its name, title, description, outputSchema
	// or _meta is over its bound (checkTool), its name was listed before,
	// its inputSchema's x-mcp-header annotations break the constraints of MCP
	// 2026-07-28 or name an Mcp-Param-* header the registration's headers
	// set (see Protocol eras), or its inputSchema does not compile. Nil
	// when the tool is usable.
	Err error
}

// errDuplicateTool leaves out the second tool of a name.
var errDuplicateTool = errors.New("the server lists this tool name twice; the first one is kept")

// LoadTools is the one way agt turns a listing into usable tools, for a
// probe and a Run alike, so that they never disagree on a tool.
//
// First the registration srv selects: a tool whose name its enabled_tools
// and disabled_tools leave out (srv.ToolEnabled) is not in the result at
// all, and its name is in excluded, in the server's order (a name listed
// twice, twice); it is neither judged nor compiled. A
// name over 256 bytes is never matched: such a tool is left out with
// its reason. A tool the listing could not be read with (nested deeper
// than the 1000 levels of a message allow in its page) is left out with its reason.
// Then each tool is checked with checkTool, a name listed twice
// keeps its first tool, a tool whose x-mcp-header annotations are invalid
// or name a header of the registration is left out, and each inputSchema is compiled (as the
// last paragraph says). Tools
// whose inputSchema bytes are identical share one compilation, and so its
// result or error. The distinct schemas compile on at most GOMAXPROCS
// goroutines, one per four schemas, the caller's included: up to four
// compile on the caller's goroutine alone. The result keeps the server's
// order, and each tool's result does not depend on the schedule. A panic
// of the compilation is raised again on the caller's goroutine.
//
// The schemas compile with the Connector's ConnectorOptions.Schema; when
// that is nil, through cache (nil: no cache), which holds what it compiles
// for the next listing.
func (c *Connector) LoadTools(tools []Tool, srv resource.MCPServer, cache *SchemaCache) (loaded []LoadedTool, excluded []string) {
	var compile func([]byte) (*toolschema.Schema, error)
	if c.opts.Schema == nil && cache != nil {
		compile = cache.Compile
	}
	return loadTools(tools, srv, compile, c.opts.Schema)
}

// loadTools is LoadTools with the compilation given: compile, or when
// nil toolschema.Compile with opts.
func loadTools(tools []Tool, srv resource.MCPServer, compile func(raw []byte) (*toolschema.Schema, error), opts *toolschema.Options) (loaded []LoadedTool, excluded []string) {
	if compile == nil {
		compile = func(raw []byte) (*toolschema.Schema, error) { return toolschema.Compile(raw, opts) }
	}
	out := make([]LoadedTool, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if len(t.Name) <= maxToolNameBytes && !srv.ToolEnabled(t.Name) {
			excluded = append(excluded, t.Name)
			continue
		}
		lt := LoadedTool{Tool: t}
		switch err := checkTool(t); {
		case t.unreadable != nil || err != nil:
			lt.Err = t.unreadable
			if lt.Err == nil {
				lt.Err = err
			}
			lt.Name = text.Cut(lt.Name, maxToolNameBytes)
		case seen[t.Name]:
			lt.Err = errDuplicateTool
		default:
			seen[t.Name] = true
			if err := checkParamHeaders(t.InputSchema, srv.Headers); err != nil {
				lt.Err = err
			}
		}
		out = append(out, lt)
	}
	compileListing(out, compile)
	return out, excluded
}

// schemasPerWorker is how many distinct schemas justify one more
// goroutine: a small schema compiles in well under a millisecond, about
// what starting and joining a goroutine costs in scheduling on a busy
// machine.
const schemasPerWorker = 4

// compileListing compiles the inputSchema of every tool of out not left
// out yet, in place: identical bytes once, distinct ones on a bounded
// number of goroutines (see LoadTools).
func compileListing(out []LoadedTool, compile func(raw []byte) (*toolschema.Schema, error)) {
	// owner[i] is the index of the tool whose compilation tool i takes:
	// itself for the first tool of its bytes, -1 for a tool left out.
	owner := make([]int, len(out))
	var distinct []int
	seed := maphash.MakeSeed()
	first := make(map[uint64]int, len(out))
	for i := range out {
		owner[i] = -1
		if out[i].Err != nil {
			continue
		}
		owner[i] = i
		h := maphash.Bytes(seed, out[i].InputSchema)
		if j, ok := first[h]; ok && bytes.Equal(out[j].InputSchema, out[i].InputSchema) {
			owner[i] = j
			continue
		} else if !ok {
			first[h] = i
		}
		// A hash collision of different bytes compiles both.
		distinct = append(distinct, i)
	}
	// A panic of compile stops its goroutine and is raised again in the
	// caller once all have stopped, as if the caller had compiled alone:
	// on a goroutine of ours no caller could recover it.
	var panicked atomic.Pointer[any]
	work := func(next *atomic.Int64) {
		defer func() {
			if p := recover(); p != nil {
				panicked.CompareAndSwap(nil, &p)
			}
		}()
		for {
			k := int(next.Add(1)) - 1
			if k >= len(distinct) {
				return
			}
			i := distinct[k]
			out[i].Schema, out[i].Err = compile(out[i].InputSchema)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), (len(distinct)+schemasPerWorker-1)/schemasPerWorker) - 1 {
		wg.Go(func() { work(&next) })
	}
	work(&next)
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p)
	}
	for i, j := range owner {
		if j >= 0 && j != i {
			out[i].Schema, out[i].Err = out[j].Schema, out[j].Err
		}
	}
}
