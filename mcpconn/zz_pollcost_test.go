package mcpconn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

func TestZZPollCost(t *testing.T) {
	if os.Getenv("AGT_POLLCOST") == "" {
		t.Skip()
	}
	for _, era := range []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern} {
		for _, poll := range []string{`{"poll_ms":0}`, `{}`, `{"poll_ms":5000}`} {
			counters := &mcptest.Counters{}
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{Era: era, Faults: []mcptest.Fault{mcptest.FaultTasks}, Counters: counters})})
			s, err := c.Connect(context.Background(), "tools/fake", resource.MCPServer{Type: resource.TransportStdio, Command: "x", Cwd: "/"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Tools(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			s.CallTool(ctx, mcptest.ToolTaskForever, json.RawMessage(poll))
			cancel()
			fmt.Printf("era %s args %s: gets %d in 60 s\n", era, poll, counters.Tasks().Gets)
			s.Close()
			c.Close()
		}
	}
}
