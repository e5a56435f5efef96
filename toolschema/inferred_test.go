package toolschema

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// Servers built with the SDK get their inputSchema from jsonschema.For
// (SPEC R1.2); those schemas must compile and validate as their Go types
// decode.
func TestInferredSchemas(t *testing.T) {
	t.Parallel()
	type filter struct {
		Field string `json:"field"`
		Value any    `json:"value,omitempty"`
	}
	type search struct {
		Query   string            `json:"query"`
		Limit   int               `json:"limit,omitempty"`
		Tags    []string          `json:"tags,omitempty"`
		Filter  *filter           `json:"filter,omitempty"`
		Labels  map[string]string `json:"labels,omitempty"`
		Enabled bool              `json:"enabled,omitempty"`
	}
	inferred, err := jsonschema.For[search](nil)
	if err != nil {
		t.Fatal(err)
	}
	one := 1.0
	inferred.Properties["limit"].Minimum = &one
	raw, err := json.Marshal(inferred)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(raw, nil)
	if err != nil {
		t.Fatalf("Compile(%s): %v", raw, err)
	}
	tests := []struct {
		args string
		want []Violation
	}{
		{`{"query":"q","limit":5,"tags":["a"],"filter":{"field":"f","value":3},"labels":{"k":"v"},"enabled":true}`, nil},
		{`{"query":"q","tags":null,"filter":null}`, nil},
		{`{"limit":0,"extra":1,"filter":{"value":1}}`, []Violation{
			{Path: "", SchemaPath: "#/required", Message: `missing required property "query"`},
			{Path: "/extra", SchemaPath: "#/additionalProperties", Message: "property is not allowed"},
			{Path: "/filter", SchemaPath: "#/properties/filter/required", Message: `missing required property "field"`},
			{Path: "/limit", SchemaPath: "#/properties/limit/minimum", Message: "must be >= 1"},
		}},
		{`{"query":1,"labels":{"k":2}}`, []Violation{
			{Path: "/labels/k", SchemaPath: "#/properties/labels/additionalProperties/type", Message: "must be string"},
			{Path: "/query", SchemaPath: "#/properties/query/type", Message: "must be string"},
		}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, violationsOf(t, s.Validate(json.RawMessage(tt.args)))); diff != "" {
			t.Errorf("args %s (-want +got):\n%s\nschema %s", tt.args, diff, raw)
		}
	}
}
