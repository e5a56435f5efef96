package contract

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agtsdk/agt/internal/contractdefault"
	"github.com/agtsdk/agt/toolschema"
	"github.com/google/go-cmp/cmp"
)

// cases generates the cases of schema with opts and checks that each one's
// recorded verdict is the validator's.
func cases(t *testing.T, schema string, o *Options) []genCase {
	t.Helper()
	s, err := toolschema.Compile([]byte(schema), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := o.withDefaults()
	out, _ := generate("tool", []byte(schema), s, &opts)
	for _, c := range out {
		if valid := s.Validate(c.args) == nil; valid != c.valid {
			t.Errorf("case %q: recorded valid=%v, the validator says %v", c.name, c.valid, valid)
		}
	}
	return out
}

// summary is "name: valid|invalid|raw" per case.
func summary(cs []genCase) []string {
	var out []string
	for _, c := range cs {
		v := "invalid"
		switch {
		case c.raw:
			v = "raw"
		case c.valid:
			v = "valid"
		}
		out = append(out, c.name+": "+v)
	}
	return out
}

const wideSchema = `{"type":"object","properties":{
	"n":{"type":"integer","minimum":1,"maximum":10},
	"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
	"s":{"type":"string","minLength":2,"maxLength":4},
	"e":{"enum":["a","b","c"]},
	"c":{"const":7},
	"u":{"anyOf":[{"type":"string"},{"type":"integer"}]},
	"arr":{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":2,"uniqueItems":true},
	"o":{"type":"object","properties":{"d":{"type":"string","format":"date"}},"required":["d"],"additionalProperties":false}},
	"required":["n","s"],"additionalProperties":false}`

func TestGenerateCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema string
		want   []string
	}{
		{name: "every kind of case", schema: wideSchema, want: []string{
			"valid: required fields only: valid",
			"duplicate key /n: raw", "invalid UTF-8 /s: raw", "lone surrogate /s: raw",
			"valid: every optional field present: valid",
			"valid: optional /arr present: valid", "wrong type /arr (string): invalid",
			"minItems at limit /arr: valid", "minItems past limit /arr: invalid",
			"maxItems at limit /arr: valid", "maxItems past limit /arr: invalid",
			"duplicate items /arr: invalid", "wrong type /arr/0 (string): invalid",
			"valid: optional /c present: valid", "not the const /c: invalid",
			"valid: optional /e present: valid", "valid: /e enum value 2: valid", "valid: /e enum value 3: valid", "not in enum /e: invalid",
			"missing required /n: invalid", "wrong type /n (string): invalid",
			"minimum at limit /n: valid", "minimum past limit /n: invalid",
			"maximum at limit /n: valid", "maximum past limit /n: invalid",
			"integer with a fraction /n: invalid", "integer written with .0 /n: valid",
			"valid: optional /o present: valid", "wrong type /o (string): invalid",
			"missing required /o/d: invalid", "wrong type /o/d (number): invalid", "unknown property in /o: invalid",
			"missing required /s: invalid", "wrong type /s (number): invalid",
			"minLength at limit /s: valid", "minLength past limit /s: invalid",
			"minLength at limit /s, astral code points: valid", "minLength past limit /s, astral code points: invalid",
			"maxLength at limit /s: valid", "maxLength past limit /s: invalid",
			"maxLength at limit /s, astral code points: valid", "maxLength past limit /s, astral code points: invalid",
			"valid: optional /u present: valid", "valid: /u anyOf branch 2: valid",
			"valid: optional /x present: valid", "wrong type /x (string): invalid",
			"exclusiveMinimum at limit /x: invalid", "exclusiveMinimum just inside /x: valid",
			"exclusiveMaximum at limit /x: invalid", "exclusiveMaximum just inside /x: valid",
			"unknown property: invalid",
		}},
		{name: "draft-07 asserts format", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"d":{"type":"string","format":"date"}}}`, want: []string{
			"valid: required fields only: valid",
			"duplicate key: raw", "invalid UTF-8 in a property name: raw", "lone surrogate in a property name: raw",
			"valid: optional /d present: valid", "wrong type /d (number): invalid", "format mismatch /d: invalid",
			"unknown property: valid",
		}},
		{name: "2020-12 does not assert format: no mismatch case", schema: `{"type":"object","properties":{"d":{"type":"string","format":"date"}}}`, want: []string{
			"valid: required fields only: valid",
			"duplicate key: raw", "invalid UTF-8 in a property name: raw", "lone surrogate in a property name: raw",
			"valid: optional /d present: valid", "wrong type /d (number): invalid",
			"unknown property: valid",
		}},
		{name: "draft-04 boolean exclusiveMinimum", schema: `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"m":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["m"]}`, want: []string{
			"valid: required fields only: valid",
			"duplicate key /m: raw", "invalid UTF-8 in a property name: raw", "lone surrogate in a property name: raw",
			"missing required /m: invalid", "wrong type /m (string): invalid",
			"minimum at limit /m (exclusive): invalid", "minimum just inside /m: valid",
			"unknown property: valid",
		}},
		{name: "pattern and $ref", schema: `{"type":"object","$defs":{"id":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"}},"properties":{"id":{"$ref":"#/$defs/id"}},"required":["id"]}`, want: []string{
			"valid: required fields only: valid",
			"duplicate key /id: raw", "invalid UTF-8 /id: raw", "lone surrogate /id: raw",
			"missing required /id: invalid", "wrong type /id (number): invalid", "pattern mismatch /id: invalid",
			"unknown property: valid",
		}},
		{name: "allOf is merged", schema: `{"allOf":[{"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"]},{"properties":{"b":{"type":"integer","maximum":3}}}]}`, want: []string{
			"valid: required fields only: valid",
			"duplicate key /a: raw", "invalid UTF-8 in a property name: raw", "lone surrogate in a property name: raw",
			"missing required /a: invalid", "wrong type /a (string): invalid",
			"valid: optional /b present: valid", "wrong type /b (string): invalid",
			"maximum at limit /b: valid", "maximum past limit /b: invalid",
			"integer with a fraction /b: invalid", "integer written with .0 /b: valid",
			"unknown property: valid",
		}},
		{name: "a schema that accepts anything", schema: `{}`, want: []string{
			"valid: required fields only: valid",
			"duplicate key: raw", "invalid UTF-8 in a property name: raw", "lone surrogate in a property name: raw",
			"unknown property: valid",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, summary(cases(t, tt.schema, nil))); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
		})
	}
}

// The same seed gives the same bytes; another seed other canaries, and
// the same cases.
func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	a := cases(t, wideSchema, &Options{Seed: 7})
	b := cases(t, wideSchema, &Options{Seed: 7})
	c := cases(t, wideSchema, &Options{Seed: 8})
	if len(a) != len(b) || len(a) != len(c) {
		t.Fatalf("case counts %d, %d, %d", len(a), len(b), len(c))
	}
	differ := false
	for i := range a {
		if !bytes.Equal(a[i].args, b[i].args) {
			t.Errorf("case %q differs between two runs of seed 7", a[i].name)
		}
		if a[i].name != c[i].name {
			t.Errorf("case %d: %q with seed 7, %q with seed 8", i, a[i].name, c[i].name)
		}
		differ = differ || !bytes.Equal(a[i].args, c[i].args)
	}
	if !differ {
		t.Error("seeds 7 and 8 gave the same arguments")
	}
}

func TestGenerateBounds(t *testing.T) {
	t.Parallel()
	if got := len(cases(t, wideSchema, &Options{MaxCases: 5})); got != 5 {
		t.Errorf("MaxCases 5: %d cases", got)
	}
	for _, c := range cases(t, `{"type":"object","properties":{"s":{"type":"string","minLength":3000}},"required":["s"]}`, &Options{MaxCaseBytes: 2000}) {
		if len(c.args) > 2000 {
			t.Errorf("case %q has %d bytes, over MaxCaseBytes 2000", c.name, len(c.args))
		}
	}
}

// Generated free-form strings carry a canary, which is what a leak is
// recognised by; the canaries of a case are the ones in its arguments.
func TestGenerateCanaries(t *testing.T) {
	t.Parallel()
	canary := regexp.MustCompile(canaryPrefix + `[0-9a-f]{8}`)
	for _, c := range cases(t, `{"type":"object","properties":{"user":{"type":"string"},"n":{"type":"integer"}},"required":["user","n"]}`, nil) {
		found := canary.FindAllString(string(c.args), -1)
		replaced := c.name == "missing required /user" || strings.HasPrefix(c.name, "wrong type /user") || c.raw
		if !replaced && len(found) == 0 {
			t.Errorf("case %q: no canary in its arguments", c.name)
		}
		for _, f := range found {
			if !contains(c.canaries, f) {
				t.Errorf("case %q: canary in its arguments not recorded", c.name)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestPatternString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		ok      bool
	}{
		{`^[A-Z]{3}-[0-9]{4}$`, true},
		{`^[a-z][a-z0-9_]{2,31}$`, true},
		{`^(foo|bar)+\.txt$`, true},
		{`^[^@\s]+@[^@\s]+$`, true},
		{`^\d{4}-\d{2}-\d{2}$`, true},
		{`^r[0-9]+$`, true},
		{`^(?=a)a$`, false}, // lookahead: Go's syntax cannot parse it
	}
	for _, tt := range tests {
		got, ok := patternString(tt.pattern)
		if ok != tt.ok {
			t.Errorf("%s: ok=%v, want %v", tt.pattern, ok, tt.ok)
			continue
		}
		if ok && !regexp.MustCompile(tt.pattern).MatchString(got) {
			t.Errorf("%s: generated %q does not match", tt.pattern, got)
		}
	}
}

// Hostile schemas: a wide one stops at MaxCases without walking the rest,
// an allOf that refers to itself ends.
func TestGenerateHostileSchemas(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%05d":{"type":"integer","minimum":0,"maximum":9}`, i)
	}
	b.WriteString(`}}`)
	start := time.Now()
	if got := len(cases(t, b.String(), nil)); got != contractdefault.MaxCases {
		t.Errorf("a schema of 5000 properties: %d cases, want %d", got, contractdefault.MaxCases)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a schema of 5000 properties took %s", d)
	}
	self := `{"$defs":{"a":{"type":"object","allOf":[{"$ref":"#/$defs/a"}],"properties":{"x":{"type":"string"}}}},"$ref":"#/$defs/a"}`
	if s, err := toolschema.Compile([]byte(self), nil); err == nil {
		opts := (*Options)(nil).withDefaults()
		_, _ = generate("tool", []byte(self), s, &opts) // must end
	}
}

// A schema whose base arguments the generator cannot build (a lookahead
// patternString cannot match though the validator accepts it): a derived
// case would carry the base's violation at another path and report a
// false laxer finding there. Only cases refused at their own keyword
// alone are kept, and the note says why.
func TestGenerateInvalidBase(t *testing.T) {
	t.Parallel()
	const schema = `{"type":"object","required":["a","b"],"properties":{"a":{"pattern":"^(?=x)x+$"},"b":{"type":"integer","maximum":5}}}`
	s, err := toolschema.Compile([]byte(schema), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := (*Options)(nil).withDefaults()
	out, note := generate("tool", []byte(schema), s, &opts)
	if note == "" {
		t.Error("no note says the base arguments are invalid")
	}
	var names []string
	for _, c := range out {
		names = append(names, c.name)
		if c.valid {
			t.Errorf("case %q is valid though no valid base exists", c.name)
			continue
		}
		var aerr *toolschema.ArgumentError
		if !errors.As(s.Validate(c.args), &aerr) {
			continue // raw bytes: refused before any keyword
		}
		for _, v := range aerr.Violations {
			if c.schemaPath != "" && v.SchemaPath != c.schemaPath {
				t.Errorf("case %q (%s) also fails at %s %s", c.name, c.schemaPath, v.Path, v.SchemaPath)
			}
		}
	}
	for _, want := range []string{"missing required /a", "pattern mismatch /a"} {
		if !slices.Contains(names, want) {
			t.Errorf("case %q dropped; cases: %q", want, names)
		}
	}
	for _, gone := range []string{"maximum past limit /b", "missing required /b", "wrong type /b (string)"} {
		if slices.Contains(names, gone) {
			t.Errorf("case %q kept though it also fails at /a", gone)
		}
	}
}

// The text of one answer the classifier reads is at most maxResultText
// bytes, however large one block is, and never ends inside a character.
func TestResultTextBound(t *testing.T) {
	t.Parallel()
	block := func(s string) string { return `{"type":"text","text":"` + s + `"}` }
	big := strings.Repeat("é", maxResultText/2+7)
	tests := []struct {
		name    string
		content string
		want    int
	}{
		{"two blocks", "[" + block("ab") + "," + block("c") + "]", len("ab\nc\n")},
		{"one block over the bound", "[" + block(big) + "]", maxResultText},
		{"two blocks over the bound", "[" + block(strings.Repeat("x", maxResultText-1)) + "," + block("yz") + "]", maxResultText},
		{"not text", `[{"type":"image","data":"AAAA"}]`, 0},
	}
	for _, tt := range tests {
		got := resultText([]byte(tt.content))
		if len(got) != tt.want || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes (valid UTF-8 %v), want %d", tt.name, len(got), utf8.ValidString(got), tt.want)
		}
	}
}
