package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveEnv makes the test binary act as the server: the contract tests
// start it as a child process and talk MCP over its stdin and stdout, so
// they exercise the real server, not a client-side schema (SPEC R1.3).
const serveEnv = "SERVER_CONTRACT_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := run(context.Background(), nil, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// connect starts the server over stdio and returns a session closed at the
// end of the test.
func connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=1")
	client := mcp.NewClient(&mcp.Implementation{Name: "contract-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("starting the server: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call makes one tools/call and returns whether it failed and its text.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args string) (isError bool, text string, structured map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("bad test arguments %s: %v", args, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: a})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if m, ok := res.StructuredContent.(map[string]any); ok {
		structured = m
	}
	return res.IsError, b.String(), structured
}

// The contract of reserve, one row per rule, against the running server
// (SPEC R1.3): valid, missing required, wrong type, each bound exactly at
// and just past its limit, and business errors.
func TestReserveContract(t *testing.T) {
	t.Parallel()
	note200 := strings.Repeat("n", NoteMaxLen)
	tests := []struct {
		name    string
		args    string
		wantErr bool
		errHas  string // in the error text
	}{
		{name: "valid", args: `{"sku":"ABC-0001","quantity":2,"customer":"ada"}`},
		{name: "missing required customer", args: `{"sku":"ABC-0001","quantity":2}`, wantErr: true, errHas: "customer"},
		{name: "wrong type quantity", args: `{"sku":"ABC-0001","quantity":"2","customer":"ada"}`, wantErr: true, errHas: "quantity"},
		{name: "quantity at minimum", args: `{"sku":"ABC-0001","quantity":1,"customer":"ada"}`},
		{name: "quantity below minimum", args: `{"sku":"ABC-0001","quantity":0,"customer":"ada"}`, wantErr: true, errHas: "quantity"},
		{name: "quantity at maximum", args: `{"sku":"ABC-0001","quantity":10,"customer":"bob"}`},
		{name: "quantity above maximum", args: `{"sku":"ABC-0001","quantity":11,"customer":"ada"}`, wantErr: true, errHas: "quantity"},
		{name: "note at max length", args: `{"sku":"XYZ-0042","quantity":1,"customer":"ada","note":"` + note200 + `"}`},
		{name: "note past max length", args: `{"sku":"XYZ-0042","quantity":1,"customer":"ada","note":"` + note200 + `n"}`, wantErr: true, errHas: "note"},
		{name: "sku pattern", args: `{"sku":"abc-1","quantity":1,"customer":"ada"}`, wantErr: true, errHas: "sku"},
		{name: "unknown field", args: `{"sku":"ABC-0001","quantity":1,"customer":"ada","rush":true}`, wantErr: true, errHas: "rush"},
		{name: "business: unknown article", args: `{"sku":"QQQ-0000","quantity":1,"customer":"ada"}`, wantErr: true, errHas: "unknown article"},
		{name: "business: insufficient stock", args: `{"sku":"XYZ-0042","quantity":9,"customer":"ada"}`, wantErr: true, errHas: "insufficient stock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := connect(t) // a fresh server: rows do not share stock
			isErr, text, _ := call(t, cs, "reserve", tt.args)
			if isErr != tt.wantErr {
				t.Fatalf("isError = %v, want %v; text: %s", isErr, tt.wantErr, text)
			}
			if tt.wantErr && !strings.Contains(text, tt.errHas) {
				t.Errorf("error %q does not mention %q", text, tt.errHas)
			}
		})
	}
}

// A schema-valid cancel is still refused when the caller is not the
// customer: the server checks permission itself (SPEC R1.4).
func TestCancelChecksPermission(t *testing.T) {
	t.Parallel()
	cs := connect(t)
	isErr, text, out := call(t, cs, "reserve", `{"sku":"XYZ-0042","quantity":2,"customer":"ada"}`)
	if isErr {
		t.Fatalf("reserve: %s", text)
	}
	id, _ := out["reservation_id"].(string)

	isErr, text, _ = call(t, cs, "cancel", `{"reservation_id":"`+id+`","caller":"eve"}`)
	if !isErr || !strings.Contains(text, "permission denied") {
		t.Fatalf("cancel by another caller: isError=%v text=%q, want permission denied", isErr, text)
	}
	isErr, text, out = call(t, cs, "cancel", `{"reservation_id":"`+id+`","caller":"ada"}`)
	if isErr {
		t.Fatalf("cancel by the customer: %s", text)
	}
	if diff := cmp.Diff(map[string]any{"remaining": 3.0}, out); diff != "" {
		t.Errorf("cancel result (-want +got):\n%s", diff)
	}
	isErr, text, _ = call(t, cs, "cancel", `{"reservation_id":"`+id+`","caller":"ada"}`)
	if !isErr || !strings.Contains(text, "not found") {
		t.Errorf("second cancel: isError=%v text=%q, want not found", isErr, text)
	}
}

// The schema the server publishes carries the bounds of its Go type, so a
// client such as agt can refuse bad calls before they arrive (SPEC R1.2).
func TestPublishedSchemaHasTheBounds(t *testing.T) {
	t.Parallel()
	cs := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	for _, tool := range res.Tools {
		if tool.Name == "reserve" {
			raw, _ := json.Marshal(tool.InputSchema)
			_ = json.Unmarshal(raw, &got)
		}
	}
	props, _ := got["properties"].(map[string]any)
	quantity, _ := props["quantity"].(map[string]any)
	want := map[string]any{"type": "integer", "minimum": 1.0, "maximum": 10.0, "description": "how many, 1 to 10"}
	if diff := cmp.Diff(want, quantity); diff != "" {
		t.Errorf("quantity schema (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"sku", "quantity", "customer"}, got["required"]); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
}

func TestRunRefusesArguments(t *testing.T) {
	t.Parallel()
	if err := run(context.Background(), []string{"--banner"}, strings.NewReader(""), new(strings.Builder)); err == nil {
		t.Error("run with an argument: no error")
	}
}
