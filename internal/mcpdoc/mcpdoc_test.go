package mcpdoc_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/mcpdoc"
)

// TestDocumented checks that docs/registrations.md, where hosts read the
// document format, names every value (quoted, as written in a document).
func TestDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/registrations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	values := slices.Concat([]string{mcpdoc.EraModern, mcpdoc.EraLegacy}, mcpdoc.ProtocolVersions(), mcpdoc.Registrations, mcpdoc.Grants, mcpdoc.Auths)
	for _, v := range values {
		if !strings.Contains(doc, `"`+v+`"`) {
			t.Errorf("docs/registrations.md does not name %q", v)
		}
	}
}
