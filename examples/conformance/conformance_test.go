//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/agtsdk/agt/internal/runtest"
	"github.com/google/go-cmp/cmp"
)

// The suite, as `npm ci` at the repository root installs it (package.json
// pins both packages): the repository root, and the suite's entry point
// below node_modules.
const (
	repoRoot  = "../.."
	suiteMain = "@modelcontextprotocol/conformance/dist/index.js"
)

const (
	// suiteParallel bounds the scenarios that run at once: each is a Node
	// process with a test server and our client, and the machine may have
	// two cores.
	suiteParallel = 4
	// suiteTimeout bounds the whole suite run, listing and reruns included.
	suiteTimeout = 4 * time.Minute
	// clientTimeoutMillis is the suite's own limit for one client run (its
	// --timeout, default 30 s); the client gives up a little earlier
	// (scenarioTimeout) and says why.
	clientTimeoutMillis = "30000"
)

// TestConformanceSuite runs every client scenario the pinned conformance
// suite lists against this client, and holds the outcome to baseline.txt:
// a failing scenario must be listed there with its reason, a listed one must
// still fail, and every listed one must still exist.
func TestConformanceSuite(t *testing.T) {
	t.Parallel()
	node, suite := suiteFiles(t)
	baseline, err := readBaseline("baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout)
	defer cancel()
	client := buildClient(ctx, t)

	names, err := listScenarios(ctx, node, suite)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	verdicts := make(map[string]verdict, len(names))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, suiteParallel)
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			v := playInSuite(ctx, node, suite, client, name, t.TempDir())
			mu.Lock()
			verdicts[name] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	// A scenario that failed against expectation runs once more, alone:
	// sse-retry times the client's reconnection, and a loaded machine can
	// make that late. A real regression fails twice.
	for _, name := range names {
		if v := verdicts[name]; !v.pass && !baseline.has(name) {
			again := playInSuite(ctx, node, suite, client, name, t.TempDir())
			t.Logf("%s failed (%s); run again alone: pass=%t", name, v.why, again.pass)
			verdicts[name] = again
		}
	}
	passed := 0
	for _, name := range names {
		v := verdicts[name]
		if v.pass {
			passed++
		}
		t.Logf("%-42s pass=%-5t %5.1fs", name, v.pass, v.elapsed.Seconds())
		switch {
		case !v.pass && !baseline.has(name):
			t.Errorf("scenario %s fails and baseline.txt does not list it: %s", name, v.why)
		case v.pass && baseline.has(name):
			t.Errorf("scenario %s passes now: remove it from baseline.txt (it says %q)", name, baseline[name])
		}
	}
	for name := range baseline {
		if !slices.Contains(names, name) {
			t.Errorf("baseline.txt lists %s, which the suite no longer has: remove it", name)
		}
	}
	t.Logf("conformance: %d of %d client scenarios pass (%d in the baseline), in %v",
		passed, len(names), len(baseline), time.Since(start).Round(100*time.Millisecond))
}

// suiteFiles returns the node binary and the suite's entry point
// (runtest.Node: a missing install skips the test outside CI and fails it
// with CI=true, so that CI cannot pass without running the suite).
func suiteFiles(t *testing.T) (node, suite string) {
	t.Helper()
	return runtest.Node(t, repoRoot, suiteMain)
}

// buildClient builds this example into the test's temporary directory.
func buildClient(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "conformance-client")
	// The suite splits its --command on spaces and runs it through a shell.
	if strings.ContainsAny(bin, " \t\n'\"$`\\;&|<>()*?") {
		t.Fatalf("the client's path %q would not survive the suite's shell", bin)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// scenarioLine is one line of `list --client`: "  - name [versions]".
var scenarioLine = regexp.MustCompile(`^\s+- (\S+)`)

func listScenarios(ctx context.Context, node, suite string) ([]string, error) {
	out, err := suiteCommand(ctx, node, suite, "list", "--client").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the client scenarios: %w", err)
	}
	var names []string
	for line := range strings.Lines(string(out)) {
		if m := scenarioLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("the suite listed no client scenario:\n%s", out)
	}
	return names, nil
}

// suiteCommand runs the suite in a process group of its own: the context's
// end kills the suite, its test servers and the client it started.
func suiteCommand(ctx context.Context, node, suite string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, node, append([]string{suite}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

type verdict struct {
	pass    bool
	why     string // for a failure: the failing checks, the client's last words
	elapsed time.Duration
}

// playInSuite runs one scenario and takes the suite's verdict: its exit
// status is 0 only when no check is FAILURE or WARNING and the client
// neither timed out nor exited with an error the scenario did not expect.
// checks.json says which checks failed.
func playInSuite(ctx context.Context, node, suite, client, name, outDir string) verdict {
	start := time.Now()
	var out tailBuffer
	cmd := suiteCommand(ctx, node, suite, "client", "--command", client, "--scenario", name,
		"--timeout", clientTimeoutMillis, "-o", outDir)
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	v := verdict{pass: runErr == nil, elapsed: time.Since(start)}
	checks, dir, err := readChecks(outDir)
	if err != nil {
		v.pass = false
		v.why = fmt.Sprintf("%v (suite: %v)\n%s", err, runErr, out.String())
		return v
	}
	if v.pass {
		return v
	}
	var why []string
	for _, c := range checks {
		if c.Status == "FAILURE" || c.Status == "WARNING" {
			why = append(why, fmt.Sprintf("%s %s: %s", c.Status, c.ID, c.ErrorMessage))
		}
	}
	if len(why) == 0 {
		why = append(why, fmt.Sprintf("no check failed, the suite exited with %v", runErr))
	}
	if stderr, err := os.ReadFile(filepath.Join(dir, "stderr.txt")); err == nil && len(bytes.TrimSpace(stderr)) > 0 {
		why = append(why, "client stderr: "+lastLine(stderr))
	}
	v.why = strings.Join(why, "; ")
	return v
}

type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// readChecks reads the one checks.json the suite wrote under outDir (in a
// directory named after the scenario and the time).
func readChecks(outDir string) ([]check, string, error) {
	var found []string
	err := filepath.WalkDir(outDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "checks.json" {
			found = append(found, path)
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if len(found) != 1 {
		return nil, "", fmt.Errorf("the suite wrote %d checks.json files, want 1", len(found))
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		return nil, "", err
	}
	var checks []check
	if err := json.Unmarshal(b, &checks); err != nil {
		return nil, "", fmt.Errorf("checks.json: %w", err)
	}
	return checks, filepath.Dir(found[0]), nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// tailBuffer keeps the last 64 KiB written to it: the suite prints every
// check, and only the end matters for a failure.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBufferBytes = 64 << 10

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - tailBufferBytes; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// baseline maps each scenario expected to fail to the reason.
type baseline map[string]string

func (b baseline) has(name string) bool { _, ok := b[name]; return ok }

// readBaseline reads baseline.txt: one scenario a line, its name then the
// reason; blank lines and lines starting with # are comments.
func readBaseline(path string) (baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseBaseline(f.Name(), bufio.NewScanner(f))
}

func parseBaseline(name string, sc *bufio.Scanner) (baseline, error) {
	b := baseline{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		scenario, reason := line, ""
		if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
			scenario, reason = line[:i], strings.TrimSpace(line[i:])
		}
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason: write why it fails after its name", name, n, scenario)
		}
		if b.has(scenario) {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", name, n, scenario)
		}
		b[scenario] = reason
	}
	return b, sc.Err()
}

func TestParseBaseline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		want    baseline
		wantErr string
	}{
		{name: "entries and comments", text: "# why\n\nsse-retry  no reconnection\n  auth/x OAuth: issue 16 \n",
			want: baseline{"sse-retry": "no reconnection", "auth/x": "OAuth: issue 16"}},
		{name: "tab after the name", text: "sse-retry\tno reconnection\n", want: baseline{"sse-retry": "no reconnection"}},
		{name: "no reason", text: "sse-retry\n", wantErr: "baseline.txt:1: sse-retry has no reason"},
		{name: "twice", text: "a one\na two\n", wantErr: "baseline.txt:2: a is listed twice"},
		{name: "empty", text: "", want: baseline{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseBaseline("baseline.txt", bufio.NewScanner(strings.NewReader(tt.text)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("baseline (-want +got):\n%s", diff)
			}
		})
	}
}

// The checked-in baseline parses, and every entry has a reason, also where
// the suite is not installed.
func TestBaselineFile(t *testing.T) {
	t.Parallel()
	if _, err := readBaseline("baseline.txt"); err != nil {
		t.Fatal(err)
	}
}
