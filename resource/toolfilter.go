package resource

import (
	"strings"
	"unicode/utf8"

	"github.com/agtsdk/agt/internal/glob"
)

// CheckToolPattern reports why p is not a valid item of enabled_tools or
// disabled_tools ("" when it is). The reason never repeats p.
//
// A pattern is matched against the whole tool name: * matches any run of
// characters (none included, '/' included: a tool name is not a path), ?
// matches exactly one character (a UTF-8 code point), every other
// character matches itself, case-sensitively. '[', ']' and '\' are
// refused rather than read as literals, so that a pattern written for
// path.Match or a shell never silently matches nothing. A pattern is at
// most 256 bytes.
func CheckToolPattern(p string) string {
	switch {
	case p == "":
		return "the tool pattern is empty"
	case len(p) > glob.MaxNameBytes:
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

// matchToolPattern reports whether the tool name matches the pattern p
// (see CheckToolPattern for the syntax; policy.Match uses the same). A
// name longer than 256 bytes matches nothing, which bounds the
// cost. The result for an invalid pattern is unspecified: check it first.
func matchToolPattern(p, name string) bool {
	return len(name) <= glob.MaxNameBytes && glob.Match(p, name)
}

// ToolEnabled reports whether the registration offers the tool name:
// EnabledTools nil allows every name, an empty EnabledTools none, else a
// name must match one of its patterns; then a name that matches a pattern
// of DisabledTools is taken out. mcpconn.Connector.LoadTools applies it, for a probe
// and a Run alike.
func (s MCPServer) ToolEnabled(name string) bool {
	if s.EnabledTools != nil && !matchAny(s.EnabledTools, name) {
		return false
	}
	return !matchAny(s.DisabledTools, name)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if matchToolPattern(p, name) {
			return true
		}
	}
	return false
}
