package toolschema

import (
	"errors"
	"strings"
	"testing"
)

// A pattern whose program is large, matched against a long string, would
// take seconds (Go's regexp is linear, but with the program size as the
// factor). Such a match is refused with a root violation that names the
// pattern and never the string; short strings, and long strings against
// small patterns, are matched as usual (SPEC R6.2, R6.7).
func TestPatternMatchBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab", 400_000)
	tests := []struct {
		name, schema, args string
		wantBound          bool
		wantValid          bool
	}{
		{"large pattern, long string", `{"properties":{"s":{"pattern":"(a|b){1000}c"}}}`, `{"s":"` + long + `"}`, true, false},
		{"large patternProperties key, long key", `{"patternProperties":{"[ab]{300}c":{"type":"string"}}}`, `{"` + long + `":1}`, true, false},
		{"large pattern, short string", `{"properties":{"s":{"pattern":"(a|b){1000}c"}}}`, `{"s":"` + strings.Repeat("a", 1000) + `c"}`, false, true},
		{"small pattern, long string", `{"properties":{"s":{"pattern":"^(ab)+$"}}}`, `{"s":"` + long + `"}`, false, true},
	}
	for _, tt := range tests {
		s, err := Compile([]byte(tt.schema), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		err = s.Validate([]byte(tt.args))
		var ae *ArgumentError
		gotBound := errors.As(err, &ae) && strings.Contains(ae.Error(), "in bounded time")
		if gotBound != tt.wantBound || (err == nil) != tt.wantValid {
			t.Errorf("%s: Validate = %.200v, want bound %v, valid %v", tt.name, err, tt.wantBound, tt.wantValid)
		}
		if err != nil && strings.Contains(err.Error(), "abab") {
			t.Errorf("%s: the error quotes the argument", tt.name)
		}
	}
	// A larger MaxPatternWork lets the same match run.
	s, err := Compile([]byte(`{"properties":{"s":{"pattern":"[ab]{2}c"}}}`), &Options{MaxPatternWork: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(`{"s":"` + long + `"}`)); err == nil || strings.Contains(err.Error(), "bounded time") {
		t.Errorf("MaxPatternWork 1<<30: Validate = %.200v, want a plain pattern violation", err)
	}
}
