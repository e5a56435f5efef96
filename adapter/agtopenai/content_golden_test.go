package agtopenai_test

import (
	"testing"

	"github.com/agtsdk/agt/adapter/agtopenai"
	"github.com/agtsdk/agt/adapter/internal/convtest"
	"github.com/agtsdk/agt/run"
)

// Issue 27 (3): the tool message of every content kind, through an MCP
// call and a host tool, with a Notice and with content an interceptor
// replaced, stays byte for byte what the SDK sent when the adapter
// decoded the content itself (the golden file was written then).
func TestToolMessageGolden(t *testing.T) {
	t.Parallel()
	convtest.ContentGolden(t, "testdata/tool_message_golden.json", func(r run.Result) any { return agtopenai.ToolMessage(r) })
}
