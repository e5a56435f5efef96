package apicheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Surface returns the sorted API lines of the module whose go.mod is in
// root and whose path is modulePath (see the package doc for the format).
func Surface(root, modulePath string) ([]string, error) {
	fset := token.NewFileSet()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root {
			if name == "internal" || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		pkgPath := modulePath
		if rel != "." {
			pkgPath = path.Join(modulePath, filepath.ToSlash(rel))
		}
		pkgLines, err := dirSurface(fset, p, pkgPath)
		if err != nil {
			return err
		}
		lines = append(lines, pkgLines...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// dirSurface returns the API lines of the package in dir: nil for a
// directory without Go files or with package main.
func dirSurface(fset *token.FileSet, dir, pkgPath string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Name.Name == "main" {
			return nil, nil
		}
		if ignored(f) {
			continue
		}
		lines = append(lines, fileSurface(fset, f, pkgPath)...)
	}
	return lines, nil
}

// ignored reports whether f is left out of every build by an
// "//go:build ignore" constraint.
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

func fileSurface(fset *token.FileSet, f *ast.File, pkgPath string) []string {
	var lines []string
	add := func(kind, rest string) { lines = append(lines, pkgPath+" "+kind+" "+rest) }
	expr := func(e ast.Expr) string { return exprString(fset, e) }
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				add("func", d.Name.Name+typeParams(fset, d.Type.TypeParams)+signature(fset, d.Type))
				continue
			}
			recv := d.Recv.List[0].Type
			base := recv
			if s, ok := base.(*ast.StarExpr); ok {
				base = s.X
			}
			if !ast.IsExported(baseName(base)) {
				continue
			}
			add("method", "("+expr(recv)+")."+d.Name.Name+signature(fset, d.Type))
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					lines = append(lines, typeSurface(fset, pkgPath, s)...)
				case *ast.ValueSpec:
					typ := ""
					if s.Type != nil {
						typ = " " + expr(s.Type)
					}
					for _, n := range s.Names {
						if n.IsExported() {
							add(d.Tok.String(), n.Name+typ)
						}
					}
				}
			}
		}
	}
	return lines
}

// typeSurface returns the lines of an exported type: the type itself with
// its kind, and its exported fields or interface methods.
func typeSurface(fset *token.FileSet, pkgPath string, s *ast.TypeSpec) []string {
	name := s.Name.Name
	head := pkgPath + " type " + name + typeParams(fset, s.TypeParams)
	if s.Assign.IsValid() {
		return []string{head + " = " + exprString(fset, s.Type)}
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		lines := []string{head + " struct"}
		for _, fld := range t.Fields.List {
			typ := exprString(fset, fld.Type)
			if len(fld.Names) == 0 { // embedded
				if n := baseName(fld.Type); ast.IsExported(n) {
					lines = append(lines, pkgPath+" field "+name+"."+n+" embedded "+typ)
				}
				continue
			}
			for _, n := range fld.Names {
				if n.IsExported() {
					lines = append(lines, pkgPath+" field "+name+"."+n.Name+" "+typ)
				}
			}
		}
		return lines
	case *ast.InterfaceType:
		lines := []string{head + " interface"}
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 { // embedded interface or type set
				lines = append(lines, pkgPath+" method "+name+" embeds "+exprString(fset, m.Type))
				continue
			}
			ft, _ := m.Type.(*ast.FuncType)
			for _, n := range m.Names {
				if n.IsExported() && ft != nil {
					lines = append(lines, pkgPath+" method "+name+"."+n.Name+signature(fset, ft))
				}
			}
		}
		return lines
	default:
		return []string{head + " " + exprString(fset, s.Type)}
	}
}

// baseName is the name of a type expression without its package,
// pointer or type arguments: "T" for *pkg.T[int].
func baseName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// signature writes a func type's parameters and results by type only.
func signature(fset *token.FileSet, ft *ast.FuncType) string {
	s := "(" + fieldTypes(fset, ft.Params) + ")"
	if ft.Results == nil || len(ft.Results.List) == 0 {
		return s
	}
	r := fieldTypes(fset, ft.Results)
	if len(ft.Results.List) == 1 && len(ft.Results.List[0].Names) <= 1 {
		return s + " " + r
	}
	return s + " (" + r + ")"
}

func typeParams(fset *token.FileSet, fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		var names []string
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		parts = append(parts, strings.Join(names, ", ")+" "+exprString(fset, f.Type))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// fieldTypes lists the types of a parameter or result list, one per name.
func fieldTypes(fset *token.FileSet, fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		t := exprString(fset, f.Type)
		for range max(1, len(f.Names)) {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, ", ")
}

// exprString prints a type expression on one line, without comments.
func exprString(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, stripComments(e)); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// stripComments returns e with the comments of struct fields and
// interface methods removed, so an inline struct prints on one line.
func stripComments(e ast.Expr) ast.Expr {
	ast.Inspect(e, func(n ast.Node) bool {
		if f, ok := n.(*ast.Field); ok {
			f.Doc, f.Comment = nil, nil
		}
		return true
	})
	return e
}
