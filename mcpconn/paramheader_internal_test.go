package mcpconn

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Issue 25 item 3, MCP 2026-07-28 transports (Schema Extension): the
// constraints on x-mcp-header values, each broken once.
func TestParamBindings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		schema  string
		want    []paramBinding
		wantErr string
	}{
		{name: "none", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "root and nested", schema: `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"o":{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"B"}}}}}`,
			want: []paramBinding{{path: []string{"a"}, name: "A"}, {path: []string{"o", "b"}, name: "B"}}},
		{name: "boolean, every tchar", schema: `{"properties":{"a":{"type":"boolean","x-mcp-header":"!#$%&'*+-.^_|~09azAZ"}}}`,
			want: []paramBinding{{path: []string{"a"}, name: "!#$%&'*+-.^_|~09azAZ"}}},
		{name: "a key spelled with an escape", schema: `{"properties":{"a":{"type":"number","x\u002dmcp-header":"A"}}}`, wantErr: "type number"},
		{name: "empty", schema: `{"properties":{"a":{"type":"string","x-mcp-header":""}}}`, wantErr: "is empty"},
		{name: "not a string", schema: `{"properties":{"a":{"type":"string","x-mcp-header":7}}}`, wantErr: "not a string"},
		{name: "null", schema: `{"properties":{"a":{"type":"string","x-mcp-header":null}}}`, wantErr: "not a string"},
		{name: "space", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`, wantErr: "not an HTTP token"},
		{name: "colon", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"Region:Primary"}}}`, wantErr: "not an HTTP token"},
		{name: "CR LF", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"A\r\nX-Injected"}}}`, wantErr: "not an HTTP token"},
		{name: "non-ASCII", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"Région"}}}`, wantErr: "not an HTTP token"},
		{name: "number", schema: `{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, wantErr: "type number"},
		{name: "object", schema: `{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, wantErr: "not one of string"},
		{name: "array", schema: `{"properties":{"a":{"type":"array","x-mcp-header":"A"}}}`, wantErr: "not one of string"},
		{name: "null type", schema: `{"properties":{"a":{"type":"null","x-mcp-header":"A"}}}`, wantErr: "not one of string"},
		{name: "list of types", schema: `{"properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`, wantErr: "not one of string"},
		{name: "no type", schema: `{"properties":{"a":{"x-mcp-header":"A"}}}`, wantErr: "not one of string"},
		{name: "duplicate", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}}`, wantErr: "used twice"},
		{name: "duplicate in another case, nested", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"MyField"},"o":{"properties":{"b":{"type":"string","x-mcp-header":"myfield"}}}}}`, wantErr: "used twice"},
		{name: "at the root", schema: `{"type":"string","x-mcp-header":"A"}`, wantErr: "outside the chain"},
		{name: "under items", schema: `{"properties":{"l":{"type":"array","items":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}}}`, wantErr: "outside the chain"},
		{name: "under anyOf", schema: `{"anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, wantErr: "outside the chain"},
		{name: "under if", schema: `{"if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, wantErr: "outside the chain"},
		{name: "in $defs", schema: `{"$defs":{"d":{"type":"string","x-mcp-header":"A"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`, wantErr: "outside the chain"},
		{name: "in patternProperties", schema: `{"patternProperties":{"^a":{"type":"string","x-mcp-header":"A"}}}`, wantErr: "outside the chain"},
		{name: "a property named x-mcp-header is no annotation", schema: `{"properties":{"x-mcp-header":{"type":"string"}}}`},
		{name: "data in default, const and enum is no annotation", schema: `{"properties":{"a":{"type":"object","default":{"x-mcp-header":""},"enum":[{"x-mcp-header":1}]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := paramBindings(json.RawMessage(tt.schema))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(paramBinding{}), cmp.Transformer("sorted", sortedBindings)); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
		})
	}
}

// sortedBindings orders bindings by name: properties are walked in map
// order.
func sortedBindings(in []paramBinding) []string {
	var out []string
	for _, b := range in {
		out = append(out, b.name+"="+strings.Join(b.path, "."))
	}
	if len(out) > 1 && out[0] > out[1] {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// MCP 2026-07-28 transports (Value Encoding): the spec's examples, and
// the conversions of integers and booleans.
func TestParamHeaderValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value   string
		want    string
		wantErr string
	}{
		{value: `"us-west1"`, want: "us-west1"},
		{value: `"Hello, 世界"`, want: "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{value: `" padded "`, want: "=?base64?IHBhZGRlZCA=?="},
		{value: `"line1\nline2"`, want: "=?base64?bGluZTEKbGluZTI=?="},
		{value: `"=?base64?literal?="`, want: "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{value: `"us west 1"`, want: "us west 1"},
		{value: `"\ttab"`, want: "=?base64?CXRhYg==?="},
		{value: `"a\u0000b"`, want: "=?base64?YQBi?="},
		{value: `"a\u007fb"`, want: "=?base64?YX9i?="},
		{value: `""`, want: ""},
		{value: `42`, want: "42"},
		{value: `-7`, want: "-7"},
		{value: `1e2`, want: "100"},
		{value: `3.0`, want: "3"},
		{value: `9007199254740991`, want: "9007199254740991"},
		{value: `-9007199254740991`, want: "-9007199254740991"},
		{value: `9007199254740992`, wantErr: "only integers within"},
		{value: `1e300`, wantErr: "only integers within"},
		{value: `1.5`, wantErr: "only integers within"},
		{value: `true`, want: "true"},
		{value: `false`, want: "false"},
		{value: `{"a":1}`, wantErr: "must be a string, an integer or a boolean"},
		{value: `[1]`, wantErr: "must be a string, an integer or a boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Parallel()
			h, bad := paramHeaders([]paramBinding{{path: []string{"v"}, name: "V"}}, json.RawMessage(`{"v":`+tt.value+`}`))
			if tt.wantErr != "" {
				if len(bad) != 1 || !strings.Contains(bad[0].Message, tt.wantErr) || bad[0].Path != "/v" {
					t.Fatalf("violations = %+v, want one on /v containing %q", bad, tt.wantErr)
				}
				if strings.Contains(bad[0].Message, strings.Trim(tt.value, `"`)) {
					t.Errorf("the message carries the value: %q", bad[0].Message)
				}
				return
			}
			if bad != nil {
				t.Fatalf("violations = %+v", bad)
			}
			if diff := cmp.Diff(http.Header{"Mcp-Param-V": {tt.want}}, h); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

// MCP 2026-07-28 transports (Schema Extension): a value absent or null at
// its path has no header; the path is the chain of properties keys.
func TestParamHeadersAbsent(t *testing.T) {
	t.Parallel()
	bs := []paramBinding{{path: []string{"a"}, name: "A"}, {path: []string{"o", "b"}, name: "B"}, {path: []string{"o", "c"}, name: "C"}}
	h, bad := paramHeaders(bs, json.RawMessage(`{"a":null,"o":{"b":"x/y~z"}}`))
	if bad != nil {
		t.Fatal(bad)
	}
	if diff := cmp.Diff(http.Header{"Mcp-Param-B": {"x/y~z"}}, h); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if got := jsonPointer([]string{"a/b", "c~d"}); got != "/a~1b/c~0d" {
		t.Errorf("jsonPointer = %q", got)
	}
}

// The bound covers the names and encoded values of all the call's
// Mcp-Param-* headers: exactly at it is sent, one byte past is refused.
func TestParamHeadersBound(t *testing.T) {
	t.Parallel()
	bs := []paramBinding{{path: []string{"a"}, name: "A"}, {path: []string{"b"}, name: "B"}}
	room := maxParamHeaderBytes - 2*len("Mcp-Param-A")
	args := func(n int) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"a": strings.Repeat("x", room/2), "b": strings.Repeat("y", n)})
		return b
	}
	if _, bad := paramHeaders(bs, args(room-room/2)); bad != nil {
		t.Errorf("at the bound: %+v", bad)
	}
	_, bad := paramHeaders(bs, args(room-room/2+1))
	if len(bad) != 1 || bad[0].Path != "/b" || !strings.Contains(bad[0].Message, "8192 bytes") {
		t.Errorf("past the bound: %+v, want one violation on /b naming 8192 bytes", bad)
	}
}

// A schema nested 2,000 properties deep, annotated at the bottom, is read
// in one decoding (the walk once decoded every level again: a listing of
// tens of MiB that deep cost its size times its depth).
func TestParamBindingsDeep(t *testing.T) {
	t.Parallel()
	const depth = 2000
	var b strings.Builder
	for range depth {
		b.WriteString(`{"type":"object","properties":{"p":`)
	}
	b.WriteString(`{"type":"string","x-mcp-header":"Deep"}`)
	for range depth {
		b.WriteString(`}}`)
	}
	got, err := paramBindings(json.RawMessage(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].name != "Deep" || len(got[0].path) != depth {
		t.Fatalf("bindings = %d, want the one at depth %d", len(got), depth)
	}
	args := strings.Repeat(`{"p":`, depth) + `"v"` + strings.Repeat(`}`, depth)
	h, bad := paramHeaders(got, json.RawMessage(args))
	if bad != nil || h.Get("Mcp-Param-Deep") != "v" {
		t.Errorf("headers = %v, violations = %v", h, bad)
	}
}
