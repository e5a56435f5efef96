package toolschema

import (
	"errors"
	"testing"
)

// SPEC R6.1: a $schema naming a meta-schema vocabulary must not switch off
// applicators, also where it hides in an object the walker does not visit
// (under an unknown keyword, reached only through $ref). A reference may
// only point at a subschema position; such schemas fail at load.
func TestR6_1_ReferenceIntoUnknownKeywordRefused(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, schema string }{
		{"meta vocabulary behind an $id", `{"$ref":"#/x","x":{"$id":"http://example.com/x","$schema":"https://json-schema.org/draft/2020-12/meta/validation","properties":{"a":{"type":"string"}}}}`},
		{"relative reference against a urn $id", `{"properties":{"p":{"$ref":"#/x"}},"x":{"$id":"urn:a:b","properties":{"q":{"$ref":"other.json"}}}}`},
	}
	for _, tt := range tests {
		_, err := Compile([]byte(tt.schema), nil)
		if !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("%s: Compile = %v, want ErrInvalidSchema", tt.name, err)
		}
	}
}

// "definitions" and "$defs" are reference targets in every dialect: tool
// schemas mix them freely with their $schema (SPEC R6.2, local references).
func TestR6_2_DefinitionsAndDefsInEveryDialect(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, schema string }{
		{"2020-12 with definitions", `{"properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`},
		{"draft-07 with $defs", `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`},
		{"draft-04 with $defs", `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`},
	}
	for _, tt := range tests {
		s, err := Compile([]byte(tt.schema), nil)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if err := s.Validate([]byte(`{"a":"x"}`)); err != nil {
			t.Errorf("%s: valid arguments: %v", tt.name, err)
		}
		if err := s.Validate([]byte(`{"a":1}`)); err == nil {
			t.Errorf("%s: a number for a string property passed", tt.name)
		}
	}
}
