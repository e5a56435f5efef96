package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostileServerEnv makes the test binary an MCP server on stdio
// (serveHostile): the server a test registers is this binary with the
// variable in its document's env.
const hostileServerEnv = "AGT_TEST_HOSTILE_SERVER"

// What the hostile server says. A newline followed by a plausible row, a
// tab, U+202E (right-to-left override) and escape sequences try to forge or
// reorder the operator's output; the name is 100 KB.
var (
	hostileName        = strings.Repeat("n", 100<<10)
	hostileVersion     = "1.0\n\u202eFORGED-VERSION"
	hostileDescription = "Says hello.\nmcp__hostile__admin  mcp:hostile:admin  FORGED ROW\u202e"
	hostileToolName    = "evil\u202e\nFORGED-TOOL\tx"
	hostileResult      = "hi\u202e\nthere\x1b[2J\u0085"
	hostileStderr      = "PASSWORD=hunter2-cli \u202eredro\x1b[31m\r\nlast line"
)

// serveHostile is the hostile server: "serve" answers the handshake and
// tools/list with the texts above, "fail" prints hostileStderr and exits 3.
func serveHostile(mode string) int {
	if mode == "fail" {
		fmt.Fprintln(os.Stderr, hostileStderr)
		return 3
	}
	s := mcp.NewServer(&mcp.Implementation{Name: hostileName, Version: hostileVersion}, nil)
	schema := json.RawMessage(`{"type":"object"}`)
	say := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: hostileResult}}}, nil
	}
	s.AddTool(&mcp.Tool{Name: "say", Description: hostileDescription, InputSchema: schema}, say)
	s.AddTool(&mcp.Tool{Name: hostileToolName, Description: "x", InputSchema: schema}, say)
	// A name at the 256-byte tool-name bound (docs/limits.md).
	s.AddTool(&mcp.Tool{Name: strings.Repeat("t", 256), Description: strings.Repeat("d", 5000), InputSchema: schema}, say)
	s.AddTool(&mcp.Tool{Name: "die", Description: "Prints on stderr and exits.", InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, hostileStderr)
			os.Exit(70)
			return nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "hostile server:", err)
	}
	return 0
}

// registerHostile registers this test binary as the hostile server ref.
func registerHostile(t *testing.T, db, ref, mode string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, db, 0, "mcp", "create", ref, "--command", self, "--cwd", t.TempDir(), "--env", hostileServerEnv+"="+mode)
}

// assertSafeLines fails unless out has exactly want lines, none longer
// than maxBytes, and no character a server could use to forge or reorder
// what the operator sees.
func assertSafeLines(t *testing.T, what, out string, want, maxBytes int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != want {
		t.Errorf("%s: %d lines, want %d:\n%s", what, len(lines), want, out)
	}
	for _, l := range lines {
		if len(l) > maxBytes {
			t.Errorf("%s: a line of %d bytes, want at most %d: %.120q...", what, len(l), maxBytes, l)
		}
		if strings.Contains(l, "FORGED ROW") && !strings.Contains(l, "Says hello.") || strings.HasPrefix(l, "FORGED") || strings.HasPrefix(l, "mcp__hostile__admin") {
			t.Errorf("%s: a forged line: %q", what, l)
		}
	}
	for _, c := range []string{"\u202e", "\x1b", "\r", "\u0085", "\u2028"} {
		if strings.Contains(out, c) {
			t.Errorf("%s: holds %+q:\n%+q", what, c, out)
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("%s: invalid UTF-8", what)
	}
}

// A server's names, descriptions, results and stderr cannot forge rows,
// reorder text or flood the operator's terminal: human output replaces
// line breaks, tabs, bidi and control characters and cuts long text; JSON
// output keeps every byte, escaped.
func TestHostileServerTextIsContained(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerHostile(t, db, "hostile", "serve")
	registerHostile(t, db, "leaky", "fail")
	mustRun(t, db, 0, "agent", "create", "a", "--mcp", "hostile")

	// The probe: a heading, the server line, the table head and 4 tools.
	r := mustRun(t, db, 0, "mcp", "probe", "hostile")
	assertSafeLines(t, "mcp probe", r.stdout, 7, 400)
	if !strings.Contains(r.stdout, "… (102400 bytes)") || !strings.Contains(r.stdout, "1.0??FORGED-VERSION") || !strings.Contains(r.stdout, "evil??FORGED-TOOL?x") {
		t.Errorf("mcp probe does not show the cut name, the version and the tool name made safe:\n%s", r.stdout)
	}

	// --json keeps everything exact, with the unsafe characters escaped.
	r = mustRun(t, db, 0, "mcp", "probe", "hostile", "--json")
	var rep struct {
		Server struct{ Name, Version string } `json:"server"`
		Tools  []struct{ Name string }        `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range rep.Tools {
		names[tool.Name] = true
	}
	if rep.Server.Name != hostileName || rep.Server.Version != hostileVersion || len(rep.Tools) != 4 || !names[hostileToolName] {
		t.Errorf("probe --json is not exact: name of %d bytes, version %q, tools %v", len(rep.Server.Name), rep.Server.Version, names)
	}
	if strings.Contains(r.stdout, "\u202e") || !strings.Contains(r.stdout, `\u202e`) {
		t.Errorf("probe --json does not escape U+202E")
	}

	// The tools a Run would see: the table head and 4 rows.
	r = mustRun(t, db, 0, "agent", "tools", "a")
	assertSafeLines(t, "agent tools", r.stdout, 5, 400)
	if !strings.Contains(r.stdout, "Says hello.") {
		t.Errorf("agent tools does not show the first line of the description:\n%s", r.stdout)
	}
	r = mustRun(t, db, 0, "agent", "tools", "a", "--json")
	if !strings.Contains(r.stdout, `Says hello.\nmcp__hostile__admin  mcp:hostile:admin  FORGED ROW\u202e`) {
		t.Errorf("agent tools --json does not keep the description exact:\n%.2000s", r.stdout)
	}

	// A call result: the JSON the model gets, exact and escaped.
	r = mustRun(t, db, 0, "agent", "call", "a", "mcp__hostile__say", "{}", "--yes")
	var content []struct{ Text string }
	if err := json.Unmarshal([]byte(r.stdout), &content); err != nil || len(content) != 1 || content[0].Text != hostileResult {
		t.Errorf("agent call: %v, %+v, want the text exact:\n%s", err, content, r.stdout)
	}
	assertSafeLines(t, "agent call", r.stdout, strings.Count(r.stdout, "\n"), 400)

	// A call whose server dies: the operator sees its stderr in the
	// ToolError, exact and escaped.
	r = mustRun(t, db, 1, "agent", "call", "a", "mcp__hostile__die", "{}", "--yes")
	var te struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &te); err != nil || te.Error.Code != "unavailable" || !strings.Contains(te.Error.Message, hostileStderr) {
		t.Errorf("agent call of a dying tool: %v, %+v, want unavailable with the stderr:\n%s", err, te, r.stdout)
	}
	assertSafeLines(t, "agent call die", r.stdout, strings.Count(r.stdout, "\n"), 1200)

	// A server that fails: the operator sees its stderr, made safe.
	r = mustRun(t, db, 1, "mcp", "probe", "leaky")
	assertSafeLines(t, "mcp probe leaky", r.stdout, 5, 1200)
	if !strings.Contains(r.stdout, "  | PASSWORD=hunter2-cli ?redro?[31m\n  | last line\n") {
		t.Errorf("mcp probe leaky does not show the stderr made safe:\n%s", r.stdout)
	}
	r = mustRun(t, db, 1, "mcp", "probe", "leaky", "--json")
	var failed struct {
		StderrTail string `json:"stderr_tail"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &failed); err != nil || strings.TrimSpace(failed.StderrTail) != hostileStderr {
		t.Errorf("probe --json stderr_tail = %q, %v; want it exact", failed.StderrTail, err)
	}
}
