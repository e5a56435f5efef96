package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
)

// The versions a scaffolded module starts from: agt's own (its go.mod's go
// line and requirements), so the module builds with what agt is tested
// with. TestScaffoldVersionsFollowGoMod keeps them equal.
const (
	scaffoldGoVersion     = "1.26.0"
	scaffoldSDKVersion    = "v1.8.0" // github.com/modelcontextprotocol/go-sdk
	scaffoldSchemaVersion = "v0.4.3" // github.com/google/jsonschema-go
)

// agtModule is agt's module path, which a scaffolded module's test needs.
const agtModule = "github.com/agtsdk/agt"

// scaffoldFiles are the templates of a new server module, in the order
// they are written, with the name each gets.
var scaffoldFiles = []struct{ tmpl, name string }{
	{"go.mod.tmpl", "go.mod"},
	{"main.go.tmpl", "main.go"},
	{"main_test.go.tmpl", "main_test.go"},
	{"mcp-contract.json.tmpl", "mcp-contract.json"},
	{"README.md.tmpl", "README.md"},
	{"gitignore.tmpl", ".gitignore"},
}

//go:embed scaffold/*.tmpl
var scaffoldFS embed.FS

// maxModulePath bounds --module; the go command has its own, larger
// bounds.
const maxModulePath = 200

func mcpNewCommand() *leaf {
	return &leaf{
		name: "new", min: 1, max: 1,
		args:    "NAME [--dir DIR] [--module PATH] [--agt DIR]",
		summary: "write a new Go MCP server module with a contract test; registers and installs nothing",
		help: `Writes a Go module for an MCP server over stdio into DIR (default: NAME,
under the current directory), which must not exist or be empty: two sample
tools, each with its input as one Go type given to go-sdk's mcp.AddTool (the
schema is inferred from it), business and permission checks in the
handlers, a contract test that runs agt's contract checker against the
server (contract.Check), its business cases (mcp-contract.json), a README
and go.mod.

NAME is the registration's reference (name or category/name, as for 'agt
mcp add'); its name part names the directory, the binary and, unless
--module is given, the module.

Nothing is downloaded, built or registered. agt is not in the Go module
proxy yet: the test's dependency on it needs a replace line to a clone of
agt. --agt DIR writes that line (DIR is your clone); without it, agt prints
the go mod edit command to run. The last line printed is the 'agt mcp add'
command that registers the server once it is built.`,
		define: func(fs *flag.FlagSet) action {
			dir := fs.String("dir", "", "write the module into `DIR` (default: NAME's name part, in the current directory)")
			module := fs.String("module", "", "the module `PATH` in go.mod (default: NAME's name part)")
			agtDir := fs.String("agt", "", "the `DIR` of a clone of agt: go.mod gets a replace line to it")
			return func(ctx context.Context, e *env, args []string) error {
				return mcpNew(e, args[0], *dir, *module, *agtDir)
			}
		},
	}
}

// scaffold is what the templates are filled with.
type scaffold struct {
	Ref           string // the registration reference: NAME as given
	Name          string // its name part: the directory, binary and server name
	Module        string
	GoVersion     string
	SDKVersion    string
	SchemaVersion string
	Replace       string // the replace target for agt in go.mod, or ""
}

func mcpNew(e *env, name, dir, module, agtDir string) error {
	const cmd = "mcp new"
	ref, err := parseRefArg(cmd, name)
	if err != nil {
		return err
	}
	if dir == "" {
		dir = ref.Name()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	if module == "" {
		module = ref.Name()
		if err := checkModulePath(module); err != nil {
			return usagef(cmd, "the name %q is no Go module path (%s): give one with --module PATH", clip(module), err)
		}
	} else if err := checkModulePath(module); err != nil {
		return usagef(cmd, "--module: %s", err)
	}
	if err := refuseNonEmptyDir(abs); err != nil {
		return usagef(cmd, "%s", err)
	}
	s := scaffold{Ref: string(ref), Name: ref.Name(), Module: module,
		GoVersion: scaffoldGoVersion, SDKVersion: scaffoldSDKVersion, SchemaVersion: scaffoldSchemaVersion}
	if agtDir != "" {
		if s.Replace, err = replaceTarget(abs, agtDir); err != nil {
			return usagef(cmd, "--agt: %s", err)
		}
	}
	files, err := renderScaffold(s)
	if err != nil {
		return err
	}
	if err := writeScaffold(abs, files); err != nil {
		return err
	}
	writeNewNextSteps(e.out, s, abs)
	return nil
}

// checkModulePath is a short form of the go command's rule for a module
// path: slash-separated elements of ASCII letters, digits and "-._~", none
// empty, none starting or ending with a dot.
func checkModulePath(p string) error {
	if p == "" || len(p) > maxModulePath {
		return fmt.Errorf("want 1 to %d bytes", maxModulePath)
	}
	for _, el := range strings.Split(p, "/") {
		if el == "" {
			return errors.New("an element between slashes is empty")
		}
		if el[0] == '.' || el[len(el)-1] == '.' {
			return errors.New("an element starts or ends with a dot")
		}
		for i := 0; i < len(el); i++ {
			c := el[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
				return errors.New("only ASCII letters, digits, '-', '.', '_', '~' and '/' may appear")
			}
		}
	}
	if p[0] == '-' {
		return errors.New("it starts with '-'")
	}
	return nil
}

// refuseNonEmptyDir refuses a path that is a file, or a directory with
// anything in it: the scaffold never overwrites.
func refuseNonEmptyDir(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %v", dir, errors.Unwrap(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.IsDir() {
		return fmt.Errorf("%s exists and is not a directory: give another --dir", dir)
	}
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return fmt.Errorf("%s exists and is not empty: give another --dir, or remove what is there", dir)
	}
	return nil
}

// replaceTarget checks that agtDir is a clone of agt (its go.mod names
// module github.com/agtsdk/agt) and returns the replace target for a
// module in moduleDir: absolute when agtDir is, else relative to moduleDir
// as go.mod writes local paths (./ or ../ first); quoted when it has
// characters go.mod reads otherwise.
func replaceTarget(moduleDir, agtDir string) (string, error) {
	abs, err := filepath.Abs(agtDir)
	if err != nil {
		return "", err
	}
	f, err := os.Open(filepath.Join(abs, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("%s has no go.mod: give the directory of a clone of agt", abs)
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, 4<<10))
	first, _, _ := strings.Cut(strings.TrimSpace(string(head)), "\n")
	if strings.TrimSpace(first) != "module "+agtModule {
		return "", fmt.Errorf("%s/go.mod is not agt's (module %s): give the directory of a clone of agt", abs, agtModule)
	}
	target := filepath.ToSlash(abs)
	if rel, err := filepath.Rel(moduleDir, abs); err == nil && !filepath.IsAbs(agtDir) {
		target = filepath.ToSlash(rel)
		if !strings.HasPrefix(target, "../") {
			target = "./" + target
		}
	}
	for _, c := range target {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune("\"'`\\(){}[],;#", c) {
			return strconv.Quote(target), nil
		}
	}
	return target, nil
}

// renderScaffold fills every template; Go files come out gofmt-formatted.
func renderScaffold(s scaffold) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range scaffoldFiles {
		t, err := template.ParseFS(scaffoldFS, "scaffold/"+f.tmpl)
		if err != nil {
			return nil, fmt.Errorf("the scaffold's template %s: %w", f.tmpl, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, s); err != nil {
			return nil, fmt.Errorf("the scaffold's template %s: %w", f.tmpl, err)
		}
		data := b.Bytes()
		if strings.HasSuffix(f.name, ".go") {
			if data, err = format.Source(data); err != nil {
				return nil, fmt.Errorf("the scaffold's %s does not format: %w", f.name, err)
			}
		}
		out[f.name] = data
	}
	return out, nil
}

// writeScaffold creates dir (when missing) and the files in it, never
// replacing a file; on failure it removes what it created.
func writeScaffold(dir string, files map[string][]byte) (err error) {
	made := false
	if _, statErr := os.Stat(dir); errors.Is(statErr, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		made = true
	}
	var written []string
	defer func() {
		if err == nil {
			return
		}
		for _, p := range written {
			os.Remove(p)
		}
		if made {
			os.Remove(dir)
		}
	}()
	for _, f := range scaffoldFiles {
		p := filepath.Join(dir, f.name)
		w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		written = append(written, p)
		_, err = w.Write(files[f.name])
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeNewNextSteps says what was written and the commands that follow,
// the 'agt mcp add' line last.
func writeNewNextSteps(w io.Writer, s scaffold, dir string) {
	names := make([]string, len(scaffoldFiles))
	for i, f := range scaffoldFiles {
		names[i] = f.name
	}
	fmt.Fprintf(w, "wrote an MCP server module (module %s) in %s: %s\n", s.Module, dir, strings.Join(names, ", "))
	fmt.Fprintln(w, "nothing was downloaded, built or registered; next:")
	fmt.Fprintf(w, "  cd %s\n", shellQuote(dir))
	if s.Replace == "" {
		fmt.Fprintf(w, "  go mod edit -replace=%s=PATH   # PATH: your clone of agt (not in the module proxy yet); or give --agt DIR\n", agtModule)
	}
	fmt.Fprintln(w, "  go mod tidy                    # downloads the dependencies")
	fmt.Fprintln(w, "  go test ./...                  # the contract test")
	fmt.Fprintf(w, "  go build -o bin/%s .\n", s.Name)
	fmt.Fprintln(w, "register it with agt:")
	bin := filepath.Join(dir, "bin", s.Name)
	fmt.Fprintf(w, "  agt mcp add %s --cwd %s -- %s\n", s.Ref, shellQuote(dir), shellQuote(bin))
}

// shellQuote makes s one word for a POSIX shell: as it is when it holds
// only characters no shell reads specially, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
