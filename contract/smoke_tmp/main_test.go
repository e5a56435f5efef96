package smoke

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/agtsdk/agt/contract"
	"github.com/agtsdk/agt/resource"
)

func TestSmoke(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		rep := contract.Check(t, resource.MCPServer{Command: "/tmp/clib-fake", Args: []string{"-era", era, "-fault", "contract-drift"}, Cwd: t.TempDir()}, &contract.Options{
			Tools:       []string{"drift_lax", "drift_strict", "drift_crash", "drift_hang", "drift_leak", "drift_business", "drift_internal"},
			CaseTimeout: time.Second,
			Business: []contract.Case{
				{Tool: "drift_business", Name: "known id", Arguments: json.RawMessage(`{"id":"known"}`), Expect: "result", Text: "found"},
				{Tool: "drift_business", Name: "unknown id", Arguments: json.RawMessage(`{"id":"xyz"}`), Expect: "error", Text: "not found"},
				{Tool: "drift_business", Name: "expects too much", Arguments: json.RawMessage(`{"id":"abc"}`), Expect: "result"},
			},
		})
		contract.WriteTable(os.Stdout, rep)
	}
}
