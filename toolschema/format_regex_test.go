package toolschema

import (
	"encoding/json"
	"strings"
	"testing"
)

// format "regex": the ECMA-262 Pattern grammar in Unicode mode (SPEC R6.6).
func TestFormatRegex(t *testing.T) {
	t.Parallel()
	checkFormat(t, "regex", isECMARegex, []formatCase{
		{"", true},
		{"a|b|", true},
		{"^a$", true},
		{"a*?b+?c??", true},
		{"a{2}b{2,}c{2,3}?d{3,3}", true},
		{"a{99999999999999999999}", true},
		{".\\.\\/\\^\\$\\\\\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|", true},
		{"\\d\\D\\s\\S\\w\\W\\b\\B", true},
		{"\\f\\n\\r\\t\\v\\0\\cA\\cz\\x41\\u0041\\u{1F600}\\u{10FFFF}\\uD83D\\uDE00", true},
		{"\\p{L}\\P{Lu}\\p{Script=Greek}", true},
		{"[]", true},
		{"[^]", true},
		{"[a-z0-9_]", true},
		{"[-a][a-][\\d-]", true},
		{"[\\b\\-\\]\\\\]", true},
		{"[\\uD83D\\uDE00-\\u{1F64F}]", true},
		{"[a-a]", true},
		{"(a)(?:b)(?<n>c)\\1\\2\\k<n>", true},
		{"\\1(a)", true}, // backreferences count every group in the pattern
		{"\\k<n>(?<n>a)", true},
		{"(?<$a_1>x)(?<\\u0062>y)\\k<b>", true},
		{"(?<a>x)|(?<a>y)", true}, // ES2025: never both participate
		{"(?:(?<a>x)|(?<a>y))z", true},
		{"(?=a)(?!b)(?<=c+)(?<!d)e", true},
		{"(?i:a)(?-m:b)(?is-m:c)", true},

		{"\\a", false},
		{"\\-", false},
		{"\\k", false},
		{"\\k<b>", false},
		{"\\2(a)", false},
		{"(?:a)\\1", false},
		{"\\00", false},
		{"\\c1", false},
		{"\\x4", false},
		{"\\u004", false},
		{"\\u{110000}", false},
		{"\\u{}", false},
		{"\\p{}", false},
		{"\\p", false},
		{"\\", false},
		{"[\\B]", false},
		{"[\\1]", false},
		{"[\\k]", false},
		{"[\\c1]", false},
		{"[z-a]", false},
		{"[\\d-a]", false},
		{"[a-\\d]", false},
		{"[a", false},
		{"]", false},
		{"{", false},
		{"}", false},
		{"a{", false},
		{"a{,2}", false},
		{"a{2,1}", false},
		{"a{2}{3}", false},
		{"a**", false},
		{"*a", false},
		{"^*", false},
		{"\\b+", false},
		{"(?=a)*", false},
		{"(?<=a)?", false},
		{"(", false},
		{")", false},
		{"(a))", false},
		{"(?<a>x)(?<a>y)", false},
		{"(?<a>(?<a>x))", false},
		{"((?<a>x)|y)(?<a>z)", false},
		{"(?<1a>x)", false},
		{"(?<>x)", false},
		{"(?<a x)", false},
		{"(?P<n>x)", false},
		{"(?P=n)", false},
		{"(?#c)", false},
		{"(?i)a", false},
		{"(?ims)a", false},
		{"(?ii:a)", false},
		{"(?i-i:a)", false},
		{"(?-:a)", false},
		{"(?x:a)", false},
		{"a\xff", false},
		{strings.Repeat("(", 200) + strings.Repeat(")", 200), true},
		{strings.Repeat("(", maxRegexNesting+1) + strings.Repeat(")", maxRegexNesting+1), false},
	})
}

// SPEC R6.6: the ECMA-262 check of format "regex" applies only where
// format is asserted.
func TestFormatRegexOnlyWhereAsserted(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		dialect string
		value   string
		valid   bool
	}{
		{dialect7, "(?<=a)b", true}, // RE2 has no lookbehind; ECMA-262 does
		{dialect7, "\\a", false},    // RE2 accepts \a; ECMA-262 in Unicode mode does not
		{dialect6, "(?i)a", false},
		{dialect4, "[]", true},
		{dialect2019, "\\a", true},
		{dialect2020, "(", true},
	} {
		s := mustCompile(t, `{"$schema":"`+tt.dialect+`","properties":{"r":{"format":"regex"}}}`)
		args, _ := json.Marshal(map[string]string{"r": tt.value})
		if err := s.Validate(args); (err == nil) != tt.valid {
			t.Errorf("%s: %q: Validate = %v, want valid=%v", tt.dialect, tt.value, err, tt.valid)
		}
	}
}

// Hostile patterns: one linear pass, bounded nesting, no stack growth.
func TestFormatRegexLongInputs(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	for _, in := range []string{
		strings.Repeat("(", n),
		strings.Repeat("()", n/2),
		strings.Repeat("(?<a>)|", n/7),
		strings.Repeat("(?:(?<a>)|(?<a>))", n/17),
		strings.Repeat("[", n),
		strings.Repeat("a{1}", n/4),
		strings.Repeat("\\1", n/2),
		// Many names deep inside groups, and one name defined again and
		// again in deep alternatives: the duplicate-name check must not
		// rescan the nesting for each.
		strings.Repeat("(?:", maxRegexNesting-1) + strings.Repeat("(?<a>)|", n/7) + strings.Repeat(")", maxRegexNesting-1),
		strings.Repeat(strings.Repeat("(?:", maxRegexNesting-1)+"(?<a>)"+strings.Repeat(")", maxRegexNesting-1)+"|", n/(6*maxRegexNesting)),
	} {
		_ = isECMARegex(in)
	}
}
