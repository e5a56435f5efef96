// Package text bounds the text agt quotes from servers, models and users
// (names, ids, messages) in errors, audits and logs: one rule, one marker.
// A cut never falls inside a UTF-8 sequence, and a bounded text that was
// cut ends with Suffix.
package text

import "unicode/utf8"

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
