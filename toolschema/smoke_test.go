package toolschema

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestSmoke(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"limit":{"type":"integer","minimum":1},"q":{"type":"string","pattern":"^a"}},"required":["q"],"additionalProperties":false}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(s.Dialect(), s.Digest())
	err = s.Validate(json.RawMessage(`{"limit":0,"q":"zzz","extra":1}`))
	t.Log(err)
	for _, raw := range []string{`{"type":"string"}`, `false`, `{"$ref":"https://json-schema.org/draft/2020-12/schema"}`, `{"$ref":"http://x/y.json"}`, `{"$ref":"#"}`, `{"$schema":"https://json-schema.org/draft/2020-12/meta/validation"}`, `{"$defs":{"a":{"$ref":"#/nope"}}}`, `{"pattern":"(?=a)"}`, `{"type":5}`} {
		_, err := Compile([]byte(raw), nil)
		t.Log(raw, "=>", err, errors.Is(err, ErrInvalidSchema))
	}
}
