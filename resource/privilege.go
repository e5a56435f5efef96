package resource

import (
	"fmt"
	"slices"
	"strings"
)

// The privilege fields of an agent document (manager, capabilities,
// enabled) decide what an agent may do. An agent caller changing them, its
// own or another agent's, would grant itself rights the host never gave:
// only a direct caller may, unless the host sets
// ServiceOptions.AgentsMayChangePrivileges. One comparison, of the decoded
// fields before and after the write, judges every path a write can take
// (data patch, add/remove, create, delete and create again).

// privileges is the rights-granting part of an agent document, as the
// service reads it (DecodeAgent: exact field names, enabled absent means
// enabled).
type privileges struct {
	manager bool
	enabled bool
	caps    []string // sorted, without duplicates
}

// defaultPrivileges are those of an agent document without privilege
// fields: enabled, not a manager, no capabilities.
var defaultPrivileges = privileges{enabled: true}

func privilegesOf(data []byte) (privileges, bool) {
	doc, err := DecodeAgent(data)
	if err != nil {
		return privileges{}, false
	}
	caps := slices.Clone(doc.Capabilities)
	slices.Sort(caps)
	return privileges{manager: doc.Manager, enabled: doc.IsEnabled(), caps: slices.Compact(caps)}, true
}

// changedPrivileges names the privilege fields that differ between two
// readable agent documents; all three when either is unreadable.
func changedPrivileges(before privileges, beforeOK bool, after []byte) []string {
	p, ok := privilegesOf(after)
	if !beforeOK || !ok {
		return []string{"manager", "capabilities", "enabled"}
	}
	var changed []string
	if p.manager != before.manager {
		changed = append(changed, "manager")
	}
	if !slices.Equal(p.caps, before.caps) {
		changed = append(changed, "capabilities")
	}
	if p.enabled != before.enabled {
		changed = append(changed, "enabled")
	}
	return changed
}

// checkPrivileges refuses an agent caller's write that changes privilege
// fields, unless the host allows it; before is the stored document (nil
// for a create, judged against the defaults).
func (s *Service) checkPrivileges(caller Caller, key Key, before, after []byte) error {
	if caller.IsDirect() || s.agentsMayChangePrivileges {
		return nil
	}
	prev, ok := defaultPrivileges, true
	if before != nil {
		prev, ok = privilegesOf(before)
	}
	changed := changedPrivileges(prev, ok, after)
	if len(changed) == 0 {
		return nil
	}
	whose := "another agent's"
	if key.Ref == caller.Agent {
		whose = "its own"
	}
	return fmt.Errorf("resource: write refused: agent %s may not change %s (%s): an agent caller cannot change manager, capabilities or enabled of any agent, only a direct caller can (fix: leave %s as stored, and ask the host to change it; a host that wants managers to do it sets ServiceOptions.AgentsMayChangePrivileges): %w",
		caller.Agent, strings.Join(changed, ", "), whose, strings.Join(changed, ", "), ErrPermission)
}

// checkAgentDelete refuses an agent caller's delete of a disabled agent
// (or of one whose document is unreadable): creating it again would
// re-enable it, since a new agent is enabled.
func (s *Service) checkAgentDelete(caller Caller, res Resource) error {
	if caller.IsDirect() || s.agentsMayChangePrivileges {
		return nil
	}
	if p, ok := privilegesOf(res.Data); ok && p.enabled {
		return nil
	}
	return fmt.Errorf("resource: delete refused: agent %s is disabled, and deleting it would let it be created again enabled; an agent caller cannot change enabled of any agent, only a direct caller can (fix: ask the host to delete it; a host that wants managers to do it sets ServiceOptions.AgentsMayChangePrivileges): %w",
		res.Ref, ErrPermission)
}

// checkSharing refuses an agent caller's write that turns sharing on for
// an MCP server (before is the stored server, nil for a create): the calls
// of different users would then meet in one server process, which is the
// host's decision. Keeping shared as stored, or turning it off, is open.
func (s *Service) checkSharing(caller Caller, name string, before *MCPServer, after MCPServer) error {
	if caller.IsDirect() || s.agentsMayChangePrivileges || !after.Shared || (before != nil && before.Shared) {
		return nil
	}
	return fmt.Errorf("resource: write refused: %s/shared: an agent caller cannot turn shared on, only a direct caller can: the calls of different users would meet in one server process (fix: leave shared out or false, and ask the host to share the server; a host that wants managers to do it sets ServiceOptions.AgentsMayChangePrivileges): %w",
		pointer("data", "mcpServers", name), ErrPermission)
}
