package interop_test

import (
	"testing"

	"github.com/agtsdk/agt/internal/interop/servers"
	"github.com/agtsdk/agt/mcpconn"
)

// The protocol versions of the two eras (issue 25).
const (
	modernVersion = mcpconn.ModernProtocolVersion
	legacyVersion = mcpconn.LegacyProtocolVersion
)

// Issue 25 item 9: a server written with the go-sdk v1.8.0 as its author
// would write it (stateless streamable HTTP, SupportedProtocolVersions for
// its era), over stdio and streamable HTTP. agt negotiates, pinned to
// nothing: 2026-07-28 with a modern-only and a dual-era server, 2025-11-25
// with a legacy-only one; lists the five tools, calls each, refuses bad
// arguments before the server sees them, and the server logs every call
// at the version negotiated.
func TestGoSDKServer(t *testing.T) {
	t.Parallel()
	bin := servers.GoSDK.Binary(t)
	tools, good, bad := ticketTools("agt-interop-gosdk 1.0.0")
	for _, era := range []struct{ name, version string }{
		{"modern", modernVersion},
		{"dual", modernVersion},
		{"legacy", legacyVersion},
	} {
		launch{command: bin, args: []string{"-era", era.name}, callLogFlag: "-call-log",
			httpArgs: []string{"-http", "127.0.0.1:0"}, subtestPrefix: era.name + "/"}.each(t,
			func(t *testing.T, server map[string]any, callLog string) {
				runSuite(t, suite{server: server, tools: tools, good: good, bad: bad,
					callLog: callLog, version: era.version, versionLogged: true})
			})
	}
}
