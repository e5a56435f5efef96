package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools of FaultContractDrift. Each declares an input schema and
// disagrees with it one way, for the contract checker (package contract);
// apart from that way each refuses exactly what its schema refuses, with
// messages that carry no argument value.
const (
	// ToolDriftLax declares count (integer 1..10, required) and label
	// (string, at most 8 code points), no other property, and runs any
	// arguments: laxer than its schema.
	ToolDriftLax = "drift_lax"
	// ToolDriftStrict declares text (string, at most 16 code points,
	// required) and ratio (a number). It refuses a text over 8 bytes
	// with the TypeScript SDK's validation text (a tool error), and a ratio with a fraction with JSON-RPC -32602:
	// stricter than its schema, both ways.
	ToolDriftStrict = "drift_strict"
	// ToolDriftCrash declares mode ("safe" or "boom", required) and ends
	// the server (ServerOptions.Crash) on "boom".
	ToolDriftCrash = "drift_crash"
	// ToolDriftHang declares wait (boolean, required) and, when it is
	// true, answers only when the call is cancelled.
	ToolDriftHang = "drift_hang"
	// ToolDriftLeak declares user (string, required) and refuses every
	// valid call with an error that echoes the user: "no such user: ...".
	ToolDriftLeak = "drift_leak"
	// ToolDriftBusiness declares id (lower-case letters, required) and
	// refuses every valid call with "not found: no record with that id",
	// a business rule; DriftKnownID is found.
	ToolDriftBusiness = "drift_business"
	// ToolDriftInternal declares n (integer, required) and answers every
	// valid call with JSON-RPC -32603 internal error.
	ToolDriftInternal = "drift_internal"
	// ToolDriftWrite declares nothing and is not marked read-only (it
	// claims to delete): a checker skips it unless told to call it.
	ToolDriftWrite = "drift_write"
)

// DriftKnownID is the id ToolDriftBusiness finds.
const DriftKnownID = "known"

// Bounds and texts of the drift tools (their doc comments give them).
const (
	driftLabelMaxLen = 8
	driftTextMaxLen  = 16
	driftStrictBytes = 8
	driftNotFound    = "not found: no record with that id"
)

// driftArg is one declared property of a drift tool.
type driftArg struct {
	kind     string // string, integer, number, boolean
	required bool
	enum     []string
	min, max float64 // integer bounds when max > min
	maxLen   int     // code points, when above 0
	lower    bool    // only a-z
}

// check refuses what the declared schema refuses (additionalProperties
// false), with messages that name fields, never values.
func driftCheck(raw json.RawMessage, spec map[string]driftArg) (map[string]any, error) {
	var args map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil || args == nil {
			return nil, errors.New("invalid arguments: not a JSON object")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if _, ok := spec[k]; !ok {
			return nil, errors.New("invalid arguments: a property the schema does not declare")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		a := spec[k]
		v, ok := args[k]
		if !ok {
			if a.required {
				return nil, fmt.Errorf("invalid arguments: %s is required", k)
			}
			continue
		}
		bad := fmt.Errorf("invalid arguments: %s does not match its schema", k)
		switch a.kind {
		case "string":
			s, ok := v.(string)
			if !ok || a.maxLen > 0 && utf8.RuneCountInString(s) > a.maxLen || a.enum != nil && !slices.Contains(a.enum, s) {
				return nil, bad
			}
			if a.lower && (s == "" || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") != "") {
				return nil, bad
			}
		case "integer", "number":
			n, ok := v.(float64)
			if !ok || a.kind == "integer" && n != math.Trunc(n) || a.max > a.min && (n < a.min || n > a.max) {
				return nil, bad
			}
		case "boolean":
			if _, ok := v.(bool); !ok {
				return nil, bad
			}
		}
	}
	return args, nil
}

func driftError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// addDriftTools adds the tools of FaultContractDrift.
func addDriftTools(s *mcp.Server, crash func()) {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	add := func(name, description, schema string, spec map[string]driftArg, run func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error)) {
		s.AddTool(&mcp.Tool{Name: name, Description: description + " (fault mode contract-drift)", Annotations: ro, InputSchema: json.RawMessage(schema)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args, err := driftCheck(req.Params.Arguments, spec)
				if err != nil && spec != nil {
					return driftError(err), nil
				}
				return run(ctx, args)
			})
	}
	ok := func() (*mcp.CallToolResult, error) { return textResult("ok"), nil }

	add(ToolDriftLax, "Counts; runs any arguments",
		fmt.Sprintf(`{"type":"object","properties":{"count":{"type":"integer","minimum":1,"maximum":10},"label":{"type":"string","maxLength":%d}},"required":["count"],"additionalProperties":false}`, driftLabelMaxLen),
		nil, func(context.Context, map[string]any) (*mcp.CallToolResult, error) { return ok() })

	add(ToolDriftStrict, "Stores a short text; refuses more than its schema says",
		fmt.Sprintf(`{"type":"object","properties":{"text":{"type":"string","maxLength":%d},"ratio":{"type":"number"}},"required":["text"],"additionalProperties":false}`, driftTextMaxLen),
		map[string]driftArg{"text": {kind: "string", required: true, maxLen: driftTextMaxLen}, "ratio": {kind: "number"}},
		func(_ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
			if r, has := args["ratio"].(float64); has && r != math.Trunc(r) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: ratio must be a whole number"}
			}
			if len(args["text"].(string)) > driftStrictBytes {
				return driftError(fmt.Errorf("MCP error -32602: Input validation error: Invalid arguments for tool %s: text is too long", ToolDriftStrict)), nil
			}
			return ok()
		})

	add(ToolDriftCrash, "Ends the server on mode boom",
		`{"type":"object","properties":{"mode":{"type":"string","enum":["safe","boom"]}},"required":["mode"],"additionalProperties":false}`,
		map[string]driftArg{"mode": {kind: "string", required: true, enum: []string{"safe", "boom"}}},
		func(_ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
			if args["mode"] == "boom" {
				if crash == nil {
					return nil, errors.New("crash is not possible here: ServerOptions.Crash is not set")
				}
				crash()
				return nil, errors.New("still alive")
			}
			return ok()
		})

	add(ToolDriftHang, "Waits for ever when wait is true",
		`{"type":"object","properties":{"wait":{"type":"boolean"}},"required":["wait"],"additionalProperties":false}`,
		map[string]driftArg{"wait": {kind: "boolean", required: true}},
		func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
			if args["wait"] == true {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return ok()
		})

	add(ToolDriftLeak, "Looks a user up; its error echoes the user",
		`{"type":"object","properties":{"user":{"type":"string","maxLength":64}},"required":["user"],"additionalProperties":false}`,
		map[string]driftArg{"user": {kind: "string", required: true, maxLen: 64}},
		func(_ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
			return driftError(fmt.Errorf("no such user: %s", args["user"])), nil
		})

	add(ToolDriftBusiness, "Finds a record by id",
		`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"}},"required":["id"],"additionalProperties":false}`,
		map[string]driftArg{"id": {kind: "string", required: true, lower: true}},
		func(_ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
			if args["id"] == DriftKnownID {
				return textResult("found"), nil
			}
			return driftError(errors.New(driftNotFound)), nil
		})

	add(ToolDriftInternal, "Fails every valid call with an internal error",
		`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`,
		map[string]driftArg{"n": {kind: "integer", required: true}},
		func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
		})

	s.AddTool(&mcp.Tool{Name: ToolDriftWrite, Description: "Deletes everything (it does not; fault mode contract-drift)",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: jsonschema.Ptr(true)}, InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("deleted"), nil
		})
}
