package toolschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustCompile(t *testing.T, raw string) *Schema {
	t.Helper()
	s, err := Compile([]byte(raw), nil)
	if err != nil {
		t.Fatalf("Compile(%s): %v", raw, err)
	}
	return s
}

func violationsOf(t *testing.T, err error) []Violation {
	t.Helper()
	if err == nil {
		return nil
	}
	var aerr *ArgumentError
	if !errors.As(err, &aerr) {
		t.Fatalf("error %T (%v), want *ArgumentError", err, err)
	}
	return aerr.Violations
}

// SPEC R6.1: 2020-12 by default, the five standard dialects recognised,
// anything else refused as an unsupported dialect.
func TestR6_1_Dialects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema  string
		dialect string // "" when the schema must fail
	}{
		{`{"type":"object"}`, dialect2020},
		{`true`, dialect2020},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema"}`, dialect2020},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema#"}`, dialect2020},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema"}`, dialect2019},
		{`{"$schema":"http://json-schema.org/draft-07/schema#"}`, dialect7},
		{`{"$schema":"http://json-schema.org/draft-07/schema"}`, dialect7},
		{`{"$schema":"https://json-schema.org/draft-07/schema#"}`, dialect7},
		{`{"$schema":"http://json-schema.org/draft-06/schema#"}`, dialect6},
		{`{"$schema":"http://json-schema.org/draft-04/schema#"}`, dialect4},
		{`{"$schema":"http://json-schema.org/draft-03/schema#"}`, ""},
		{`{"$schema":"https://json-schema.org/schema"}`, ""},
		{`{"$schema":"https://json-schema.org/draft/2020-12/meta/validation"}`, ""},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema#/$defs/x"}`, ""},
		{`{"$schema":"https://example.com/my-dialect"}`, ""},
		{`{"$schema":"file:///etc/passwd"}`, ""},
		{`{"$schema":7}`, ""},
		{`{"$defs":{"x":{"$id":"https://example.com/x","$schema":"https://example.com/custom"}}}`, ""},
	}
	for _, tt := range tests {
		s, err := Compile([]byte(tt.schema), nil)
		if tt.dialect == "" {
			if !errors.Is(err, ErrUnsupportedDialect) {
				t.Errorf("Compile(%s) = %v, want ErrUnsupportedDialect", tt.schema, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Compile(%s): %v", tt.schema, err)
			continue
		}
		if got := s.Dialect(); got != tt.dialect {
			t.Errorf("Compile(%s).Dialect() = %q, want %q", tt.schema, got, tt.dialect)
		}
	}
}

// SPEC R6.1: the dialect decides semantics: draft-07 ignores the siblings of
// $ref, 2020-12 applies them.
func TestR6_1_DialectSemantics(t *testing.T) {
	t.Parallel()
	const body = `"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s","maxLength":2}}}`
	draft7 := mustCompile(t, `{"$schema":"http://json-schema.org/draft-07/schema#",`+body)
	draft2020 := mustCompile(t, `{`+body)
	args := json.RawMessage(`{"a":"abcd"}`)
	if err := draft7.Validate(args); err != nil {
		t.Errorf("draft-07 applied a $ref sibling: %v", err)
	}
	want := []Violation{{Path: "/a", SchemaPath: "#/properties/a/maxLength", Message: "must be at most 2 characters long"}}
	if diff := cmp.Diff(want, violationsOf(t, draft2020.Validate(args))); diff != "" {
		t.Errorf("2020-12 violations (-want +got):\n%s", diff)
	}
}

// SPEC R6.2: recursion, required, enum/const, arrays, ranges, lengths,
// combinators and local references are enforced as the schema says.
func TestR6_2_Constraints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema string
		args   string
		want   []Violation
	}{
		{"required", `{"required":["a","b"]}`, `{"b":1}`,
			[]Violation{{"", "#/required", `missing required property "a"`}}},
		{"enum", `{"properties":{"s":{"enum":["asc","desc"]}}}`, `{"s":"up"}`,
			[]Violation{{"/s", "#/properties/s/enum", `must be one of ["asc", "desc"]`}}},
		{"const", `{"properties":{"v":{"const":3}}}`, `{"v":4}`,
			[]Violation{{"/v", "#/properties/v/const", `must be 3`}}},
		{"type", `{"properties":{"n":{"type":"integer"}}}`, `{"n":1.5}`,
			[]Violation{{"/n", "#/properties/n/type", `must be integer`}}},
		{"integer-valued float is an integer", `{"properties":{"n":{"type":"integer"}}}`, `{"n":2.0}`, nil},
		{"minItems", `{"properties":{"l":{"type":"array","minItems":2}}}`, `{"l":[1]}`,
			[]Violation{{"/l", "#/properties/l/minItems", `must have at least 2 items`}}},
		{"items", `{"properties":{"l":{"items":{"type":"string"}}}}`, `{"l":["x",2]}`,
			[]Violation{{"/l/1", "#/properties/l/items/type", `must be string`}}},
		{"prefixItems", `{"properties":{"l":{"prefixItems":[{"type":"string"}],"items":false}}}`, `{"l":["x",2]}`,
			[]Violation{{"/l/1", "#/properties/l/items", `is not allowed by the schema`}}},
		{"uniqueItems", `{"properties":{"l":{"uniqueItems":true}}}`, `{"l":[1,2,1.0]}`,
			[]Violation{{"/l/2", "#/properties/l/uniqueItems", `equals an earlier item; items must be unique`}}},
		{"minimum", `{"properties":{"n":{"minimum":1}}}`, `{"n":0}`,
			[]Violation{{"/n", "#/properties/n/minimum", `must be >= 1`}}},
		{"exclusiveMaximum", `{"properties":{"n":{"exclusiveMaximum":2.5}}}`, `{"n":2.5}`,
			[]Violation{{"/n", "#/properties/n/exclusiveMaximum", `must be < 2.5`}}},
		{"multipleOf exact", `{"properties":{"n":{"multipleOf":0.01}}}`, `{"n":0.07}`, nil},
		{"multipleOf", `{"properties":{"n":{"multipleOf":0.01}}}`, `{"n":0.075}`,
			[]Violation{{"/n", "#/properties/n/multipleOf", `must be a multiple of 0.01`}}},
		{"minLength counts code points", `{"properties":{"s":{"minLength":3}}}`, `{"s":"é😀"}`,
			[]Violation{{"/s", "#/properties/s/minLength", `must be at least 3 characters long`}}},
		{"maxLength", `{"properties":{"s":{"maxLength":1}}}`, `{"s":"ab"}`,
			[]Violation{{"/s", "#/properties/s/maxLength", `must be at most 1 characters long`}}},
		{"pattern", `{"properties":{"s":{"pattern":"^[a-z]+$"}}}`, `{"s":"ABC"}`,
			[]Violation{{"/s", "#/properties/s/pattern", `must match pattern "^[a-z]+$"`}}},
		{"anyOf", `{"properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, `{"v":true}`,
			[]Violation{
				{"/v", "#/properties/v/anyOf/0/type", `must be string`},
				{"/v", "#/properties/v/anyOf/1/type", `must be integer`},
			}},
		{"oneOf both", `{"properties":{"v":{"oneOf":[{"type":"integer"},{"minimum":0}]}}}`, `{"v":1}`,
			[]Violation{{"/v", "#/properties/v/oneOf", `must match exactly one schema in oneOf, but matches more than one`}}},
		{"not", `{"properties":{"v":{"not":{"type":"null"}}}}`, `{"v":null}`,
			[]Violation{{"/v", "#/properties/v/not", `must not match the schema in not`}}},
		{"allOf", `{"allOf":[{"required":["a"]},{"required":["b"]}]}`, `{}`,
			[]Violation{
				{"", "#/allOf/0/required", `missing required property "a"`},
				{"", "#/allOf/1/required", `missing required property "b"`},
			}},
		{"if-then", `{"if":{"properties":{"k":{"const":"x"}}},"then":{"required":["x"]}}`, `{"k":"x"}`,
			[]Violation{{"", "#/then/required", `missing required property "x"`}}},
		{"dependentRequired", `{"dependentRequired":{"a":["b"]}}`, `{"a":1}`,
			[]Violation{{"", "#/dependentRequired/a", `property "a" requires property "b"`}}},
		{"local $ref", `{"$defs":{"pos":{"type":"integer","minimum":1}},"properties":{"n":{"$ref":"#/$defs/pos"}}}`, `{"n":0}`,
			[]Violation{{"/n", "#/$defs/pos/minimum", `must be >= 1`}}},
		{"$anchor", `{"$defs":{"p":{"$anchor":"pos","minimum":1}},"properties":{"n":{"$ref":"#pos"}}}`, `{"n":0}`,
			[]Violation{{"/n", "#/$defs/p/minimum", `must be >= 1`}}},
		{"recursion", `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"properties":{"tree":{"$ref":"#/$defs/node"}}}`,
			`{"tree":{"v":1,"kids":[{"v":2,"kids":[{"v":"x"}]}]}}`,
			[]Violation{{"/tree/kids/0/kids/0/v", "#/$defs/node/properties/v/type", `must be integer`}}},
		{"embedded resource", `{"$id":"https://example.com/root.json","$defs":{"x":{"$id":"x.json","type":"string"}},"properties":{"a":{"$ref":"x.json"}}}`, `{"a":1}`,
			[]Violation{{"/a", "#/$defs/x/type", `must be string`}}},
		{"propertyNames", `{"propertyNames":{"maxLength":3}}`, `{"abcd":1}`,
			[]Violation{{"/abcd", "#/propertyNames", `property name is not allowed by propertyNames`}}},
		{"escaped pointers", `{"properties":{"a/b~c d":{"type":"string"}}}`, `{"a/b~c d":1}`,
			[]Violation{{"/a~1b~0c d", "#/properties/a~1b~0c%20d/type", `must be string`}}},
		{"unevaluatedProperties", `{"properties":{"a":true},"unevaluatedProperties":false}`, `{"a":1,"b":2}`,
			[]Violation{{"/b", "#/unevaluatedProperties", `is not allowed by the schema`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := mustCompile(t, tt.schema)
			got := violationsOf(t, s.Validate(json.RawMessage(tt.args)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// SPEC R6.3: a tool input schema whose root explicitly declares a
// non-object type is refused at load, following $ref chains and allOf;
// false is refused; arguments that are not an object are refused.
func TestR6_3_RootMustBeObject(t *testing.T) {
	t.Parallel()
	refused := []struct{ schema, pointer string }{
		{`{"type":"string"}`, "/type"},
		{`{"type":["string","null"]}`, "/type"},
		{`false`, ""},
		{`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"array"}}}`, "/$defs/b/type"},
		{`{"allOf":[{"type":"object"},{"allOf":[{"type":"integer"}]}]}`, "/allOf/1/allOf/0/type"},
		{`{"$ref":"#/$defs/f","$defs":{"f":false}}`, "/$defs/f"},
	}
	for _, tt := range refused {
		_, err := Compile([]byte(tt.schema), nil)
		var serr *SchemaError
		if !errors.Is(err, ErrNotObject) || !errors.As(err, &serr) {
			t.Errorf("Compile(%s) = %v, want ErrNotObject", tt.schema, err)
			continue
		}
		if serr.Pointer != tt.pointer {
			t.Errorf("Compile(%s) pointer %q, want %q", tt.schema, serr.Pointer, tt.pointer)
		}
		if _, err := CompileSchema([]byte(tt.schema), nil); err != nil {
			t.Errorf("CompileSchema(%s): %v; any root type is fine there", tt.schema, err)
		}
	}
	accepted := []string{`{}`, `true`, `{"type":"object"}`, `{"type":["object","null"]}`,
		`{"anyOf":[{"type":"string"},{"type":"object"}]}`, `{"$ref":"#/$defs/o","$defs":{"o":{"type":"object"}}}`}
	for _, raw := range accepted {
		s := mustCompile(t, raw)
		for _, args := range []string{`null`, `[]`, `"x"`, `1`, `true`, ` [{"a":1}]`} {
			want := []Violation{{Path: "", SchemaPath: "", Message: "arguments must be a JSON object"}}
			if diff := cmp.Diff(want, violationsOf(t, s.Validate(json.RawMessage(args)))); diff != "" {
				t.Errorf("schema %s, args %s (-want +got):\n%s", raw, args, diff)
			}
		}
		if err := s.Validate(json.RawMessage(` {} `)); err != nil && raw != `{"anyOf":[{"type":"string"},{"type":"object"}]}` {
			t.Errorf("schema %s refused {}: %v", raw, err)
		}
		if err := s.ValidateValue([]any{}); err == nil {
			t.Errorf("schema %s: ValidateValue accepted an array", raw)
		}
	}
	// CompileSchema keeps any root type for the instance.
	s, err := CompileSchema([]byte(`{"type":"array"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(json.RawMessage(`[1]`)); err != nil {
		t.Errorf("CompileSchema array root refused an array: %v", err)
	}
}

// SPEC R6.4: no coercion, no default insertion, additionalProperties as
// declared, numbers exact.
func TestR6_4_NoCoercionNoDefaults(t *testing.T) {
	t.Parallel()
	s := mustCompile(t, `{"properties":{"n":{"type":"integer","default":5},"b":{"type":"boolean"}}}`)
	for _, args := range []string{`{"n":"10"}`, `{"b":"true"}`, `{"b":1}`, `{"n":null}`} {
		if err := s.Validate(json.RawMessage(args)); err == nil {
			t.Errorf("args %s were coerced into validity", args)
		}
	}
	value := map[string]any{}
	if err := s.ValidateValue(value); err != nil {
		t.Fatal(err)
	}
	if len(value) != 0 {
		t.Errorf("ValidateValue inserted defaults: %v", value)
	}
	open := mustCompile(t, `{"properties":{"a":{"type":"string"}}}`)
	if err := open.Validate(json.RawMessage(`{"a":"x","extra":1}`)); err != nil {
		t.Errorf("additionalProperties was tightened: %v", err)
	}
	closed := mustCompile(t, `{"properties":{"a":{"type":"string"}},"additionalProperties":false}`)
	want := []Violation{{Path: "/extra", SchemaPath: "#/additionalProperties", Message: "property is not allowed"}}
	if diff := cmp.Diff(want, violationsOf(t, closed.Validate(json.RawMessage(`{"a":"x","extra":1}`)))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// 2^53+1 rounds to 2^53 as a float64: only exact decoding sees it.
	exact := mustCompile(t, `{"properties":{"id":{"maximum":9007199254740992}}}`)
	if err := exact.Validate(json.RawMessage(`{"id":9007199254740993}`)); err == nil {
		t.Error("2^53+1 passed maximum 2^53: numbers went through float64")
	}
	if err := exact.Validate(json.RawMessage(`{"id":9007199254740992}`)); err != nil {
		t.Errorf("2^53 at maximum 2^53: %v", err)
	}
}

// SPEC R6.6: format follows the dialect: an annotation in 2019-09 and
// 2020-12, an assertion in draft-04/06/07; unknown formats never fail.
func TestR6_6_Format(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"e":"not an email","u":"x"}`)
	tests := []struct {
		dialect   string
		wantValid bool
	}{
		{dialect2020, true}, {dialect2019, true}, {dialect7, false}, {dialect6, false}, {dialect4, false},
	}
	for _, tt := range tests {
		s := mustCompile(t, `{"$schema":"`+tt.dialect+`","properties":{"e":{"format":"email"},"u":{"format":"no-such-format"}}}`)
		err := s.Validate(args)
		if (err == nil) != tt.wantValid {
			t.Errorf("%s: Validate = %v, want valid=%v", tt.dialect, err, tt.wantValid)
		}
		if err != nil {
			want := []Violation{{Path: "/e", SchemaPath: "#/properties/e/format", Message: `must be a valid "email" (format)`}}
			if diff := cmp.Diff(want, violationsOf(t, err)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.dialect, diff)
			}
		}
	}
}

// SPEC R6.7: an invalid schema fails at load with a pointer and a sentinel.
func TestR6_7_InvalidSchemaFailsAtLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema string
		sentinel     error
		pointer      string
	}{
		{"not JSON", `{"type":`, ErrInvalidSchema, ""},
		{"trailing data", `{} {}`, ErrInvalidSchema, ""},
		{"meta-schema", `{"properties":{"a":{"type":5}}}`, ErrInvalidSchema, "/properties/a/type"},
		{"minimum not a number", `{"minimum":"1"}`, ErrInvalidSchema, "/minimum"},
		{"bad regex", `{"properties":{"a":{"pattern":"(?<=x"}}}`, ErrInvalidSchema, "/properties/a/pattern"},
		{"bad patternProperties", `{"patternProperties":{"(":{}}}`, ErrInvalidSchema, "/patternProperties/("},
		{"dangling ref", `{"properties":{"a":{"$ref":"#/$defs/missing"}}}`, ErrInvalidSchema, "/properties/a/$ref"},
		{"dangling anchor", `{"properties":{"a":{"$ref":"#nope"}}}`, ErrInvalidSchema, "/properties/a/$ref"},
		{"unused dangling ref", `{"$defs":{"unused":{"$ref":"#/$defs/missing"}}}`, ErrInvalidSchema, "/$defs/unused/$ref"},
		{"dangling ref into an embedded resource", `{"$id":"http://h/r.json","$defs":{"x":{"$id":"x.json"}},"properties":{"a":{"$ref":"x.json#/nope"}}}`, ErrInvalidSchema, "/properties/a/$ref"},
		{"nested unused dangling ref", `{"$defs":{"a":{"$defs":{"b":{"items":{"$ref":"#/nope"}}}}}}`, ErrInvalidSchema, "/$defs/a/$defs/b/items/$ref"},
		{"self cycle", `{"$ref":"#"}`, ErrInvalidSchema, ""},
		{"cycle through defs", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, ErrInvalidSchema, "/$defs/b/allOf/0"}, // closes the loop back to #/$defs/a
		{"unused cycle", `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"}]}}}`, ErrInvalidSchema, "/$defs/a/anyOf/0"},
		{"cycle under not", `{"properties":{"p":{"not":{"$ref":"#/properties/p"}}}}`, ErrInvalidSchema, "/properties/p/not"},
		{"duplicate anchor", `{"$defs":{"a":{"$anchor":"x"},"b":{"$anchor":"x"}}}`, ErrInvalidSchema, ""},
	}
	for _, tt := range tests {
		_, err := CompileSchema([]byte(tt.schema), nil)
		var serr *SchemaError
		if !errors.As(err, &serr) || !errors.Is(err, tt.sentinel) {
			t.Errorf("%s: CompileSchema = %v, want %v", tt.name, err, tt.sentinel)
			continue
		}
		if serr.Pointer != tt.pointer {
			t.Errorf("%s: pointer %q, want %q (%v)", tt.name, serr.Pointer, tt.pointer, err)
		}
		if strings.Contains(err.Error(), baseURL) {
			t.Errorf("%s: message shows the internal base URL: %v", tt.name, err)
		}
	}
	// Recursion that consumes input is fine, also through a property name.
	mustCompile(t, `{"properties":{"next":{"$ref":"#"}}}`)
	mustCompile(t, `{"$defs":{"a":{"propertyNames":{"$ref":"#/$defs/a"}}}}`)
}

// SPEC R6.7: argument errors name the field and the schema path and never
// echo an argument value, whatever the keyword.
func TestR6_7_NoValueInErrors(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-s3cret"
	s := mustCompile(t, `{
	  "properties": {
	    "p": {"pattern": "^[0-9]+$", "maxLength": 3, "format": "email", "enum": ["a"], "const": "a", "type": "integer"},
	    "n": {"minimum": 100, "maximum": 1, "multipleOf": 7, "exclusiveMinimum": 500},
	    "o": {"propertyNames": {"maxLength": 1}, "additionalProperties": false, "dependentRequired": {"k": ["z"]}},
	    "l": {"uniqueItems": true, "contains": {"const": 1}, "items": {"not": {}}}
	  },
	  "patternProperties": {"^x": false},
	  "additionalProperties": {"type": "null"}
	}`)
	args := `{"p":"` + secret + `","n":31415926,"o":{"` + secret + `":1},"l":["` + secret + `","` + secret + `"],"x":"` + secret + `","other":"` + secret + `"}`
	err := s.Validate(json.RawMessage(args))
	vs := violationsOf(t, err)
	if len(vs) < 10 {
		t.Fatalf("only %d violations: %v", len(vs), err)
	}
	text, _ := json.Marshal(vs)
	for _, leak := range []string{secret, "31415926", "hunter"} {
		if strings.Contains(err.Error(), leak) || strings.Contains(string(text), leak) {
			// The property name in o is a field name: allowed in a path
			// only, so check messages and schema paths separately.
			for _, v := range vs {
				if strings.Contains(v.Message, leak) || strings.Contains(v.SchemaPath, leak) {
					t.Errorf("violation %+v echoes an argument value", v)
				}
				if strings.Contains(v.Path, leak) && v.Path != "/o/"+secret {
					t.Errorf("violation %+v has a value in its path", v)
				}
			}
		}
	}
}

// SPEC R6.8: framework tools put violations in their ToolError as is; the
// JSON field names are part of the contract.
func TestR6_8_ViolationWireFormat(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(Violation{Path: "/limit", SchemaPath: "#/properties/limit/minimum", Message: "must be >= 1"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"path": "/limit", "schema_path": "#/properties/limit/minimum", "message": "must be >= 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Violation JSON (-want +got):\n%s", diff)
	}
	s := mustCompile(t, `{"properties":{"limit":{"type":"integer","minimum":1}}}`)
	vs := violationsOf(t, s.Validate(json.RawMessage(`{"limit":0}`)))
	if diff := cmp.Diff([]Violation{{"/limit", "#/properties/limit/minimum", "must be >= 1"}}, vs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
