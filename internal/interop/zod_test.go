package interop_test

import "testing"

// Issue 24 items 1 and 8: the most common server stack, the TypeScript
// SDK with zod 4 (both pinned in package.json), writes ECMA-262 patterns
// with lookaround for z.hostname(), z.emoji(), z.iso.duration() and a
// .regex() with a lookahead. agt lists all ten tools (six before it read
// patterns as ECMA-262), calls each with valid arguments, and refuses
// arguments that break a pattern before the server sees them. The SDK's
// v1 speaks only the legacy era: agt, preferring the modern one,
// negotiates 2025-11-25 with it (issue 25 item 9).
func TestTypeScriptSDKWithZod(t *testing.T) {
	t.Parallel()
	node, script := nodeServer(t, "zodserver", "sdk")
	tools := []string{"resolve_host", "react", "schedule", "set_passphrase", "send_mail", "get_user", "add", "echo", "paint", "server_info"}
	lookaround := []string{"resolve_host", "react", "schedule", "set_passphrase"}
	good := []call{
		{"resolve_host", `{"host":"api.example.com"}`, "resolved api.example.com"},
		{"react", `{"emoji":"👍🏽"}`, "reacted 👍🏽"},
		{"schedule", `{"every":"P1DT2H","job":"backup"}`, "scheduled backup every P1DT2H"},
		{"set_passphrase", `{"passphrase":"correct horse 7"}`, "passphrase set"},
		{"send_mail", `{"to":"ada@example.org","subject":"hi"}`, "sent to ada@example.org"},
		{"get_user", `{"id":"0b6e3f5a-8c1d-4e2f-9a7b-3c4d5e6f7a8b"}`, "user 0b6e3f5a-8c1d-4e2f-9a7b-3c4d5e6f7a8b"},
		{"add", `{"a":2,"b":0.5}`, "2.5"},
		{"echo", `{"text":"hello"}`, "hello"},
		{"paint", `{"color":"green","at":"2026-12-03T10:00:00Z"}`, "painted green"},
		{"server_info", `{}`, "agt-interop-zod 1.0.0"},
	}
	bad := []call{
		{tool: "resolve_host", args: `{"host":"-bad-.example.com"}`},
		{tool: "resolve_host", args: `{"host":"a..b"}`},
		{tool: "react", args: `{"emoji":"abc"}`},
		{tool: "schedule", args: `{"every":"P1W2D","job":"backup"}`},
		{tool: "set_passphrase", args: `{"passphrase":"no digits here"}`},
		{tool: "send_mail", args: `{"to":"not an address","subject":"hi"}`},
		{tool: "get_user", args: `{"id":"42"}`},
		{tool: "paint", args: `{"color":"purple"}`},
	}
	launch{command: node, args: []string{script}, callLogFlag: "--call-log", httpArgs: []string{"--http"}}.each(t,
		func(t *testing.T, server map[string]any, callLog string) {
			runSuite(t, suite{server: server, tools: tools, lookaround: lookaround,
				good: good, bad: bad, callLog: callLog, version: legacyVersion})
		})
}
