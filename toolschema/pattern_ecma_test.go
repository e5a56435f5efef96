package toolschema

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/dlclark/regexp2/v2"
)

// Issue 24 item 1: a valid ECMA-262 pattern that RE2 can express runs on
// RE2 with its ECMA-262 meaning, written out where Go reads it otherwise.
func TestRE2Form(t *testing.T) {
	t.Parallel()
	const sp = `\x{9}-\x{d}\x{20}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}-\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`
	const nonSp = `\x{0}-\x{8}\x{e}-\x{1f}\x{21}-\x{9f}\x{a1}-\x{167f}\x{1681}-\x{1fff}\x{200b}-\x{2027}\x{202a}-\x{202e}\x{2030}-\x{205e}\x{2060}-\x{2fff}\x{3001}-\x{fefe}\x{ff00}-\x{10ffff}`
	for _, tt := range []struct {
		pattern, want string
		ok            bool
	}{
		{`^[a-z]+$`, `^[a-z]+$`, true},
		{`\d\D\w\W\b\B\f\n\r\t\v\x41\/\.\\`, `\d\D\w\W\b\B\f\n\r\t\v\x41\/\.\\`, true},
		{`a.b`, `a[^\n\r\x{2028}\x{2029}]b`, true},
		{`[.]`, `[.]`, true},
		{`\s\S`, `[` + sp + `][^` + sp + `]`, true},
		{`[\s\S]`, `[` + sp + nonSp + `]`, true},
		{`[^\s]`, `[^` + sp + `]`, true},
		{`[a\s-]`, `[a` + sp + `-]`, true},
		{`[\sa\s]`, `[` + sp + `a]`, true},
		{`[[:a:][x]`, `[\[:a:][x]`, true},
		{`[]`, `[^\x{0}-\x{10ffff}]`, true},
		{`[^]`, `[\x{0}-\x{10ffff}]`, true},
		{`\cC\cz\0[\b]`, `\x{3}\x{1a}\x{0}[\x{8}]`, true},
		{`\u0041\u{1F600}\uD83D\uDE00[\u0041-\u{5A}]`, `\x{41}\x{1f600}\x{1f600}[\x{41}-\x{5a}]`, true},
		{`(?<$n>a)(?<\u0062>b)(?:c)(d)`, `(a)(b)(?:c)(d)`, true},
		{`\p{L}\P{Lu}\p{Script=Greek}`, `\p{L}\P{Lu}\p{Script=Greek}`, true},
		{`a{2,3}?|b*`, `a{2,3}?|b*`, true},
		{`[\-\]\\]`, `[\-\]\\]`, true},
		{`(?=a)`, "", false},
		{`(?!a)`, "", false},
		{`(?<=a)`, "", false},
		{`(?<!a)`, "", false},
		{`(a)\1`, "", false},
		{`(?<n>a)\k<n>`, "", false},
		{`(?i:a)`, "", false},
	} {
		if !isECMARegex(tt.pattern) {
			t.Fatalf("%q is not ECMA-262", tt.pattern)
		}
		got, ok := re2Form(tt.pattern)
		if got != tt.want || ok != tt.ok {
			t.Errorf("re2Form(%q) = %q, %v; want %q, %v", tt.pattern, got, ok, tt.want, tt.ok)
		}
	}
}

// The ECMA-262 whitespace of \s is Unicode's Zs and the few characters
// ECMA-262 adds; Go's tables agree with the list.
func TestECMASpace(t *testing.T) {
	t.Parallel()
	in := func(r rune) bool {
		for _, rg := range ecmaSpace {
			if rg[0] <= r && r <= rg[1] {
				return true
			}
		}
		return false
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.Is(unicode.Zs, r) || strings.ContainsRune("\t\n\v\f\r\u2028\u2029\ufeff", r)
		if in(r) != want {
			t.Errorf("U+%04X: in ecmaSpace %v, want %v", r, in(r), want)
		}
	}
}

// defaultLimits are the limits of nil Options.
var defaultLimits = (*Options)(nil).limits()

// ecmaOracle matches s with regexp2 in ECMAScript mode, the engine that
// knows ECMA-262's meaning: the reference for what RE2 is given.
func ecmaOracle(tb testing.TB, pattern, s string) (matched, ok bool) {
	tb.Helper()
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript|regexp2.Unicode)
	if err != nil {
		return false, false
	}
	re.MatchTimeout = time.Second
	m, err := re.MatchString(s)
	return m, err == nil
}

var ecmaMeaningPatterns = []string{
	`^.$`, `^a.b$`, `^\s$`, `^\S$`, `^[\s]$`, `^[^\s]$`, `^[\S]$`, `^[^\S]$`, `^[\s\S]$`, `^[a\s-]+$`,
	`^[[:a:][x]$`, `^[]$`, `^[^]$`, `^a[]?$`, `^\cC$`, `^\0$`, `^[\b]$`, `^\u{1F600}$`, `^\uD83D\uDE00$`,
	`^[\u0041-\u{5A}]+$`, `^(?<$n>a)(?<\u0062>b)$`, `^\w+$`, `^\d+$`, `\bx\b`, `^\p{L}+$`, `^\p{Lu}$`,
	`^[.]$`, `^[^.]$`, `^abc$`, `^\t$`, `^[\d-]+$`, `^[--/]+$`, `[\s\S]{2}`, `^[^\s\S]$`,
	`^\uD800$`, `^[\uD800-\uDFFF]$`, `^[^\uD800-\uDFFF]$`, `^[\cA-\cZ]$`, `^[^\0-\x1f]+$`,
}

var ecmaMeaningSubjects = []string{
	"", "a", "A", "ab", "a\nb", "a\rb", "a\u2028b", "a.b", "\r", "\n", "\u2028", "\u2029", "\u0085",
	"\u00a0", "\v", "\f", "\t", " ", "\ufeff", "\u200b", "\u3000", "\u1680", "\u180e", "\x08", "\x03", "\x00",
	"😀", "\U0001F9B0", "[", "x", ":", "[x", ":x", "AZ", "ab$", "é", "١", "x y", "abc\n", "-", ".", "/", "0-9",
}

// Every pattern RE2 is given matches exactly what ECMA-262 matches.
func TestRE2FormMeaning(t *testing.T) {
	t.Parallel()
	for _, p := range ecmaMeaningPatterns {
		b, err := compilePattern(p, defaultLimits, nil)
		if err != nil {
			t.Errorf("%q: %v", p, err)
			continue
		}
		if b.re == nil {
			t.Errorf("%q: not run by RE2", p)
			continue
		}
		for _, s := range ecmaMeaningSubjects {
			want, ok := ecmaOracle(t, p, s)
			if !ok {
				t.Fatalf("%q: the oracle cannot match %q", p, s)
			}
			if got := b.MatchString(s); got != want {
				t.Errorf("%q (RE2 %q) on %q: %v, ECMA-262 %v", p, b.re, s, got, want)
			}
		}
	}
}

// FuzzRE2Form: for any valid ECMA-262 pattern RE2 is given, RE2 and the
// ECMAScript engine agree on every string.
func FuzzRE2Form(f *testing.F) {
	for _, p := range ecmaMeaningPatterns {
		for _, s := range ecmaMeaningSubjects[:12] {
			f.Add(p, s)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 200 || len(s) > 200 || !isECMARegex(pattern) {
			return
		}
		b, err := compilePattern(pattern, defaultLimits, nil)
		if err != nil || b.re == nil {
			return
		}
		want, ok := ecmaOracle(t, pattern, s)
		if !ok {
			return
		}
		if got := b.MatchString(s); got != want {
			t.Errorf("%q (RE2 %q) on %q: %v, ECMA-262 %v", pattern, b.re, s, got, want)
		}
	})
}
