package run_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/run"
)

// Issue 27 (3): content is decoded once, and what the model and the host
// read of it stays byte for byte what it was when every reader decoded
// the bytes again. The golden file was written by the code that decoded
// on every call; every content kind of the fake server, through an MCP
// call and a host tool, with a Notice and with content an interceptor
// replaced, must give the same ForModel, ToolError and Blocks.
func TestContentGolden(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	for _, nr := range runtest.ContentResults(t) {
		res := nr.Result
		got[nr.Name+" ForModel"] = runtest.GoldenText(res.ForModel())
		got[nr.Name+" code"] = string(res.Code) + " " + res.Message
		got[nr.Name+" Blocks"] = blocksText(t, res)
	}
	runtest.Golden(t, "testdata/content_golden.json", got)
}

// blocksText renders Result.Blocks: each block's Go type and its fields
// as JSON, or the error.
func blocksText(t *testing.T, res run.Result) string {
	t.Helper()
	blocks, err := res.Blocks()
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, c := range blocks {
		fields, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%T %s %s %s\n", c, c.Type(), c.JSON(), fields)
	}
	return runtest.GoldenText([]byte(b.String()))
}
