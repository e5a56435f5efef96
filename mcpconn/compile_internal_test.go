package mcpconn

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
)

// countingCompile is toolschema.Compile that counts its calls per schema
// and the most calls that ran at once.
type countingCompile struct {
	mu      sync.Mutex
	calls   map[string]int
	running atomic.Int64
	peak    atomic.Int64
}

func (c *countingCompile) compile(raw []byte) (*toolschema.Schema, error) {
	n := c.running.Add(1)
	defer c.running.Add(-1)
	for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
	}
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[string(raw)]++
	c.mu.Unlock()
	return toolschema.Compile(raw, nil)
}

// Issue 18 §2: identical inputSchema bytes in one listing compile once,
// and every tool that lists them gets that one result, failures included.
func TestLoadToolsCompilesIdenticalSchemasOnce(t *testing.T) {
	t.Parallel()
	schemas := []string{
		`{"type":"object","properties":{"n":{"type":"integer"}}}`,
		`{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-z]+$"}}}`,
		`{"type":"string"}`, // fails: not an object
		`{"type":"object"}`,
	}
	var tools []Tool
	for i := range 64 {
		tools = append(tools, Tool{Name: fmt.Sprintf("t%02d", i), InputSchema: json.RawMessage(schemas[i%len(schemas)])})
	}
	var cc countingCompile
	got, _ := loadTools(tools, resource.MCPServer{}, cc.compile, nil)
	want := map[string]int{}
	for _, s := range schemas {
		want[s] = 1
	}
	if diff := cmp.Diff(want, cc.calls); diff != "" {
		t.Errorf("compilations per schema (-want +got):\n%s", diff)
	}
	for i, lt := range got {
		first := got[i%len(schemas)]
		if lt.Name != tools[i].Name || lt.Schema != first.Schema || lt.Err != first.Err {
			t.Errorf("%s: schema %p err %v; want the result of %s (%p, %v)", lt.Name, lt.Schema, lt.Err, first.Name, first.Schema, first.Err)
		}
		if (lt.Err == nil) != (i%len(schemas) != 2) {
			t.Errorf("%s: err %v", lt.Name, lt.Err)
		}
	}
}

// The results are in the server's order and the same on every run,
// whatever the schedule of the compiling goroutines: the same errors
// (text included), the same duplicates left out.
func TestLoadToolsDeterministic(t *testing.T) {
	t.Parallel()
	var tools []Tool
	for i := range 48 {
		schema := fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"integer","minimum":%d}}}`, i, i)
		switch i % 5 {
		case 1:
			schema = fmt.Sprintf(`{"type":"object","properties":{"p%d":{"$ref":"#/$defs/missing%d"}}}`, i, i)
		case 3:
			schema = fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"nonsense"}}}`, i)
		}
		name := fmt.Sprintf("t%d", i)
		if i%7 == 6 {
			name = "dup"
		}
		tools = append(tools, Tool{Name: name, InputSchema: json.RawMessage(schema)})
	}
	summary := func() []string {
		got, _ := loadTools(tools, resource.MCPServer{}, nil, nil)
		var s []string
		for _, lt := range got {
			line := lt.Name + ": ok"
			if lt.Err != nil {
				line = lt.Name + ": " + lt.Err.Error()
			}
			s = append(s, line)
		}
		return s
	}
	want := summary()
	if len(want) != len(tools) || !strings.HasPrefix(want[1], "t1: ") || want[1] == "t1: ok" || !strings.HasPrefix(want[13], "dup: ") {
		t.Fatalf("unexpected results: %q", want)
	}
	for range 10 {
		if diff := cmp.Diff(want, summary()); diff != "" {
			t.Fatalf("LoadTools differs between runs (-first +now):\n%s", diff)
		}
	}
}

// A listing of one or two tools compiles on the caller's goroutine: a
// probe of a small server starts no goroutine to compile.
func TestLoadToolsSmallListingCompilesInline(t *testing.T) {
	t.Parallel()
	for n := 1; n <= schemasPerWorker; n++ {
		var tools []Tool
		for i := range n {
			tools = append(tools, Tool{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","title":"%d"}`, i))})
		}
		var elsewhere atomic.Int64
		compile := func(raw []byte) (*toolschema.Schema, error) {
			buf := make([]byte, 64<<10)
			if !strings.Contains(string(buf[:runtime.Stack(buf, false)]), "TestLoadToolsSmallListingCompilesInline") {
				elsewhere.Add(1)
			}
			return toolschema.Compile(raw, nil)
		}
		got, _ := loadTools(tools, resource.MCPServer{}, compile, nil)
		if len(got) != n || elsewhere.Load() != 0 {
			t.Errorf("%d tools: %d compiled on another goroutine", n, elsewhere.Load())
		}
	}
}

// A hostile listing of many large distinct schemas is bounded in CPU: its
// schemas compile at most GOMAXPROCS at a time, each once. (Its count and
// bytes are bounded while it is read: MaxTools, MaxListBytes, see
// TestEndlessListingIsBounded; each schema by toolschema's limits.)
func TestLoadToolsCompileIsBounded(t *testing.T) {
	t.Parallel()
	var tools []Tool
	for i := range 24 {
		var props []string
		for j := range 40 {
			props = append(props, fmt.Sprintf(`"p%d_%d":{"type":"string","maxLength":%d,"pattern":"^[a-z]{1,%d}$"}`, i, j, j+1, j+1))
		}
		tools = append(tools, Tool{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)})
	}
	var cc countingCompile
	got, _ := loadTools(tools, resource.MCPServer{}, cc.compile, nil)
	for _, lt := range got {
		if lt.Err != nil {
			t.Fatalf("%s: %v", lt.Name, lt.Err)
		}
	}
	if len(cc.calls) != len(tools) {
		t.Errorf("%d distinct schemas compiled, want %d", len(cc.calls), len(tools))
	}
	for s, n := range cc.calls {
		if n != 1 {
			t.Errorf("a schema compiled %d times: %.40s", n, s)
		}
	}
	if peak, bound := cc.peak.Load(), int64(runtime.GOMAXPROCS(0)); peak > bound {
		t.Errorf("%d compilations at once, over GOMAXPROCS %d", peak, bound)
	}
	t.Logf("%d schemas, %d at most at once (GOMAXPROCS %d)", len(tools), cc.peak.Load(), runtime.GOMAXPROCS(0))
}

// A compile function that panics panics in LoadTools's caller, as it did
// when the caller compiled alone, not on a goroutine of LoadTools, where
// no caller could recover it and the whole process ended. Not parallel:
// it sets GOMAXPROCS so that the listing compiles on several goroutines.
func TestLoadToolsPanicReachesTheCaller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var tools []Tool
	for i := range 8 * schemasPerWorker {
		tools = append(tools, Tool{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","title":"%d"}`, i))})
	}
	var calls atomic.Int64
	compile := func([]byte) (*toolschema.Schema, error) {
		calls.Add(1)
		panic("compiler bug")
	}
	got := func() (r any) {
		defer func() { r = recover() }()
		loadTools(tools, resource.MCPServer{}, compile, nil)
		return nil
	}()
	if got != "compiler bug" {
		t.Errorf("LoadTools with a panicking compile: recovered %v; want the panic", got)
	}
	if calls.Load() < 2 {
		t.Errorf("%d compilations; want one per goroutine at least", calls.Load())
	}
}
