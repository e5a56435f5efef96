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
