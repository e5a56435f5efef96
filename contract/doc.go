// Package contract checks that an MCP server does what its tools' input
// schemas declare: it derives cases from each tool's schema, calls the
// real server with them through agt's connection path, and reports where
// the server's answers disagree with the schema.
//
//	c := mcpconn.NewConnector(nil) // or the host's: same launch, secrets, allowlist
//	rep, err := contract.Run(ctx, c, "stock", srv, &contract.Options{
//		Plan: func(p contract.Plan) { contract.WritePlan(os.Stderr, p) },
//	})
//	if err != nil {
//		return err // could not connect or list
//	}
//	contract.WriteTable(os.Stdout, rep)
//	if !rep.Passed() { ... } // laxer, stricter, crashed, timed out, leaked
//
// From a server's own tests, Check does the same and fails the test per
// finding:
//
//	contract.Check(t, resource.MCPServer{Command: bin, Cwd: dir}, nil)
//
// The rule behind it: a client-side schema check proves nothing about the
// server. A server whose parser is laxer than its schema runs calls agt
// would block; one that is stricter refuses calls agt lets through.
//
// # Cases
//
// For each tool, the cases come from its input schema (docs/contract.md
// lists them): valid arguments (required fields only, every optional
// field, each optional field, each enum value and anyOf/oneOf branch),
// each required field missing, each property of a wrong JSON type, each
// bound at and just past its limit (minimum, maximum, the exclusive ones,
// multipleOf, minLength and maxLength in code points, also with
// characters outside the Basic Multilingual Plane, minItems, maxItems,
// uniqueItems, pattern, format where the dialect asserts it), an unknown
// property, and bytes agt's validator refuses though no schema can (a
// duplicate key, invalid UTF-8, a lone surrogate escape). Objects nested
// in the arguments get the same cases, to six levels.
//
// Each case's expected verdict is agt's validator's (toolschema), never
// the generator's guess: a case the validator does not judge as it was
// made (a boundary value a pattern also refuses) is dropped, so a
// generator slip cannot make a false finding. Generation is offline and
// deterministic: the same Options.Seed and schema give the same cases.
//
// Business cases, which the schema cannot know (an unknown article, a
// permission the caller lacks), come from a file beside the server
// (CasesFile, read with ReadCasesFile): arguments and the result or error
// text expected. They run before a tool's generated cases.
//
// # Classes
//
// Each answer gets a Class: Accepted and Refused agree with the schema;
// Laxer (the schema refuses, the server ran it), Stricter (the schema
// accepts, the server refused it as invalid arguments: JSON-RPC -32602
// or a known SDK's validation text), Crashed, TimedOut, Leaked (an error echoes a generated value),
// Unexpected (a business case answered otherwise) and ProtocolError fail
// the report; Business (a schema-valid call refused by the server's own
// rules) and Tolerated (bytes agt never sends, read by the server) are
// information.
//
// # Writes
//
// Cases call the tools for real. Only tools whose annotations say
// readOnlyHint: true are checked unless named in Options.Tools or
// Options.IncludeWrites is set; Options.Plan hears what will be called
// before any case runs.
//
// # Errors
//
// Run returns an error only when the check cannot start (no connection,
// no listing, a tool named that the server does not list, an invalid
// business case); the report then says so too. Findings and notes never
// hold argument values: a case is named by what it is about and its JSON
// pointer.
//
// # Limits
//
// Options bound the cases per tool (120), the bytes of one case (64 KiB),
// one call (10 s: a call over it is TimedOut and the server is started
// again) and the whole check (5 min). A server's text is read to 1 MiB
// per answer. Generated values nest at most six levels; at most eight enum
// values and branches per position get a case each.
//
// # Concurrency
//
// Run calls one case at a time on one connection; several Runs may share
// a Connector.
package contract
