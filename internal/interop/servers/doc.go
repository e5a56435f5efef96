// Package servers readies the third-party MCP servers and clients that
// agt's interoperability tests (internal/interop) and benchmarks
// (internal/bench) run: it finds the npm packages that npm ci installs at
// the repository's root, builds the Go servers, and skips a test outside
// CI (or fails it with CI=true) when one of them cannot run here. It is
// for tests only.
package servers
