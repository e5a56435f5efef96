package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/internal/interop/servers"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

func TestMain(m *testing.M) {
	code := m.Run()
	servers.MCPGo.Remove()
	servers.GoSDK.Remove()
	if code == 0 {
		// The ECMAScript engine's clock goroutine outlives a lookahead
		// match by about a second (toolschema's doc).
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak: goroutines left after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// nodeServer returns the Node 22 and the script testdata/DIR/server.mjs
// of a TypeScript server, which imports zod and the package
// @modelcontextprotocol/SDK.
func nodeServer(t *testing.T, dir, sdk string) (node, script string) {
	t.Helper()
	node = servers.Node(t)
	servers.NodeFile(t, "@modelcontextprotocol", sdk, "package.json")
	servers.NodeFile(t, "zod", "package.json")
	script, err := filepath.Abs(filepath.Join("testdata", dir, "server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

// call is one call of a suite: the tool, its arguments and, for a call
// that succeeds, the text of its result.
type call struct {
	tool, args, want string
}

// suite is what one server must do through a Run: list its tools, answer
// good calls, and never see a call whose arguments break its schema.
type suite struct {
	// server is the server's entry in the MCP document (command or url).
	server map[string]any
	// tools is every tool the server lists; lookaround names those with a
	// pattern that Go's regexp (RE2) cannot compile, which agt left out
	// before it read patterns as ECMA-262 (issue 24 item 1).
	tools, lookaround []string
	// good succeed with their text; bad are refused by agt's validator.
	good, bad []call
	// callLog is the file the server appends a line to for every
	// tools/call it receives: the tool's name and, if the server logs it,
	// the protocol version of the request.
	callLog string
	// version is the protocol version agt must negotiate (issue 25 item
	// 9): the Run's connect negotiates it (nothing is pinned), and the
	// probe that follows reports the era the Connector cached from it.
	version string
	// versionLogged says the server logs each call's protocol version:
	// every call must then have been sent at version.
	versionLogged bool
}

// launch is how a test starts its server: the program and its arguments,
// the flag that names the call log, and the arguments that make it serve
// streamable HTTP (printing "listening on URL") instead of stdio.
type launch struct {
	command       string
	args          []string
	callLogFlag   string
	httpArgs      []string
	subtestPrefix string // "" or a name and a slash
}

// each runs a parallel subtest over stdio and one over streamable HTTP,
// giving each the server's entry in the MCP document and a fresh call log.
func (l launch) each(t *testing.T, test func(t *testing.T, server map[string]any, callLog string)) {
	t.Helper()
	for _, http := range []bool{false, true} {
		name := "stdio"
		if http {
			name = "streamable HTTP"
		}
		t.Run(l.subtestPrefix+name, func(t *testing.T) {
			t.Parallel()
			callLog := filepath.Join(t.TempDir(), "calls.log")
			args := append(slices.Clone(l.args), l.callLogFlag, callLog)
			if !http {
				test(t, map[string]any{"command": l.command, "args": args, "cwd": t.TempDir()}, callLog)
				return
			}
			url := mcptest.StartHTTPCommand(t, exec.Command(l.command, append(args, l.httpArgs...)...))
			test(t, map[string]any{"type": resource.TransportHTTP, "url": url}, callLog)
		})
	}
}

// runSuite drives s through a Host and a Run as a host does.
func runSuite(t *testing.T, s suite) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The era probe waits for server/discover as long as the test may
	// take: with the default (2 s), a dual-era Node server that a loaded
	// machine starts more slowly than that is taken for a legacy one and
	// answers initialize, as mcpconn documents (and tests). Every server
	// here answers server/discover, so the wait costs nothing.
	h, err := agt.Open(ctx, t.TempDir(), &agt.Options{Connector: &mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{EraProbeTimeout: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	const ref = resource.Ref("interop")
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"interop": s.server}})
	if err != nil {
		t.Fatal(err)
	}
	write := func(kind resource.Kind, ref resource.Ref, data []byte) {
		t.Helper()
		if _, err := h.Resources().Write(ctx, resource.Direct(), resource.WriteRequest{Kind: kind, Ref: ref, Create: true, Data: data}); err != nil {
			t.Fatalf("write %s %s: %v", kind, ref, err)
		}
	}
	write(resource.KindMCP, ref, doc)
	write(resource.KindAgent, "tester", []byte(`{"mcps":["interop"]}`))
	r, err := h.NewRun(ctx, "tester", &run.Options{Permission: policy.AutoAllow(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if errs := r.MountErrors(); len(errs) > 0 {
		t.Fatalf("mount errors: %v", errs)
	}
	for _, sk := range r.SkippedTools() {
		t.Errorf("tool %s left out: %v", sk.Source.Tool, sk.Err)
	}

	// Every tool is listed, those with lookaround too.
	var listed, re2Rejects []string
	for _, info := range r.Tools() {
		if info.Source.Ref != ref {
			continue
		}
		listed = append(listed, info.Source.Tool)
		if !compilesInRE2(t, info.InputSchema) {
			re2Rejects = append(re2Rejects, info.Source.Tool)
		}
	}
	slices.Sort(listed)
	slices.Sort(re2Rejects)
	if diff := cmp.Diff(sorted(s.tools), listed); diff != "" {
		t.Errorf("tools listed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sorted(s.lookaround), re2Rejects); diff != "" {
		t.Errorf("tools with a pattern RE2 cannot compile (-want +got):\n%s", diff)
	}

	batch := func(id string, calls []call) run.Outcome {
		t.Helper()
		b := run.Batch{ID: id, Agent: "tester"}
		for i, c := range calls {
			b.Calls = append(b.Calls, run.Call{ID: fmt.Sprintf("%s-%d", id, i), Name: run.Alias(ref, c.tool), Arguments: json.RawMessage(c.args)})
		}
		out, err := r.Execute(ctx, b)
		if err != nil {
			t.Fatalf("batch %s: %v", id, err)
		}
		return out
	}
	out := batch("good", s.good)
	for i, res := range out.Results {
		c := s.good[i]
		if res.Failed() {
			t.Errorf("%s %s: %s %s", c.tool, c.args, res.Code, res.Message)
			continue
		}
		if got := runtest.Text(t, res); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	out = batch("bad", s.bad)
	for i, res := range out.Results {
		if res.Code != run.CodeInvalidArguments {
			t.Errorf("%s %s: %s %q; want invalid_arguments", s.bad[i].tool, s.bad[i].args, res.Code, res.Message)
		}
	}
	// The server received each good call once and no bad one, at the
	// version negotiated. The batch runs its calls concurrently: compare
	// in name order.
	var want, got []string
	for _, c := range s.good {
		want = append(want, c.tool)
	}
	for _, line := range readLines(t, s.callLog) {
		tool, version, _ := strings.Cut(line, " ")
		got = append(got, tool)
		if s.versionLogged && version != s.version {
			t.Errorf("the server got the call of %s at protocol version %q, want %s", tool, version, s.version)
		}
	}
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("calls the server received (-want +got):\n%s", diff)
	}

	// The version negotiated, as a probe of the same Host reports it.
	rep, err := h.Prober().Probe(ctx, ref)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if rep.ProtocolVersion != s.version {
		t.Errorf("protocol version negotiated = %q, want %s", rep.ProtocolVersion, s.version)
	}
}

// compilesInRE2 reports whether Go's regexp compiles every "pattern" of a
// schema (the schemas here have their patterns in properties).
func compilesInRE2(t *testing.T, schema json.RawMessage) bool {
	t.Helper()
	var s struct {
		Properties map[string]struct {
			Pattern *string `json:"pattern"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	for _, p := range s.Properties {
		if p.Pattern != nil {
			if _, err := regexp.Compile(*p.Pattern); err != nil {
				return false
			}
		}
	}
	return true
}

// readLines reads a file's lines; a missing file has none.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.FieldsFunc(string(data), func(r rune) bool { return r == '\n' })
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
