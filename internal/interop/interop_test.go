package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

func TestMain(m *testing.M) {
	code := m.Run()
	removeBuilt()
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

// unavailable skips the test outside CI, with a one-line message, when
// what it needs cannot run here; with CI=true it fails instead: CI
// installs and builds everything these suites need (.ci/run).
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// repoRoot is the repository's root, where package.json is.
const repoRoot = "../.."

// nodeFile returns the absolute path of a file under the root's
// node_modules (npm ci installs them from package.json), or skips or
// fails the test when it is missing (unavailable).
func nodeFile(t *testing.T, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{repoRoot, "node_modules"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		unavailable(t, "%s is missing: run npm ci at the repository root", filepath.Join(parts...))
	}
	return p
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
	// callLog is the file the server appends the name of every tools/call
	// it receives to.
	callLog string
}

// runSuite drives s through a Host and a Run as a host does.
func runSuite(t *testing.T, s suite) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := agt.Open(ctx, t.TempDir(), nil)
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
	// The server received each good call once and no bad one. The batch
	// runs its calls concurrently: compare in name order.
	var want []string
	for _, c := range s.good {
		want = append(want, c.tool)
	}
	got := readLines(t, s.callLog)
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("calls the server received (-want +got):\n%s", diff)
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
	return strings.Fields(string(data))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
