package resource

import (
	"github.com/agtsdk/agt/internal/glob"
)

// matchToolPattern reports whether the tool name matches the pattern p
// (MCPServer.EnabledTools gives the syntax; policy.Match uses the same). A
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
