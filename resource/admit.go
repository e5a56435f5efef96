package resource

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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

// admitEnv refuses an agent caller's MCP write that adds or changes an env
// name the host did not let agents set (LaunchAllowlist.admitsEnv): env
// is code for loaders, shells and interpreters, so an admitted program
// given a new one may run anything. A name kept with its stored value is
// not judged again; removing one is open. Direct callers are not judged:
// a start under an allowlist still is (ResolveLaunch).
func (s *Service) admitEnv(caller Caller, name string, before *MCPServer, after MCPServer) error {
	if caller.IsDirect() {
		return nil
	}
	allow := s.launchEnv.Allow
	for _, k := range slices.Sorted(maps.Keys(after.Env)) {
		if before != nil {
			if v, ok := before.Env[k]; ok && v == after.Env[k] {
				continue
			}
		}
		if allow.admitsEnv(k) {
			continue
		}
		why := "with a launch allowlist, an agent caller may set only the env names its Env lists"
		if allow == nil {
			why = "an agent caller may not set an env name that changes how the program starts (a loader, shell or interpreter variable, or PATH)"
		}
		return fmt.Errorf("resource: write refused: %s: %s (fix: leave the name out or as stored, or ask the host to add it to LaunchAllowlist.Env): %w",
			pointer("data", "mcpServers", name, "env", k), why, ErrPermission)
	}
	return nil
}
