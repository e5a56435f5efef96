package resource

import (
	"github.com/agtsdk/agt/internal/glob"
)

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
		if glob.Match(p, name) {
			return true
		}
	}
	return false
}
