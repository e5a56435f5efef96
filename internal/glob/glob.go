// Package glob is agt's one wildcard dialect, used by the tool patterns
// of a registration (resource.MCPServer.ToolEnabled) and by policy.Rules
// (policy.Match). resource.MCPServer.EnabledTools documents it for
// hosts, and Check judges a pattern: '*' matches any run of characters,
// '?' exactly one (a UTF-8 code point, or a byte that does not start
// one), every other character itself; there are no escapes, so a literal
// '?' or '*' in a name is matched by the wildcard.
package glob

import (
	"strings"
	"unicode/utf8"

	"github.com/agtsdk/agt/internal/text"
)

// MaxNameBytes is agt's one bound of a tool name and of a tool pattern
// (256 bytes): resource refuses a longer enabled_tools or disabled_tools
// item and a TaskHandle's longer Tool, and mcpconn leaves out a listed
// tool with a longer name.
const MaxNameBytes = 256

// MaxMatchBytes is Match's own bound of the name (1 KiB): a longer name
// matches no pattern, so a caller needs no bound of its own and one match
// costs at most len(pattern) x 1024 steps. It leaves room for every name
// agt matches: a tool name, an alias, and the "mcp:REF:TOOL" source a
// policy rule may name (at most 390 bytes).
const MaxMatchBytes = 4 * MaxNameBytes

// Check reports why p is not a valid tool pattern (an item of a
// registration's enabled_tools or disabled_tools) ("" when it is). The reason never repeats p.
//
// A pattern is matched against the whole tool name: * matches any run of
// characters (none included, '/' included: a tool name is not a path), ?
// matches exactly one character (a UTF-8 code point), every other
// character matches itself, case-sensitively. '[', ']' and '\' are
// refused rather than read as literals, so that a pattern written for
// path.Match or a shell never silently matches nothing; so are control
// and invisible formatting characters (internal/text.Unsafe). A pattern is
// at most 256 bytes.
func Check(p string) string {
	switch {
	case p == "":
		return "the tool pattern is empty"
	case len(p) > MaxNameBytes:
		return "the tool pattern is longer than 256 bytes"
	case !utf8.ValidString(p):
		return "the tool pattern is not valid UTF-8"
	case strings.ContainsAny(p, `[]\`):
		return `the tool pattern holds [, ] or \: only * and ? are wildcards (no character classes, no escapes)`
	}
	if strings.ContainsFunc(p, text.Unsafe) {
		return "the tool pattern holds a control or invisible formatting character"
	}
	return ""
}

// Match reports whether name matches pattern. A name longer than
// MaxMatchBytes matches nothing. It runs in O(len(pattern) * len(name))
// steps at worst (one backtrack point, the last '*'), never exponential.
func Match(pattern, name string) bool {
	if len(name) > MaxMatchBytes {
		return false
	}
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(name) {
		if pi < len(pattern) {
			switch c := pattern[pi]; {
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
				pn := runeLen(pattern, pi)
				if strings.HasPrefix(name[ni:], pattern[pi:pi+pn]) {
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
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
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
