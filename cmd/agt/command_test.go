package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agtsdk/agt/resource"
)

// Issue 27: the CLI offers its fixes for exactly the commands the library
// refuses as relative paths. (A command starting with "~" has its own
// rule, which the library and both callers here apply first.)
func TestRelativeCommandRule(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"npx", "server", "/usr/bin/server", "./server", "bin/server", `.\server`, `bin\server`, "../x", "a b", "/opt/x/../y"} {
		data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": c, "cwd": "/srv/s"}}})
		_, _, err := resource.ValidateMCP(data)
		var de *resource.DocumentError
		refused := errors.As(err, &de) && de.Field == "/mcpServers/s/command" && strings.Contains(de.Message, "relative path")
		if got := relativeCommand(c); got != refused {
			t.Errorf("relativeCommand(%q) = %v; the library refuses it as a relative path: %v (%v)", c, got, refused, err)
		}
	}
}
