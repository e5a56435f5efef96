// Package need is the one way agt's tests step aside when what a suite
// needs is not on this machine (Node 22 and the npm packages of
// package.json, a PostgreSQL server, an interpreter, the
// JSON-Schema-Test-Suite): Missing skips the test outside CI and fails it
// with CI=true, so that CI cannot pass without running the suite.
//
//	conn := need.Postgres(t) // $AGT_TEST_POSTGRES, or skip (fail with CI=true)
//	if _, err := os.Stat(script); err != nil {
//		need.Missing(t, "Node 22 and the npm packages", "run npm ci at the repository root")
//	}
//
// A plain `go test ./...` hides the output of a package that passes, so a
// t.Skip message alone is seen only with -v. Missing therefore also
// writes one line per test process and need to the terminal (/dev/tty),
// when there is one, naming the package's directory, what it needs and
// how to get it:
//
//	go test: resource/pgrepo skips the tests that need PostgreSQL: set AGT_TEST_POSTGRES ...
//
// A cached result (`ok ... (cached)`) runs no test and writes no line
// again; -count=1 runs the package again.
//
// It is a leaf package (the standard library only), so that the internal
// tests of every package can use it.
package need

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// NPM is what the suites on Node need: the pinned Node 22 and the npm
// packages of package.json, which npm ci installs in node_modules.
const NPM = "Node 22 and the npm packages of package.json"

// EnvPostgres names the variable that holds the connection string of the
// PostgreSQL server the tests use (.ci/run starts one and sets it).
const EnvPostgres = "AGT_TEST_POSTGRES"

// Postgres returns the connection string in $AGT_TEST_POSTGRES (a URL or
// keyword=value pairs), or calls Missing when it is unset.
func Postgres(tb testing.TB) string {
	tb.Helper()
	s := os.Getenv(EnvPostgres)
	if s == "" {
		Missing(tb, "PostgreSQL", "set "+EnvPostgres+" to a connection string (such as \"host=/path/to/socket-dir user=postgres dbname=postgres\"), or run .ci/run, which starts a throwaway server")
	}
	return s
}

// Missing ends the test because what is missing here: with CI=true it
// fails the test (CI installs everything the suites need); elsewhere it
// skips it, and writes the note of the package doc to the terminal once
// per test process and what. how says what to do to run the test.
func Missing(tb testing.TB, what, how string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is missing, but CI=true: %s", what, how)
		return
	}
	if _, seen := noted.LoadOrStore(what, true); !seen {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			writeNote(tty, packageDir(), what, how)
			_ = tty.Close()
		}
	}
	tb.Skipf("needs %s: %s", what, how)
}

// noted holds the needs this process has written a line for.
var noted sync.Map

// writeNote writes the one line Missing shows on the terminal.
func writeNote(w io.Writer, dir, what, how string) {
	fmt.Fprintf(w, "go test: %s skips the tests that need %s: %s\n", dir, what, how)
}

// packageDir is the test's package directory (go test runs a test binary
// there) relative to the repository's root, or as it is when it is not
// below the root.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "this package"
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return wd
	}
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	rel, err := filepath.Rel(root, wd)
	if err != nil || rel == ".." || filepath.IsAbs(rel) || len(rel) > 2 && rel[:3] == ".."+string(filepath.Separator) {
		return wd
	}
	if rel == "." {
		return "the root package"
	}
	return filepath.ToSlash(rel)
}
