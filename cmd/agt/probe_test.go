package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/google/go-cmp/cmp"
)

// eras are the protocol eras a test of a main flow runs in, each a
// parallel subtest (issue 25): a legacy server, which agt speaks
// 2025-11-25 to, and a dual-era one, which it speaks 2026-07-28 to.
var eras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraDual}

// registerFake registers the bundled fake MCP server as ref, with extra
// arguments (fault modes), and returns the store.
func registerFake(t *testing.T, db, ref string, args ...string) {
	t.Helper()
	cmd := []string{"mcp", "create", ref, "--command", mcptest.Command(t), "--cwd", t.TempDir()}
	for _, a := range args {
		cmd = append(cmd, "--arg", a)
	}
	mustRun(t, db, 0, cmd...)
}

// SPEC R3.1, R3.2: test is static, probe starts the server, lists and
// compiles, and prints the contract JSON shape.
func TestProbe(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			registerFake(t, db, "fake", "-era", string(e))
			registerFake(t, db, "broken", "-fault", "exit-at-start")

			r := mustRun(t, db, 0, "mcp", "create", "fake2", "--command", mcptest.Command(t), "--cwd", t.TempDir())
			if strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, "static checks passed") {
				t.Errorf("agt mcp create of a startable server:\n%s", r.stderr)
			}
			r = mustRun(t, db, 0, "mcp", "test", "fake")
			if !strings.Contains(r.stdout, "ok") {
				t.Errorf("agt mcp test fake:\n%s", r.stdout)
			}

			// A cwd that does not exist is a finding with a fix; nothing starts.
			// create registers it anyway (exit 0), and warns at once.
			r = mustRun(t, db, 0, "mcp", "create", "nocwd", "--command", mcptest.Command(t), "--cwd", filepath.Join(t.TempDir(), "gone"))
			if !strings.Contains(r.stderr, "warning: /mcpServers/nocwd/cwd: cwd does not exist") || !strings.Contains(r.stderr, "'agt mcp update nocwd'") {
				t.Errorf("agt mcp create with a missing cwd does not warn:\n%s", r.stderr)
			}
			r = mustRun(t, db, 1, "mcp", "test", "nocwd")
			if !strings.Contains(r.stdout, "problems found") || !strings.Contains(r.stdout, "fix:") {
				t.Errorf("agt mcp test nocwd:\n%s", r.stdout)
			}

			r = mustRun(t, db, 0, "mcp", "probe", "fake", "--json")
			var rep struct {
				Reference string `json:"reference"`
				Server    struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"server"`
				ProtocolVersion string `json:"protocol_version"`
				Tools           []struct {
					Name  string `json:"name"`
					OK    bool   `json:"ok"`
					Error string `json:"error"`
				} `json:"tools"`
				DurationMS *int64 `json:"duration_ms"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("probe --json: %v\n%s", err, r.stdout)
			}
			if rep.Reference != "fake" || rep.Server.Name == "" || rep.DurationMS == nil || len(rep.Tools) == 0 {
				t.Errorf("probe --json lacks contract fields: %s", r.stdout)
			}
			if want := map[mcptest.Era]string{mcptest.EraLegacy: mcpconn.LegacyProtocolVersion, mcptest.EraDual: mcpconn.ModernProtocolVersion}[e]; rep.ProtocolVersion != want {
				t.Errorf("probe --json: protocol_version %q; want %q", rep.ProtocolVersion, want)
			}
			for _, tool := range rep.Tools {
				if !tool.OK {
					t.Errorf("tool %s: %s", tool.Name, tool.Error)
				}
			}

			r = mustRun(t, db, 0, "mcp", "probe", "fake")
			if !strings.Contains(r.stdout, "probe fake: ok") || !strings.Contains(r.stdout, "search") {
				t.Errorf("agt mcp probe fake:\n%s", r.stdout)
			}

			// A server that cannot start: exit 1, with its stderr tail.
			r = mustRun(t, db, 1, "mcp", "probe", "broken")
			if !strings.Contains(r.stdout, "failed") || !strings.Contains(r.stdout, "exit-at-start") {
				t.Errorf("agt mcp probe broken:\n%s", r.stdout)
			}
			mustRun(t, db, 1, "mcp", "probe", "nothing")
		})
	}
}

// SPEC R3.4, R3.5: the assembly, and the check before work.
func TestAgentMCPsAndCheck(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "fake")
	registerFake(t, db, "broken", "-fault", "exit-at-start")
	mustRun(t, db, 0, "agent", "create", "ok-agent", "--mcp", "fake")
	mustRun(t, db, 0, "agent", "create", "bad-agent", "--mcp", "fake", "--mcp", "broken")
	mustRun(t, db, 0, "mcp", "delete", "fake", "--force") // mounted: agt refuses without --force
	registerFake(t, db, "fake")                           // a new revision history for the same reference

	r := mustRun(t, db, 0, "agent", "mcps", "bad-agent", "--json")
	var mounts []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &mounts); err != nil {
		t.Fatal(err)
	}
	var refs []any
	for _, m := range mounts {
		refs = append(refs, m["reference"])
	}
	if diff := cmp.Diff([]any{"fake", "broken"}, refs); diff != "" {
		t.Errorf("agent mcps --json references (-want +got):\n%s", diff)
	}

	r = mustRun(t, db, 0, "agent", "mcps", "ok-agent")
	if want := "REFERENCE  RESOLVES  REVISION  PROBLEM\nfake       yes       2         -\n"; r.stdout != want {
		t.Errorf("agent mcps ok-agent:\n%q\nwant\n%q", r.stdout, want)
	}

	mustRun(t, db, 0, "agent", "check", "ok-agent")
	r = mustRun(t, db, 0, "agent", "check", "ok-agent", "--probe")
	if !strings.Contains(r.stdout, "probe: ok") || !strings.Contains(r.stdout, "ready") {
		t.Errorf("agent check --probe ok-agent:\n%s", r.stdout)
	}
	// Statically fine, but the probe finds the server cannot start.
	mustRun(t, db, 0, "agent", "check", "bad-agent")
	r = mustRun(t, db, 1, "agent", "check", "bad-agent", "--probe")
	if !strings.Contains(r.stdout, "not ready") || !strings.Contains(r.stdout, "exited during startup") {
		t.Errorf("agent check --probe bad-agent:\n%s", r.stdout)
	}
	r = mustRun(t, db, 1, "agent", "check", "nobody")
	if !strings.Contains(r.stdout, "not registered") {
		t.Errorf("agent check nobody:\n%s", r.stdout)
	}
}

// The keys of the probe --json contract (DESIGN.md, the command-line tool)
// are there whatever happened: a clean probe, a tool whose schema does not
// compile, a server that never answered; also inside agent check --json.
func TestProbeJSONContractKeys(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "fake")
	registerFake(t, db, "badschema", "-fault", "external-ref")
	registerFake(t, db, "broken", "-fault", "exit-at-start")
	mustRun(t, db, 0, "agent", "create", "helper", "--mcp", "fake", "--mcp", "broken")

	checkKeys := func(t *testing.T, what string, raw json.RawMessage) (serverNull bool, toolErrors int) {
		t.Helper()
		var rep map[string]json.RawMessage
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, raw)
		}
		for _, k := range []string{"reference", "server", "protocol_version", "tools", "duration_ms"} {
			if _, ok := rep[k]; !ok {
				t.Errorf("%s: no %q key:\n%s", what, k, raw)
			}
		}
		var tools []map[string]json.RawMessage
		if err := json.Unmarshal(rep["tools"], &tools); err != nil {
			t.Fatalf("%s: tools: %v", what, err)
		}
		for _, tool := range tools {
			for _, k := range []string{"name", "ok", "error"} {
				if _, ok := tool[k]; !ok {
					t.Errorf("%s: a tool has no %q key:\n%s", what, k, raw)
				}
			}
			if string(tool["error"]) != "null" {
				toolErrors++
			}
		}
		return string(rep["server"]) == "null", toolErrors
	}

	r := mustRun(t, db, 0, "mcp", "probe", "fake", "--json")
	if serverNull, errs := checkKeys(t, "probe fake", json.RawMessage(r.stdout)); serverNull || errs != 0 {
		t.Errorf("probe fake: server null %v, %d tool errors:\n%s", serverNull, errs, r.stdout)
	}
	// One tool of nine left out is a warning (exit status 0).
	r = mustRun(t, db, 0, "mcp", "probe", "badschema", "--json")
	if _, errs := checkKeys(t, "probe badschema", json.RawMessage(r.stdout)); errs != 1 {
		t.Errorf("probe badschema: %d tool errors, want 1:\n%s", errs, r.stdout)
	}
	// The human view keeps the end of a schema error: the fix.
	r = mustRun(t, db, 0, "mcp", "probe", "badschema")
	if !strings.Contains(r.stdout, "bad_external_ref") || !strings.Contains(r.stdout, `refer to it as "#/$defs/NAME"`) {
		t.Errorf("probe badschema does not show the whole error:\n%s", r.stdout)
	}
	r = mustRun(t, db, 1, "mcp", "probe", "broken", "--json")
	if serverNull, _ := checkKeys(t, "probe broken", json.RawMessage(r.stdout)); !serverNull {
		t.Errorf("probe broken: server is not null:\n%s", r.stdout)
	}

	r = mustRun(t, db, 1, "agent", "check", "helper", "--probe", "--json")
	var check struct {
		Mounts []map[string]json.RawMessage `json:"mounts"`
		Probes []json.RawMessage            `json:"probes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &check); err != nil || len(check.Probes) != 2 {
		t.Fatalf("agent check --probe --json: %v, %d probes\n%s", err, len(check.Probes), r.stdout)
	}
	for _, p := range check.Probes {
		checkKeys(t, "agent check probe", p)
	}
	for _, m := range check.Mounts {
		if string(m["findings"]) == "null" {
			t.Errorf("agent check --json: findings null, want []:\n%s", r.stdout)
		}
	}
}

// Text from an MCP server (here its stderr, shown when it fails to start)
// is hostile: it reaches the operator's terminal without control
// characters.
func TestServerTextCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to play a hostile server")
	}
	db := filepath.Join(t.TempDir(), "agt.db")
	script := `printf 'title\033]0;pwned\007 red\033[31m c1\302\233x del\177 end\n' >&2; exit 3`
	mustRun(t, db, 0, "mcp", "create", "hostile", "--command", "/bin/sh", "--arg", "-c", "--arg", script, "--cwd", t.TempDir())
	r := mustRun(t, db, 1, "mcp", "probe", "hostile")
	if !strings.Contains(r.stdout, "title?]0;pwned? red?[31m c1?x del? end") {
		t.Errorf("probe of a hostile server does not show its stderr, made harmless:\n%q", r.stdout)
	}
	for _, c := range []string{"\x1b", "\x07", "\x7f", "\u009b"} {
		if strings.Contains(r.stdout+r.stderr, c) {
			t.Errorf("output holds control character %q:\n%q", c, r.stdout)
		}
	}
}

func TestControlFilter(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain text\n\tindented\n", "plain text\n\tindented\n"},
		{"é ü 日本 — ok", "é ü 日本 — ok"},
		{"\x1b[2J\x1b]0;t\x07", "?[2J?]0;t?"},
		{"a\rb\x00c\x7fd", "a?b?c?d"},
		{"c1 \u009b and \u0085 here", "c1 ? and ? here"},
		{"\u00a0 and \u00c2 stay", "\u00a0 and \u00c2 stay"},
		{"bidi \u202eevil\u202c \u2066iso\u2069 \u200fmark", "bidi ?evil? ?iso? ?mark"},
		{"zero\u200bwidth \ufeffbom \u00adsoft tag\U000e0041", "zero?width ?bom ?soft tag?"},
		{"line\u2028para\u2029end", "line?para?end"},
		{"bad \xff\xc2 utf8 \xe2\x80", "bad ?? utf8 ??"},
		{"emoji 😀 ok \ufffd", "emoji 😀 ok \ufffd"},
	}
	for _, tt := range tests {
		var b strings.Builder
		n, err := controlFilter{&b}.Write([]byte(tt.in))
		if err != nil || n != len(tt.in) || b.String() != tt.want {
			t.Errorf("controlFilter(%q) = %q, %d, %v; want %q, %d", tt.in, b.String(), n, err, tt.want, len(tt.in))
		}
	}
}

// shown makes one cell or line of server text: no line break, tab or
// unsafe character, and a bounded width with the full size.
func TestShown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"plain", 10, "plain"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven chars", 10, "eleven ch… (12 bytes)"},
		{"日本語のテキスト", 5, "日本語の… (24 bytes)"},
		{"a\nb\tc\rd\u202ee\x1bf", 20, "a?b?c?d?e?f"},
		{"bad\xffutf8", 20, "bad?utf8"},
		{strings.Repeat("x", 1<<20), 4, "xxx… (1048576 bytes)"},
	}
	for _, tt := range tests {
		if got := shown(tt.in, tt.width); got != tt.want {
			t.Errorf("shown(%.40q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
	if got := oneLine("  first line\u2028second\nthird", 70); got != "first line" {
		t.Errorf("oneLine = %q, want the first line", got)
	}
}

// escapeUnsafe leaves JSON that decodes to the same value, with nothing
// left for controlFilter to change.
func TestEscapeUnsafeKeepsJSONExact(t *testing.T) {
	t.Parallel()
	in := map[string]string{"k\u202e": "v\u202e\u0085\u007f\u2028\ufeff\U000e0041 日本 😀\n\t"}
	var b strings.Builder
	if err := writeJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, back); diff != "" {
		t.Errorf("writeJSON does not round-trip (-want +got):\n%s", diff)
	}
	var filtered strings.Builder
	if _, err := (controlFilter{&filtered}).Write([]byte(b.String())); err != nil || filtered.String() != b.String() {
		t.Errorf("controlFilter changes writeJSON's output:\n%q\n%q", b.String(), filtered.String())
	}
	if !strings.Contains(b.String(), `\udb40\udc41`) {
		t.Errorf("a format character above U+FFFF is not escaped as a surrogate pair: %q", b.String())
	}
}

// Issue 23 item 5: the banner a server printed on stdout in place of the
// handshake's answer (a token in it) stays out of the model's text, but
// the operator sees it: agt mcp probe prints it under its own heading
// (made safe), --json has it in stdout_head, agent tools in the mount's
// failure; the error itself only says what went wrong.
func TestProbeShowsStdoutBanner(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "banner", "-fault", "banner")
	mustRun(t, db, 0, "agent", "create", "one", "--mcp", "banner")

	r := mustRun(t, db, 1, "mcp", "probe", "banner")
	assertContains(t, "mcp probe of a server with a banner", r.stdout,
		"the server wrote non-JSON on stdout",
		"server stdout (first line, not JSON-RPC):\n  | "+mcptest.Banner+"\n")
	r = mustRun(t, db, 1, "mcp", "probe", "banner", "--json")
	var rep struct {
		Error      string `json:"error"`
		StdoutHead string `json:"stdout_head"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.StdoutHead != mcptest.Banner || strings.Contains(rep.Error, mcptest.BannerToken) {
		t.Errorf("probe --json = %+v, %v; want the banner in stdout_head alone", rep, err)
	}
	r = mustRun(t, db, 1, "agent", "tools", "one")
	assertContains(t, "agent tools with a mount that prints a banner", r.stdout,
		"mount banner failed to load: ",
		"  server stdout (first line, not JSON-RPC):\n    | "+mcptest.Banner+"\n")
}
