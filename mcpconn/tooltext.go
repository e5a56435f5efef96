package mcpconn

import (
	"fmt"
)

// Bounds on the text of one listed tool. A tool past one is left out of a
// probe's or a Run's tools with the reason, like a tool whose schema does
// not compile; the rest of the listing stays usable.
const (
	MaxToolNameBytes        = 256
	MaxToolTitleBytes       = 1 << 10
	MaxToolDescriptionBytes = 32 << 10
)

// CheckTool reports whether a listed tool's name, title and description
// are within MaxToolNameBytes, MaxToolTitleBytes and
// MaxToolDescriptionBytes. The error names the field and the bound, never
// the text.
func CheckTool(t Tool) error {
	for _, f := range []struct {
		field string
		n     int
		max   int
	}{
		{"name", len(t.Name), MaxToolNameBytes},
		{"title", len(t.Title), MaxToolTitleBytes},
		{"description", len(t.Description), MaxToolDescriptionBytes},
	} {
		if f.n > f.max {
			return fmt.Errorf("the tool's %s is %d bytes, more than %d", f.field, f.n, f.max)
		}
	}
	if t.Name == "" {
		return fmt.Errorf("the tool has no name")
	}
	return nil
}
