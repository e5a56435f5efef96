package toolschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Hostile input is bounded: over a limit is a clear error, never a hang or
// a stack overflow (SPEC R6.7: invalid schemas fail at load).
func TestSchemaLimits(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"items":`, 100000) + `{}` + strings.Repeat(`}`, 100000)
	tests := []struct {
		name   string
		schema string
		opts   *Options
		want   string // part of the message
	}{
		{"too large", `{"description":"` + strings.Repeat("x", 2000) + `"}`, &Options{MaxSchemaBytes: 1000}, "over the limit of 1000"},
		{"too large by default", `{"description":"` + strings.Repeat("x", defaultMaxSchemaBytes) + `"}`, nil, "over the limit"},
		{"too deep", deep, nil, "deeper than 64 levels"},
		{"deeper than set", `{"items":{"items":{"items":{}}}}`, &Options{MaxDepth: 3}, "deeper than 3 levels"},
		{"huge exponent", `{"minimum":1e99999999}`, nil, "exponent"},
		{"long number", `{"minimum":` + strings.Repeat("9", 2000) + `}`, nil, "longer than 1000"},
		// The library's compile time grows with the square of the count.
		{"too many subschemas", `{"allOf":[` + strings.Repeat(`{},`, defaultMaxSubschemas) + `{}]}`, nil, "over the limit of 10000 (Options.MaxSubschemas)"},
		{"objects under an unknown keyword", `{"x":[` + strings.Repeat(`{},`, 2*defaultMaxSubschemas) + `{}]}`, nil, "over the limit of 20000 (twice Options.MaxSubschemas)"},
		{"more subschemas than set", `{"properties":{"a":{},"b":{},"c":{}}}`, &Options{MaxSubschemas: 3}, "has 4 subschemas"},
	}
	for _, tt := range tests {
		_, err := Compile([]byte(tt.schema), tt.opts)
		if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Compile = %v, want ErrInvalidSchema mentioning %q", tt.name, err, tt.want)
		}
	}
	if _, err := Compile([]byte(`{"items":{"items":{"items":{}}}}`), &Options{MaxDepth: 4}); err != nil {
		t.Errorf("depth 4 at MaxDepth 4: %v", err)
	}
	if _, err := Compile([]byte(`{"properties":{"a":{},"b":{},"c":{}}}`), &Options{MaxSubschemas: 4}); err != nil {
		t.Errorf("4 subschemas at MaxSubschemas 4: %v", err)
	}
}

func TestArgumentLimits(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"properties":{"a":{}}}`), &Options{MaxArgumentBytes: 100, MaxDepth: 5})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, want string
	}{
		{"too large", `{"a":"` + strings.Repeat("x", 200) + `"}`, "arguments exceed 100 bytes"},
		{"too deep", `{"a":[[[[[1]]]]]}`, "arguments nest deeper than 5 levels"},
		{"not JSON", `{"a":}`, "arguments are not valid JSON (invalid character looking for the beginning of a value at offset 5)"},
		{"trailing", `{} x`, "arguments are not valid JSON (invalid character after the top-level value at offset 3)"},
		{"empty", ``, "arguments must be a JSON object"},
		{"huge exponent", `{"a":1e999999}`, "arguments contain a number longer than 1000 characters or with an exponent beyond 1000"},
	}
	for _, tt := range tests {
		want := []Violation{{Path: "", SchemaPath: "", Message: tt.want}}
		if diff := cmp.Diff(want, violationsOf(t, s.Validate(json.RawMessage(tt.args)))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if err := s.Validate(json.RawMessage(`{"a":[[[[1]]]]}`)); err != nil {
		t.Errorf("depth 5 at MaxDepth 5: %v", err)
	}
	// The default limits hold too: a million brackets neither overflow the
	// stack nor take long.
	d, err := Compile([]byte(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	deep := `{"a":` + strings.Repeat("[", 1000000) + strings.Repeat("]", 1000000) + `}`
	if err := d.Validate(json.RawMessage(deep)); err == nil {
		t.Error("a million nested arrays were accepted")
	}
}

func TestValidateValue(t *testing.T) {
	t.Parallel()
	s := mustCompile(t, `{"properties":{"n":{"type":"integer","maximum":10},"tags":{"items":{"type":"string"}}},"required":["n"]}`)
	type args struct {
		N    int      `json:"n"`
		Tags []string `json:"tags,omitempty"`
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name  string
		value any
		want  []Violation
	}{
		{"decoded map", map[string]any{"n": json.Number("3")}, nil},
		{"float64 integer", map[string]any{"n": float64(3)}, nil},
		{"float64 fraction", map[string]any{"n": 3.5}, []Violation{{"/n", "#/properties/n/type", "must be integer"}}},
		{"int", map[string]any{"n": 11}, []Violation{{"/n", "#/properties/n/maximum", "must be <= 10"}}},
		{"struct", args{N: 4, Tags: []string{"a"}}, nil},
		{"struct invalid", args{N: 40}, []Violation{{"/n", "#/properties/n/maximum", "must be <= 10"}}},
		{"typed map", map[string]int{"x": 1}, []Violation{{"", "#/required", `missing required property "n"`}}},
		{"nil", nil, []Violation{{"", "", "arguments must be a JSON object"}}},
		{"NaN", map[string]any{"n": math.NaN()}, []Violation{{"", "", "arguments cannot be encoded as JSON"}}},
		{"bad json.Number", map[string]any{"n": json.Number("12abc")}, []Violation{{"", "", "arguments cannot be encoded as JSON"}}},
		{"huge json.Number", map[string]any{"n": json.Number("1e99999999")}, []Violation{{"", "", "arguments contain a number longer than 1000 characters or with an exponent beyond 1000"}}},
		{"cyclic", cyclic, []Violation{{"", "", "arguments nest deeper than 64 levels"}}},
		{"channel", map[string]any{"n": make(chan int)}, []Violation{{"", "", "arguments cannot be encoded as JSON"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, violationsOf(t, s.ValidateValue(tt.value))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// Violations are sorted and the same on every run, although the library
// reports them in map order.
func TestViolationsSortedAndDeterministic(t *testing.T) {
	t.Parallel()
	var props, args []string
	for _, c := range "abcdefghijklmnopqrstuvwxyz" {
		props = append(props, `"`+string(c)+`":{"type":"integer"}`)
		args = append(args, `"`+string(c)+`":"x"`)
	}
	s := mustCompile(t, `{"properties":{`+strings.Join(props, ",")+`},"required":["zz","aa"]}`)
	raw := json.RawMessage(`{` + strings.Join(args, ",") + `}`)
	first := violationsOf(t, s.Validate(raw))
	if len(first) != 28 {
		t.Fatalf("%d violations, want 28", len(first))
	}
	for i := 1; i < len(first); i++ {
		if compareViolations(first[i-1], first[i]) >= 0 {
			t.Fatalf("violations not sorted at %d: %v", i, first)
		}
	}
	for range 50 {
		if diff := cmp.Diff(first, violationsOf(t, s.Validate(raw))); diff != "" {
			t.Fatalf("violations changed between runs:\n%s", diff)
		}
	}
}

func TestViolationCap(t *testing.T) {
	t.Parallel()
	s := mustCompile(t, `{"properties":{"l":{"items":{"type":"string"}}}}`)
	raw := json.RawMessage(`{"l":[` + strings.TrimSuffix(strings.Repeat("1,", 500), ",") + `]}`)
	if got := len(violationsOf(t, s.Validate(raw))); got != MaxViolations {
		t.Errorf("%d violations, want MaxViolations = %d", got, MaxViolations)
	}
}

func TestDigestRawDialect(t *testing.T) {
	t.Parallel()
	a := mustCompile(t, `{"type":"object","properties":{"n":{"minimum":1.50}}}`)
	b := mustCompile(t, " {\n \"properties\" : {\"n\": {\"minimum\": 1.50}}, \"type\": \"object\"} ")
	c := mustCompile(t, `{"type":"object","properties":{"n":{"minimum":2}}}`)
	if a.Digest() != b.Digest() {
		t.Errorf("key order and whitespace changed the digest: %s vs %s", a.Digest(), b.Digest())
	}
	if a.Digest() == c.Digest() {
		t.Error("different schemas share a digest")
	}
	if len(a.Digest()) != 64 || strings.Trim(a.Digest(), "0123456789abcdef") != "" {
		t.Errorf("digest %q is not 64 hex digits", a.Digest())
	}
	raw := a.Raw()
	raw[0] = 'X'
	if a.Raw()[0] != '{' {
		t.Error("Raw returned the schema's own bytes, not a copy")
	}
	input := []byte(`{"type":"object"}`)
	owned, err := Compile(input, nil) // the slice itself, not a copy
	if err != nil {
		t.Fatal(err)
	}
	input[0] = 'X'
	if owned.Raw()[0] != '{' {
		t.Error("the schema kept the caller's slice")
	}
	if a.Dialect() != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("Dialect() = %q", a.Dialect())
	}
}

func TestSchemaErrorIs(t *testing.T) {
	t.Parallel()
	_, err := Compile([]byte(`{"type":"string"}`), nil)
	var serr *SchemaError
	if !errors.As(err, &serr) {
		t.Fatalf("error %T, want *SchemaError", err)
	}
	for _, other := range []error{ErrInvalidSchema, ErrExternalRef, ErrUnsupportedDialect} {
		if errors.Is(err, other) {
			t.Errorf("ErrNotObject error also matches %v", other)
		}
	}
	if !errors.Is(err, ErrNotObject) || serr.Pointer != "/type" || serr.Message == "" {
		t.Errorf("SchemaError = %+v", serr)
	}
}

// doublingChain builds n links that each refer twice to the next one, under
// the given keyword: validating one value would take 2^n evaluations.
func doublingChain(n int, link string) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"a%d":`+link, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"a%d":{"type":"string"}`, n))
	return `{"$defs":{` + strings.Join(defs, ",") + `},"properties":{"x":{"$ref":"#/$defs/a0"}}}`
}

// A schema whose validation would take exponential time fails at load.
func TestSchemaExpansionLimit(t *testing.T) {
	t.Parallel()
	const anyOf = `{"anyOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`
	const props = `{"properties":{"p":{"$ref":"#/$defs/a%d"},"q":{"$ref":"#/$defs/a%d"}}}`
	for _, link := range []string{anyOf, props} {
		_, err := Compile([]byte(doublingChain(60, link)), nil)
		if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "expand to more than 100000") {
			t.Errorf("60 doubling links (%s): Compile = %v, want an expansion error", link, err)
		}
		// 2^10 paths are fine by default, and refused under a lower limit.
		if _, err := Compile([]byte(doublingChain(10, link)), nil); err != nil {
			t.Errorf("10 doubling links: %v", err)
		}
		if _, err := Compile([]byte(doublingChain(10, link)), &Options{MaxSchemaExpansion: 1000}); !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("10 doubling links under MaxSchemaExpansion 1000: %v", err)
		}
	}
	// Recursion that consumes input is not expansion.
	if _, err := Compile([]byte(`{"properties":{"a":{"$ref":"#"},"b":{"$ref":"#"},"c":{"items":{"$ref":"#"}}}}`), &Options{MaxSchemaExpansion: 10}); err != nil {
		t.Errorf("recursive schema: %v", err)
	}
}

// TestDuplicateKeysRefused: arguments that name a key twice are refused at
// the root, at any depth, without quoting a value: the validator keeps the
// last value, a server's parser may keep the first, and the value checked
// must be the value used (SPEC R6.7).
func TestDuplicateKeysRefused(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"type":"object","properties":{"path":{"type":"string","pattern":"^/safe"},"o":{"type":"object"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args string
		ok   bool
	}{
		{`{"path":"/safe/a","path":"/etc/passwd"}`, false},
		{`{"o":{"k":1,"k":2}}`, false},
		{`{"o":{"k":1},"p":{"k":2}}`, true},
		{`{"path":"/safe/a"}`, true},
	} {
		err := s.Validate(json.RawMessage(tc.args))
		if tc.ok {
			if err != nil {
				t.Errorf("%s: %v", tc.args, err)
			}
			continue
		}
		var ae *ArgumentError
		if !errors.As(err, &ae) || len(ae.Violations) != 1 || ae.Violations[0].Path != "" {
			t.Fatalf("%s: got %v, want one root violation", tc.args, err)
		}
		msg := ae.Violations[0].Message
		if !strings.Contains(msg, "twice") || strings.Contains(msg, "passwd") || strings.Contains(msg, `"k"`) {
			t.Errorf("%s: message %q", tc.args, msg)
		}
	}
}
