package toolschema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// SPEC R6.7: a minContains failure is reported on the array, at the
// minContains keyword; the items that do not match contains are not
// violations of their own (any item may be other than the contained one).
func TestR6_7_MinContainsReportedOnTheArray(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"properties":{"l":{"contains":{"const":1},"minContains":2}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate([]byte(`{"l":["x",1]}`))
	ae, ok := err.(*ArgumentError)
	if !ok {
		t.Fatalf("Validate = %v, want *ArgumentError", err)
	}
	want := []Violation{{Path: "/l", SchemaPath: "#/properties/l/minContains", Message: "must contain at least 2 items that match contains"}}
	if diff := cmp.Diff(want, ae.Violations); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// SPEC R6.7: a propertyNames violation names the object that holds the
// key, also when sibling objects hold the same keys (the library reuses
// its location slice for these errors).
func TestR6_7_PropertyNamesPathOfEachObject(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"additionalProperties":{"propertyNames":{"maxLength":1}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 { // map order varies between runs of the library
		err = s.Validate([]byte(`{"a":{"kk":1,"mm":1},"b":{"kk":1,"mm":1},"c":{"kk":1,"mm":1}}`))
		ae, ok := err.(*ArgumentError)
		if !ok {
			t.Fatalf("Validate = %v, want *ArgumentError", err)
		}
		var got []string
		for _, v := range ae.Violations {
			got = append(got, v.Path)
		}
		want := []string{"/a/kk", "/a/mm", "/b/kk", "/b/mm", "/c/kk", "/c/mm"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("paths (-want +got):\n%s", diff)
		}
	}
}
