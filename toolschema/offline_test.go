package toolschema

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// SPEC R6.5: compiling never downloads a reference. Every way a schema can
// name the server is tried; the server counts requests and must see none.
func TestR6_5_NoNetwork(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"object"}`))
	}))
	defer srv.Close()
	u := srv.URL
	tests := []struct {
		schema   string
		sentinel error
	}{
		{`{"$ref":"` + u + `/schema.json"}`, ErrExternalRef},
		{`{"properties":{"a":{"$ref":"` + u + `/schema.json#/properties/x"}}}`, ErrExternalRef},
		{`{"$dynamicRef":"` + u + `/schema.json#meta"}`, ErrExternalRef},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveRef":"` + u + `/r.json"}`, ErrExternalRef},
		{`{"$defs":{"unused":{"$ref":"` + u + `/unused.json"}}}`, ErrExternalRef},
		{`{"$id":"` + u + `/root.json","$ref":"other.json"}`, ErrExternalRef},
		{`{"$id":"` + u + `/a/b/root.json","properties":{"p":{"$ref":"../../c.json"}}}`, ErrExternalRef},
		{`{"$ref":"relative.json"}`, ErrExternalRef},
		{`{"$ref":"//` + strings.TrimPrefix(u, "http://") + `/x.json"}`, ErrExternalRef},
		// A relative reference against a non-hierarchical base means nothing;
		// the library would take it as the document itself.
		{`{"$id":"urn:example:root","properties":{"a":{"$ref":"other.json"}}}`, ErrExternalRef},
		{`{"$defs":{"x":{"$id":"tag:example.com,2026:x","items":{"$ref":"y.json#/a"}}}}`, ErrExternalRef},
		{`{"$schema":"` + u + `/dialect.json"}`, ErrUnsupportedDialect},
		{`{"$defs":{"x":{"$id":"` + u + `/x.json","$schema":"` + u + `/dialect.json"}}}`, ErrUnsupportedDialect},
		// json-schema.org meta-schemas are external too, although the library
		// has embedded copies it would use silently.
		{`{"$ref":"https://json-schema.org/draft/2020-12/schema"}`, ErrExternalRef},
		{`{"properties":{"m":{"$ref":"http://json-schema.org/draft-07/schema#"}}}`, ErrExternalRef},
		{`{"$defs":{"unused":{"$ref":"https://json-schema.org/draft/2020-12/meta/core"}}}`, ErrExternalRef},
	}
	for _, tt := range tests {
		_, err := CompileSchema([]byte(tt.schema), nil)
		if !errors.Is(err, tt.sentinel) {
			t.Errorf("CompileSchema(%s) = %v, want %v", tt.schema, err, tt.sentinel)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the test server saw %d requests, want 0", n)
	}
}

// SPEC R6.5: a $id inside the document makes relative references resolve
// inside it; that is not an escape.
func TestR6_5_EmbeddedIDsStayInside(t *testing.T) {
	t.Parallel()
	s := mustCompile(t, `{
	  "$id": "https://example.com/schemas/root.json",
	  "$defs": {
	    "name": {"$id": "name.json", "type": "string", "minLength": 1},
	    "deep": {"$id": "sub/deep.json", "$defs": {"n": {"type": "integer"}}, "properties": {"up": {"$ref": "../name.json"}}}
	  },
	  "properties": {"n": {"$ref": "name.json"}, "d": {"$ref": "sub/deep.json"}, "k": {"$ref": "sub/deep.json#/$defs/n"}}
	}`)
	// URN identifiers work for absolute references and fragments.
	mustCompile(t, `{"$id":"urn:example:root","$defs":{"x":{"$id":"urn:example:x","type":"string"}},"properties":{"a":{"$ref":"urn:example:x"},"b":{"$ref":"#/$defs/x"}}}`)
	got := violationsOf(t, s.Validate(json.RawMessage(`{"n":"","d":{"up":5},"k":"x"}`)))
	want := []Violation{
		{Path: "/d/up", SchemaPath: "#/$defs/name/type", Message: "must be string"},
		{Path: "/k", SchemaPath: "#/$defs/deep/$defs/n/type", Message: "must be integer"},
		{Path: "/n", SchemaPath: "#/$defs/name/minLength", Message: "must be at least 1 characters long"},
	}
	if len(got) != len(want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("violation %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// SPEC R6.5: file:// references are refused and the file is never read.
// The target is a real, valid schema file next to the test's other files,
// made unreadable afterwards is not enough proof, so its content would make
// the schema compile if it were read: refusal proves it was not.
func TestR6_5_NoFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	if err := os.WriteFile(target, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fileURL := "file://" + filepath.ToSlash(target)
	tests := []string{
		`{"$ref":"` + fileURL + `"}`,
		`{"$id":"file://` + filepath.ToSlash(dir) + `/root.json","$ref":"target.json"}`,
		`{"$defs":{"u":{"$ref":"` + fileURL + `#/type"}}}`,
	}
	for _, raw := range tests {
		_, err := CompileSchema([]byte(raw), nil)
		if !errors.Is(err, ErrExternalRef) {
			t.Errorf("CompileSchema(%s) = %v, want ErrExternalRef", raw, err)
		}
	}
	_, err := CompileSchema([]byte(`{"$schema":"`+fileURL+`"}`), nil)
	if !errors.Is(err, ErrUnsupportedDialect) {
		t.Errorf("file $schema: %v, want ErrUnsupportedDialect", err)
	}
}
