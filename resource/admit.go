package resource

import (
	"errors"
	"fmt"
	"maps"
)

// admitLaunch refuses an agent caller's MCP write that the launch
// allowlist does not admit, so that neither registering and probing nor
// editing a mounted server can lead to an unlisted start. It judges by the
// launch rules themselves (ResolveLaunch, ResolveRemote): an admitted
// server must resolve, and a server that does not resolve cannot be shown
// to be admitted. A write that leaves the launch fields (type, command,
// cwd, env, url) as stored is not judged again. Direct callers, and every
// caller when the host set no allowlist, are not judged: a start still
// is.
func (s *Service) admitLaunch(caller Caller, name string, before *MCPServer, after MCPServer) error {
	if caller.IsDirect() || s.launchEnv.Allow == nil {
		return nil
	}
	if before != nil && sameLaunch(*before, after) {
		return nil
	}
	err := s.resolve(after)
	if err == nil {
		return nil
	}
	field, msg, fix := pointer("data", "mcpServers", name), "the server cannot be launched", "check cwd, command and url"
	var le *LaunchError
	if errors.As(err, &le) {
		field, msg, fix = field+le.Field, le.Message, le.Fix
	}
	return fmt.Errorf("resource: write refused: %s: %s; with a launch allowlist, an agent caller may store only a server the allowlist admits, so one that resolves now (fix: %s): %w",
		field, msg, fix, ErrPermission)
}

// sameLaunch reports whether a and b start or reach the same thing as far
// as the launch rules and the allowlist are concerned.
func sameLaunch(a, b MCPServer) bool {
	return a.Transport() == b.Transport() && a.Command == b.Command && a.Cwd == b.Cwd && a.URL == b.URL && maps.Equal(a.Env, b.Env)
}
