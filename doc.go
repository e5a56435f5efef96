// Package agt is the front door of the agt SDK: agent hosts embed it to run
// MCP (Model Context Protocol) tools safely. A Host wires the parts of the
// SDK over one store: the resource repository where MCP servers are
// registered and mounted on agents, the resource service that writes it, the
// Connector that starts and reaches servers, the Prober, and the framework
// tools. Host.NewRun starts a Run, in which every tool call the model makes
// is validated against the tool's JSON Schema, passes a permission policy,
// and is routed to the right server.
//
//	host, err := agt.Open(ctx, dataDir, nil) // a bbolt file in dataDir
//	if err != nil { ... }
//	defer host.Close()
//	r, err := host.NewRun(ctx, "writer", &run.Options{Permission: policy.AutoAllow()})
//	if err != nil { ... }
//	defer r.Close()
//	tools := r.Tools() // what the model may call
//	out, err := r.Execute(ctx, run.Batch{ID: "step-1", Agent: "writer", Calls: calls})
//	for _, res := range out.Results { reply(res.CallID, res.ForModel()) }
//	if n := out.Notice(); n != "" { tellModel(n) }
//
// The Host adds no behaviour of its own: everything it does can be done by
// hand from the sub-packages (see New, and the package docs below), and the
// agt command-line tool (cmd/agt) runs on exactly these services.
//
// # The pipeline
//
//	register      resource.Service.Write(kind "mcp")   stores how to start or reach a
//	                                                    server; starts nothing
//	test          resource.Service.Test                 static checks; starts nothing
//	probe         mcpconn.Prober.Probe                  starts it as a Run would, lists
//	                                                    and compiles its tools, stops it
//	mount         resource.Service.Write(kind "agent")  the agent's mcps list
//	run           Host.NewRun -> run.New                connects the agent's own mounts,
//	                                                    snapshots tools and validators
//	execute       run.Run.Execute, per batch:
//	                1 batch checks (identity, names)   -> reject the whole batch
//	                2 per call: validate -> permission -> interceptors -> execute
//	                3 audit (no argument values)
//	                4 boundary: refresh if the agent changed its own mounts
//
// # Where each rule lives
//
//	development contract      mcpconn/mcptest (the fake server),
//	                          examples/server-contract
//	registration, cwd rules   resource (Service, documents), resource/boltrepo,
//	                          resource/pgrepo, resource.ResolveLaunch (launch rules)
//	test, probe, assembly     resource.Service.Test, mcpconn.Prober,
//	                          resource.Service.AgentMCPList, CheckAgent,
//	                          framework (the tools), cmd/agt
//	usage boundary            run (snapshot of the agent's own mounts), policy
//	tool contract in a Run    run (pipeline, codes, ToolError), toolschema
//	schema compiler           toolschema
//	refresh at the boundary   run (refresh, aliases, fingerprint, Resume)
//	a complete MCP client     mcpconn (Handlers, results, streamable HTTP),
//	                          run (Options.ClientFeatures.Elicit, Sample, Roots, Observe),
//	                          examples/conformance (the official suite)
//
// # Callers, privileges and the launch allowlist
//
// Every resource.Service call names its caller: resource.Direct() for the
// host's own code and the CLI, resource.AgentCaller(ref) for a framework
// tool called inside a Run (the framework tools always pass the Run's
// agent). The zero resource.Caller{} has no rights. An agent caller
// manages resources only if it is a manager or has resource_management,
// and even then cannot change manager, capabilities or enabled of any
// agent unless Options.Service.AgentsMayChangePrivileges says so.
//
// Options.Connector.LaunchEnv.Allow restricts which commands, working
// directories and url origins may be started or contacted (default: all).
// The Host hands it to its Service, so one rule decides the static test,
// the write of an agent caller (refused when outside it) and every start:
// Runs, refreshes, probes, the CLI.
//
// # Stores
//
// Open takes a directory (the bbolt file StoreFile inside it), a bbolt file
// path, or a postgres:// URL once the program imports
// github.com/agtsdk/agt/resource/pgrepo (database/sql style: the package
// registers its scheme, and a program that does not import it links no
// PostgreSQL driver); a keyword=value connection string is refused, never
// made a file of that name. bbolt needs nothing to run but is locked by
// one process at a time: set Options.Bolt.Shared to let the agt CLI work on
// the file while the host runs, at the price of an open and a lock per
// operation. PostgreSQL lets several hosts, on several machines, share
// registrations. New takes any resource.Repository. DefaultStore names the
// store the agt command-line tool uses when given no --db, so that a host
// and its operators can agree on one without configuration.
//
// OAuth tokens of remote MCP servers are credentials, kept apart from the
// registrations in a resource.TokenStore (Host.Tokens): by default
// TokensFile beside a bbolt store (mode 0600, refused when group or others
// may read or write it; always opened per operation, so the CLI can log in
// while the host runs), or pgrepo's agt_oauth_tokens table for a
// postgres:// store. Options.Tokens replaces it.
//
// # Errors
//
// Open fails on the store and on Options (a name in FrameworkTools that
// is not a framework tool), New on Options only. NewRun returns run.New's errors:
// one that names Options.Permission when opts.Permission is nil (there is
// no implicit allow), run.ErrAgentDisabled, resource.ErrNotFound for an
// unknown agent. Resume returns those, and run.ErrFingerprintMismatch
// (its message names what differs) when the agent's configuration changed
// since the checkpoint.
// Inside a Run, a failed tool call is a run.Result with a Code and a nil
// error; Result.ToolError renders the one ToolError format the model sees.
//
// # Concurrency
//
// A Host and the services it returns are safe for concurrent use; many Runs
// may run at once. A Run's connections belong to the Run: close each Run.
// Close the Host after its Runs.
package agt
