package toolschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var fuzzSchemas = []string{
	string(benchSchema),
	`{}`, `true`, `false`, `{"type":"string"}`, `{"$ref":"#"}`,
	`{"$ref":"#/$defs/a","$defs":{"a":{"type":"object","properties":{"n":{"$ref":"#/$defs/a"}}}}}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"a":{"type":"integer","maximum":3,"exclusiveMaximum":true}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","if":{"required":["a"]},"then":{"required":["b"]},"else":false}`,
	`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"properties":{"c":{"$recursiveRef":"#"}}}`,
	`{"$dynamicAnchor":"n","properties":{"c":{"$dynamicRef":"#n"}},"unevaluatedProperties":false}`,
	`{"$id":"https://example.com/r.json","$defs":{"x":{"$id":"x.json","$anchor":"a"}},"$ref":"x.json#a"}`,
	`{"patternProperties":{"^x":{"minLength":2}},"propertyNames":{"pattern":"^[a-z]+$"},"dependentSchemas":{"a":{"required":["b"]}}}`,
	`{"properties":{"l":{"prefixItems":[{"const":1}],"contains":{"type":"string"},"minContains":2,"uniqueItems":true}}}`,
	`{"$ref":"https://json-schema.org/draft/2020-12/schema"}`, `{"$ref":"http://localhost/x.json"}`,
	`{"pattern":"(?=x)"}`, `{"type":7}`, `{"minimum":1e400}`, `{"multipleOf":0.0001}`,
	`{"patternProperties":{"(":{}}}`, `{"$id":"urn:x:y","properties":{"a":{"$ref":"a.json"}}}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","id":"http://e/x","properties":{"a":{"id":"y.json","$ref":"#/nope"}}}`,
	`{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]},"b":{"not":{"$ref":"#/$defs/a"}}}}`,
	`{"propertyNames":{"enum":["a"]},"dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
}

var fuzzArgs = []string{
	string(benchValid), string(benchInvalid), `{}`, `[]`, `null`, `"x"`, `{"a":1,"b":[1,2,{"c":null}]}`,
	`{"n":{"n":{"n":{}}}}`, `{"c":{"c":{"c":1}}}`, `{"l":[1,"a","a"]}`, `{"a":1e400,"b":-0.0}`, `{"\u00e9":"\ud800"}`,
	"{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}", `{"a":["\udc00"]}`, "{\"\xff\":[\"\xc0\"]}", `{"\ud800\u0041":1}`,
}

// FuzzCompile: any schema bytes either compile or fail with a *SchemaError
// carrying one sentinel; nothing panics.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSchemas {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, compile := range []func([]byte, *Options) (*Schema, error){Compile, CompileSchema} {
			s, err := compile(raw, nil)
			if err != nil {
				var serr *SchemaError
				if !errors.As(err, &serr) {
					t.Fatalf("error %T, want *SchemaError: %v", err, err)
				}
				n := 0
				for _, sentinel := range []error{ErrUnsupportedDialect, ErrExternalRef, ErrNotObject, ErrInvalidSchema} {
					if errors.Is(err, sentinel) {
						n++
					}
				}
				if n != 1 {
					t.Fatalf("error matches %d sentinels: %v", n, err)
				}
				continue
			}
			_ = s.Validate(json.RawMessage(`{}`))
			if len(s.Digest()) != 64 {
				t.Fatalf("digest %q", s.Digest())
			}
		}
	})
}

// FuzzValidate: any arguments against a few schemas give nil or an
// *ArgumentError with sorted violations, and no violation message quotes a
// string value of the arguments that the schema does not contain.
func FuzzValidate(f *testing.F) {
	var schemas []*Schema
	for _, raw := range fuzzSchemas {
		if s, err := CompileSchema([]byte(raw), nil); err == nil {
			schemas = append(schemas, s)
		}
	}
	for i, a := range fuzzArgs {
		f.Add(uint8(i), []byte(a))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		s := schemas[int(which)%len(schemas)]
		err := s.Validate(args)
		if err == nil {
			return
		}
		var aerr *ArgumentError
		if !errors.As(err, &aerr) {
			t.Fatalf("error %T, want *ArgumentError", err)
		}
		if len(aerr.Violations) == 0 || len(aerr.Violations) > MaxViolations {
			t.Fatalf("%d violations", len(aerr.Violations))
		}
		for i := 1; i < len(aerr.Violations); i++ {
			if compareViolations(aerr.Violations[i-1], aerr.Violations[i]) >= 0 {
				t.Fatalf("violations not sorted: %v", aerr.Violations)
			}
		}
		if leak := leakedValue(s.raw, args, aerr); leak != "" && !strings.Contains(fixedMessageText, leak) {
			t.Fatalf("error text contains argument value %q: %v", leak, aerr)
		}
	})
}

// fixedMessageText holds every word our messages use on their own, so a
// fuzzed argument value that happens to be such a word is not a leak.
const fixedMessageText = `arguments must be a JSON object exceed bytes nest deeper than levels are not valid JSON ` +
	`invalid character looking for the beginning of value after top-level at offset unexpected end input in literal ` +
	`string escape code hexadecimal numeric decimal point exponent key array element contain number longer characters ` +
	`or with an beyond cannot encoded as missing required property requires is allowed name by propertyNames ` +
	`have least most properties items has more schema allows equals earlier unique match that matches contains ` +
	`long pattern -encoded decoded content contentSchema multiple of schema in not exactly one oneOf but than ` +
	`at least anyOf every allOf does integer null boolean format ` +
	`too match against bounded time Options.MaxPatternWork expensive to check matching their strings the schema's ` +
	`patterns takes units work Options.MaxValidationWork is valid Unicode text it holds bytes UTF-8 send without lone ` +
	`surrogates so value checked used has property name \u escape surrogate`
