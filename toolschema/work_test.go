package toolschema

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// costlyPatternSchema has an unanchored pattern of about 2000 instructions:
// one match against a string just under MaxPatternWork's length takes about
// a second, and MaxPatternWork alone bounded only each match.
const costlyPatternSchema = `{"properties":{"s":{"type":"array","items":{"type":"string","pattern":"(?:[\\p{L}\\p{N}]{1,1000})x"}}}}`

// costlyPatternArgs is the attack: 31 strings, each as long as one match
// may be, about 1 MB in all (it took 35-47 s to validate).
func costlyPatternArgs(tb testing.TB, s *Schema) []byte {
	tb.Helper()
	re, ok := s.compiled.Properties["s"].Items2020.Pattern.(*boundedRegexp)
	if !ok {
		tb.Fatal("the pattern is not ours")
	}
	one := `"` + strings.Repeat("a", re.maxLen) + `"`
	args := `{"s":[` + strings.Repeat(one+",", 30) + one + `]}`
	if len(args) > defaultMaxArgumentBytes {
		tb.Fatalf("the arguments are %d bytes", len(args))
	}
	return []byte(args)
}

// SPEC R6.7: the matches of one call together are bounded by
// MaxValidationWork. The attack, scaled down to limits a thousand times
// smaller so that it takes milliseconds (with the defaults it is 31 strings
// of 32 KB, which took 35-47 s; TestValidateContextEndsMatching runs it
// whole): 31 strings, each as long as one match may be, get a root
// violation that says the arguments are too expensive to check, without
// echoing them, after two matches. The work is counted, not timed.
func TestValidationWorkBounded(t *testing.T) {
	t.Parallel()
	opts := &Options{MaxPatternWork: defaultMaxPatternWork >> 10, MaxValidationWork: defaultMaxValidationWork >> 10}
	s, err := Compile([]byte(costlyPatternSchema), opts)
	if err != nil {
		t.Fatal(err)
	}
	args := costlyPatternArgs(t, s)
	want := []Violation{{Message: "the arguments are too expensive to check: matching their strings against the schema's patterns takes more than 131072 units of work (Options.MaxValidationWork)"}}
	if diff := cmp.Diff(want, violationsOf(t, s.Validate(args))); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
	// The same values decoded already.
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, violationsOf(t, s.ValidateValue(v))); diff != "" {
		t.Errorf("ValidateValue (-want +got):\n%s", diff)
	}
	// One string less than two matches' worth passes the pattern's
	// verdict through: no "x", so no match.
	two := `{"s":["` + strings.Repeat("a", 30) + `","` + strings.Repeat("a", 30) + `"]}`
	wantNoMatch := []Violation{
		{Path: "/s/0", SchemaPath: "#/properties/s/items/pattern", Message: `must match pattern "(?:[\\p{L}\\p{N}]{1,1000})x"`},
		{Path: "/s/1", SchemaPath: "#/properties/s/items/pattern", Message: `must match pattern "(?:[\\p{L}\\p{N}]{1,1000})x"`},
	}
	small, err := Compile([]byte(costlyPatternSchema), &Options{MaxValidationWork: 2 * 31 * 2002})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantNoMatch, violationsOf(t, small.Validate([]byte(two)))); diff != "" {
		t.Errorf("two strings within MaxValidationWork (-want +got):\n%s", diff)
	}
	three := `{"s":["a","` + strings.Repeat("a", 30) + `","` + strings.Repeat("a", 30) + `"]}`
	if got := violationsOf(t, small.Validate([]byte(three))); len(got) != 1 || !strings.Contains(got[0].Message, "Options.MaxValidationWork") {
		t.Errorf("three strings over MaxValidationWork: %v", got)
	}
}

// The context ends a validation while a pattern is being matched: a
// deadline is honoured within a small fraction of a match, and the error
// is the context's own. The arguments are the whole attack (about a second
// per match here), with no budget to end it first.
func TestValidateContextEndsMatching(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(costlyPatternSchema), &Options{MaxValidationWork: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	args := costlyPatternArgs(t, s)
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		t.Fatal(err)
	}
	const deadline = 700 * time.Millisecond
	for _, tt := range []struct {
		name     string
		validate func(context.Context) error
	}{
		{"ValidateContext", func(ctx context.Context) error { return s.ValidateContext(ctx, args) }},
		{"ValidateValueContext", func(ctx context.Context) error { return s.ValidateValueContext(ctx, v) }},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		start := time.Now()
		err := tt.validate(ctx)
		elapsed := time.Since(start)
		cancel()
		if err != context.DeadlineExceeded {
			t.Errorf("%s with a deadline: %v, want context.DeadlineExceeded itself", tt.name, err)
		}
		t.Logf("%s: deadline %v, returned after %v (over by %v)", tt.name, deadline, elapsed, elapsed-deadline)
		if elapsed > deadline+slack {
			t.Errorf("%s: deadline %v, returned after %v", tt.name, deadline, elapsed)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(200*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	if err := s.ValidateContext(ctx, args); err != context.Canceled {
		t.Errorf("canceled: %v, want context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed > 200*time.Millisecond+slack {
		t.Errorf("canceled after 200ms, returned after %v", elapsed)
	}

	// A context that has ended already stops even the smallest call.
	if err := s.ValidateContext(ctx, []byte(`{}`)); err != context.Canceled {
		t.Errorf("ended context, small arguments: %v", err)
	}
	if err := s.ValidateValueContext(ctx, map[string]any{}); err != context.Canceled {
		t.Errorf("ended context, small value: %v", err)
	}
}

// Calls whose strings could meet much pattern work run on tracked copies
// of the schema, at most maxTwins at once; the others wait, still bounded
// by their context, and every result is right (run with -race).
func TestTrackedValidationConcurrent(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"properties":{"path":{"type":"string","pattern":"^[a-z/]+$"},"content":{"type":"string"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("any text, no pattern applies. ", 30_000)
	valid := []byte(`{"path":"a/b","content":"` + content + `"}`)
	invalid := []byte(`{"path":"A","content":"` + content + `"}`)
	// The pattern never meets content, but the bound known before
	// validating cannot tell the two properties apart.
	if w := s.patternWorkOf(stringBytes(t, s, valid)); w <= untrackedPatternWork {
		t.Fatalf("pattern work bound %d, want a tracked call", w)
	}
	wantInvalid := []Violation{{Path: "/path", SchemaPath: "#/properties/path/pattern", Message: `must match pattern "^[a-z/]+$"`}}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if err := s.Validate(valid); err != nil {
					errs <- "valid: " + err.Error()
					return
				}
				if diff := cmp.Diff(wantInvalid, violationsOf(t, s.Validate(invalid))); diff != "" {
					errs <- "invalid: " + diff
					return
				}
			}
			if g == 0 {
				// A call waiting for a busy copy still ends with its context.
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := s.ValidateContext(ctx, valid); err != context.Canceled {
					errs <- "ended context: " + err.Error()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := len(s.twins.free); n == 0 || n > maxTwins {
		t.Errorf("%d tracked copies, want 1 to %d", n, maxTwins)
	}
}

// Typical calls never need a tracked copy: the bounds known before
// validating keep them on the shared schema.
func TestTypicalCallsUntracked(t *testing.T) {
	t.Parallel()
	s, err := Compile(benchSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]byte{benchValid, benchInvalid} {
		if w := s.patternWorkOf(stringBytes(t, s, args)); w > untrackedPatternWork/100 {
			t.Errorf("pattern work bound %d for %s", w, args)
		}
		perDepth := make([]int, s.limits.depth+1)
		d := decoder{data: args, maxDepth: s.limits.depth, maxNumberLength: maxNumberLength, maxExponent: maxExponent, perDepth: perDepth}
		if _, err := d.document(); err != nil {
			t.Fatal(err)
		}
		if n := s.evaluationsOf(perDepth); n > untrackedEvaluations/10 {
			t.Errorf("evaluations bound %d for %s", n, args)
		}
		_ = s.Validate(args)
	}
	if n := len(s.twins.free); n != 0 {
		t.Errorf("%d tracked copies made", n)
	}
	noPatterns, err := Compile([]byte(`{"properties":{"a":{"type":"string"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if noPatterns.patternCost != nil {
		t.Errorf("a schema without patterns has pattern costs %v", noPatterns.patternCost)
	}
}

// The context also ends a validation that matches no pattern but
// evaluates many subschemas (within MaxEvaluations, about 1.8 million
// here: seconds).
func TestValidateContextEndsEvaluations(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"properties":{"l":{"items":{"allOf":[{"type":"integer"},{"minimum":0},{"maximum":9},{"not":{"const":5}},{"type":"integer"},{"minimum":0},{"maximum":9}]}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	args := []byte(`{"l":[` + strings.Repeat("1,", 199_999) + `1]}`)
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	err = s.ValidateContext(ctx, args)
	elapsed := time.Since(start)
	if err != context.DeadlineExceeded {
		t.Errorf("ValidateContext: %.200v, want context.DeadlineExceeded", err)
	}
	t.Logf("deadline %v, returned after %v (over by %v)", deadline, elapsed, elapsed-deadline)
	if elapsed > deadline+slack {
		t.Errorf("deadline %v, returned after %v", deadline, elapsed)
	}
	// Without a deadline it runs to its verdict, on a tracked copy.
	if err := s.Validate([]byte(`{"l":[` + strings.Repeat("1,", 1999) + `5]}`)); err == nil {
		t.Error("a 5 passed")
	}
	if n := len(s.twins.free); n == 0 {
		t.Error("no tracked copy was made")
	}
}

func stringBytes(t *testing.T, s *Schema, args []byte) []int {
	t.Helper()
	d := decoder{data: args, maxDepth: s.limits.depth, maxNumberLength: maxNumberLength, maxExponent: maxExponent,
		perDepth: make([]int, s.limits.depth+1), strBytes: make([]int, s.limits.depth+1)}
	if _, err := d.document(); err != nil {
		t.Fatal(err)
	}
	return d.strBytes
}

// The bound known before validating covers patterns wherever the schema
// applies them: through references and combinators, on property names
// (patternProperties and propertyNames) and nested values.
func TestPatternWorkBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, args string
	}{
		{"ref and allOf", `{"$defs":{"p":{"pattern":"[ab]{20}c"}},"properties":{"a":{"allOf":[{"$ref":"#/$defs/p"},{"$ref":"#/$defs/p"}]}}}`, `{"a":"xyz"}`},
		{"patternProperties key", `{"patternProperties":{"[ab]{20}c":{}}}`, `{"abababababab":1}`},
		{"propertyNames", `{"propertyNames":{"pattern":"[ab]{20}c"}}`, `{"abababababab":1}`},
		{"nested items", `{"properties":{"l":{"items":{"items":{"pattern":"[ab]{20}c"}}}}}`, `{"l":[["ab","cd"],["ef"]]}`},
		{"dynamic reference", `{"$dynamicAnchor":"n","properties":{"c":{"$dynamicRef":"#n"},"s":{"pattern":"[ab]{20}c"}}}`, `{"c":{"c":{"s":"abab"}}}`},
	}
	for _, tt := range tests {
		s, err := Compile([]byte(tt.schema), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		// The work a tracked copy counts, against the bound.
		tw, err := s.compileTwin()
		if err != nil {
			t.Fatal(err)
		}
		v, err := decodeJSON([]byte(tt.args), 64)
		if err != nil {
			t.Fatal(err)
		}
		*tw.work = callWork{active: true, limit: math.MaxInt / 2}
		_ = s.validateWith(tw.compiled, v)
		bound := s.patternWorkOf(stringBytes(t, s, []byte(tt.args)))
		if tw.work.used == 0 || tw.work.used > bound {
			t.Errorf("%s: work %d, bound %d", tt.name, tw.work.used, bound)
		}
	}
}
