package resource

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Transport types of an MCP server document.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// MCPDocument is the data of an MCP resource: the mcpServers format other
// hosts use, plus cwd, with exactly one entry.
type MCPDocument struct {
	MCPServers map[string]MCPServer `json:"mcpServers"`
}

// MCPServer is how to start or reach one MCP server.
type MCPServer struct {
	// Type is "stdio", "http" or "sse". Empty means stdio when Command is set
	// and http when URL is set.
	Type string `json:"type,omitempty"`

	// Command is a bare name looked up in PATH, or an absolute path (stdio).
	Command string `json:"command,omitempty"`
	// Args are passed as they are, after ${cwd} and ${workspace} expansion;
	// relative paths in them resolve against Cwd.
	Args []string `json:"args,omitempty"`
	// Env is added to the child's environment, after placeholder expansion.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the absolute directory the process runs in.
	Cwd string `json:"cwd,omitempty"`

	// URL is the endpoint of a remote server (http or sse).
	URL string `json:"url,omitempty"`
	// Headers are sent with every request to a remote server. Names the
	// client sets itself are refused (in any case): the MCP request,
	// session and stream headers (MCP-Protocol-Version, Mcp-Method,
	// Mcp-Name, Mcp-Session-Id, Last-Event-ID), those of the HTTP body
	// (Accept, Content-Type, Content-Length, Content-Encoding,
	// Transfer-Encoding), the hop-by-hop ones and Host.
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth, when set, reaches the remote server with OAuth: the tokens
	// come from a login and are kept in a TokenStore, never here. Nil
	// means no OAuth (Headers only).
	OAuth *MCPOAuth `json:"oauth,omitempty"`

	// StartupTimeoutMS bounds start plus handshake; 0 means 30 s.
	StartupTimeoutMS int64 `json:"startup_timeout_ms,omitempty"`
	// ToolTimeoutMS bounds one tool call; 0 means 60 s.
	ToolTimeoutMS int64 `json:"tool_timeout_ms,omitempty"`
	// ProtocolVersion pins the MCP protocol this server is spoken to in:
	// a version ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26",
	// "2024-11-05") or an era ("modern", "legacy": the newest version of
	// the era). A pinned server is not probed, and one
	// that does not speak a modern pin fails to connect rather than fall
	// back. "" (absent) means the client's own choice: the modern
	// revision, falling back to the legacy one (package mcpconn,
	// Protocol eras).
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Description is free text for people.
	Description string `json:"description,omitempty"`

	// EnabledTools selects the server's tools a probe and a Run offer, by
	// name or glob: nil (absent) means every tool, an empty array none.
	// Codex's field of the same name. A pattern is matched against the
	// whole tool name: * matches any run of characters (none included, '/'
	// included: a tool name is not a path), ? exactly one character (a
	// UTF-8 code point), every other character itself, case-sensitively.
	// '[', ']' and '\' are refused rather than read as literals, so that a
	// pattern written for path.Match or a shell never silently matches
	// nothing; so are control and invisible formatting characters (bidi
	// overrides, zero-width characters). A pattern is at most 256 bytes.
	EnabledTools []string `json:"enabled_tools,omitzero"`
	// DisabledTools takes out the tools whose names match one of its names
	// or globs, after EnabledTools; nil or empty takes out none. A tool
	// left out this way is neither listed nor callable (ToolEnabled).
	DisabledTools []string `json:"disabled_tools,omitzero"`

	// Shared lets the Runs of one host that mount this registration at the
	// same revision share one connection (one process for stdio) instead of
	// starting one each (see package mcpconn, Shared connections). false
	// (absent), the default, gives every Run its own. Only for a server
	// that keeps no state of a user's: on a shared connection the calls of
	// different Runs (different users) meet in one process, with its
	// working directory, logins, open pages and memory. An agent caller
	// of the resource Service cannot turn it on (ServiceOptions).
	Shared bool `json:"shared,omitempty"`
}

// Transport returns the effective transport type: Type, or the one implied
// by Command or URL when Type is empty.
func (s MCPServer) Transport() string {
	switch {
	case s.Type != "":
		return s.Type
	case s.URL != "" && s.Command == "":
		return TransportHTTP
	default:
		return TransportStdio
	}
}

// DecodeMCP decodes an MCP resource's data leniently (unknown fields are
// ignored, no rule is checked) and returns its single server entry. It is
// what starting a server needs; ValidateMCP checks the rules for writes.
// Field names match exactly, as in the write rules: "Cwd" is an unknown
// field, not cwd.
func DecodeMCP(data json.RawMessage) (name string, srv MCPServer, err error) {
	const shape = "resource: mcp document is not valid JSON of the mcpServers shape"
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return "", MCPServer{}, fmt.Errorf("%s: %w", shape, err)
	}
	var servers map[string]json.RawMessage
	if raw, ok := top["mcpServers"]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return "", MCPServer{}, fmt.Errorf("%s: mcpServers: %w", shape, err)
		}
	}
	if len(servers) != 1 {
		return "", MCPServer{}, fmt.Errorf("resource: mcp document must hold exactly one entry in mcpServers, found %d", len(servers))
	}
	var rawEntry json.RawMessage
	for n, e := range servers {
		name, rawEntry = n, e
	}
	var entry map[string]json.RawMessage
	if err := json.Unmarshal(rawEntry, &entry); err != nil {
		return "", MCPServer{}, fmt.Errorf("%s: the server entry: %w", shape, err)
	}
	for _, f := range serverFields(&srv) {
		if raw, ok := entry[f.key]; ok {
			if err := json.Unmarshal(raw, f.into); err != nil {
				return "", MCPServer{}, fmt.Errorf("%s: %s must be %s", shape, f.key, f.want)
			}
		}
	}
	return name, srv, nil
}

const toolListWant = "an array of tool names or globs"

// serverField is one field of a server entry: its exact JSON name, where it
// decodes to, and what it must be (for messages).
type serverField struct {
	key  string
	into any
	want string
}

// serverFields lists the fields of s in the order of their names, so
// findings come out sorted by field.
func serverFields(s *MCPServer) []serverField {
	return []serverField{
		{"args", &s.Args, "an array of strings"},
		{"command", &s.Command, "a string"},
		{"cwd", &s.Cwd, "a string"},
		{"description", &s.Description, "a string"},
		{"disabled_tools", &s.DisabledTools, toolListWant},
		{"enabled_tools", &s.EnabledTools, toolListWant},
		{"env", &s.Env, "an object of string values"},
		{"headers", &s.Headers, "an object of string values"},
		{"oauth", &s.OAuth, "an object"},
		{"protocol_version", &s.ProtocolVersion, "a string"},
		{"shared", &s.Shared, "a boolean"},
		{"startup_timeout_ms", &s.StartupTimeoutMS, "an integer number of milliseconds"},
		{"tool_timeout_ms", &s.ToolTimeoutMS, "an integer number of milliseconds"},
		{"type", &s.Type, "a string"},
		{"url", &s.URL, "a string"},
	}
}

// AgentDocument is the typed view of an agent resource's data. Fields the
// type does not know are kept in Extra and written back untouched.
type AgentDocument struct {
	Name string `json:"name,omitempty"`
	// Enabled nil means enabled (the default for a new agent).
	Enabled      *bool    `json:"enabled,omitempty"`
	Manager      bool     `json:"manager,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	MCPs         []Ref    `json:"mcps"`

	// Extra holds the fields this type does not know, as raw JSON.
	Extra map[string]json.RawMessage `json:"-"`
}

// CapabilityResourceManagement lets an agent manage resources.
const CapabilityResourceManagement = "resource_management"

// IsEnabled reports whether the agent's binding is enabled.
func (a AgentDocument) IsEnabled() bool { return a.Enabled == nil || *a.Enabled }

// CanManage reports whether the agent may manage resources: it is a manager
// or has the resource_management capability.
func (a AgentDocument) CanManage() bool {
	if a.Manager {
		return true
	}
	for _, c := range a.Capabilities {
		if c == CapabilityResourceManagement {
			return true
		}
	}
	return false
}

// DecodeAgent decodes an agent resource's data. Field names match exactly,
// as in the write rules: "Manager" is an unknown field kept in Extra, not
// manager.
func DecodeAgent(data json.RawMessage) (AgentDocument, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return AgentDocument{}, fmt.Errorf("resource: agent document is not a JSON object: %w", err)
	}
	if raw == nil {
		return AgentDocument{}, errors.New("resource: agent document is null, want a JSON object")
	}
	var doc AgentDocument
	for _, f := range []struct {
		key  string
		into any
	}{{"name", &doc.Name}, {"enabled", &doc.Enabled}, {"manager", &doc.Manager}, {"capabilities", &doc.Capabilities}, {"mcps", &doc.MCPs}} {
		v, ok := raw[f.key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(v, f.into); err != nil {
			return AgentDocument{}, fmt.Errorf("resource: agent document: %s must be %s: %w", f.key, agentFieldTypes[f.key], err)
		}
		delete(raw, f.key)
	}
	if len(raw) > 0 {
		doc.Extra = raw
	}
	return doc, nil
}

// MarshalJSON writes the known fields and Extra, so unknown fields survive a
// round trip. It does not HTML-escape, as the stored documents are not.
func (a AgentDocument) MarshalJSON() ([]byte, error) {
	out := make(map[string]json.RawMessage, len(a.Extra)+5)
	for k, v := range a.Extra {
		out[k] = v
	}
	type plain AgentDocument
	known, err := encodeJSON(plain(a))
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(known, &fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		out[k] = v
	}
	if a.MCPs == nil {
		out["mcps"] = json.RawMessage("[]")
	}
	return encodeJSON(out)
}
