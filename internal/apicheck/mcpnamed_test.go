package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mcpPath is the package a doc must name where a signature uses mcp.
const mcpPath = "github.com/modelcontextprotocol/go-sdk/mcp"

// Every exported type of the root module whose definition uses the
// go-sdk's mcp package, and every exported func or method whose signature
// does, says in its doc which package mcp is (issue 29, item 7), so go doc
// of a callback such as run.ClientFeatures.Elicit names it.
func TestMCPPackageNamed(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var checked int
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "internal" || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := mcpImportName(f)
		if name == "" || f.Name.Name == "main" {
			return nil
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() || !exportedUses(ts.Type, name) {
						continue
					}
					checked++
					if !strings.Contains(decl.Doc.Text()+ts.Doc.Text(), mcpPath) {
						t.Errorf("%s: the doc of type %s does not say that mcp is %s", fset.Position(ts.Pos()), ts.Name.Name, mcpPath)
					}
				}
			case *ast.FuncDecl:
				if !decl.Name.IsExported() || !uses(decl.Type, name) || !exportedRecv(decl) {
					continue
				}
				checked++
				if !strings.Contains(decl.Doc.Text(), mcpPath) {
					t.Errorf("%s: the doc of %s does not say that mcp is %s", fset.Position(decl.Pos()), decl.Name.Name, mcpPath)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no declaration uses mcp: the walk is broken")
	}
}

// mcpImportName is the name under which f imports the go-sdk's mcp
// package; "" when it does not.
func mcpImportName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == mcpPath {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "mcp"
		}
	}
	return ""
}

// uses reports whether n refers to a name of the package imported as pkg.
func uses(n ast.Node, pkg string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg {
				found = true
			}
		}
		return !found
	})
	return found
}

// exportedUses is uses for what go doc shows of a type: the exported
// fields of a struct, all of any other type.
func exportedUses(t ast.Expr, pkg string) bool {
	st, ok := t.(*ast.StructType)
	if !ok {
		return uses(t, pkg)
	}
	for _, f := range st.Fields.List {
		exported := len(f.Names) == 0 // embedded: shown
		for _, n := range f.Names {
			exported = exported || n.IsExported()
		}
		if exported && uses(f.Type, pkg) {
			return true
		}
	}
	return false
}

// exportedRecv reports whether fn is a func, or a method of an exported
// type.
func exportedRecv(fn *ast.FuncDecl) bool {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return true
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
