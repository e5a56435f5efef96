package run

import (
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAuditDocs: the tables of docs/audit.md are the one list of the
// values Record.Event and Record.Stage take; they must name exactly the
// values the Run writes, in pipeline order for the stages.
func TestAuditDocs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	section := func(title string) []string {
		re := regexp.MustCompile("(?s)## " + title + "\n(.*?)(\n## |$)")
		m := re.FindSubmatch(b)
		if m == nil {
			t.Fatalf("docs/audit.md has no section %q", title)
		}
		var vals []string
		for _, row := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllSubmatch(m[1], -1) {
			vals = append(vals, string(row[1]))
		}
		return vals
	}
	if diff := cmp.Diff([]string{eventCall, eventRefresh, eventServerRequest, eventServerLost}, section("Events")); diff != "" {
		t.Errorf("docs/audit.md events (-code +docs):\n%s", diff)
	}
	if diff := cmp.Diff([]string{stageBatch, stageQueued, stageValidate, stagePermission, stageIntercept, stageExecute}, section("Stages")); diff != "" {
		t.Errorf("docs/audit.md stages (-code +docs):\n%s", diff)
	}
}
