package toolschema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	badValue = "is not valid Unicode text: it holds bytes that are not UTF-8; send UTF-8 without lone surrogates, so that the value checked is the value used"
	badEsc   = `is not valid Unicode text: it holds a \u escape of a lone surrogate; send UTF-8 without lone surrogates, so that the value checked is the value used`
	badKey   = "has a property name that is not valid Unicode text: it holds bytes that are not UTF-8; send UTF-8 without lone surrogates, so that the name checked is the name used"
	badKeyEs = `has a property name that is not valid Unicode text: it holds a \u escape of a lone surrogate; send UTF-8 without lone surrogates, so that the name checked is the name used`
)

// Issue 11 (6): strings that are not valid Unicode text are a parser
// differential like duplicate keys: encoding/json (and the validator) read
// an overlong "/" (C0 AF), an encoded surrogate (ED A0 80) or a lone
// surrogate escape as U+FFFD, while a server's parser may keep the bytes or
// the code unit, and see a "/" that maxLength and pattern never saw. They
// are refused at the string's path (a property name at its object's), and
// the message never holds the bytes.
func TestArgumentsMustBeValidText(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"properties":{"a":{"maxLength":2,"pattern":"^[^/]*$"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		want       []Violation
	}{
		{"overlong slash", "{\"a\":\"\xc0\xaf\"}", []Violation{{Path: "/a", Message: badValue}}},
		{"encoded surrogate", "{\"a\":\"\xed\xa0\x80\"}", []Violation{{Path: "/a", Message: badValue}}},
		{"stray byte after text", "{\"a\":\"ok \xff\"}", []Violation{{Path: "/a", Message: badValue}}},
		{"cut sequence", "{\"a\":\"\xe2\x82\"}", []Violation{{Path: "/a", Message: badValue}}},
		{"lone high surrogate escape", `{"a":"\ud800"}`, []Violation{{Path: "/a", Message: badEsc}}},
		{"lone low surrogate escape", `{"a":"\udc00"}`, []Violation{{Path: "/a", Message: badEsc}}},
		{"high surrogate then a letter", `{"a":"\ud800\u0041"}`, []Violation{{Path: "/a", Message: badEsc}}},
		{"pair reversed", `{"a":"\udc00\ud800"}`, []Violation{{Path: "/a", Message: badEsc}}},
		{"nested", "{\"b\":[1,{\"c/d\":[\"x\",\"\xc0\xaf\"]}]}", []Violation{{Path: "/b/1/c~1d/1", Message: badValue}}},
		{"property name", "{\"b\":{\"ok\":1,\"\xc0\xaf\":1}}", []Violation{{Path: "/b", Message: badKey}}},
		{"property name at the root", `{"\ud800":1}`, []Violation{{Path: "", Message: badKeyEs}}},
		{"the first of two", "{\"a\":\"\xff\",\"b\":\"\\ud800\"}", []Violation{{Path: "/a", Message: badValue}}},
		// Valid text passes: a surrogate pair, U+FFFD itself, four-byte UTF-8.
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, nil},
		{"replacement character", "{\"a\":\"\xef\xbf\xbd\\ufffd\"}", nil},
		{"four bytes", "{\"b\":\"\xf0\x9f\x98\x80 caf\xc3\xa9\"}", nil},
	}
	for _, tt := range tests {
		err := s.Validate([]byte(tt.args))
		if diff := cmp.Diff(tt.want, violationsOf(t, err)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		for _, part := range []string{"\xc0", "\xed", "\xff", "\ufffd", "ok "} {
			if err != nil && strings.Contains(err.Error(), part) {
				t.Errorf("%s: the error holds the argument: %q", tt.name, err)
			}
		}
	}
}

// ValidateValue applies the same rule to Go strings, which may hold any
// bytes; with several, the first in key order is reported.
func TestValidateValueMustBeValidText(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		value any
		want  []Violation
	}{
		{"overlong slash", map[string]any{"a": "\xc0\xaf"}, []Violation{{Path: "/a", Message: badValue}}},
		{"nested", map[string]any{"b": []any{1, map[string]any{"c/d": []any{"x", "\xed\xa0\x80"}}}}, []Violation{{Path: "/b/1/c~1d/1", Message: badValue}}},
		{"property name", map[string]any{"b": map[string]any{"\xff": 1}}, []Violation{{Path: "/b", Message: badKey}}},
		{"first in key order", map[string]any{"z": "\xff", "y": map[string]any{"x": "\xff"}, "a": "ok"}, []Violation{{Path: "/y/x", Message: badValue}}},
		{"valid", map[string]any{"a": "caf\xc3\xa9 \U0001F600"}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, violationsOf(t, s.ValidateValue(tt.value))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
