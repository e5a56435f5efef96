package contract_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt/contract"
	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// recordTB records what Check reports instead of failing the test that
// runs it; the rest (Context, Log, Helper) is the real test's.
type recordTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordTB) Fatalf(format string, args ...any) {
	r.Errorf("fatal: "+format, args...)
}

// Check's failure path: one error per failing finding, naming the tool
// and the case, in both eras.
func TestCheckFails(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			rec := &recordTB{TB: t}
			rep := contract.Check(rec, driftServer(t, era), &contract.Options{
				Tools: []string{mcptest.ToolDriftLax, mcptest.ToolDriftStrict, mcptest.ToolDriftLeak}, CaseTimeout: 5 * time.Second})
			var failing []string
			for _, f := range rep.Findings {
				if f.Class.Fails() {
					failing = append(failing, f.Tool+": "+f.Case+": "+string(f.Class))
				}
			}
			if len(failing) == 0 || rep.Passed() {
				t.Fatalf("the drift server passed: %+v", rep)
			}
			if len(rec.errors) != len(failing) {
				t.Errorf("%d errors for %d failing findings:\n%s", len(rec.errors), len(failing), strings.Join(rec.errors, "\n"))
			}
			for _, f := range failing {
				n := 0
				for _, e := range rec.errors {
					if strings.HasPrefix(e, "contract: "+f+" at ") {
						n++
					}
				}
				if n != 1 {
					t.Errorf("finding %q: %d errors, want 1", f, n)
				}
			}
		})
	}
}

// A check that ran no case does not pass: no tool planned (the one left
// is not read-only and was not named, or every tool is left out).
func TestCheckNothingRan(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			srv := driftServer(t, era)
			srv.EnabledTools = []string{mcptest.ToolDriftWrite}
			rec := &recordTB{TB: t}
			rep := contract.Check(rec, srv, nil)
			if rep.Passed() {
				t.Errorf("a check that ran nothing passed: %+v", rep)
			}
			if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "no case ran") ||
				!strings.Contains(rec.errors[0], "Options.Tools") || !strings.Contains(rec.errors[0], "Options.IncludeWrites") {
				t.Errorf("errors %q, want one saying no case ran and what to set", rec.errors)
			}
		})
	}
}
