package toolschema

import (
	"regexp"
	"regexp/syntax"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Go's regexp runs in time linear in the input, but the factor is the size
// of the compiled pattern: an unanchored "[a-z]{1,255}x" (512 instructions)
// takes seconds on a string of one megabyte. A pattern (or patternProperties
// key) is therefore matched only where length × program size stays within
// Options.MaxPatternWork; beyond it Validate reports, at the root, that the
// arguments cannot be checked in bounded time. It never guesses a result:
// a wrong "no match" would let values escape patternProperties.

// boundedRegexp is the Regexp the library gets for pattern and
// patternProperties.
type boundedRegexp struct {
	re      *regexp.Regexp
	maxLen  int // longest input matched: MaxPatternWork / program size
	pattern string
}

var _ jsonschema.Regexp = (*boundedRegexp)(nil)

// patternTooCostly is the panic value that stops a validation whose
// pattern match would exceed the bound; Validate recovers it.
type patternTooCostly struct{ pattern string }

func (b *boundedRegexp) MatchString(s string) bool {
	if len(s) > b.maxLen {
		panic(patternTooCostly{b.pattern})
	}
	return b.re.MatchString(s)
}

func (b *boundedRegexp) String() string { return b.pattern }

func boundedRegexpEngine(maxWork int) jsonschema.RegexpEngine {
	return func(pattern string) (jsonschema.Regexp, error) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, err
		}
		return &boundedRegexp{re: re, maxLen: maxWork / programSize(pattern), pattern: pattern}, nil
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
	*errp = rootViolation("", "a string is too long to match against pattern "+strconv.Quote(p.pattern)+" in bounded time (Options.MaxPatternWork "+strconv.Itoa(maxWork)+")")
}
