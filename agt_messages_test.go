package agt_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Library text names fields and what to set: no string of the library
// (outside cmd/ and examples/, tests aside) names a CLI command or cites a
// rule id of the specification. The CLI adds its own hints, mapped from
// the sentinels and codes.
func TestLibraryStringsNameNoCLIAndNoRuleIDs(t *testing.T) {
	t.Parallel()
	bad := regexp.MustCompile(`agt (mcp|agent) |SPEC|\bR[1-8]\.[0-9]|--(cwd|add-mcp|remove-mcp|capability|command)\b`)
	fset := token.NewFileSet()
	files := libraryFiles(t, fset)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && bad.MatchString(lit.Value) {
				t.Errorf("%s: library string %s names the CLI or a rule id", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		for _, cg := range f.Comments {
			if m := regexp.MustCompile(`SPEC|\bR[1-8]\.[0-9]`).FindString(cg.Text()); m != "" {
				t.Errorf("%s: comment cites %q; rule ids belong in tests", fset.Position(cg.Pos()), m)
			}
		}
	}
	if len(files) < 50 {
		t.Fatalf("checked %d files; the walk missed the library", len(files))
	}
}

// libraryFiles parses the library's Go files with their comments: every
// file outside cmd/, examples/ and testdata, tests aside.
func libraryFiles(t *testing.T, fset *token.FileSet) []*ast.File {
	t.Helper()
	var files []*ast.File
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "cmd" || path == "examples" || path == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
