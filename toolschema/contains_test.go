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
