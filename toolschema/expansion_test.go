package toolschema

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A recursive schema that applies itself twice to the same nested value
// doubles its work per level of nesting: 60 levels of {"a":{"a":...}} would
// never finish validating. Such a schema fails at load, also when the
// second application hides behind anyOf, patternProperties, $dynamicRef or
// $recursiveRef (SPEC R6.7: an unusable schema fails at load).
func TestNestedExpansionRefusedAtLoad(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, schema string }{
		{"allOf twice", `{"allOf":[{"$ref":"#/$defs/x"},{"$ref":"#/$defs/x"}],"$defs":{"x":{"properties":{"a":{"$ref":"#"}}}}}`},
		{"anyOf twice", `{"anyOf":[{"$ref":"#/$defs/x"},{"$ref":"#/$defs/x"}],"$defs":{"x":{"properties":{"a":{"$ref":"#"}},"required":["z"]}}}`},
		{"property and pattern", `{"properties":{"a":{"$ref":"#"}},"patternProperties":{"^a":{"$ref":"#"}}}`},
		{"items and contains", `{"items":{"$ref":"#"},"contains":{"$ref":"#"}}`},
		{"dynamicRef to the outer anchor", `{"$dynamicAnchor":"a","allOf":[{"$ref":"x"},{"$ref":"x"}],"$defs":{"x":{"$id":"x","$defs":{"leaf":{"$dynamicAnchor":"a"}},"properties":{"a":{"$dynamicRef":"#a"}}}}}`},
		{"recursiveRef to the outer anchor", `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"allOf":[{"$ref":"x"},{"$ref":"x"}],"$defs":{"x":{"$id":"x","$recursiveAnchor":true,"properties":{"a":{"$recursiveRef":"#"}}}}}`},
	}
	for _, tt := range tests {
		_, err := Compile([]byte(tt.schema), nil)
		if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "each level of nesting") {
			t.Errorf("%s: Compile = %v, want a nested expansion error", tt.name, err)
		}
	}
}

// Ordinary recursive schemas, where each nested value meets each recursive
// subschema once, still compile under a small expansion limit.
func TestNestedExpansionAllowsTreeSchemas(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, schema string }{
		{"two recursive properties", `{"properties":{"a":{"$ref":"#"},"b":{"$ref":"#"}}}`},
		{"property and additionalProperties", `{"properties":{"a":{"$ref":"#"}},"additionalProperties":{"$ref":"#"}}`},
		{"prefixItems by position", `{"prefixItems":[{"$ref":"#"},{"$ref":"#"}],"items":{"$ref":"#"}}`},
		{"anyOf of different shapes", `{"anyOf":[{"properties":{"a":{"$ref":"#"}}},{"items":{"$ref":"#"}}]}`},
	}
	for _, tt := range tests {
		if _, err := Compile([]byte(tt.schema), &Options{MaxSchemaExpansion: 10}); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// A $dynamicRef whose static target is harmless but which resolves, at
// validation time, back to the root without consuming input is a cycle:
// it fails at load instead of failing every Validate.
func TestDynamicRefCycleRefusedAtLoad(t *testing.T) {
	t.Parallel()
	schema := `{"$dynamicAnchor":"a","$ref":"x","$defs":{"x":{"$id":"x","$dynamicRef":"#a","$defs":{"y":{"$dynamicAnchor":"a","type":"object"}}}}}`
	_, err := Compile([]byte(schema), nil)
	if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "without consuming any input") {
		t.Errorf("Compile = %v, want a reference cycle error", err)
	}
}

// The load-time analysis itself is bounded: a schema that would need too
// many steps to bound its validation work fails at load, quickly, rather
// than making Compile slow.
func TestNestedExpansionAnalysisBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"allOf":[`)
	for i := range 3000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{}`)
	}
	b.WriteString(`],"properties":{`)
	for i := range 3000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"$ref":"#"}`, i)
	}
	b.WriteString(`}}`)
	_, err := Compile([]byte(b.String()), nil)
	if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "too complex") {
		t.Errorf("Compile = %v, want a too complex error", err)
	}
}

// An item schema that costs thousands of evaluations per value (within
// MaxSchemaExpansion) times a wide array would take minutes: such
// arguments get a root violation before validation, through Validate and
// ValidateValue alike; a narrow array is validated as usual, and a wide
// array against a cheap item schema too.
func TestEvaluationsBoundedPerCall(t *testing.T) {
	t.Parallel()
	var defs []string
	for i := range 12 { // 2^12 evaluations per item
		defs = append(defs, fmt.Sprintf(`"a%d":{"allOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"a12":{"type":"string"}`)
	expensive := mustCompile(t, `{"$defs":{`+strings.Join(defs, ",")+`},"properties":{"x":{"items":{"$ref":"#/$defs/a0"}}}}`)
	cheap := mustCompile(t, `{"properties":{"x":{"items":{"type":"string"}}}}`)
	items := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = "s"
		}
		return out
	}
	wide := `{"x":[` + strings.TrimSuffix(strings.Repeat(`"s",`, 1000), ",") + `]}`
	for name, err := range map[string]error{
		"Validate":      expensive.Validate([]byte(wide)),
		"ValidateValue": expensive.ValidateValue(map[string]any{"x": items(1000)}),
	} {
		if err == nil || !strings.Contains(err.Error(), "Options.MaxEvaluations") {
			t.Errorf("%s, 1000 expensive items: %v, want the evaluation bound", name, err)
		}
	}
	if err := expensive.Validate([]byte(`{"x":["s","s"]}`)); err != nil {
		t.Errorf("2 expensive items: %v", err)
	}
	if err := cheap.Validate([]byte(`{"x":[` + strings.TrimSuffix(strings.Repeat(`"s",`, 100_000), ",") + `]}`)); err != nil {
		t.Errorf("100000 cheap items: %v", err)
	}
}
