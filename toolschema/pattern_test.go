package toolschema

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/internal/runtest/poll"
)

// A pattern whose program is large, matched against a long string, would
// take seconds (Go's regexp is linear, but with the program size as the
// factor). Such a match is refused with a root violation that names the
// pattern and never the string; short strings, and long strings against
// small patterns, are matched as usual (SPEC R6.2, R6.7).
func TestPatternMatchBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab", 400_000)
	tests := []struct {
		name, schema, args string
		wantBound          bool
		wantValid          bool
	}{
		{"large pattern, long string", `{"properties":{"s":{"pattern":"(a|b){1000}c"}}}`, `{"s":"` + long + `"}`, true, false},
		{"large patternProperties key, long key", `{"patternProperties":{"[ab]{300}c":{"type":"string"}}}`, `{"` + long + `":1}`, true, false},
		{"large pattern, short string", `{"properties":{"s":{"pattern":"(a|b){1000}c"}}}`, `{"s":"` + strings.Repeat("a", 1000) + `c"}`, false, true},
		{"small pattern, long string", `{"properties":{"s":{"pattern":"^(ab)+$"}}}`, `{"s":"` + long + `"}`, false, true},
	}
	for _, tt := range tests {
		s, err := Compile([]byte(tt.schema), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		err = s.Validate([]byte(tt.args))
		var ae *ArgumentError
		gotBound := errors.As(err, &ae) && strings.Contains(ae.Error(), "in bounded time")
		if gotBound != tt.wantBound || (err == nil) != tt.wantValid {
			t.Errorf("%s: Validate = %.200v, want bound %v, valid %v", tt.name, err, tt.wantBound, tt.wantValid)
		}
		if err != nil && strings.Contains(err.Error(), "abab") {
			t.Errorf("%s: the error quotes the argument", tt.name)
		}
	}
	// A larger MaxPatternWork lets the same match run.
	s, err := Compile([]byte(`{"properties":{"s":{"pattern":"[ab]{2}c"}}}`), &Options{MaxPatternWork: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(`{"s":"` + long + `"}`)); err == nil || strings.Contains(err.Error(), "bounded time") {
		t.Errorf("MaxPatternWork 1<<30: Validate = %.200v, want a plain pattern violation", err)
	}
}

// A lookahead makes a pattern need the backtracking engine; these are
// the classic catastrophic patterns behind one.
const (
	nestedQuantifier = `^(?=a)(a+)+$`    // on "aaaa...!": 2^n ways to split the a's
	overlappingAlts  = `^(?=a)(a|aa)*b$` // on "aaaa...": Fibonacci(n) ways
	zodEmojiV4       = `^(\p{Extended_Pictographic}|\p{Emoji_Component})+$`
)

// Issue 24 item 1: RE2 runs the catastrophic patterns themselves in linear
// time; behind a lookahead they run on the backtracking engine, where
// MaxPatternWork bounds each match by time (and the engine's stack bounds
// its memory). The call ends within the bound with a root violation that
// names the pattern and never the string (SPEC R6.7). zod 4's first emoji
// pattern, whose two properties overlap and which stalls a JavaScript
// engine, needs the backtracking engine too, but regexp2 merges its
// alternatives into one class: it ends at once.
func TestBacktrackingMatchBounded(t *testing.T) {
	t.Parallel()
	as := strings.Repeat("a", 5000)
	tests := []struct {
		name, pattern, value string
		opts                 *Options
		backtracks, bounded  bool
	}{
		{"nested quantifier on RE2", `^(a+)+$`, as + "!", nil, false, false},
		{"overlapping alternatives on RE2", `(a|aa)*b`, as, nil, false, false},
		{"nested quantifier, default bound", nestedQuantifier, strings.Repeat("a", 40) + "!", nil, true, true},
		{"nested quantifier", nestedQuantifier, strings.Repeat("a", 40) + "!", &Options{MaxPatternWork: 1 << 24}, true, true},
		{"overlapping alternatives", overlappingAlts, strings.Repeat("a", 60), &Options{MaxPatternWork: 1 << 24}, true, true},
		{"deep backtracking", overlappingAlts, strings.Repeat(as, 20), &Options{MaxPatternWork: 1 << 24}, true, true},
		{"zod 4 emoji", zodEmojiV4, strings.Repeat("\U0001F9B0", 40) + "a", &Options{MaxPatternWork: 1 << 24}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, _ := json.Marshal(map[string]any{"properties": map[string]any{"s": map[string]any{"pattern": tt.pattern}}})
			s, err := Compile(raw, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.compiled.Properties["s"].Pattern.(*boundedRegexp).bt != nil; got != tt.backtracks {
				t.Fatalf("on the backtracking engine %v, want %v", got, tt.backtracks)
			}
			args, _ := json.Marshal(map[string]string{"s": tt.value})
			start := time.Now()
			err = s.Validate(args)
			elapsed := time.Since(start)
			if !tt.bounded {
				// No match, at once.
				if diff := cmp.Diff([]Violation{{Path: "/s", SchemaPath: "#/properties/s/pattern", Message: "must match pattern " + strconv.Quote(tt.pattern)}}, violationsOf(t, err)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				return
			}
			work := defaultMaxPatternWork
			if tt.opts != nil {
				work = tt.opts.MaxPatternWork
			}
			want := []Violation{{Message: "a string cannot be matched against pattern " + strconv.Quote(tt.pattern) + " in bounded time and memory (Options.MaxPatternWork " + strconv.Itoa(work) + ": " + matchTime(work).String() + " for a pattern that needs the backtracking engine)"}}
			if diff := cmp.Diff(want, violationsOf(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			t.Logf("bound %v, returned after %v", matchTime(work), elapsed)
			if elapsed > matchTime(work)+slack {
				t.Errorf("bound %v, returned after %v", matchTime(work), elapsed)
			}
		})
	}
}

// The backtracking engine's matches of one call are bounded together by
// MaxValidationWork, however long each may run: twenty catastrophic
// strings end the call once its budget is spent, with the root violation
// of a too expensive call.
func TestBacktrackingCallBounded(t *testing.T) {
	t.Parallel()
	opts := &Options{MaxPatternWork: 1 << 40, MaxValidationWork: 1 << 25}
	s, err := Compile([]byte(`{"properties":{"l":{"items":{"pattern":"`+nestedQuantifier+`"}}}}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{40, 21} { // each match endless, or each a part of the budget
		one := `"` + strings.Repeat("a", n) + `!"`
		args := []byte(`{"l":[` + strings.Repeat(one+",", 19) + one + `]}`)
		start := time.Now()
		err := s.Validate(args)
		elapsed := time.Since(start)
		want := []Violation{{Message: "the arguments are too expensive to check: matching their strings against the schema's patterns takes more than 33554432 units of work (Options.MaxValidationWork)"}}
		if diff := cmp.Diff(want, violationsOf(t, err)); diff != "" {
			t.Errorf("%d a's (-want +got):\n%s", n, diff)
		}
		t.Logf("%d a's: budget %v, returned after %v", n, matchTime(opts.MaxValidationWork), elapsed)
		if elapsed > matchTime(opts.MaxValidationWork)+slack {
			t.Errorf("%d a's: budget %v, returned after %v", n, matchTime(opts.MaxValidationWork), elapsed)
		}
	}
}

// The context ends a call while the backtracking engine matches: its
// deadline and its cancellation are seen at once, not when the match ends
// (about 0.67 s).
func TestBacktrackingContext(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"properties":{"s":{"pattern":"`+nestedQuantifier+`"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	args := []byte(`{"s":"` + strings.Repeat("a", 60) + `!"}`)
	const deadline = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	if err := s.ValidateContext(ctx, args); err != context.DeadlineExceeded {
		t.Errorf("with a deadline: %v, want context.DeadlineExceeded", err)
	}
	if elapsed := time.Since(start); elapsed > deadline+slack {
		t.Errorf("deadline %v, returned after %v", deadline, elapsed)
	}
	ctx, cancel = context.WithCancel(context.Background())
	timer := time.AfterFunc(100*time.Millisecond, cancel)
	defer timer.Stop()
	start = time.Now()
	if err := s.ValidateContext(ctx, args); err != context.Canceled {
		t.Errorf("canceled: %v, want context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed > 100*time.Millisecond+slack {
		t.Errorf("canceled after 100ms, returned after %v", elapsed)
	}
}

// A match the call stopped waiting for ends by itself at its own bound:
// nothing is left running (not parallel, so that no other test's match
// runs meanwhile; regexp2's clock goroutine stops by itself a second after
// the last deadline).
func TestBacktrackingAbandonedMatchEnds(t *testing.T) {
	s, err := Compile([]byte(`{"properties":{"s":{"pattern":"`+nestedQuantifier+`"}}}`), &Options{MaxPatternWork: 1 << 24})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.ValidateContext(ctx, []byte(`{"s":"`+strings.Repeat("a", 60)+`!"}`)); err != context.DeadlineExceeded {
		t.Errorf("ValidateContext: %v", err)
	}
	// The match goroutine ends by about 0.4 s (its bound and the engine's
	// clock); goleak.Find waits about 0.4 s each time.
	clock := goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock")
	var leak error
	defer func() {
		if leak != nil {
			t.Error(leak)
		}
	}()
	poll.Until(t, "the match goroutine to end", func() bool {
		leak = goleak.Find(clock)
		return leak == nil
	})
}

// Calls whose strings may meet a pattern of the backtracking engine are
// validated on a tracked copy, which bounds the call as a whole; the
// shared copy only bounds each match.
func TestBacktrackingCallsTracked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ schema, args string }{
		{`{"properties":{"s":{"pattern":"(?=a)"}}}`, `{"s":""}`},
		{`{"patternProperties":{"(?=a)":{}}}`, `{"":1}`},
		{`{"properties":{"l":{"items":{"$ref":"#/$defs/p"}}},"$defs":{"p":{"pattern":"(?<!x)y"}}}`, `{"l":["y"]}`},
	} {
		s := mustCompile(t, tt.schema)
		if w := s.patternWorkOf(stringBytes(t, s, []byte(tt.args))); w <= untrackedPatternWork {
			t.Errorf("%s: pattern work bound %d, want a tracked call", tt.schema, w)
		}
		_ = s.Validate([]byte(tt.args))
		if len(s.twins.free) != 1 {
			t.Errorf("%s: %d tracked copies", tt.schema, len(s.twins.free))
		}
	}
	// A match that no call waits for any more stops at the lesser bound.
	b, err := compilePattern(nestedQuantifier, (&Options{MaxPatternWork: 1 << 40, MaxValidationWork: 1 << 25}).limits(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.bt.MatchTimeout != matchTime(1<<25) || b.btBound != matchTime(1<<40) {
		t.Errorf("engine timeout %v, bound of a match %v", b.bt.MatchTimeout, b.btBound)
	}
	// Where no call is tracked, one match is still bounded.
	b, err = compilePattern(nestedQuantifier, (&Options{MaxPatternWork: 1 << 24}).limits(), nil)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p, ok := recover().(patternTooCostly); !ok || !p.backtrack {
				t.Errorf("an untracked catastrophic match: %v", p)
			}
		}()
		b.MatchString(strings.Repeat("a", 60) + "!")
	}()
}

// Issue 24 item 1: a pattern that neither engine takes fails the load as
// what it is, at its place in the schema, with what is wrong when the
// ECMAScript engine can tell, in every dialect and whichever check finds
// it first (the meta-schema's format "regex", or compiling the keyword).
func TestInvalidPatternErrors(t *testing.T) {
	t.Parallel()
	const suffix = " is not a valid ECMA-262 regular expression (Unicode mode, as JSON Schema asks)"
	tests := []struct {
		name, schema, pointer, message string
	}{
		{"unclosed lookbehind", `{"properties":{"a":{"pattern":"(?<=x"}}}`, "/properties/a/pattern", `pattern "(?<=x"` + suffix + ": missing closing )"},
		{"unknown property", `{"properties":{"a":{"pattern":"\\p{Nope}"}}}`, "/properties/a/pattern", `pattern "\\p{Nope}"` + suffix + ": unknown unicode category, script, or property 'Nope'"},
		{"property of strings", `{"properties":{"a":{"pattern":"\\p{RGI_Emoji}"}}}`, "/properties/a/pattern", `pattern "\\p{RGI_Emoji}"` + suffix + ": unknown unicode category, script, or property 'RGI_Emoji'"},
		{"atomic group (not ECMA-262)", `{"properties":{"a":{"pattern":"(?>a)"}}}`, "/properties/a/pattern", `pattern "(?>a)"` + suffix},
		{"bad repeat", `{"$defs":{"d":{"pattern":"a{2,1}"}}}`, "/$defs/d/pattern", `pattern "a{2,1}"` + suffix + ": invalid repeat count"},
		{"patternProperties key", `{"patternProperties":{"(":{}}}`, "/patternProperties/(", `patternProperties key "("` + suffix + ": missing closing )"},
		{"draft-07 pattern", `{"$schema":"` + dialect7 + `","properties":{"a":{"pattern":"(?<=x"}}}`, "/properties/a/pattern", `pattern "(?<=x"` + suffix + ": missing closing )"},
		{"draft-04 pattern", `{"$schema":"` + dialect4 + `","properties":{"a":{"pattern":"(?<=x"}}}`, "/properties/a/pattern", `pattern "(?<=x"` + suffix + ": missing closing )"},
		// Draft-04's meta-schema does not check the keys: compiling does.
		{"draft-04 patternProperties key", `{"$schema":"` + dialect4 + `","patternProperties":{"a/(":{}}}`, "/patternProperties/a~1(", `patternProperties key "a/("` + suffix + ": missing closing )"},
	}
	for _, tt := range tests {
		_, err := Compile([]byte(tt.schema), nil)
		var got *SchemaError
		if !errors.As(err, &got) || got.Err != ErrInvalidSchema {
			t.Fatalf("%s: %v, want ErrInvalidSchema", tt.name, err)
		}
		if diff := cmp.Diff([]string{tt.pointer, tt.message}, []string{got.Pointer, got.Message}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	// Go's syntax outside ECMA-262, as servers written in Go emit it, keeps
	// compiling, with Go's meaning.
	s := mustCompile(t, `{"properties":{"a":{"pattern":"^(?i)\\pL+\\z"}}}`)
	if err := s.Validate([]byte(`{"a":"Ab"}`)); err != nil {
		t.Errorf("Go syntax: %v", err)
	}
}
