package interop_test

import "testing"

// Issue 25 item 9: a server on the TypeScript SDK v2
// (@modelcontextprotocol/server 2.4.0, pinned in package.json), which
// implements 2026-07-28, served as its documentation says (serveStdio on
// stdio, createMcpHandler over streamable HTTP), modern-only (legacy
// "reject") and dual-era (the SDK's default). agt, pinned to nothing,
// negotiates 2026-07-28 with each, lists the five tools, calls each,
// refuses bad arguments before the server sees them, and the server logs
// every call at 2026-07-28.
func TestTypeScriptSDKv2Server(t *testing.T) {
	t.Parallel()
	node, script := nodeServer(t, "tsv2server", "server")
	tools, good, bad := ticketTools("agt-interop-tsv2 1.0.0")
	for _, era := range []string{"modern", "dual"} {
		launch{command: node, args: []string{script, "--era", era}, callLogFlag: "--call-log",
			httpArgs: []string{"--http"}, subtestPrefix: era + "/"}.each(t,
			func(t *testing.T, server map[string]any, callLog string) {
				runSuite(t, suite{server: server, tools: tools, good: good, bad: bad,
					callLog: callLog, version: modernVersion, versionLogged: true})
			})
	}
}
