package resource

import (
	"bytes"
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
	// Cwd is the absolute directory the process runs in (SPEC R2.2).
	Cwd string `json:"cwd,omitempty"`

	// URL is the endpoint of a remote server (http or sse).
	URL string `json:"url,omitempty"`
	// Headers are sent with every request to a remote server.
	Headers map[string]string `json:"headers,omitempty"`

	// StartupTimeoutMS bounds start plus handshake; 0 means 30 s.
	StartupTimeoutMS int64 `json:"startup_timeout_ms,omitempty"`
	// ToolTimeoutMS bounds one tool call; 0 means 60 s.
	ToolTimeoutMS int64 `json:"tool_timeout_ms,omitempty"`
	// Description is free text for people.
	Description string `json:"description,omitempty"`
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
func DecodeMCP(data json.RawMessage) (name string, srv MCPServer, err error) {
	var doc MCPDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", MCPServer{}, fmt.Errorf("resource: mcp document is not valid JSON of the mcpServers shape: %w", err)
	}
	if len(doc.MCPServers) != 1 {
		return "", MCPServer{}, fmt.Errorf("resource: mcp document must hold exactly one entry in mcpServers, found %d", len(doc.MCPServers))
	}
	for n, s := range doc.MCPServers {
		name, srv = n, s
	}
	return name, srv, nil
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

// CapabilityResourceManagement lets an agent manage resources (SPEC R3.6).
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

var agentKnownFields = []string{"name", "enabled", "manager", "capabilities", "mcps"}

// DecodeAgent decodes an agent resource's data.
func DecodeAgent(data json.RawMessage) (AgentDocument, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return AgentDocument{}, fmt.Errorf("resource: agent document is not a JSON object: %w", err)
	}
	if raw == nil {
		return AgentDocument{}, errors.New("resource: agent document is null, want a JSON object")
	}
	var doc AgentDocument
	type plain AgentDocument // no methods: plain decoding of the known fields
	if err := json.Unmarshal(data, (*plain)(&doc)); err != nil {
		return AgentDocument{}, fmt.Errorf("resource: agent document: %w", err)
	}
	for _, f := range agentKnownFields {
		delete(raw, f)
	}
	if len(raw) > 0 {
		doc.Extra = raw
	}
	return doc, nil
}

// MarshalJSON writes the known fields and Extra, so unknown fields survive a
// round trip.
func (a AgentDocument) MarshalJSON() ([]byte, error) {
	out := make(map[string]json.RawMessage, len(a.Extra)+5)
	for k, v := range a.Extra {
		out[k] = v
	}
	type plain AgentDocument
	known, err := json.Marshal(plain(a))
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
	return json.Marshal(out)
}
