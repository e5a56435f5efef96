package run

import (
	"fmt"
	"testing"
)

func TestSchemaCache(t *testing.T) {
	t.Parallel()
	c := NewSchemaCache()
	raw := []byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`)
	s1, err := c.compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.compile([]byte(string(raw)))
	if err != nil || s1 != s2 {
		t.Errorf("the same bytes compiled twice: %p %p %v", s1, s2, err)
	}
	// A different byte sequence (even an equivalent schema) is its own
	// entry: the snapshot keeps the exact bytes each server sent.
	s3, err := c.compile([]byte(`{"properties":{"a":{"type":"integer"}},"type":"object"}`))
	if err != nil || s3 == s1 {
		t.Errorf("different bytes shared an entry")
	}
	if _, err := c.compile([]byte(`{"type":"string"}`)); err == nil {
		t.Error("a non-object schema compiled")
	}
	if len(c.m) != 2 {
		t.Errorf("%d entries, want 2 (failures are not cached)", len(c.m))
	}
	// Bounded: it starts over when full.
	for i := range SchemaCacheMaxEntries + 1 {
		if _, err := c.compile(fmt.Appendf(nil, `{"type":"object","title":"t%d"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) > SchemaCacheMaxEntries {
		t.Errorf("%d entries, over the bound %d", len(c.m), SchemaCacheMaxEntries)
	}
}
