package installtest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/need"
)

// installTimeout bounds every go command of the test together.
const installTimeout = 10 * time.Minute

// The host the test builds: the root, an adapter of each model API and
// agtotel, each beside the package it converts to or instruments, none
// imported under an alias (a collision would not compile).
const hostMain = `package main

import (
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"go.opentelemetry.io/otel"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/adapter/agtanthropic"
	"github.com/agtsdk/agt/agtotel"
	"github.com/agtsdk/agt/run"
)

func main() {
	tel := agtotel.New(nil)
	var tools []anthropic.ToolUnionParam = agtanthropic.Tools([]run.ToolInfo{})
	fmt.Println(agt.Open != nil, tel.Instrument(nil).WrapExecute != nil, len(tools), otel.GetTracerProvider() != nil)
}
`

const hostOpenAI = `package openaihost

import (
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/agtopenai"
	"github.com/agtsdk/agt/adapter/agtopenai/agtresponses"
	"github.com/agtsdk/agt/run"
)

var (
	Chat      []openai.ChatCompletionToolUnionParam = agtopenai.Tools([]run.ToolInfo{})
	Responses []responses.ToolUnionParam            = agtresponses.Tools([]run.ToolInfo{})
)
`

// The README's install block, run as written beside a clone of the
// repository (here a symbolic link to it), must give a module that builds
// a host importing the root, both adapters and agtotel.
func TestReadmeInstall(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		need.Missing(t, "the go command", "install Go 1.26 or newer")
	}
	root := repoRoot(t)
	steps := installSteps(t, filepath.Join(root, "README.md"))

	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	work := t.TempDir()
	if err := os.Symlink(root, filepath.Join(work, "agt")); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(work, "your-host")
	if err := os.MkdirAll(filepath.Join(host, "openaihost"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(host, "main.go"), hostMain)
	write(t, filepath.Join(host, "openaihost", "openaihost.go"), hostOpenAI)
	goCmd(ctx, t, goBin, host, "mod", "init", "example.com/your-host")

	dir := work
	for _, step := range steps {
		switch {
		case strings.HasPrefix(step, "git clone "):
			// The clone is the symbolic link made above.
		case strings.HasPrefix(step, "cd "):
			dir = filepath.Join(dir, strings.TrimSpace(strings.TrimPrefix(step, "cd ")))
		case strings.HasPrefix(step, "go "):
			goCmd(ctx, t, goBin, dir, strings.Fields(step)[1:]...)
		default:
			t.Fatalf("the README's install block has a step this test does not run: %q (teach TestReadmeInstall to run it)", step)
		}
	}
	mod, err := os.ReadFile(filepath.Join(host, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"github.com/agtsdk/agt", "github.com/agtsdk/agt/adapter", "github.com/agtsdk/agt/agtotel"} {
		if !strings.Contains(string(mod), "\n\t"+m+" v0.0.0") || !strings.Contains(string(mod), m+" => ../agt") {
			t.Errorf("go.mod after the install steps lacks the require or the replace of %s:\n%s", m, mod)
		}
	}
	goCmd(ctx, t, goBin, host, "build", "./...")
}

// installSteps returns the commands of the README's install block (the
// fenced sh block that starts with "git clone"), one a step: continued
// lines joined, comments dropped.
func installSteps(t *testing.T, readme string) []string {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []string
	in, found, cont := false, false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && line == "```sh":
			in = true
			continue
		case in && line == "```":
			if found {
				return steps
			}
			in, steps = false, nil
			continue
		case !in:
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = cont + strings.TrimSpace(line)
		if strings.HasSuffix(line, "\\") {
			cont = strings.TrimSuffix(line, "\\") + " "
			continue
		}
		cont = ""
		if len(steps) == 0 && strings.HasPrefix(line, "git clone ") {
			found = true
		}
		if line != "" {
			steps = append(steps, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s has no install block (a ```sh block that starts with git clone)", readme)
	return nil
}

// goCmd runs the go command in dir with a user's environment: no
// workspace, no GOFLAGS of the caller's (CI sets -mod=readonly, which
// go mod tidy refuses), and without the checksum database when the
// module proxy is off.
func goCmd(ctx context.Context, t *testing.T, goBin, dir string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	if os.Getenv("GOPROXY") == "off" {
		cmd.Env = append(cmd.Env, "GOSUMDB=off")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), filepath.Base(dir), err, out)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoRoot is the repository's root, from this file's place in it.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}
