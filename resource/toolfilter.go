package resource

import (
	"strings"
	"unicode/utf8"
)

// MaxToolPatternBytes bounds one item of enabled_tools or disabled_tools.
// It is also the longest tool name a pattern is matched against: mcpconn
// leaves a longer name out as over its bound (mcpconn.MaxToolNameBytes is
// the same 256), so matching costs at most 256 x 256 steps per pattern.
const MaxToolPatternBytes = 256

// CheckToolPattern reports why p is not a valid item of enabled_tools or
// disabled_tools ("" when it is). The reason never repeats p.
//
// A pattern is matched against the whole tool name: * matches any run of
// characters (none included, '/' included: a tool name is not a path), ?
// matches exactly one character (a UTF-8 code point), every other
// character matches itself, case-sensitively. '[', ']' and '\' are
// refused rather than read as literals, so that a pattern written for
// path.Match or a shell never silently matches nothing.
func CheckToolPattern(p string) string {
	switch {
	case p == "":
		return "the tool pattern is empty"
	case len(p) > MaxToolPatternBytes:
		return "the tool pattern is longer than 256 bytes"
	case !utf8.ValidString(p):
		return "the tool pattern is not valid UTF-8"
	case strings.ContainsAny(p, `[]\`):
		return `the tool pattern holds [, ] or \: only * and ? are wildcards (no character classes, no escapes)`
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "the tool pattern holds a control character"
		}
	}
	return ""
}

// MatchToolPattern reports whether the tool name matches the pattern p
// (see CheckToolPattern for the syntax). A name longer than
// MaxToolPatternBytes matches nothing, which bounds the cost. The result
// for an invalid pattern is unspecified: check it first.
func MatchToolPattern(p, name string) bool {
	if len(name) > MaxToolPatternBytes {
		return false
	}
	// Iterative matching with one backtrack point (the last *): O(len(p) *
	// len(name)) at worst.
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(name) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				star, mark = pi, ni
				pi++
				continue
			case c == '?':
				pi, ni = pi+1, ni+runeLen(name, ni)
				continue
			case c < utf8.RuneSelf:
				if name[ni] == c {
					pi, ni = pi+1, ni+1
					continue
				}
			default:
				pn := runeLen(p, pi)
				if strings.HasPrefix(name[ni:], p[pi:pi+pn]) {
					pi, ni = pi+pn, ni+pn
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		// Let the last * take one more character and try again.
		mark += runeLen(name, mark)
		pi, ni = star+1, mark
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// ToolEnabled reports whether the registration offers the tool name:
// EnabledTools nil allows every name, an empty EnabledTools none, else a
// name must match one of its patterns; then a name that matches a pattern
// of DisabledTools is taken out. mcpconn.LoadTools applies it, for a probe
// and a Run alike.
func (s MCPServer) ToolEnabled(name string) bool {
	if s.EnabledTools != nil && !matchAny(s.EnabledTools, name) {
		return false
	}
	return !matchAny(s.DisabledTools, name)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if MatchToolPattern(p, name) {
			return true
		}
	}
	return false
}

// runeLen is the length of the character at s[i] (1 for a byte that does
// not start valid UTF-8); i < len(s).
func runeLen(s string, i int) int {
	if s[i] < utf8.RuneSelf {
		return 1
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return n
}
