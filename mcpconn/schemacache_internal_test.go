package mcpconn

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/toolschema"
)

func TestSchemaCache(t *testing.T) {
	t.Parallel()
	c := new(SchemaCache)
	raw := []byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`)
	s1, err := c.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.Compile([]byte(string(raw)))
	if err != nil || s1 != s2 {
		t.Errorf("the same bytes compiled twice: %p %p %v", s1, s2, err)
	}
	// A different byte sequence (even an equivalent schema) is its own
	// entry: the snapshot keeps the exact bytes each server sent.
	s3, err := c.Compile([]byte(`{"properties":{"a":{"type":"integer"}},"type":"object"}`))
	if err != nil || s3 == s1 {
		t.Errorf("different bytes shared an entry")
	}
	if _, err := c.Compile([]byte(`{"type":"string"}`)); err == nil {
		t.Error("a non-object schema compiled")
	}
	if len(c.m) != 2 {
		t.Errorf("%d entries, want 2 (failures are not cached)", len(c.m))
	}
	// Bounded: it starts over when full.
	for i := range schemaCacheMaxEntries + 1 {
		if _, err := c.Compile(fmt.Appendf(nil, `{"type":"object","title":"t%d"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) > schemaCacheMaxEntries {
		t.Errorf("%d entries, over the bound %d", len(c.m), schemaCacheMaxEntries)
	}
}

// blockedIn counts the goroutines whose stack is inside fn.
func blockedIn(fn string) int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), fn)
}

// waitBlocked waits until n goroutines are inside SchemaCache.Compile.
func waitBlocked(t *testing.T, n int) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("%d goroutines to reach the cache", n), func() bool {
		return blockedIn("mcpconn.(*SchemaCache).Compile(") >= n
	})
}

// Issue 18 §2: N goroutines that miss the same bytes at once compile them
// once and share the schema. Not parallel: it counts the goroutines inside
// SchemaCache.Compile, which other tests' Runs would add to.
func TestSchemaCacheConcurrentMissesCompileOnce(t *testing.T) {
	const n = 16
	var calls atomic.Int64
	release := make(chan struct{})
	c := &SchemaCache{compileFunc: func(raw []byte) (*toolschema.Schema, error) {
		calls.Add(1)
		<-release
		return toolschema.Compile(raw, nil)
	}}
	raw := []byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`)
	got := make([]*toolschema.Schema, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := c.Compile(raw)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	waitBlocked(t, n)
	close(release)
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("%d compilations of one schema asked for by %d goroutines at once, want 1", calls.Load(), n)
	}
	for i, s := range got {
		if s == nil || s != got[0] {
			t.Errorf("goroutine %d got %p, want the shared %p", i, s, got[0])
		}
	}
	if c.Len() != 1 || len(c.inflight) != 0 {
		t.Errorf("%d cached, %d in flight after; want 1, 0", c.Len(), len(c.inflight))
	}
}

// A failure reaches the goroutines that waited for it, and is not cached:
// the next ask compiles again. A compilation that panics releases its
// waiters with an error and leaves nothing behind.
func TestSchemaCacheFailureAndPanicAreNotKept(t *testing.T) {
	for _, mode := range []string{"error", "panic"} {
		t.Run(mode, func(t *testing.T) {
			var calls atomic.Int64
			release := make(chan struct{})
			c := &SchemaCache{compileFunc: func(raw []byte) (*toolschema.Schema, error) {
				if calls.Add(1) == 1 {
					<-release
					if mode == "panic" {
						panic("compiler bug")
					}
				}
				return toolschema.Compile(raw, nil)
			}}
			raw := []byte(`{"type":"string"}`) // not an object: fails
			if mode == "panic" {
				raw = []byte(`{"type":"object"}`)
			}
			var leaderErr, waiterErr error
			var leaderPanic any
			var wg sync.WaitGroup
			wg.Go(func() {
				defer func() { leaderPanic = recover() }()
				_, leaderErr = c.Compile(raw)
			})
			waitBlocked(t, 1)
			wg.Go(func() { _, waiterErr = c.Compile(raw) })
			waitBlocked(t, 2)
			close(release)
			wg.Wait()
			switch mode {
			case "error":
				if leaderErr == nil || waiterErr != leaderErr {
					t.Errorf("leader %v, waiter %v; want the one failure shared", leaderErr, waiterErr)
				}
			case "panic":
				if waiterErr != errCompilePanicked {
					t.Errorf("waiter of a panicked compilation: %v", waiterErr)
				}
			}
			// The panic goes on in the goroutine that compiled, not turned
			// into an error there.
			if want := map[string]any{"panic": "compiler bug"}[mode]; leaderPanic != want {
				t.Errorf("the compiling goroutine recovered %v; want %v", leaderPanic, want)
			}
			if c.Len() != 0 || len(c.inflight) != 0 {
				t.Errorf("%d cached, %d in flight after a %s", c.Len(), len(c.inflight), mode)
			}
			_, err := c.Compile(raw)
			if calls.Load() != 2 || (mode == "panic") != (err == nil) {
				t.Errorf("after the %s: %d compilations, err %v; want a new compilation", mode, calls.Load(), err)
			}
		})
	}
}
