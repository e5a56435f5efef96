// Package findcode is the one home of the codes and severities of agt's
// reports: resource.Finding.Code and .Severity, resource.DocumentError.Code
// and resource.LaunchError.Code. Package resource writes them, mcpconn and
// cmd/agt read them (to map a launch failure, to print a hint).
//
// They are plain documented strings, not exported constants: a host reads
// them from a report or an error (and may compare with the string), but has
// no need to name them in code, and a closed set that only grows with agt's
// own rules is documented better as a table than as 26 exported names. The
// table is docs/findings.md; a test keeps it and All equal.
package findcode

// The severities of a resource.Finding.
const (
	// Error means the document cannot be started or written as is.
	Error = "error"
	// Warning means it works, but something deserves attention.
	Warning = "warning"
)

// The codes: a stable, machine-readable name for each rule.
const (
	NotObject      = "not_object"
	UnknownField   = "unknown_field"
	WrongType      = "wrong_type"
	AllowMCP       = "allow_mcp_removed"
	ServerCount    = "server_count"
	ServerName     = "server_name"
	Transport      = "transport"
	Command        = "command"
	NoAbsoluteCwd  = "no_absolute_cwd"
	Placeholder    = "placeholder"
	URL            = "url"
	Limit          = "limit"
	Reference      = "reference"
	Kind           = "kind"
	Request        = "request"
	CwdMissing     = "cwd_missing"
	CommandMissing = "command_not_found"
	MountMissing   = "mount_not_found"
	AgentMissing   = "agent_not_found"
	AgentDisabled  = "agent_disabled"
	// UnknownCapability: a capability agt does not know; stored, it grants
	// nothing (a warning).
	UnknownCapability = "unknown_capability"
	// ToolPattern: an item of enabled_tools or disabled_tools is not a tool
	// name or glob.
	ToolPattern = "tool_pattern"
	// OAuth: the oauth field of a remote server breaks one of its rules.
	OAuth = "oauth"
	// NotAllowed: the launch allowlist (resource.LaunchEnv.Allow) does not
	// admit the command, directory, url origin or env name.
	NotAllowed = "not_allowed"
)

// All lists every code, in the order of docs/findings.md.
var All = []string{
	NotObject, UnknownField, WrongType, AllowMCP, ServerCount, ServerName,
	Transport, Command, NoAbsoluteCwd, Placeholder, URL, Limit, Reference,
	Kind, Request, CwdMissing, CommandMissing, MountMissing, AgentMissing,
	AgentDisabled, UnknownCapability, ToolPattern, OAuth, NotAllowed,
}
