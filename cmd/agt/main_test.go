package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	gobuild "go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// agtBinary is the agt command built once for all tests of this package:
// the tests run the real binary, as an operator would.
var agtBinary string

func TestMain(m *testing.M) {
	if mode := os.Getenv(hostileServerEnv); mode != "" {
		os.Exit(serveHostile(mode)) // this process is a test's MCP server
	}
	if mode := os.Getenv(samplerEnv); mode != "" {
		os.Exit(serveSampling(mode)) // this process is a test's --sampling-command
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agt-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	agtBinary = filepath.Join(dir, "agt")
	goTool := filepath.Join(gobuild.Default.GOROOT, "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	build := exec.Command(goTool, "build", "-o", agtBinary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building agt:", err)
		return 1
	}
	defer mcptest.RemoveBuilt()
	return m.Run()
}

// result is what one run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

// runAgt runs the binary with args against the store db (no --db when empty),
// with stdin from the given text (not a terminal).
func runAgt(t *testing.T, db, stdin string, args ...string) result {
	t.Helper()
	return runAgtEnv(t, nil, db, stdin, args...)
}

// runAgtEnv is runAgt with extra environment variables ("K=V").
func runAgtEnv(t *testing.T, env []string, db, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := agtCommand(ctx, t, env, db, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := exitCode(t, cmd, cmd.Run())
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// agtCommand is agt with --db db (unless "") and args, in a clean
// environment (no store from the developer's shell) plus env.
func agtCommand(ctx context.Context, t *testing.T, env []string, db string, args ...string) *exec.Cmd {
	if db != "" {
		args = append([]string{"--db", db}, args...)
	}
	cmd := exec.CommandContext(ctx, agtBinary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	return cmd
}

// exitCode is the exit status of cmd, which ended with err; it fails the
// test when cmd could not run.
func exitCode(t *testing.T, cmd *exec.Cmd, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s: %v", strings.Join(cmd.Args, " "), err)
	}
	return 0
}

func TestHelpCoversEveryCommand(t *testing.T) {
	t.Parallel()
	r := runAgt(t, "", "", "--help")
	if r.code != 0 {
		t.Fatalf("agt --help: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, g := range commandTree() {
		for _, l := range g.leaves {
			if want := "agt " + g.name + " " + l.name + " "; !strings.Contains(r.stdout, want) {
				t.Errorf("agt --help does not list %q", want)
			}
			sub := runAgt(t, "", "", g.name, l.name, "--help")
			if sub.code != 0 || !strings.HasPrefix(sub.stdout, "Usage: agt "+g.name+" "+l.name) {
				t.Errorf("agt %s %s --help: exit %d, stdout %.80q", g.name, l.name, sub.code, sub.stdout)
			}
		}
	}
	for _, want := range []string{"--db", "$AGT_STORE", "Exit status", "--allow-mcp"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("agt --help does not mention %s", want)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := runAgt(t, "", "", "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agt ") || !strings.Contains(r.stdout, "go1.") {
		t.Errorf("agt --version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// usageCase is a command line that must exit 2 with want in stderr.
type usageCase struct {
	name string
	args []string
	want string // in stderr
}

// assertUsageErrors runs each case against db: exit 2, want in stderr,
// and never the word "secretvalue", which the cases use for flag values.
func assertUsageErrors(t *testing.T, db string, tests []usageCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runAgt(t, db, "", tt.args...)
			if r.code != 2 {
				t.Errorf("agt %q: exit %d, want 2; stderr:\n%s", tt.args, r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("agt %q: stderr does not contain %q:\n%s", tt.args, tt.want, r.stderr)
			}
			if strings.Contains(r.stderr, "secretvalue") {
				t.Errorf("agt %q: stderr echoes a flag value:\n%s", tt.args, r.stderr)
			}
		})
	}
}

// assertContains fails for each of wants that got lacks.
func assertContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, got)
		}
	}
}

// Usage errors exit with status 2 and point at the command's help.
func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	assertUsageErrors(t, db, []usageCase{
		{"no command", nil, "no command given"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"group without sub-command", []string{"mcp"}, "needs a sub-command"},
		{"unknown sub-command", []string{"agent", "explode"}, `unknown command "explode"`},
		{"unknown flag", []string{"mcp", "list", "--bogus"}, "unknown flag --bogus"},
		{"missing argument", []string{"mcp", "get"}, "exactly 1 positional argument"},
		{"flag without value", []string{"mcp", "list", "--category"}, "--category needs a value"},
		{"extra argument", []string{"mcp", "get", "a", "b"}, "got 2"},
		{"call needs three", []string{"agent", "call", "a", "tool"}, "exactly 3"},
		{"bad reference", []string{"mcp", "get", "Not/A/Ref"}, "reference"},
		{"create says how", []string{"mcp", "create", "x"}, "--command CMD --cwd DIR"},
		{"stdio needs cwd", []string{"mcp", "create", "x", "--command", "srv"}, "needs --cwd DIR"},
		{"data is an object", []string{"mcp", "create", "x", "--data", "[1,2]"}, "--data must be one JSON object"},
		{"data alone", []string{"mcp", "create", "x", "--data", "{}", "--command", "y"}, "do not combine"},
		{"both transports", []string{"mcp", "create", "x", "--command", "a", "--cwd", "/", "--url", "http://h"}, "not both"},
		{"env needs K=V", []string{"mcp", "create", "x", "--command", "a", "--cwd", "/", "--env", "secretvalue"}, "want K=V"},
		{"bad bool", []string{"agent", "update", "a", "--enabled=maybe"}, "want true or false"},
		{"bad duration", []string{"mcp", "probe", "a", "--timeout", "secretvalue"}, "want a duration such as 30s"},
		{"bad revision", []string{"mcp", "delete", "a", "--expected-revision", "secretvalue"}, "want a whole number"},
		{"mcps and clear", []string{"agent", "update", "a", "--mcps", "x", "--clear-mcps"}, "not both"},
		{"allow-mcp", []string{"agent", "update", "a", "--allow-mcp"}, "--allow-mcp was removed"},         // SPEC R3.7
		{"allow-mcp=true", []string{"--allow-mcp=true", "mcp", "list"}, "--allow-mcp was removed"},        // SPEC R3.7
		{"allow_mcp", []string{"agent", "call", "a", "t", "{}", "-allow_mcp"}, "--allow-mcp was removed"}, // SPEC R3.7
	})
}
