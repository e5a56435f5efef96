package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 27: one bound for quoted text, which never cuts inside a UTF-8
// sequence and marks a cut with one suffix.
func TestBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"", 0, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc..."},
		{"abcd", 0, "..."},
		{"abcd", -1, "..."},
		{"aé", 2, "a..."}, // é is two bytes: not cut in half
		{"aé", 3, "aé"},
		{"a日本", 3, "a..."}, // three-byte characters
		{"a日本", 4, "a日..."},
		{"a😀b", 4, "a..."}, // a four-byte character
		{"a😀b", 5, "a😀..."},
		{"ab\xff\xfe", 3, "ab\xff..."}, // invalid bytes are bytes
		{"\x80\x80\x80\x80\x80", 4, "\x80\x80\x80\x80..."},
	} {
		if got := Bound(tc.s, tc.max); got != tc.want {
			t.Errorf("Bound(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}

// Every cut of valid text is valid text, no longer than asked.
func TestCutKeepsCharacters(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("aé日😀", 8)
	for max := 0; max <= len(s)+1; max++ {
		got := Cut(s, max)
		if len(got) > max || !utf8.ValidString(got) || !strings.HasPrefix(s, got) || len(got) < max-utf8.UTFMax+1 {
			t.Errorf("Cut(s, %d) = %q (%d bytes)", max, got, len(got))
		}
	}
}

// The one rule of characters never shown as they are.
func TestUnsafe(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0, '\t', '\n', '\r', 0x1b, 0x7f, 0x80, 0x85, 0x9f, '\u2028', '\u2029',
		'\u202a', '\u202e', '\u2066', '\u2069', '\u200b', '\ufeff', '\u00ad'} {
		if !Unsafe(r) {
			t.Errorf("Unsafe(%U) = false", r)
		}
	}
	for _, r := range []rune{' ', 'a', '~', 0xa0, 'é', '日', '😀', '\u2027', '\u202f'} {
		if Unsafe(r) {
			t.Errorf("Unsafe(%U) = true", r)
		}
	}
}
