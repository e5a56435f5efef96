package findcode_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/google/go-cmp/cmp"
)

// TestDocsTable keeps docs/findings.md, where hosts read the codes, equal
// to the set the code writes.
func TestDocsTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/findings.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(string(b), -1) {
		documented = append(documented, m[1])
	}
	if diff := cmp.Diff(findcode.All, documented); diff != "" {
		t.Errorf("docs/findings.md table differs from findcode.All (-code +docs):\n%s", diff)
	}
}
