package contract

import (
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// Check runs the contract of srv from a test: it starts the server
// through a Connector with default options (set srv.ProtocolVersion to
// pin an era), runs the check (Run), logs the table, and calls t.Errorf
// once per finding that fails the report (and once if the check could not
// run or ran no case). It returns the report for further assertions.
func Check(t testing.TB, srv resource.MCPServer, opts *Options) *Report {
	t.Helper()
	rep, err := Run(t.Context(), mcpconn.NewConnector(nil), "contract", srv, opts)
	var b strings.Builder
	_ = WriteTable(&b, rep)
	t.Log("contract:\n" + b.String())
	if err != nil {
		t.Errorf("contract: %v", err)
		return rep
	}
	if rep.Error != "" {
		t.Errorf("contract: %s", rep.Error)
	} else if rep.ran() == 0 {
		t.Errorf("contract: no case ran: no tool was planned (%d skipped: Report.Plan.Skipped says why); name the tools to check in Options.Tools, or set Options.IncludeWrites to call tools not marked read-only (readOnlyHint)", len(rep.Plan.Skipped))
	}
	for _, tr := range rep.Tools {
		if tr.Error != "" {
			t.Errorf("contract: tool %s: %s", tr.Name, tr.Error)
		}
		if tr.NotRun > 0 {
			t.Errorf("contract: tool %s: %d cases not run", tr.Name, tr.NotRun)
		}
	}
	for _, f := range rep.Findings {
		if f.Class.Fails() {
			t.Errorf("contract: %s: %s: %s at %s (%s): %s", f.Tool, f.Case, f.Class, orDash(f.Path), orDash(f.SchemaPath), f.Message)
		}
	}
	return rep
}
