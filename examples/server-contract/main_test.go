package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/contract"
	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveEnv makes the test binary act as the server: the contract tests
// start it as a child process and talk MCP over its stdin and stdout, so
// they exercise the real server, not a client-side schema.
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

// server is this test binary as the server, registered as agt would run
// it, speaking the protocol version pv.
func server(t *testing.T, pv string) resource.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return resource.MCPServer{Command: exe, Cwd: t.TempDir(), Env: map[string]string{serveEnv: "1"}, ProtocolVersion: pv}
}

// The contract of every tool, against the running server in both protocol
// eras: contract.Check derives the cases from the published schemas (valid,
// each required field missing, each wrong type, each bound at and just past
// its limit, patterns, unknown fields, bytes agt never sends), calls the
// server with them and fails on any disagreement; the business cases come
// from mcp-contract.json beside the server. cancel is not read-only, so
// IncludeWrites: each run has a fresh server.
func TestContract(t *testing.T) {
	t.Parallel()
	business, err := contract.ReadCasesFile(contract.CasesFile)
	if err != nil {
		t.Fatal(err)
	}
	// The rules of the schema that must be refused, each by its case.
	refused := []string{
		"reserve: missing required /customer", "reserve: missing required /quantity", "reserve: missing required /sku",
		"reserve: wrong type /quantity (string)", "reserve: integer with a fraction /quantity",
		"reserve: minimum past limit /quantity", "reserve: maximum past limit /quantity",
		"reserve: maxLength past limit /note", "reserve: maxLength past limit /note, astral code points",
		"reserve: pattern mismatch /sku", "reserve: pattern mismatch /customer", "reserve: unknown property",
		"cancel: missing required /caller", "cancel: pattern mismatch /reservation_id",
		"stock: pattern mismatch /sku", "stock: unknown property",
		"reserve: business: unknown article", "reserve: business: insufficient stock",
		"cancel: business: unknown reservation", "stock: business: an unknown article",
	}
	accepted := []string{
		"reserve: business: quantity at maximum", "reserve: business: note at max length", "reserve: business: quantity at minimum",
		"stock: business: one article", "stock: valid: required fields only",
	}
	for _, pv := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(pv, func(t *testing.T) {
			t.Parallel()
			rep := contract.Check(t, server(t, pv), &contract.Options{IncludeWrites: true, Business: business})
			if rep.ProtocolVersion != pv {
				t.Errorf("protocol version %q, want %q", rep.ProtocolVersion, pv)
			}
			got := map[string]contract.Class{}
			for _, tr := range rep.Tools {
				for _, o := range tr.Outcomes {
					got[tr.Name+": "+o.Case] = o.Class
				}
			}
			for _, c := range refused {
				if got[c] != contract.Refused {
					t.Errorf("%s: %q, want refused", c, got[c])
				}
			}
			for _, c := range accepted {
				if got[c] != contract.Accepted {
					t.Errorf("%s: %q, want accepted", c, got[c])
				}
			}
		})
	}
}

// A refusal names the field and the rule, and never a value nor a name
// the caller chose: the go-sdk's own texts quote the value,
// redactArgumentErrors rewrites them and keeps the go-sdk's prefix.
func TestRefusalsNameTheField(t *testing.T) {
	t.Parallel()
	cs := connect(t)
	const secret = "SECRETxyz"
	tests := []struct {
		name, args, errHas string
	}{
		{"missing required", `{"sku":"ABC-0001","quantity":2}`, "customer"},
		{"wrong type", `{"sku":"ABC-0001","quantity":"SECRETxyz","customer":"ada"}`, "quantity"},
		{"below minimum", `{"sku":"ABC-0001","quantity":0,"customer":"ada"}`, "quantity"},
		{"note too long", `{"sku":"XYZ-0042","quantity":1,"customer":"ada","note":"SECRETxyz` + strings.Repeat("n", NoteMaxLen) + `"}`, "note"},
		{"sku pattern", `{"sku":"SECRETxyz","quantity":1,"customer":"ada"}`, "sku"},
		// The unknown key is the caller's: a secret pasted as a name.
		{"unknown field", `{"sku":"ABC-0001","quantity":1,"customer":"ada","SECRETxyz":true}`, "properties the schema does not declare"},
	}
	for _, tt := range tests {
		isErr, text, _ := call(t, cs, "reserve", tt.args)
		if !isErr || !strings.HasPrefix(text, `validating "arguments": `) || !strings.Contains(text, tt.errHas) || strings.Contains(text, secret) {
			t.Errorf("%s: isError=%v text=%q, want a validation error naming %q without the caller's value or key", tt.name, isErr, text, tt.errHas)
		}
	}
}

// A schema-valid cancel is still refused when the caller is not the
// customer: the server checks permission itself.
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
// client such as agt can refuse bad calls before they arrive.
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
