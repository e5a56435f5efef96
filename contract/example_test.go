package contract_test

import (
	"context"
	"fmt"

	"github.com/agtsdk/agt/contract"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// A server whose tool runs arguments its schema refuses: the check finds
// each one laxer.
func ExampleRun() {
	// The fake server in process; a real one is started from srv.
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		Dial: mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultContractDrift}}),
	})
	srv := resource.MCPServer{Command: "drift"}
	rep, err := contract.Run(context.Background(), c, "drift", srv, &contract.Options{Tools: []string{mcptest.ToolDriftLax}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("passed:", rep.Passed())
	for _, f := range rep.Findings {
		if f.Class == contract.Laxer && f.Path == "/count" {
			fmt.Printf("%s: %s (%s)\n", f.Case, f.Class, f.SchemaPath)
		}
	}
	// Output:
	// passed: false
	// missing required /count: laxer (#/required)
	// wrong type /count (string): laxer (#/properties/count/type)
	// minimum past limit /count: laxer (#/properties/count/minimum)
	// maximum past limit /count: laxer (#/properties/count/maximum)
	// integer with a fraction /count: laxer (#/properties/count/type)
}
