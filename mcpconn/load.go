package mcpconn

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agtsdk/agt/toolschema"
)

// LoadedTool is one listed tool, checked and compiled: the form both a
// probe and a Run take a server's tools in.
type LoadedTool struct {
	Tool
	// Schema is the compiled inputSchema; nil when Err is set.
	Schema *toolschema.Schema
	// Err says why the tool is left out: its name, title or description
	// is over its bound (CheckTool), its name was listed before, or its
	// inputSchema does not compile. Nil when the tool is usable.
	Err error
}

// errDuplicateTool leaves out the second tool of a name.
var errDuplicateTool = errors.New("the server lists this tool name twice; the first one is kept")

// LoadTools is the one way agt turns a listing into usable tools, for a
// probe and a Run alike, so that they never disagree on a tool: each tool
// is checked with CheckTool, a name listed twice keeps its first tool, and
// each inputSchema is compiled with compile (nil means toolschema.Compile
// with the options opts, nil for defaults), on up to GOMAXPROCS goroutines.
// The result keeps the server's order.
func LoadTools(tools []Tool, compile func(raw []byte) (*toolschema.Schema, error), opts *toolschema.Options) []LoadedTool {
	if compile == nil {
		compile = func(raw []byte) (*toolschema.Schema, error) { return toolschema.Compile(raw, opts) }
	}
	out := make([]LoadedTool, len(tools))
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		out[i].Tool = t
		switch err := CheckTool(t); {
		case err != nil:
			out[i].Err = err
			if len(out[i].Name) > MaxToolNameBytes {
				out[i].Name = out[i].Name[:MaxToolNameBytes]
			}
		case seen[t.Name]:
			out[i].Err = errDuplicateTool
		default:
			seen[t.Name] = true
		}
	}
	// One goroutine per four tools at most: fewer are not worth one.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), (len(tools)+3)/4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(out) {
					return
				}
				if out[i].Err == nil {
					out[i].Schema, out[i].Err = compile(out[i].InputSchema)
				}
			}
		}()
	}
	wg.Wait()
	return out
}
