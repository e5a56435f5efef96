package toolschema_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agtsdk/agt/toolschema"
)

func Example() {
	schema := []byte(`{
	  "type": "object",
	  "properties": {
	    "query": {"type": "string", "minLength": 1},
	    "limit": {"type": "integer", "minimum": 1, "maximum": 100}
	  },
	  "required": ["query"],
	  "additionalProperties": false
	}`)
	s, err := toolschema.Compile(schema, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = s.Validate(json.RawMessage(`{"limit": 0, "secret": "do not echo me"}`))
	var aerr *toolschema.ArgumentError
	if errors.As(err, &aerr) {
		for _, v := range aerr.Violations {
			fmt.Printf("%s %s: %s\n", v.Path, v.SchemaPath, v.Message)
		}
	}
	// Output:
	//  #/required: missing required property "query"
	// /limit #/properties/limit/minimum: must be >= 1
	// /secret #/additionalProperties: property is not allowed
}

func ExampleCompile_errors() {
	for _, schema := range []string{
		`{"type": "array"}`,
		`{"$ref": "https://example.com/schemas/args.json"}`,
		`{"$schema": "https://example.com/my-dialect"}`,
		`{"properties": {"a": {"$ref": "#/$defs/missing"}}}`,
	} {
		_, err := toolschema.Compile([]byte(schema), nil)
		var serr *toolschema.SchemaError
		if errors.As(err, &serr) {
			fmt.Printf("%-24q %v\n", serr.Pointer, serr.Err)
		}
	}
	// Output:
	// "/type"                  toolschema: tool input schema root is not an object
	// "/$ref"                  toolschema: external reference
	// "/$schema"               toolschema: unsupported dialect
	// "/properties/a/$ref"     toolschema: invalid schema
}

func ExampleCompileSchema() {
	s, err := toolschema.CompileSchema([]byte(`{"type": "array", "items": {"type": "integer"}}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Validate(json.RawMessage(`[1, 2, 3]`)))
	fmt.Println(s.Validate(json.RawMessage(`[1, "two"]`)))
	// Output:
	// <nil>
	// toolschema: invalid arguments: /1: must be integer
}
