package mcptest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/toolschema"
)

func listTools(t *testing.T, opts *mcptest.ServerOptions) map[string]json.RawMessage {
	t.Helper()
	ctx := context.Background()
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ss, err := mcptest.NewServer(opts).Connect(ctx, serverEnd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, clientEnd, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out := map[string]json.RawMessage{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		out[tool.Name] = raw
	}
	return out
}

// SPEC R1.2: the published schemas carry the refinements added to the
// inferred ones, and every one of them loads under agt's compiler.
func TestSchemasFromGoTypes(t *testing.T) {
	t.Parallel()
	tools := listTools(t, nil)
	wants := map[string][]string{
		mcptest.ToolSearch:     {`"minimum":1`, `"maximum":100`, `"enum":["relevance","newest"]`, `"maxLength":200`, `"pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`, `"required":["query","limit"]`},
		mcptest.ToolTree:       {`"$defs":{"node"`, `"$ref":"#/$defs/node"`},
		mcptest.ToolNoteCreate: {`"pattern":"^[a-z][a-z0-9_-]{0,31}$"`, `"enum":["low","normal","high"]`, `"maxItems":5`},
		mcptest.ToolSleep:      {`"minimum":0`, `"maximum":600000`},
	}
	for name, subs := range wants {
		raw, ok := tools[name]
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		for _, sub := range subs {
			if !strings.Contains(string(raw), sub) {
				t.Errorf("%s schema lacks %s:\n%s", name, sub, raw)
			}
		}
	}
	for name, raw := range tools {
		if _, err := toolschema.Compile(raw, nil); err != nil {
			t.Errorf("%s does not compile: %v", name, err)
		}
	}
}

// Tool faults add their tools; bad schemas are published as they are.
func TestToolFaults(t *testing.T) {
	t.Parallel()
	tools := listTools(t, &mcptest.ServerOptions{Faults: []mcptest.Fault{
		mcptest.FaultManyTools, mcptest.FaultCrashOnCall, mcptest.FaultRootString,
		mcptest.FaultInvalidSchema, mcptest.FaultExternalRef,
	}})
	if want := 8 + mcptest.ManyToolsCount + 1 + 3; len(tools) != want {
		t.Errorf("%d tools; want %d", len(tools), want)
	}
	if got := string(tools["bad_root_string"]); !strings.Contains(got, `"type":"string"`) {
		t.Errorf("bad_root_string schema = %s", got)
	}
	if got := string(tools["bad_external_ref"]); !strings.Contains(got, `https://schemas.example.com/x.json`) {
		t.Errorf("bad_external_ref schema = %s", got)
	}
	if _, ok := tools[mcptest.ToolCrash]; !ok {
		t.Errorf("no crash tool")
	}
}

// Main's exit statuses for the cases that end by themselves.
func TestMainStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantStderr string
	}{
		{name: "unknown fault", args: []string{"-fault", "nope"}, wantStatus: 2, wantStderr: `unknown fault mode "nope"`},
		{name: "unknown flag", args: []string{"-nope"}, wantStatus: 2, wantStderr: "flag provided but not defined"},
		{name: "exit at start", args: []string{"-fault", "exit-at-start"}, wantStatus: 3, wantStderr: "exiting at start"},
		{name: "stdio until stdin closes", args: nil, wantStatus: 0, wantStderr: "serving on stdio"},
		{name: "bad required header", args: []string{"-http", "127.0.0.1:0", "-require-header", "nocolon"}, wantStatus: 2, wantStderr: "Name: value"},
		{name: "negative ttl", args: []string{"-ttl-ms", "-1"}, wantStatus: 2, wantStderr: "-ttl-ms wants a number of milliseconds >= 0"},
		{name: "unknown cache scope", args: []string{"-ttl-ms", "10", "-cache-scope", "shared"}, wantStatus: 2, wantStderr: "-cache-scope public or private"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr strings.Builder
			got := mcptest.Main(tt.args, strings.NewReader(""), &stdout, &stderr)
			if got != tt.wantStatus || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("Main = %d, stderr %q; want %d and %q", got, stderr.String(), tt.wantStatus, tt.wantStderr)
			}
		})
	}
}
