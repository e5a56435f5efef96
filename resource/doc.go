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
//		Kind: resource.KindMCP, Ref: "tools/files", Create: true,
//		Data: json.RawMessage(`{"mcpServers": {"files": {"command": "npx", "args": ["-y", "server"], "cwd": "/srv/files"}}}`),
//	})
//	_, err = svc.Write(ctx, resource.Direct(), resource.WriteRequest{
//		Kind: resource.KindAgent, Ref: "helper", Create: true, Add: map[string][]string{"mcps": {"tools/files"}},
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
// Every Service call names its Caller. Direct() is the CLI and a
// host's own admin code: it may manage everything. AgentCaller(ref) is an
// agent calling a framework tool: it may read, list, test, write and delete
// only if its agent document is enabled and says "manager": true or lists
// the "resource_management" capability; otherwise the call fails with
// ErrPermission, naming what is missing, before the target is read or
// changed. The caller's document is read again on every call, so a host
// that disables an agent, or takes manager or the capability away, while
// its Run is open refuses the agent's next call. Writes (and deletes)
// judge it again inside their own transaction when the Repository is a
// GuardedRepository (boltrepo and pgrepo are): once the host's write that
// takes the rights away has returned, no write of that agent lands, not
// even one under way. With another Repository the read just before the
// write decides, and a write to the caller's own document is judged again
// inside its Modify. Using mounted servers
// needs no capability; changing an assembly does. The zero Caller{} has no
// rights at all: every call with it fails with ErrPermission, so a host
// that forgets to say who calls grants nothing.
//
// Privileges stay put: an agent caller cannot change manager,
// capabilities or enabled of any agent, its own included, by any form of
// write (data, add, remove, a create with them) nor delete a disabled
// agent (it would come back enabled); the write fails with ErrPermission
// naming the field, and nothing changes. It is judged inside the write's
// transaction on the decoded fields before and after, so a restated value
// or a reordered capability list is no change. Only a direct caller
// changes them, unless the host sets
// ServiceOptions.AgentsMayChangePrivileges. mcps edits are not affected.
// By the same rule an agent caller cannot turn shared on for an MCP
// server (the calls of different users would meet in one process); it
// may keep it as stored or turn it off.
//
// # Launch allowlist
//
// A host can restrict what may be started or contacted with a
// LaunchAllowlist: the commands (absolute paths, or bare names as the
// host's PATH resolves them), the directories a cwd must lie in, and the
// url origins (see LaunchAllowlist). It travels in LaunchEnv.Allow, set
// from mcpconn.ConnectorOptions.LaunchEnv.Allow through
// ServiceOptions.LaunchEnv (agt.Host does this), and nil allows all. One
// implementation judges it: ResolveLaunch (stdio) and ResolveRemote
// (http, sse), which package mcpconn starts and reaches servers by, so
//
//   - Test reports a server it does not admit as a not_allowed finding;
//   - a write by an agent caller that registers a server, or changes the
//     launch fields of one (type, command, cwd, env, url), is refused with
//     ErrPermission unless the result resolves and is admitted, with the
//     field and what to set; writes that leave those fields as stored are
//     not judged again. Direct callers may store anything: its start is
//     refused all the same;
//   - every start and contact is refused (mcpconn.ErrNotAllowed).
//
// Env is code for the dynamic loader, shells and interpreters (BASH_ENV,
// PERL5OPT, PYTHONWARNINGS with BROWSER, LD_PRELOAD): an admitted program
// given one runs whatever it names. So an agent caller's write that adds
// or changes an env name is refused with ErrPermission, naming
// /data/mcpServers/NAME/env/VAR, unless the name is admitted: under an
// allowlist only the names LaunchAllowlist.Env lists (nil: none), without
// one any name but the start-altering ones LaunchAllowlist.Env documents.
// Names kept with their stored value are not judged; a direct caller may
// store any env. A start cannot tell who wrote a document, so under an
// allowlist ResolveLaunch refuses every registration that carries a
// start-altering name Env does not list (field /env/VAR), the host's own
// included: a host that sets one for its own server lists it.
//
// # MCP documents
//
// The data of an "mcp" resource is the mcpServers format other hosts use,
// plus cwd, with exactly one server:
//
//	{"mcpServers": {"files": {"type": "stdio", "command": "npx", "args": ["-y", "@x/server", "${cwd}/data"],
//	                          "env": {"ROOT": "${workspace}"}, "cwd": "/srv/files"}}}
//	{"mcpServers": {"search": {"type": "http", "url": "https://mcp.example.com/mcp",
//	                           "headers": {"Authorization": "Bearer ..."}}}}
//
// Write rules (ValidateMCP): type is "stdio", "http"
// (streamable HTTP) or "sse", or absent and implied by command or url. A
// stdio server needs an absolute cwd (the process always runs there,
// whoever mounts it) and a command that is a bare program name looked up in
// PATH or an absolute path: "./x", "bin/x" and "~/x" are refused, because
// they would depend on the directory of whoever starts the server. In args
// and env values, ${cwd} and ${workspace} expand to cwd. A remote server
// needs an http or https url with a host, and may set headers (none the
// client sets itself, such as Mcp-Method, MCP-Protocol-Version,
// Mcp-Session-Id, Accept, Content-Type or Host: MCPServer.Headers lists
// them) and oauth (below). In args,
// env values and header values, ${env:NAME} and ${secret:NAME} are secret
// references and $${ is a literal ${; any other ${...} (a shell's
// ${API_KEY}) is refused rather than passed on literally. Both may set startup_timeout_ms, tool_timeout_ms,
// description, enabled_tools, disabled_tools and shared (below). Fields of the other transport and unknown fields are refused
// with the list of allowed ones. Registration stores the configuration
// only: it installs, starts and enables nothing.
//
// A remote server (http or sse) that requires OAuth says so with "oauth"
// (MCPOAuth); {} is enough when the authorization server supports client
// ID metadata documents or dynamic registration:
//
//	{"mcpServers": {"tracker": {"type": "http", "url": "https://mcp.example.com/mcp",
//	                            "oauth": {"client_id": "agt-host", "client_secret": "${secret:tracker-client}",
//	                                      "scopes": ["issues:read"], "registration": "preregistered"}}}}
//
// Its fields: client_id (a pre-registered client), client_secret and
// private_key (each a single ${secret:NAME} reference: a value written in
// the document is refused), scopes (scope tokens, at most 64; absent means
// the ones the server names), registration ("auto" or absent:
// pre-registered if client_id is set, else client ID metadata document
// where the authorization server supports it, else dynamic; or
// "preregistered", "dynamic", "metadata_document" for that one only),
// client_metadata_url (an https URL with a path), grant
// ("authorization_code" or absent: a person logs in; "client_credentials":
// a machine-to-machine host with client_id and a secret or key;
// "enterprise": enterprise-managed authorization with client_id,
// idp_issuer (https, or http on a loopback host), idp_client_id and an
// optional idp_client_secret reference, fields no other grant takes;
// "workload_identity": workload identity federation with assertion, a
// ${secret:NAME} reference the host's resolver answers with the workload
// identity token at each exchange, a field no other grant takes, and an
// optional client_id), and
// token_endpoint_auth ("client_secret_basic", "client_secret_post",
// "none", or "private_key_jwt" with grant client_credentials), and
// authorization_server (the issuer URL of the authorization server that
// may receive client_secret, private_key or the assertion: https, or http on a loopback
// host; absent means only one on the server's own origin receives them,
// since the server's metadata names the authorization server). Each broken
// rule is a finding naming the field (/mcpServers/NAME/oauth/FIELD, code
// oauth). The field is configuration, shown by reads like the rest: the
// tokens a login obtains are credentials, kept in a TokenStore (Load and
// an atomic Update of opaque bytes, NewMemoryTokenStore in memory), never
// in a document.
//
// enabled_tools and disabled_tools (Codex's names) choose which of the
// server's tools agt offers:
//
//	{"mcpServers": {"notes": {"command": "notes-server", "cwd": "/srv/notes",
//	                          "enabled_tools": ["note_*", "search"], "disabled_tools": ["*_delete"]}}}
//
// Each is an array of tool names or globs, matched against the whole tool
// name, case-sensitively: * matches any run of characters ('/' included),
// ? exactly one character, anything else itself; [, ] and \ are refused
// (no character classes, no escapes), as are an empty item, a control
// character, an item over MaxToolPatternBytes (256) and a repeated item,
// each as a finding naming the item (/mcpServers/NAME/enabled_tools/INDEX,
// code tool_pattern). enabled_tools absent offers every tool, [] none, a
// list the tools matching one of its items; disabled_tools then takes out
// every tool matching one of its items. null is refused in both (leave
// the field out instead). A tool left out this way is neither listed nor
// callable, in a probe and in a Run alike (MCPServer.ToolEnabled, applied
// by mcpconn.LoadTools); it is not an error.
//
// "shared": true lets the Runs of one host that mount the registration
// at the same revision share one connection (one process for a stdio
// server) instead of starting one each (package mcpconn, Shared
// connections, says how). It is false when absent and never on by
// default. Set it only for a server that keeps no state of a user's
// (a filesystem view of fixed directories, fetch, search, time): on a
// shared connection the calls of different Runs, that is of different
// users, meet in one process, so whatever the server keeps (a working
// directory it changes, a login, a browser page, memory of earlier calls)
// is seen by all of them. Any other value than a boolean is refused
// (code wrong_type).
//
// A record saved before cwd was required can still be read and
// modified: an update that keeps its cwd as it was (missing or relative)
// is accepted with a warning in WriteResult.Warnings; one that sets a new
// relative cwd is refused. Test reports such a record as an error that
// says how to set cwd, and starting it fails (package mcpconn).
//
// # Agent documents
//
//	{"name": "helper", "enabled": true, "manager": false,
//	 "capabilities": ["resource_management"], "mcps": ["tools/files", "search"]}
//
// Unknown fields are kept as they are. enabled absent means enabled. A
// field agt does not read and a capability it does not know (only
// resource_management exists) are warnings, not errors: Write returns them
// in WriteResult.Warnings, Test and CheckAgent as warning findings, and a
// near miss ("mpcs", "resource_managment") names what was probably meant.
//
// # Write requests
//
// A WriteRequest is {kind, reference, create, data, add, remove,
// expected_revision}. create=true stores a new resource from
// data (ErrExists if the reference is taken). Otherwise data is a top-level
// patch: a field present replaces the stored one, a field absent keeps it.
// For an agent, "mcps": [...] replaces the whole list, an absent mcps keeps
// it and [] clears it. add and remove name list fields of an agent and the
// single items to add or remove, applied in the same transaction; adding a
// present item and removing an absent one are no-ops reported in
// WriteResult.Noops. Every reference a write puts in mcps must be valid and
// registered as an MCP resource at that moment (ErrNotFound otherwise).
// Sizes are bounded (ServiceOptions.MaxDocumentBytes, 1 MiB by default):
// the data of a request, the items of add and remove (which name at most
// 16 fields), and the stored document, which no write may grow past the
// limit.
// allow_mcp, anywhere in a request, is refused: the MCP master switch was
// removed and mounts decide.
//
// # Test, assembly, check
//
// Test checks a stored resource statically and never starts or
// contacts anything: the write rules, that cwd exists and is a directory,
// that the command resolves and that the URL is well formed. cwd and the
// command are judged by ResolveLaunch, the launch rules package mcpconn
// starts servers by: a bare name is looked up in the PATH the server gets
// (ServiceOptions.LaunchEnv says which host variables it inherits), an
// absolute path must be an executable file. Each Finding
// has a field, a message and a fix. AgentMCPList lists an
// agent's mounts, each with whether it resolves and its revision.
// CheckAgent reports the agent's identity, whether it is
// enabled, and whether every mount resolves and passes Test.
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
//	               (Field is a JSON pointer, Code a stable name, Fix what to do)
//	ErrNotFound    the resource, or a reference put in mcps, is not registered
//	ErrExists      create of a taken reference
//	ErrConflict    *ConflictError: the expected revision is stale
//
// Anything else is a store failure or the context ending. Messages name the
// field they judge and never repeat the value, so they are safe to return to
// a model.
//
// # Secret references and redaction
//
// ${env:NAME} (NAME: letters, digits and _, not starting with a digit) and
// ${secret:NAME} (letters, digits and . _ - /) stay in the stored document
// as written; they are resolved at each start by ResolveLaunch and
// ResolveHeaders, with the host's LaunchEnv bound to the registration's
// reference (LaunchEnv.Bind): ${env:NAME} only for the registrations
// LaunchEnv.SecretEnv binds NAME to (REF=NAME entries), so an
// agent that registers its own server reads no host variable the host did
// not bind to it; ${secret:NAME} by the host's SecretResolver, told the
// reference. A
// failure is a *SecretError naming the field and the reference, never a
// value nor the resolver's error. Service.Test resolves nothing.
//
// RedactMCP masks a document for a reader who must not see credentials (a
// model): every env and header value's literal text, the URL's user info,
// query, fragment and a path segment that looks like a credential or is an
// opaque token (24 or more letters and digits), and in args the values of
// credential flags (--token X, --api-key=X, --password X), of assignments
// to credential names (-e DB_PASSWORD=X), of credential headers (-H
// "Authorization: Bearer X", --header=Cookie:X) and arguments that look
// like one, become Mask; references and ${cwd} stay,
// since they name a secret rather than hold it. UnmaskMCP puts the stored
// values back where a write sends the masked form unchanged, only for the
// destination they were written for: header values and the url for the
// url's origin (URLOrigin), env values and args for the same launch
// line: the command as written, the PATH in env, cwd and the other args
// (a launcher's args say what it runs). A mask whose destination changed, or
// that matches no stored value, is a *DocumentError naming its field: a
// writer cannot send a secret it only saw masked to a server of its own.
// MaskArgs,
// MaskURL, CredentialFlag and LooksLikeSecret are the same rules for other
// displays. CredentialValues lists the credentials a document holds as
// literal text by the same rules (every env value's literal text, the
// values of credential headers and of headers that look like one, what
// MaskArgs hides, the url's user info, credential query values and
// token-like path segments), for a connection that masks them in what its
// server sends back (package mcpconn).
//
// # OAuth tokens
//
// A TokenStore keeps the OAuth credentials of MCP registrations (tokens,
// the client registration obtained for them), one opaque value per
// reference: mcpconn owns their encoding. They are credentials, not
// configuration, so they live apart from the documents: no Repository
// holds them, and nothing of them reaches resource_read, fingerprints or
// errors. Load returns ErrNotFound when there is none; Update is an
// atomic read-modify-write (f gets the current bytes or nil and returns
// the new ones, nil to delete; an error from f writes nothing), so Runs
// refreshing one token at once never lose a write. NewMemoryTokenStore
// keeps them for the process's life; boltrepo.OpenTokenStore keeps them
// in a bbolt file of mode 0600, and a pgrepo.Repo in a table of its own.
// Package tokenstoretest is the suite every implementation passes.
//
// # Task handles
//
// When an MCP server answers a tools/call with a task (a handle polled
// until the work ends), the Run keeps the handle in a TaskStore, so that
// a Run resumed after its host stopped finds the tasks its calls started
// and collects each result once. A TaskHandle names the Run and the call,
// the registration and its revision, the tool, the server's task id, the
// protocol version and when the task was created and expires. boltrepo's
// and pgrepo's Repositories implement TaskStore (the Run finds it with a
// type assertion); NewMemoryTaskStore keeps handles for the process's
// life. SaveTask stores or replaces the handle of (run, call), Tasks
// returns a run's handles sorted by call, DeleteTask removes one (none
// there is not an error). Package taskstoretest is the suite every
// implementation passes.
//
// Bounds: CheckTask, which every store calls before writing, refuses an
// empty field, a run or call ID or tool name over 256 bytes, a task id
// over 1 KiB, a protocol version over 64 bytes, a string that is not
// UTF-8 or holds a NUL byte, an invalid Server reference, a Revision
// below 1, and times outside 1970 to 9999 or an Expires not after
// Created; a run holds at most MaxRunTasks (1024) handles that have not
// expired, and the next distinct call is refused. The errors of a bound
// wrap ErrLimit; none carries a field's value.
//
// Expiry: a handle has expired once its Expires is not after the clock
// of the process that reads or writes it. Expired handles are never
// returned and do not count against MaxRunTasks; every SaveTask deletes
// the expired handles of its run and those of other runs (up to 256 per
// save in boltrepo and pgrepo), so the handles of Runs never resumed are
// dropped after their TTL. Times are kept to the millisecond, in UTC.
//
// # Limits
//
//   - A write request's data, the items of its add and remove, and a stored
//     document: ServiceOptions.MaxDocumentBytes, default
//     DefaultMaxDocumentBytes (1 MiB). add and remove name at most 16 list
//     fields; a list holds at most 1024 items; a string at most 16 KiB; a
//     timeout at most one day (fixed).
//   - Warnings about one document or request: 16, then one that counts the
//     rest (fixed). A near-miss suggestion compares names of at most 64
//     bytes (fixed): the edit distance costs the product of the lengths.
//   - A TokenStore value: MaxTokenBytes (64 KiB); a larger one is refused
//     on write, and a stored one on read; fixed.
//   - A TaskStore: MaxRunTasks (1024) handles per run; a handle's run
//     and call IDs and tool name 256 bytes each, task id 1 KiB, protocol
//     version 64 bytes; fixed. A stored run or handle over them (a
//     damaged or foreign store) is an error on read.
//   - A secret reference's NAME: MaxSecretNameBytes (128); a resolved
//     value: MaxSecretValueBytes (64 KiB); fixed.
//   - enabled_tools and disabled_tools: at most 1024 items each, each at
//     most MaxToolPatternBytes (256); a tool name longer than that matches
//     no item. One match costs at most 256 x 256 steps (about 0.16 ms for
//     the worst pattern, a star followed by a long near-miss; a plain name
//     or a short glob costs well under a microsecond); fixed.
//   - ResolveLaunch (Test's command check) stats cwd and at most one file
//     per PATH entry of the environment the server gets. With a launch
//     allowlist it also resolves the symbolic links of cwd and of each
//     listed directory, and looks each bare command entry up in the
//     host's PATH (at most one stat per entry of it): the host sets
//     the lists, so their length is its own choice.
//
// # Concurrency
//
// Service and the Repository implementations are safe for concurrent use.
// Compare-and-set and add/remove run inside one Repository transaction; the
// existence check of new mounts runs just before it, so a mount whose MCP
// resource is deleted at the same moment may be stored, and is then reported
// as unresolved by AgentMCPList and CheckAgent.
package resource
