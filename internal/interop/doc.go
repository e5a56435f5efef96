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
// The session-dropping server of issue 24 item 2 is the bundled fake
// server's drop-session fault (package mcpconn/mcptest); run's tests drive
// it.
//
// Outside CI, a suite whose server cannot run here (node_modules missing,
// a build that needs the module proxy) is skipped with a one-line message;
// with CI=true it fails instead. The package has no API: only its tests.
//
//	npm ci                                  # at the repository root
//	go test ./internal/interop
package interop
