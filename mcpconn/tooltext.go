package mcpconn

import (
	"fmt"

	"github.com/agtsdk/agt/resource"
)

// Bounds on what one listed tool carries besides its inputSchema (which
// ConnectorOptions.Limits.MaxListBytes bounds with the whole listing, and
// compilation judges). A tool past one is left out of a probe's or a Run's
// tools with the reason, like a tool whose schema does not compile; the
// rest of the listing stays usable. Fixed.
const (
	MaxToolNameBytes        = resource.MaxToolPatternBytes // 256: the bound of tool patterns too
	MaxToolTitleBytes       = 1 << 10                      // title, and annotations.title
	MaxToolDescriptionBytes = 32 << 10
	// MaxToolOutputSchemaBytes bounds the outputSchema, kept as the
	// server's bytes and handed to the host (run.ToolInfo).
	MaxToolOutputSchemaBytes = 1 << 20
	// MaxToolMetaBytes bounds the tool's _meta, kept as the server's
	// bytes.
	MaxToolMetaBytes = 64 << 10
)

// checkTool reports whether a listed tool's name, title, annotations
// title, description, outputSchema and _meta are within MaxToolNameBytes,
// MaxToolTitleBytes, MaxToolDescriptionBytes, MaxToolOutputSchemaBytes and
// MaxToolMetaBytes. The error names the field and the bound, never the
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
		{"name", len(t.Name), MaxToolNameBytes},
		{"title", len(t.Title), MaxToolTitleBytes},
		{"annotations.title", annotationsTitle, MaxToolTitleBytes},
		{"description", len(t.Description), MaxToolDescriptionBytes},
		{"outputSchema", len(t.OutputSchema), MaxToolOutputSchemaBytes},
		{"_meta", len(t.Meta), MaxToolMetaBytes},
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
