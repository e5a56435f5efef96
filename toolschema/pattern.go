package toolschema

import (
	"context"
	"io"
	"regexp"
	"regexp/syntax"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

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

// boundedRegexp is the Regexp the library gets for pattern and
// patternProperties.
type boundedRegexp struct {
	re      *regexp.Regexp
	maxLen  int // longest input matched: MaxPatternWork / program size
	prog    int // program size: the work of one input byte
	pattern string
	work    *callWork // nil in a Schema's shared compiled copy
}

var _ jsonschema.Regexp = (*boundedRegexp)(nil)

// patternTooCostly is the panic value that stops a validation whose
// pattern match would exceed the bound; Validate recovers it.
type patternTooCostly struct{ pattern string }

// validationTooCostly stops a validation whose matches together exceed
// Options.MaxValidationWork.
type validationTooCostly struct{}

// validationStopped stops a validation whose context ended.
type validationStopped struct{}

func (b *boundedRegexp) MatchString(s string) bool {
	if len(s) > b.maxLen {
		panic(patternTooCostly{b.pattern})
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
func boundedRegexpEngine(maxWork int, work *callWork) jsonschema.RegexpEngine {
	type compiled struct {
		re  *boundedRegexp
		err error
	}
	seen := map[string]compiled{}
	return func(pattern string) (jsonschema.Regexp, error) {
		if c, ok := seen[pattern]; ok {
			if c.err != nil {
				return nil, c.err
			}
			return c.re, nil
		}
		var c compiled
		if re, err := regexp.Compile(pattern); err != nil {
			c.err = err
		} else {
			prog := programSize(pattern)
			c.re = &boundedRegexp{re: re, maxLen: maxWork / prog, prog: prog, pattern: pattern, work: work}
		}
		seen[pattern] = c
		if c.err != nil {
			return nil, c.err
		}
		return c.re, nil
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
