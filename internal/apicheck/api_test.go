package apicheck

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites api.txt with the current surface:
//
//	go test ./internal/apicheck -update
var update = flag.Bool("update", false, "rewrite api.txt at the module root with the current exported API")

const modulePath = "github.com/agtsdk/agt"

// TestAPI fails when the exported API of the root module differs from the
// checked-in api.txt, so the surface changes only on purpose (issue 27,
// item 5). After an intended change, run
//
//	go test ./internal/apicheck -update
//
// and commit api.txt with the change; its diff is the API change to review.
func TestAPI(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	lines, err := Surface(root, modulePath)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines, "\n") + "\n"
	file := filepath.Join(root, "api.txt")
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v; create it with: go test ./internal/apicheck -update", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("the exported API differs from api.txt (-api.txt +source):\n%s\n"+
			"If the change is intended, regenerate api.txt and commit it with the change:\n"+
			"\tgo test ./internal/apicheck -update", diff)
	}
}

// TestSurface checks the line format on a fixture module: every kind of
// exported name is listed once; unexported names, test files, package
// main, internal packages and nested modules are not.
func TestSurface(t *testing.T) {
	t.Parallel()
	got, err := Surface(fixtureModule(t), "example.com/mod")
	if err != nil {
		t.Fatal(err)
	}
	const p = "example.com/mod/p "
	want := []string{
		p + "const A",
		p + "const B int",
		p + "field T.Name string",
		p + "field T.U embedded U",
		p + "field T.X float64",
		p + "field T.Y float64",
		p + "func F(int, int, ...string) error",
		p + "func G[K comparable](K)",
		p + "method (*T).M() (int, error)",
		p + "method (T).N()",
		p + "method U.Do(context.Context, int) (string, error)",
		p + "type Alias = T",
		p + "type List[E any] []E",
		p + "type T struct",
		p + "type U interface",
		p + "var V",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Surface (-want +got):\n%s", diff)
	}
}

// fixtureModule copies testdata/mod into a temporary directory with its
// go.mod.txt files named go.mod: kept under another name in the
// repository, the fixture's modules are not nested modules of agt.
func fixtureModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "mod"))); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{".", "nested"} {
		if err := os.Rename(filepath.Join(dir, sub, "go.mod.txt"), filepath.Join(dir, sub, "go.mod")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
