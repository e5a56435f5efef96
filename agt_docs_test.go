package agt_test

import (
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 27, exports: the package docs give the overview and point to
// docs/ for the full rules. The docs/ files are library text as the doc
// comments are: they cite no rule id of the specification, every one is
// listed in the README, every docs/ file a comment or the README names
// exists, and every link between them reaches a file and a heading.
func TestDocsFolder(t *testing.T) {
	t.Parallel()
	ruleID := regexp.MustCompile(`SPEC|\bR[1-8]\.[0-9]`)
	named := regexp.MustCompile(`docs/[a-z0-9-]+\.md`)
	link := regexp.MustCompile(`\]\(([a-z0-9-]*\.md)?(#[a-z0-9_-]+)?\)`)

	files, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d files in docs/; the package docs point to more", len(files))
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	texts := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(f)
		texts[base] = string(b)
		anchors[base] = headingAnchors(string(b))
		if m := ruleID.FindString(string(b)); m != "" {
			t.Errorf("%s cites %q; rule ids belong in tests", f, m)
		}
		if !strings.Contains(string(readme), "](docs/"+base+")") {
			t.Errorf("README.md does not link %s", f)
		}
	}
	for base, text := range texts {
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			file, frag := m[1], strings.TrimPrefix(m[2], "#")
			if file == "" {
				file = base
			}
			a, ok := anchors[file]
			if !ok {
				t.Errorf("docs/%s links %s, which is not in docs/", base, file)
			} else if frag != "" && !a[frag] {
				t.Errorf("docs/%s links %s#%s, a heading %s does not have", base, file, frag, file)
			}
		}
	}

	// Every docs/ file a comment of the library or the README names exists.
	names := map[string]string{}
	for _, m := range named.FindAllString(string(readme), -1) {
		names[m] = "README.md"
	}
	fset := token.NewFileSet()
	for _, f := range libraryFiles(t, fset) {
		for _, cg := range f.Comments {
			for _, m := range named.FindAllString(cg.Text(), -1) {
				names[m] = fset.Position(cg.Pos()).Filename
			}
		}
	}
	if names["docs/limits.md"] == "" {
		t.Fatal("no comment names docs/limits.md; the walk missed the package docs")
	}
	for name, where := range names {
		if _, ok := texts[filepath.Base(name)]; !ok {
			t.Errorf("%s names %s, which does not exist", where, name)
		}
	}
}

// headingAnchors returns the anchors a Markdown renderer such as GitHub's
// gives the headings of text: lower case, punctuation dropped, spaces as
// hyphens.
func headingAnchors(text string) map[string]bool {
	drop := regexp.MustCompile(`[^\p{L}\p{N}_ -]`)
	out := map[string]bool{}
	inCode := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
	}
	return out
}
