// Package resource holds the stored registrations of MCP servers and agents,
// and the one service that manages them for both the framework tools
// (resource_write, resource_read, resource_test, agent_mcp_list) and the agt
// command-line tool.
//
//	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
//	if err != nil {
//		return err
//	}
//	defer repo.Close()
//	svc := resource.NewService(repo, nil)
//	_, err = svc.Write(ctx, resource.Direct(), resource.WriteRequest{
//		Ref: "tools/files", Create: true, // {"mcpServers": {"files": {...}}}
//		Server: &resource.MCPServer{Command: "npx", Args: []string{"-y", "server"}, Cwd: "/srv/files"},
//	})
//	_, err = svc.Write(ctx, resource.Direct(), resource.WriteRequest{
//		Ref: "helper", Create: true, Agent: &resource.AgentDocument{MCPs: []resource.Ref{"tools/files"}},
//	})
//
// # References and kinds
//
// A resource is named by a Key: a Kind ("mcp" or "agent"; a Repository
// stores any valid kind) and a Ref, "name" or "category/name":
// each part 1 to 64 of lowercase letters, digits, '.', '_' and '-', starting
// with a letter or digit. There is no mount table: an agent's mounts are the
// references in its own document.
//
// # Revisions
//
// Every stored Resource has a Revision. A new key starts at 1 and every
// write adds one; a revision never repeats for a key, even after delete and
// create, so a form saved against an old resource can never overwrite a new
// one. Read returns the revision; a write that carries ExpectedRevision (or a
// Delete given an expected revision) is refused with *ConflictError, which
// carries the stored revision, when the two differ, and nothing changes.
// Without one the write is blind but still gets a new
// revision. Add and remove are applied inside the Repository's atomic
// Modify, so concurrent writers adding and removing mounts never lose an
// update. A write that changes nothing (only no-op adds and removes, or the
// same data) writes no new revision.
//
// # Callers
//
// Every Service call names its Caller. Direct() is the CLI and a host's
// own admin code: it may manage everything. AgentCaller(ref) is an agent
// calling a framework tool: it may manage resources only if its agent
// document is enabled and says "manager": true or lists the
// "resource_management" capability, read again on every call; it can
// never change manager, capabilities or enabled, nor turn shared on. The
// zero Caller{} has no rights at all. The full rules:
// docs/registrations.md.
//
// # Documents and writes
//
// An "mcp" resource is the mcpServers format other hosts use, plus cwd,
// with exactly one server: a stdio server needs an absolute cwd and a
// command that is a bare name or an absolute path; a remote one an http
// or https url, headers and optional oauth. enabled_tools and
// disabled_tools choose the tools offered, and "shared": true lets Runs
// share one connection. An "agent" resource names its mounts in mcps. A
// WriteRequest creates, patches, or adds and removes list items in one
// transaction; every rule broken is a *DocumentError naming the field. A
// host's own code may give the document typed, in WriteRequest.Server or
// WriteRequest.Agent, instead of as JSON in Data: judged the same way,
// and out of a model's reach.
// Registration stores the configuration only: it installs, starts and
// enables nothing. Test checks a stored resource statically and never
// starts or contacts anything. The full rules: docs/registrations.md.
//
// # Launch allowlist
//
// A LaunchAllowlist (in LaunchEnv.Allow; nil allows all) restricts the
// commands, directories, url origins and env names that may be started or
// contacted. ResolveLaunch and ResolveRemote judge it, for Test, for an
// agent caller's write and for every start alike. The full rules:
// docs/launch.md.
//
// # Secret references and redaction
//
// ${env:NAME} and ${secret:NAME} stay in the stored document as written
// and are resolved at each start, for the registration's reference, by
// LaunchEnv.SecretEnv and LaunchEnv.Secrets; a failure is a *SecretError that never holds
// a value. RedactMCP masks a document's credentials for a reader who must
// not see them, UnmaskMCP puts them back only for the destination they
// were written for, and a connection masks them in what its server sends
// (package mcpconn). The full rules: docs/secrets.md.
//
// # OAuth tokens and task handles
//
// A TokenStore keeps the OAuth credentials of MCP registrations, one
// opaque value per reference with an atomic Update, apart from the
// documents (docs/oauth.md). A TaskStore keeps the handles of the tasks a
// Run's calls started, so a resumed Run collects each result once
// (docs/tasks.md). Packages tokenstoretest and taskstoretest are the
// suites every implementation passes.
//
// # Limits
//
// A request's data and a stored document: ServiceOptions.MaxDocumentBytes
// (default 1 MiB); the other bounds (list items,
// strings, token values, task handles per run, secret names and values,
// tool patterns) are fixed. The table: docs/limits.md.
//
// # Errors
//
// Service errors wrap the sentinels; map them with errors.Is:
//
//	ErrPermission  the caller may not do this: the zero Caller, an agent
//	               that may not manage resources, an agent write that
//	               changes privilege fields or that the launch allowlist
//	               does not admit
//	ErrInvalid     *DocumentError: the request or document breaks a rule
//	               (Field is a JSON pointer, Code a stable name listed in
//	               docs/findings.md, Fix what to do)
//	ErrNotFound    the resource, or a reference put in mcps, is not registered
//	ErrExists      create of a taken reference
//	ErrConflict    *ConflictError: the expected revision is stale
//
// Anything else is a store failure or the context ending. Messages name the
// field they judge and never repeat the value, so they are safe to return to
// a model.
//
// # Concurrency
//
// Service and the Repository implementations are safe for concurrent use.
// Compare-and-set and add/remove run inside one Repository transaction; the
// existence check of new mounts runs just before it, so a mount whose MCP
// resource is deleted at the same moment may be stored, and is then reported
// as unresolved by AgentMCPList and CheckAgent.
package resource
