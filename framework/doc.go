// Package framework provides the framework tools a manager agent uses to
// change its own tool assembly from inside a Run: resource_write,
// resource_read, resource_test, mcp_probe and agent_mcp_list.
//
// They are run.HostTool values with fixed JSON Schemas: the Run compiles them with
// toolschema like any other tool and validates every call before a handler
// runs; the handlers then do their own typed and domain checks and
// call the one resource.Service and the one mcpconn.Prober, the same services
// the agt command-line tool uses. There is no second implementation.
//
//	launch := &resource.LaunchEnv{Allow: allow} // one environment policy and launch allowlist
//	connector := mcpconn.NewConnector(&mcpconn.ConnectorOptions{LaunchEnv: launch})
//	svc := resource.NewService(repo, &resource.ServiceOptions{LaunchEnv: launch})
//	prober := mcpconn.NewProber(repo, connector, nil)
//	r, err := run.New(ctx, &run.Options{
//		Agent:      "ops/manager",
//		Repository: repo,
//		Connector:  connector,
//		Permission: policy.AutoAllow(),
//		HostTools:  framework.Tools(svc, prober, nil),
//	})
//
// # Who sees them
//
// Options.Tools chooses which of the five a host hands out (nil: all).
// Every tool is ManagementOnly: a Run lists and accepts them only when its
// agent is a manager or has the resource_management capability, and
// every call still goes through the Run's Permission. The service
// checks the caller again on every call, against the agent as stored then
// (enabled, manager, capabilities), not as the Run saw it at its start:
// a tool handed to the wrong agent still cannot write, and an agent the
// host disables or takes the rights from while its Run is open is refused
// as unauthorized by all five tools (reads and probes included, since the
// tools are for managers only), with the field that is missing named.
//
// # What a manager still cannot do
//
// The tools call the service as resource.AgentCaller(agent), never as the
// direct caller, so a manager is held to three rules a host's own code
// is not:
//
//   - Privileges stay put. No write by an agent changes manager,
//     capabilities or enabled of any agent, its own included: not by data,
//     not by add or remove, not by creating an agent with them, and not by
//     deleting a disabled agent to create it again enabled. The call fails
//     as unauthorized, naming the field. mcps edits stay open to managers.
//     A host that wants managers to hand out rights sets
//     resource.ServiceOptions.AgentsMayChangePrivileges.
//   - Sharing stays the host's. No write by an agent turns "shared" on
//     for an MCP server (the calls of different users would meet in one
//     process); keeping it as stored or turning it off is open. The same
//     option lets managers do it.
//   - The launch allowlist holds. When the host sets one
//     (mcpconn.ConnectorOptions.LaunchEnv.Allow, given to the Service
//     through its LaunchEnv as above), resource_write refuses, as
//     unauthorized and with the field and what to set, a registration or
//     an edit whose command, cwd or url origin the allowlist does not
//     admit, or that does not resolve. mcp_probe, a Run and the refresh at
//     the batch boundary start only what it admits (their error wraps
//     mcpconn.ErrNotAllowed), so neither registering and probing nor
//     editing a mounted server runs an unlisted command. Env is judged
//     too, since it is code for loaders and interpreters: an agent may
//     add or change only the env names LaunchAllowlist.Env lists (none by
//     default), and without an allowlist none of the start-altering ones
//     (LD_*, BASH_ENV, PYTHON*, PERL5*, NODE_OPTIONS, PATH, ...). Without
//     an allowlist a manager may register and probe any command the host
//     user could run: set one before giving untrusted agents
//     resource_management.
//
// # Refresh
//
// resource_write reports the resource it changed in run.Result.Changed, only
// when it wrote a new revision: a write that leaves the document as it was
// (an add of a present mount, the same data again) reports nothing. When the
// change is to the Run's own agent document or to an MCP resource mounted in
// the Run, the Run refreshes its tools at the end of the batch.
//
// # Values
//
// The framework tools never show the model a credential. resource_read and
// resource_write answer with MCP documents redacted (resource.RedactMCP):
// env and header values, the URL's user info and query (and a path segment
// that looks like a credential or an opaque token), and credential
// arguments (--token X, --api-key=X, -e DB_PASSWORD=X, -H "Authorization:
// Bearer X", values that look like keys) read as
// resource.Mask, "[redacted]". Secret references such as ${secret:github}
// or ${env:API_KEY} are shown as written: they name a secret, the value
// is resolved only when the server starts (package mcpconn) and never
// stored. A manager patches an mcpServers entry (data replaces it whole) by
// sending the read entry back with its masks unchanged: a masked value
// equal to the masked form of the stored one keeps the stored value, and
// the write is then tied to the revision those values came from (a
// conflict if the document changed in between). A mask keeps a stored
// value only where it was written for: header values and the url at the
// url's origin, env values and args for the same launch line (command,
// PATH in env, cwd and the other args). A mask whose destination changed, or that matches no stored value,
// is refused with invalid_arguments naming the field, never stored: send
// the value again, or a reference.
// resource_test and agent_mcp_list show no values; mcp_probe's report
// holds mcpconn's value-free error and, unless Options.ServerStderrToModel,
// no server output (stderr, or a non-JSON line on stdout). Error messages
// and violations name fields, never values.
//
// # Errors
//
// A failure is a run.Result in the one ToolError format: not_found, conflict
// (a stale expected_revision, with the stored revision in the message, or a
// create of a taken reference), unauthorized (the agent may not manage
// resources, or the write changes privilege fields or leaves the launch
// allowlist), invalid_arguments (a document rule, with the field as a
// violation path), deadline_exceeded or canceled (the call's context), or
// internal (the store failed). The removed allow_mcp switch is not in the
// schemas; passing it is refused with a message saying it was removed
// (each tool's run.HostTool.Precheck answers before the schema's generic
// "additional property").
//
// A probe of a server that cannot start, connect or list its tools is not a
// failed call: mcp_probe answers with the report, ok=false and its error, so
// the model can fix the registration. Only a missing reference (not_found), a
// refused caller or the call's own context fail the call.
//
// # Server output
//
// What a stdio server writes on stderr, and a line that is not JSON-RPC
// on its stdout before the handshake, is for its operator: a server may
// print its environment there, echo an argument of an earlier call, or
// print a token in a banner ("starting with token ..."). The answers never
// hold it (no stderr_tail nor stdout_head in the probe report, none in an
// error message) unless the host sets Options.ServerStderrToModel; the
// report's error never holds it either way: it says that the server wrote
// non-JSON on stdout, not what. agt.Host.NewRun sets it from
// run.Options.ServerStderrToModel.
package framework
