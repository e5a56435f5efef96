package run_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/content"
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

// Issue 27 (3): a Result the Run made carries its typed blocks: an MCP
// call's those mcpconn decoded, a host tool's decoded at the first need,
// once, whatever copy of the Result asks. Blocks and ForModel then
// allocate nothing; a Content replaced by another slice (even of equal
// bytes) is decoded anew, so the blocks never disagree with Content.
// Not parallel: testing.AllocsPerRun refuses to run in a parallel test.
func TestBlocksDecodedOnce(t *testing.T) {
	for _, nr := range runtest.ContentResults(t) {
		res := nr.Result
		first, err := res.Blocks()
		if err != nil || len(first) == 0 || strings.Contains(nr.Name, "many_blocks") {
			continue // a failed call without blocks, or content not an array
		}
		// Copies of the Result, asking at once, get the same blocks.
		var wg sync.WaitGroup
		got := make([][]content.Block, 4)
		for i := range got {
			wg.Go(func() {
				c := res
				got[i], _ = c.Blocks()
			})
		}
		wg.Wait()
		for i := range got {
			if len(got[i]) != len(first) || got[i][0] != first[0] {
				t.Errorf("%s: copy %d decoded its own blocks", nr.Name, i)
			}
		}
		if n := testing.AllocsPerRun(20, func() { _, _ = res.Blocks() }); n != 0 {
			t.Errorf("%s: Blocks allocates %v times; want 0 (no decoding)", nr.Name, n)
		}
		if res.Notice == "" && !res.Failed() { // a Notice or a ToolError is rendered on each call
			if n := testing.AllocsPerRun(20, func() { _ = res.ForModel() }); n != 0 {
				t.Errorf("%s: ForModel allocates %v times; want 0 (no decoding)", nr.Name, n)
			}
		}
		// The same bytes in another slice are decoded anew, to equal
		// blocks; other bytes give their own blocks.
		again := res
		again.Content = bytes.Clone(res.Content)
		blocks, err := again.Blocks()
		if err != nil || len(blocks) != len(first) || blocks[0] == first[0] || !bytes.Equal(blocks[0].JSON(), first[0].JSON()) {
			t.Errorf("%s: a copy of Content: %d blocks, %v; want %d new equal blocks", nr.Name, len(blocks), err, len(first))
		}
		other := res
		other.Content = json.RawMessage(`[{"type":"text","text":"other"}]`)
		if blocks, err := other.Blocks(); err != nil || len(blocks) != 1 || blocks[0].(*content.Text).Text != "other" {
			t.Errorf("%s: replaced Content: blocks %v, %v", nr.Name, blocks, err)
		}
	}
}
