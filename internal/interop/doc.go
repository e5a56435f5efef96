// Package interop holds agt's interoperability suites: tests that drive MCP
// servers agt did not write, through a Host and a Run as a host does, so
// that what real servers showed (issue 24) stays fixed in CI:
//
//   - a TypeScript SDK server (@modelcontextprotocol/sdk) whose ten tools
//     have zod 4 input schemas, four of them with ECMA-262 lookaround in
//     their patterns (testdata/zodserver/server.mjs), over stdio and
//     streamable HTTP. The SDK and zod are pinned in the package.json at
//     the root of the repository, and so is the Node 22 that runs them:
//     `npm ci` there installs them.
//   - a server written with github.com/mark3labs/mcp-go (the nested module
//     mcpgo, so that agt's go.mod does not depend on it), built with `go
//     build`, over stdio and streamable HTTP.
//
// The protocol eras (issue 25 item 9): agt is pinned to none, and each
// test asserts the version it negotiated with a server of each kind:
//
//   - a go-sdk v1.8.0 server as its author would configure it (package
//     gosdkserver: stateless streamable HTTP, and -era for
//     ServerOptions.SupportedProtocolVersions), modern-only and dual-era
//     (agt negotiates 2026-07-28) and legacy-only (2025-11-25), over stdio
//     and streamable HTTP;
//   - a TypeScript SDK v2 server (@modelcontextprotocol/server, which
//     implements 2026-07-28; testdata/tsv2server/server.mjs, pinned like
//     the v1 SDK) served with the SDK's serveStdio and createMcpHandler,
//     modern-only and dual-era: 2026-07-28;
//   - the mcp-go server above (v1.2.1 speaks both eras): 2026-07-28; the
//     v1 TypeScript SDK server (legacy only): 2025-11-25.
//
// The go-sdk and TypeScript v2 servers log the protocol version of every
// call they run, so a test sees that the calls, not only the handshake,
// went out in the era negotiated. server-everything (the root package's
// TestServerEverything) is built on the v1 SDK and negotiates 2025-11-25.
//
// The session-dropping server of issue 24 item 2 is the bundled fake
// server's drop-session fault (package mcpconn/mcptest); run's tests drive
// it.
//
// Outside CI, a suite whose server cannot run here (node_modules missing,
// a build that needs the module proxy) is skipped with a one-line message;
// with CI=true it fails instead. The package has no API: only its tests;
// package servers finds and builds their servers (the benchmarks of
// internal/bench run the same ones), and gosdkserver is the go-sdk server.
//
//	npm ci                                  # at the repository root
//	go test ./internal/interop
package interop
