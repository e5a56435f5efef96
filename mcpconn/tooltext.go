package mcpconn

import (
	"fmt"

	"github.com/agtsdk/agt/internal/glob"
)

// Bounds on what one listed tool carries besides its inputSchema (which
// ConnectorOptions.Limits.MaxListBytes bounds with the whole listing, and
// compilation judges). A tool past one is left out of a probe's or a Run's
// tools with the reason, like a tool whose schema does not compile; the
// rest of the listing stays usable. Fixed.
const (
	maxToolNameBytes        = glob.MaxNameBytes // 256: the bound of tool patterns too
	maxToolTitleBytes       = 1 << 10           // title, and annotations.title
	maxToolDescriptionBytes = 32 << 10
	// maxToolOutputSchemaBytes bounds the outputSchema, kept as the
	// server's bytes and handed to the host (run.ToolInfo).
	maxToolOutputSchemaBytes = 1 << 20
	// maxToolMetaBytes bounds the tool's _meta, kept as the server's
	// bytes.
	maxToolMetaBytes = 64 << 10
)

// checkTool reports whether a listed tool's name, title, annotations
// title, description, outputSchema and _meta are within maxToolNameBytes,
// maxToolTitleBytes, maxToolDescriptionBytes, maxToolOutputSchemaBytes and
// maxToolMetaBytes. The error names the field and the bound, never the
// text.
func checkTool(t Tool) error {
	annotationsTitle := 0
	if t.Annotations != nil {
		annotationsTitle = len(t.Annotations.Title)
	}
	for _, f := range []struct {
		field string
		n     int
		max   int
	}{
		{"name", len(t.Name), maxToolNameBytes},
		{"title", len(t.Title), maxToolTitleBytes},
		{"annotations.title", annotationsTitle, maxToolTitleBytes},
		{"description", len(t.Description), maxToolDescriptionBytes},
		{"outputSchema", len(t.OutputSchema), maxToolOutputSchemaBytes},
		{"_meta", len(t.Meta), maxToolMetaBytes},
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
