package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolParamHeaders is the tool FaultParamHeaders adds: its inputSchema
// marks parameters with x-mcp-header (MCP 2026-07-28, SEP-2243), at the
// root and nested (ParamHeadersSchema), and it answers with the
// Mcp-Param-* headers its request carried, as a JSON object of their
// lower-case names and values ({} on stdio, or when none came). Over
// streamable HTTP in a modern or dual era the go-sdk's stateless server
// checks those headers against the arguments itself before the tool runs
// (400 with HeaderMismatch, -32020, when one is missing or differs); a
// legacy era checks none, and the tool works without them.
const ToolParamHeaders = "param_headers"

// ParamHeadersSchema is the inputSchema of ToolParamHeaders.
const ParamHeadersSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"priority":{"type":"integer","x-mcp-header":"Priority"},` +
	`"verbose":{"type":"boolean","x-mcp-header":"Verbose"},` +
	`"target":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}},` +
	`"note":{"type":"string"}},"required":["region"]}`

// BadParamHeaderTools are the tools FaultParamHeaders adds whose
// x-mcp-header annotations break the spec's constraints, by name, with
// their inputSchema as listed: a client must leave each out. The go-sdk's
// client drops the first four itself; the last (an annotation under items,
// not statically reachable) it keeps.
var BadParamHeaderTools = map[string]string{
	"bad_header_number":    `{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}`,
	"bad_header_duplicate": `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}`,
	"bad_header_token":     `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`,
	"bad_header_empty":     `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
	"bad_header_in_items":  `{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}}}`,
}

// addParamHeaderTools adds ToolParamHeaders, and the tools of
// BadParamHeaderTools to overrides (registered with a harmless schema:
// the go-sdk's server refuses invalid annotations).
func addParamHeaderTools(s *mcp.Server, overrides map[string]json.RawMessage) {
	s.AddTool(&mcp.Tool{Name: ToolParamHeaders, Description: "Answers with the Mcp-Param-* headers of its request (fault mode).",
		InputSchema: json.RawMessage(ParamHeadersSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var h http.Header
			if req.Extra != nil {
				h = req.Extra.Header
			}
			return textResult("%s", ParamHeadersOf(h)), nil
		})
	for name, schema := range BadParamHeaderTools {
		overrides[name] = json.RawMessage(schema)
	}
}

// ParamHeadersOf renders the Mcp-Param-* headers of h as ToolParamHeaders
// answers: a JSON object of lower-case names and the first value of each,
// with sorted keys.
func ParamHeadersOf(h http.Header) string {
	out := map[string]string{}
	for k, v := range h {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "mcp-param-") && len(v) > 0 {
			out[lk] = v[0]
		}
	}
	b, _ := json.Marshal(out) // encoding/json sorts map keys
	return string(b)
}
