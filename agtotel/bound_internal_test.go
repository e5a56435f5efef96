package agtotel

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Strings of model or server origin are valid UTF-8 and at most n bytes,
// cut at a character boundary.
func TestBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short", "echo", 8, "echo"},
		{"exact", "abcd", 4, "abcd"},
		{"cut", "abcdef", 4, "abcd"},
		{"cut inside a 2-byte character", "abcé", 4, "abc"},
		{"cut inside a 4-byte character", "ab😀", 5, "ab"},
		{"whole 4-byte character kept", "ab😀c", 6, "ab😀"},
		{"invalid bytes replaced", "a\xffb", 8, "a\uFFFDb"},
		{"invalid bytes then cut", "a\xff\xfebcdef", 5, "a\uFFFDb"},
	}
	for _, tc := range tests {
		got := bound(tc.in, tc.n)
		if got != tc.want || len(got) > tc.n || !utf8.ValidString(got) {
			t.Errorf("%s: bound(%q, %d) = %q, want %q", tc.name, tc.in, tc.n, got, tc.want)
		}
	}
	long := strings.Repeat("é", 1000)
	if got := bound(long, maxAttrBytes); len(got) != maxAttrBytes || !utf8.ValidString(got) {
		t.Errorf("a long name: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
