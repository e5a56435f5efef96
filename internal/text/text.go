// Package text bounds the text agt quotes from servers, models and users
// (names, ids, messages) in errors, audits and logs: one rule, one marker.
// A cut never falls inside a UTF-8 sequence, and a bounded text that was
// cut ends with Suffix.
package text

import (
	"unicode"
	"unicode/utf8"
)

// Suffix ends a text Bound cut.
const Suffix = "..."

// Bound returns s when it is at most max bytes long, else its start cut
// by Cut and followed by Suffix (so at most max+len(Suffix) bytes).
func Bound(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return Cut(s, max) + Suffix
}

// Cut returns the longest start of s that is at most max bytes long and
// does not end inside a UTF-8 sequence; s when it fits. A negative max
// reads as 0. Invalid bytes are kept as they are: a cut moves back at
// most utf8.UTFMax-1 bytes, past continuation bytes only.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	cut := max
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	if !utf8.RuneStart(s[cut]) {
		// Continuation bytes with no start before them: not a sequence
		// this cut could split.
		return s[:max]
	}
	return s[:cut]
}

// Unsafe reports the characters agt never prints or writes into a report
// as they are: the C0 controls (line breaks and tabs included), DEL, the
// C1 controls, the line and paragraph separators U+2028 and U+2029, and
// the format characters (Unicode category Cf: bidi overrides and isolates
// U+202A-202E and U+2066-2069, zero-width characters, the BOM). Names,
// descriptions, errors and stderr lines of MCP servers are hostile text:
// they must not move the cursor, retitle or recolour a terminal, reorder
// what it shows, or forge output lines. This is the one rule.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == '\u2028', r == '\u2029':
		return true
	case r < 0xad:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}
