package glob

import (
	"strings"
	"testing"
)

// Issue 27: the one dialect, at its edges.
func TestMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"", "", true},
		{"", "x", false},
		{"*", "", true},
		{"**", "", true},
		{"?", "", false},
		{"?", "a", true},
		{"?", "ab", false},
		{"?", "é", true},    // one character, two bytes
		{"?", "\xff", true}, // a byte that starts no character is one
		{"??", "é", false},  // not two bytes
		{"*?", "", false},
		{"?*", "ab", true},
		{"note?", "notes", true},
		{"note?", "note", false},
		{"a?c", "a?c", true},   // a literal '?' is matched by the wildcard
		{"a?c", "abc", true},   // and cannot be asked for alone: no escape
		{`a\?c`, "a?c", false}, // '\' is not an escape: it matches itself
		{`a\?c`, `a\?c`, true},
		{"a*", "a*", true},
		{"a*b", "a/x/b", true}, // '/' is an ordinary character
		{"A", "a", false},      // case-sensitive
		{"é*", "éclair", true},
		{"*é", "cafe", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyyd", false},
		{"*a*a*a*b", "aaaaaaaaaaaaaaaa", false},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// Check refuses what internal/text.Unsafe calls unsafe, the one rule: C0
// and C1 controls, DEL, the line and paragraph separators and the
// invisible format characters (bidi overrides, zero-width, BOM).
func TestCheckUnsafe(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"a\nb", "a\x7fb", "a\u0085b", "a\u2028b", "a\u202eb", "a\u200bb", "\ufeffa", "a\u00adb"} {
		if Check(p) == "" {
			t.Errorf("Check(%q) accepted it", p)
		}
	}
	for _, p := range []string{"a b", "é*", "日本?", "a\u00a0b"} {
		if msg := Check(p); msg != "" {
			t.Errorf("Check(%q) = %q, want accepted", p, msg)
		}
	}
}

// Match bounds the name itself (MaxMatchBytes), so no caller needs a
// bound of its own: a longer name matches no pattern, and the longest
// name agt matches, a policy's "mcp:REF:TOOL" source, still matches.
func TestMatchBound(t *testing.T) {
	t.Parallel()
	source := "mcp:" + strings.Repeat("r", 64) + "/" + strings.Repeat("r", 64) + ":" + strings.Repeat("t", MaxNameBytes)
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", strings.Repeat("a", MaxMatchBytes), true},
		{"*", strings.Repeat("a", MaxMatchBytes+1), false},
		{"a*", strings.Repeat("a", MaxMatchBytes+1), false},
		{"mcp:*:*", source, true},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %d bytes) = %v, want %v", tc.pattern, len(tc.name), got, tc.want)
		}
	}
}
