package contract

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/contractdefault"
)

// The Options docs give the defaults as text; the values live in
// contractdefault (the CLI's flag defaults read them): the two stay equal.
func TestOptionsDocsGiveTheDefaults(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("contract.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(strings.ReplaceAll(string(src), "//", "")), " ") // comments reflow freely
	for _, want := range []string{
		fmt.Sprintf("MaxCases bounds the cases generated per tool, the business cases of the tool included. Zero means %d.", contractdefault.MaxCases),
		fmt.Sprintf("Zero means %d s. CaseTimeout time.Duration", int(contractdefault.CaseTimeout.Seconds())),
		fmt.Sprintf("Zero means %d minutes. Timeout time.Duration", int(contractdefault.Timeout.Minutes())),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("contract.go's Options doc lacks %q", want)
		}
	}
}
