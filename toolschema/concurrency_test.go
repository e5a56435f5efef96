package toolschema

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// A compiled Schema is shared by every call of a Run: 32 goroutines
// validate valid and invalid arguments at once (run with -race).
func TestConcurrentValidate(t *testing.T) {
	// The regexp2 clock of another test's backtracking match stops by
	// itself (doc.go, Limits).
	defer goleak.VerifyNone(t, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock"))
	s, err := Compile(benchSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := violationsOf(t, s.Validate(benchInvalid))
	if len(want) == 0 {
		t.Fatal("benchInvalid is valid")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if (g+i)%2 == 0 {
					if err := s.Validate(json.RawMessage(benchValid)); err != nil {
						errs <- err.Error()
						return
					}
					continue
				}
				var got []Violation
				if aerr, ok := s.Validate(json.RawMessage(benchInvalid)).(*ArgumentError); ok {
					got = aerr.Violations
				}
				if diff := cmp.Diff(want, got); diff != "" {
					errs <- diff
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
