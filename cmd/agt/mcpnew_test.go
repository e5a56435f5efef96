package main

import (
	"bytes"
	"context"
	"encoding/json"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/contract"
	"github.com/google/go-cmp/cmp"
)

// repoRoot is the root of the agt module, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// runInProcess runs the CLI's run function with args, stdin empty, and
// returns what it printed.
func runInProcess(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := runCLI(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// The scaffold starts from the versions agt itself is built and tested
// with: the go line and the go-sdk and jsonschema-go requirements of agt's
// go.mod.
func TestScaffoldVersionsFollowGoMod(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "go":
			got["go"] = f[1]
		case len(f) >= 2 && (f[0] == "github.com/modelcontextprotocol/go-sdk" || f[0] == "github.com/google/jsonschema-go"):
			got[f[0]] = f[1]
		}
	}
	want := map[string]string{
		"go":                                     scaffoldGoVersion,
		"github.com/modelcontextprotocol/go-sdk": scaffoldSDKVersion,
		"github.com/google/jsonschema-go":        scaffoldSchemaVersion,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the scaffold's versions differ from agt's go.mod (-scaffold +go.mod):\n%s", diff)
	}
}

// What the templates give: gofmt-clean Go, a business-case file the
// checker reads, and a go.mod with the replace line only when --agt gave
// one.
func TestScaffoldRender(t *testing.T) {
	t.Parallel()
	for _, replace := range []string{"", "../agt"} {
		t.Run("replace="+replace, func(t *testing.T) {
			t.Parallel()
			files, err := renderScaffold(scaffold{Ref: "tools/notes", Name: "notes", Module: "example.com/notes",
				GoVersion: scaffoldGoVersion, SDKVersion: scaffoldSDKVersion, SchemaVersion: scaffoldSchemaVersion, Replace: replace})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range scaffoldFiles {
				names = append(names, f.name)
				if _, ok := files[f.name]; !ok {
					t.Errorf("no %s", f.name)
				}
			}
			if len(files) != len(scaffoldFiles) {
				t.Errorf("%d files; want %v", len(files), names)
			}
			for _, name := range []string{"main.go", "main_test.go"} {
				formatted, err := format.Source(files[name])
				if err != nil || !bytes.Equal(formatted, files[name]) {
					t.Errorf("%s is not gofmt-clean (%v)", name, err)
				}
			}
			cases, err := contract.ReadCases(bytes.NewReader(files["mcp-contract.json"]))
			if err != nil {
				t.Fatalf("mcp-contract.json: %v", err)
			}
			tools := map[string]int{}
			for _, c := range cases {
				tools[c.Tool]++
			}
			if tools["note_read"] == 0 || tools["note_write"] == 0 {
				t.Errorf("mcp-contract.json has no business case for a tool: %v", tools)
			}
			mod := string(files["go.mod"])
			assertContains(t, "go.mod", mod, "module example.com/notes\n", "go "+scaffoldGoVersion+"\n",
				"github.com/modelcontextprotocol/go-sdk "+scaffoldSDKVersion, "github.com/google/jsonschema-go "+scaffoldSchemaVersion,
				"github.com/agtsdk/agt v0.0.0")
			if hasReplace := strings.Contains(mod, "replace "+agtModule+" => "+replace+"\n"); hasReplace != (replace != "") {
				t.Errorf("go.mod with replace %q:\n%s", replace, mod)
			}
			readme := string(files["README.md"])
			assertContains(t, "README.md", readme, "# notes", "go mod tidy", "go test ./...",
				`agt mcp add tools/notes --cwd "$PWD" -- "$PWD/bin/notes"`, "agt mcp contract tools/notes --include-writes")
			if replace == "" {
				assertContains(t, "README.md", readme, "go mod edit -replace=github.com/agtsdk/agt=")
			}
			main := string(files["main.go"])
			assertContains(t, "main.go", main, "mcp.AddTool(", "ReadOnlyHint: true", `Name: "notes"`, "permission denied")
		})
	}
}

func TestModulePathRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		ok   bool
	}{
		{"notes", true},
		{"example.com/team/notes-server", true},
		{"github.com/A_b/c~d", true},
		{"", false},
		{"notes.", false},
		{".notes", false},
		{"a//b", false},
		{"a/", false},
		{"-notes", false},
		{"a b", false},
		{"a\nb", false},
		{`a"b`, false},
		{"é", false},
		{strings.Repeat("a", maxModulePath+1), false},
	}
	for _, tt := range tests {
		if err := checkModulePath(tt.path); (err == nil) != tt.ok {
			t.Errorf("checkModulePath(%q) = %v; want ok %v", tt.path, err, tt.ok)
		}
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"/srv/notes/bin/notes", "/srv/notes/bin/notes"},
		{"/home/ada/my notes", "'/home/ada/my notes'"},
		{"/tmp/$HOME", "'/tmp/$HOME'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %s; want %s", tt.in, got, tt.want)
		}
	}
}

// --agt: a relative DIR gives a path relative to the module, an absolute
// one stays absolute, and a directory that is not agt's clone is refused.
func TestScaffoldReplaceTarget(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	clone := filepath.Join(base, "agt clone")
	other := filepath.Join(base, "other")
	for dir, mod := range map[string]string{clone: "module " + agtModule + "\n\ngo 1.25.0\n", other: "module example.com/other\n"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	moduleDir := filepath.Join(base, "work", "notes")
	got, err := replaceTarget(moduleDir, clone)
	if want := `"` + filepath.ToSlash(clone) + `"`; err != nil || got != want {
		t.Errorf("absolute --agt: %q, %v; want %s", got, err, want)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(base, "other"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replaceTarget(moduleDir, rel); err == nil || !strings.Contains(err.Error(), "not agt's") {
		t.Errorf("--agt of another module: %v", err)
	}
	if _, err := replaceTarget(moduleDir, filepath.Join(base, "missing")); err == nil || !strings.Contains(err.Error(), "no go.mod") {
		t.Errorf("--agt without go.mod: %v", err)
	}
	relClone, err := filepath.Rel(wd, clone)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := replaceTarget(moduleDir, relClone); err != nil || got != `"../../agt clone"` {
		t.Errorf("relative --agt: %q, %v; want \"../../agt clone\" (quoted: a space)", got, err)
	}
}

// Usage errors of agt mcp new exit 2 and write nothing.
func TestMCPNewUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh")
	assertUsageErrors(t, "", []usageCase{
		{"bad name", []string{"mcp", "new", "Notes", "--dir", fresh}, "may only hold lowercase letters"},
		{"three segments", []string{"mcp", "new", "a/b/c", "--dir", fresh}, "write name or category/name"},
		{"name is no module path", []string{"mcp", "new", "notes.", "--dir", fresh}, "give one with --module PATH"},
		{"bad module", []string{"mcp", "new", "notes", "--dir", fresh, "--module", "a//b"}, "--module: an element between slashes is empty"},
		{"non-empty dir", []string{"mcp", "new", "notes", "--dir", full}, "exists and is not empty"},
		{"a file", []string{"mcp", "new", "notes", "--dir", file}, "is not a directory"},
		{"agt is no clone", []string{"mcp", "new", "notes", "--dir", fresh, "--agt", dir}, "--agt: "},
		{"no name", []string{"mcp", "new"}, "exactly 1 positional argument"},
	})
	if b, err := os.ReadFile(filepath.Join(full, "keep.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the existing file changed: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(full)
	if len(entries) != 1 {
		t.Errorf("agt mcp new wrote into a non-empty directory: %d entries", len(entries))
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Errorf("a refused agt mcp new created %s", fresh)
	}
}

// agt mcp new writes the module into an empty directory (or a new one),
// says the files, and ends with the agt mcp add line with absolute paths;
// without --agt it prints the go mod edit command instead.
func TestMCPNewWrites(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	r := runInProcess(t, "mcp", "new", "tools/notes", "--dir", empty)
	if r.code != 0 {
		t.Fatalf("agt mcp new into an empty dir: exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if want := "  agt mcp add tools/notes --cwd " + empty + " -- " + filepath.Join(empty, "bin", "notes"); lines[len(lines)-1] != want {
		t.Errorf("last line %q; want %q", lines[len(lines)-1], want)
	}
	assertContains(t, "agt mcp new's output", r.stdout, "go mod edit -replace=github.com/agtsdk/agt=PATH", "go mod tidy", "nothing was downloaded, built or registered")
	var got []string
	entries, err := os.ReadDir(empty)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{".gitignore", "README.md", "go.mod", "main.go", "main_test.go", "mcp-contract.json"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	mod, _ := os.ReadFile(filepath.Join(empty, "go.mod"))
	if strings.Contains(string(mod), "replace") {
		t.Errorf("go.mod without --agt has a replace:\n%s", mod)
	}
	// Again into the same directory: refused, nothing replaced.
	if r := runInProcess(t, "mcp", "new", "tools/notes", "--dir", empty); r.code != exitUsage || !strings.Contains(r.stderr, "not empty") {
		t.Errorf("agt mcp new over its own output: exit %d\n%s", r.code, r.stderr)
	}
}

// goEnv is the environment of the go command for an offline build of a
// scaffolded module: the module cache only (GOPROXY=off), -mod=mod so the
// build may complete go.mod and go.sum from the cache (never CI's
// -mod=readonly), no workspace, and the local toolchain.
func goEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOFLAGS", "GOPROXY", "GOWORK", "GOTOOLCHAIN", "GONOSUMDB", "GONOSUMCHECK", "GOSUMDB", "GOPRIVATE", "GONOPROXY":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
}

// The scaffold is a working server: the module agt mcp new writes
// (with --agt pointing at this repository) vets, builds and passes its own
// contract test offline, and the built server, registered with agt,
// probes ok and passes agt mcp contract in both protocol eras (go-sdk
// v1.8.0 serves 2026-07-28 and 2025-11-25 alike).
func TestScaffoldBuildsAndPassesItsContract(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no go command in PATH, and CI=true")
		}
		t.Skip("no go command in PATH: the scaffolded module cannot be built")
	}
	root := repoRoot(t)
	dir := filepath.Join(t.TempDir(), "notes")
	r := runInProcess(t, "mcp", "new", "notes", "--dir", dir, "--agt", root)
	if r.code != 0 {
		t.Fatalf("agt mcp new: exit %d\n%s", r.code, r.stderr)
	}
	// agt's own go.sum holds every module the scaffold needs, verified:
	// with it the go command needs neither the proxy nor the checksum
	// database.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	goRun := func(args ...string) string {
		t.Helper()
		start := time.Now()
		cmd := exec.CommandContext(ctx, goTool, args...)
		cmd.Dir, cmd.Env = dir, goEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in the scaffolded module: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("go %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		return string(out)
	}
	goRun("vet", "./...")
	bin := filepath.Join(dir, "bin", "notes")
	goRun("build", "-o", bin, ".")
	out := goRun("test", "-count=1", "-v", ".")
	assertContains(t, "go test of the scaffold", out, "--- PASS: TestContract/modern", "--- PASS: TestContract/legacy",
		"--- PASS: TestSchemaForNamesAMissingProperty")

	// Registered as agt mcp new says, with each era pinned in a store of
	// its own.
	for _, era := range []struct{ pin, version string }{{"modern", "2026-07-28"}, {"legacy", "2025-11-25"}} {
		t.Run(era.pin, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			ref := "notes-" + era.pin
			if r := runInProcess(t, "--db", db, "mcp", "add", ref, "--cwd", dir, "--protocol-version", era.pin, "--", bin); r.code != 0 {
				t.Fatalf("agt mcp add: exit %d\n%s", r.code, r.stderr)
			}
			r := runInProcess(t, "--db", db, "mcp", "probe", ref, "--json", "--strict")
			if r.code != 0 {
				t.Fatalf("agt mcp probe: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			var rep struct {
				ProtocolVersion string `json:"protocol_version"`
				Server          struct {
					Name string `json:"name"`
				} `json:"server"`
				Tools []struct {
					Name string `json:"name"`
					OK   bool   `json:"ok"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("probe --json: %v\n%s", err, r.stdout)
			}
			type tool struct {
				Name string
				OK   bool
			}
			var tools []tool
			for _, tl := range rep.Tools {
				tools = append(tools, tool{tl.Name, tl.OK})
			}
			if diff := cmp.Diff([]tool{{"note_read", true}, {"note_write", true}}, tools); diff != "" {
				t.Errorf("probed tools (-want +got):\n%s", diff)
			}
			if rep.ProtocolVersion != era.version || rep.Server.Name != "notes" {
				t.Errorf("probe: protocol %q, server %q; want %q, notes", rep.ProtocolVersion, rep.Server.Name, era.version)
			}

			// The contract check through the registration, as the
			// scaffold's README says: the business cases come from
			// mcp-contract.json in the server's cwd.
			r = runInProcess(t, "--db", db, "mcp", "contract", ref, "--include-writes", "--json")
			if r.code != 0 {
				t.Fatalf("agt mcp contract: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			var crep struct {
				ProtocolVersion string `json:"protocol_version"`
				Tools           []struct {
					Name  string `json:"name"`
					Cases int    `json:"cases"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &crep); err != nil {
				t.Fatalf("contract --json: %v\n%s", err, r.stdout)
			}
			if crep.ProtocolVersion != era.version || len(crep.Tools) != 2 {
				t.Errorf("agt mcp contract: protocol %q, %d tools; want %q, 2\n%s", crep.ProtocolVersion, len(crep.Tools), era.version, r.stdout)
			}
			for _, tl := range crep.Tools {
				if tl.Cases == 0 {
					t.Errorf("agt mcp contract ran no case of %s", tl.Name)
				}
			}
			assertContains(t, "agt mcp contract's plan", r.stderr, "business cases: 7 from ")
		})
	}
}

// The value-free rewrite of go-sdk's validation errors is one rule: the
// scaffold's server and examples/server-contract (separate programs, so
// each holds a copy) keep the go-sdk prefix and hide the caller's names
// the same way. Their code, comments aside, is the same.
func TestScaffoldRedactionMatchesTheExample(t *testing.T) {
	t.Parallel()
	tmpl, err := scaffoldFS.ReadFile("scaffold/main.go.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "server-contract", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	code := func(name string, src []byte) string {
		t.Helper()
		s := string(src)
		start := strings.Index(s, "\nfunc redactArgumentErrors(")
		end := strings.Index(s, "\nfunc notRuleWord(")
		if start < 0 || end < start {
			t.Fatalf("%s: no redactArgumentErrors ... notRuleWord", name)
		}
		var lines []string
		for _, l := range strings.Split(s[start:end], "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	if diff := cmp.Diff(code("the scaffold", tmpl), code("the example", example)); diff != "" {
		t.Errorf("the example's redaction differs from the scaffold's (-scaffold +example):\n%s", diff)
	}
}
