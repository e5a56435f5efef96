package toolschema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	regexp2syntax "github.com/dlclark/regexp2/v2/syntax"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A pattern is ECMA-262 (see pattern_ecma.go). Go's regexp (RE2) runs
// every pattern it can express, in time linear in the input; the others
// (lookaround, backreferences, modifiers, properties Go lacks) run on
// regexp2 in ECMAScript mode, a backtracking engine whose time can grow
// exponentially with the input.
//
// Go's regexp runs in time linear in the input, but the factor is the size
// of the compiled pattern: an unanchored "[a-z]{1,255}x" (512 instructions)
// takes seconds on a string of one megabyte. A pattern (or patternProperties
// key) is therefore matched only where length × program size stays within
// Options.MaxPatternWork; beyond it Validate reports, at the root, that the
// arguments cannot be checked in bounded time. It never guesses a result:
// a wrong "no match" would let values escape patternProperties.
//
// The sum over one call is bounded too (Options.MaxValidationWork), and a
// call's context stops its matching. The validator library gives a Regexp
// no call context, so a call that may match much (see Schema.twins) runs
// on a copy of the compiled schema whose regexps share one callWork.
//
// The backtracking engine's work cannot be known before it runs, so its
// time is counted instead, one unit of work per unitTime: one match may
// run for MaxPatternWork units, and it counts towards MaxValidationWork
// with the time it took. Any call whose strings may meet such a pattern
// is validated on a tracked copy (programOf makes its bound exceed the
// untracked one), where each match runs on its own goroutine while the
// call waits for its result, its context, and the time left of both
// bounds; a match the call stops waiting for ends by itself at its own
// bound (regexp2's MatchTimeout, checked against a clock that ticks every
// 100 ms).

// boundedRegexp is the Regexp the library gets for pattern and
// patternProperties.
type boundedRegexp struct {
	re      *regexp.Regexp
	bt      *regexp2.Regexp // instead of re, for what RE2 cannot run
	btBound time.Duration   // the time of MaxPatternWork, for bt
	maxLen  int             // longest input matched: MaxPatternWork / program size
	prog    int             // program size: the work of one input byte (backtrackingCost for bt)
	pattern string
	work    *callWork // nil in a Schema's shared compiled copy
}

var _ jsonschema.Regexp = (*boundedRegexp)(nil)

// patternTooCostly is the panic value that stops a validation whose
// pattern match would exceed the bound; Validate recovers it.
type patternTooCostly struct {
	pattern   string
	backtrack bool // a match of the backtracking engine ran out of time or stack
}

// validationTooCostly stops a validation whose matches together exceed
// Options.MaxValidationWork.
type validationTooCostly struct{}

// validationStopped stops a validation whose context ended.
type validationStopped struct{}

func (b *boundedRegexp) MatchString(s string) bool {
	if b.bt != nil {
		if b.work == nil || !b.work.active {
			return b.matchInline(s)
		}
		return b.work.matchBacktracking(b, s)
	}
	if len(s) > b.maxLen {
		panic(patternTooCostly{pattern: b.pattern})
	}
	if b.work == nil || !b.work.active {
		return b.re.MatchString(s)
	}
	return b.work.match(b, s)
}

func (b *boundedRegexp) String() string { return b.pattern }

// callWork is the work of the one call a tracked copy of a schema
// validates at a time: the pattern work it may still spend, and when to
// stop.
type callWork struct {
	active      bool            // a call is being validated
	done        <-chan struct{} // its ctx.Done()
	used, limit int
	evaluations int // of subschemas, counted by stopCheck
}

// matchSlice is the work between two looks at the context during one
// match: about a millisecond.
const matchSlice = 1 << 16

func (w *callWork) match(b *boundedRegexp, s string) bool {
	work := (len(s) + 1) * b.prog
	w.used += work
	if w.used > w.limit {
		panic(validationTooCostly{})
	}
	select {
	case <-w.done:
		panic(validationStopped{})
	default:
	}
	if work <= matchSlice {
		return b.re.MatchString(s)
	}
	// A long match reads its input through a reader that ends it early
	// when the context ends; its result is then discarded.
	r := stoppableReader{s: s, done: w.done, every: max(1, matchSlice/b.prog)}
	matched := b.re.MatchReader(&r)
	if r.stopped {
		panic(validationStopped{})
	}
	return matched
}

// stoppableReader reads s rune by rune and reports its end early once done
// is closed, looking at done every so many runes.
type stoppableReader struct {
	s       string
	pos     int
	done    <-chan struct{}
	every   int
	left    int
	stopped bool
}

func (r *stoppableReader) ReadRune() (rune, int, error) {
	if r.left == 0 {
		r.left = r.every
		select {
		case <-r.done:
			r.stopped = true
		default:
		}
	}
	if r.stopped || r.pos >= len(r.s) {
		return 0, 0, io.EOF
	}
	r.left--
	if c := r.s[r.pos]; c < utf8.RuneSelf {
		r.pos++
		return rune(c), 1, nil
	}
	c, size := utf8.DecodeRuneInString(r.s[r.pos:])
	r.pos += size
	return c, size, nil
}

// boundedRegexpEngine compiles patterns for the library; work is nil for
// a Schema's shared compiled copy, else the callWork of a tracked copy.
// One engine serves one library compiler, which is used by one goroutine
// at a time; it compiles each pattern once, as the library asks for every
// pattern twice (checking the schema against its meta-schema, whose
// "format": "regex" compiles it, then compiling the schema) and a schema
// may repeat one.
func boundedRegexpEngine(l limits, work *callWork) jsonschema.RegexpEngine {
	type compiled struct {
		re  *boundedRegexp
		err error
	}
	seen := map[string]compiled{}
	return func(pattern string) (jsonschema.Regexp, error) {
		c, ok := seen[pattern]
		if !ok {
			c.re, c.err = compilePattern(pattern, l, work)
			seen[pattern] = c
		}
		if c.err != nil {
			return nil, c.err
		}
		return c.re, nil
	}
}

// compilePattern compiles a pattern for RE2 when RE2 can run it, else for
// the backtracking engine. A valid ECMA-262 pattern keeps its ECMA-262
// meaning on either (re2Form). A pattern outside ECMA-262 that Go's regexp
// accepts (\pL, (?i), \z, [[:alpha:]], which servers written in Go emit)
// is run as Go reads it; any other is refused.
func compilePattern(pattern string, l limits, work *callWork) (*boundedRegexp, error) {
	b := &boundedRegexp{pattern: pattern, work: work}
	ecma := isECMARegex(pattern)
	form, ok := pattern, true
	if ecma {
		form, ok = re2Form(pattern)
	}
	if ok {
		if re, err := regexp.Compile(form); err == nil {
			b.re, b.prog = re, programSize(form)
			b.maxLen = l.patternWork / b.prog
			return b, nil
		}
	}
	bt, err := regexp2.Compile(pattern, regexp2.ECMAScript|regexp2.Unicode)
	if err != nil || !ecma {
		// The engine that knows ECMA-262 names what is wrong, if it can.
		return nil, &patternError{reason: engineReason(err)}
	}
	// No call waits longer for one match than either bound: a match
	// that nobody waits for any more stops there.
	bt.MatchTimeout = matchTime(min(l.patternWork, l.validationWork))
	b.bt, b.btBound, b.prog = bt, matchTime(l.patternWork), backtrackingCost
	return b, nil
}

// patternError is the error of the regexp engine for a pattern that is
// not a valid ECMA-262 regular expression (as far as RE2 or regexp2 can
// tell: see compilePattern).
type patternError struct{ reason string }

func (e *patternError) Error() string {
	if e.reason == "" {
		return "not a valid ECMA-262 regular expression"
	}
	return "not a valid ECMA-262 regular expression: " + e.reason
}

// engineReason is what regexp2 says is wrong with a pattern, without the
// pattern it quotes.
func engineReason(err error) string {
	var e *regexp2syntax.Error
	if !errors.As(err, &e) {
		return ""
	}
	if len(e.Args) == 0 {
		return e.Code.String()
	}
	return fmt.Sprintf(e.Code.String(), e.Args...)
}

// invalidPatternMessage is the load error's message for a pattern (or a
// patternProperties key) that no engine accepts; err is the engine's.
func invalidPatternMessage(key bool, pattern string, err error) string {
	what := "pattern "
	if key {
		what = "patternProperties key "
	}
	msg := what + strconv.Quote(pattern) + " is not a valid ECMA-262 regular expression (Unicode mode, as JSON Schema asks)"
	var perr *patternError
	if errors.As(err, &perr) && perr.reason != "" {
		msg += ": " + perr.reason
	}
	return msg
}

// unitTime is the time that one unit of Options.MaxPatternWork and
// MaxValidationWork stands for on the backtracking engine, as much as the
// slowest RE2 unit takes.
const unitTime = 10 * time.Nanosecond

// maxMatchTime caps the time bound of one backtracking match, so that the
// engine's deadline arithmetic cannot overflow.
const maxMatchTime = 24 * time.Hour

// backtrackingCost is the program size counted for a pattern of the
// backtracking engine: its work per byte is not known, so any string that
// may meet it makes the call's bound exceed untrackedPatternWork.
const backtrackingCost = untrackedPatternWork

// matchTime is the time of so many units of work.
func matchTime(units int) time.Duration {
	if units >= int(maxMatchTime/unitTime) {
		return maxMatchTime
	}
	return time.Duration(units) * unitTime
}

// timeWork is the work of so much time, at least one unit.
func timeWork(d time.Duration) int {
	return int(d/unitTime) + 1
}

// errEngine stands for a panic of the backtracking engine on a hostile
// pattern or string: the match has no verdict.
var errEngine = errors.New("the regexp engine failed")

// runBacktracking matches s, bounded by the regexp's MatchTimeout and
// backtracking stack; an error means no verdict.
func runBacktracking(bt *regexp2.Regexp, s string) (matched bool, err error) {
	defer func() {
		if recover() != nil {
			matched, err = false, errEngine
		}
	}()
	return bt.MatchString(s)
}

// matchInline matches s where no call is tracked (a Schema's shared copy,
// which calls that may meet such a pattern do not use): bounded by the
// time of MaxPatternWork (or of MaxValidationWork, if less).
func (b *boundedRegexp) matchInline(s string) bool {
	matched, err := runBacktracking(b.bt, s)
	if err != nil {
		panic(patternTooCostly{pattern: b.pattern, backtrack: true})
	}
	return matched
}

type backtrackResult struct {
	matched bool
	err     error
}

// matchBacktracking matches s on its own goroutine and waits for the
// result, the call's context, and the time left of MaxPatternWork and of
// the call's MaxValidationWork; the time taken counts as the call's work.
// A match the call no longer waits for ends at its MatchTimeout, the
// lesser of both bounds.
func (w *callWork) matchBacktracking(b *boundedRegexp, s string) bool {
	select {
	case <-w.done:
		panic(validationStopped{})
	default:
	}
	if w.used >= w.limit {
		panic(validationTooCostly{})
	}
	callLeft := matchTime(w.limit - w.used)
	result := make(chan backtrackResult, 1)
	start := time.Now()
	go func() {
		matched, err := runBacktracking(b.bt, s)
		result <- backtrackResult{matched, err}
	}()
	timer := time.NewTimer(min(b.btBound, callLeft))
	defer timer.Stop()
	select {
	case r := <-result:
		// On a loaded machine the match's own MatchTimeout, the call's
		// context and the timer below can all be due by the time this
		// goroutine runs: the context wins, then the bound that was the
		// lesser, as if the timer had fired.
		select {
		case <-w.done:
			panic(validationStopped{})
		default:
		}
		w.used = satAdd(w.used, timeWork(time.Since(start)))
		if r.err != nil {
			if r.err != errEngine && callLeft < b.btBound {
				panic(validationTooCostly{})
			}
			panic(patternTooCostly{pattern: b.pattern, backtrack: true})
		}
		if w.used > w.limit {
			panic(validationTooCostly{})
		}
		return r.matched
	case <-timer.C:
		select {
		case <-w.done:
			panic(validationStopped{})
		default:
		}
		if callLeft < b.btBound {
			panic(validationTooCostly{})
		}
		panic(patternTooCostly{pattern: b.pattern, backtrack: true})
	case <-w.done:
		panic(validationStopped{})
	}
}

// programSize is the number of instructions of the pattern's program, the
// factor of Go's matching time per input byte (at least 1).
func programSize(pattern string) int {
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 1
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return 1
	}
	return max(len(prog.Inst), 1)
}

// programOf is the program size of a compiled pattern of ours, 0 for nil.
func programOf(re jsonschema.Regexp) int {
	if b, ok := re.(*boundedRegexp); ok {
		return b.prog
	}
	if re != nil {
		return 1
	}
	return 0
}

// recoverPatternBound turns the panic of a bounded pattern into a root
// violation in *errp; any other panic continues.
func recoverPatternBound(errp *error, maxWork int) {
	r := recover()
	if r == nil {
		return
	}
	p, ok := r.(patternTooCostly)
	if !ok {
		panic(r)
	}
	*errp = patternTooCostlyError(p, maxWork)
}

func patternTooCostlyError(p patternTooCostly, maxWork int) error {
	if p.backtrack {
		return rootViolation("", "a string cannot be matched against pattern "+strconv.Quote(p.pattern)+" in bounded time and memory (Options.MaxPatternWork "+strconv.Itoa(maxWork)+": "+matchTime(maxWork).String()+" for a pattern that needs the backtracking engine)")
	}
	return rootViolation("", "a string is too long to match against pattern "+strconv.Quote(p.pattern)+" in bounded time (Options.MaxPatternWork "+strconv.Itoa(maxWork)+")")
}

// recoverValidation is recoverPatternBound for a validation: it also turns
// a validation over Options.MaxValidationWork into a root violation, and one
// stopped by its context into the context's error.
func recoverValidation(errp *error, l limits, ctx context.Context) {
	r := recover()
	switch p := r.(type) {
	case nil:
	case patternTooCostly:
		*errp = patternTooCostlyError(p, l.patternWork)
	case validationTooCostly:
		*errp = tooCostlyError(l)
	case validationStopped:
		*errp = ctx.Err()
	default:
		panic(r)
	}
}

func tooCostlyError(l limits) error {
	return rootViolation("", "the arguments are too expensive to check: matching their strings against the schema's patterns takes more than "+strconv.Itoa(l.validationWork)+" units of work (Options.MaxValidationWork)")
}
