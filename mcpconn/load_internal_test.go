package mcpconn

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// LoadTools leaves out, with the reason, a tool over a text bound, the
// second tool of a name, and a tool whose schema does not compile; the
// rest compile, in the server's order.
func TestLoadTools(t *testing.T) {
	t.Parallel()
	obj := json.RawMessage(`{"type":"object"}`)
	tools := []Tool{
		{Name: "a", InputSchema: obj},
		{Name: "a", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{}}}`)},
		{Name: strings.Repeat("n", MaxToolNameBytes+1), InputSchema: obj},
		{Name: "bad", InputSchema: json.RawMessage(`{"type":"string"}`)},
		{Name: "wordy", Description: strings.Repeat("d", MaxToolDescriptionBytes+1), InputSchema: obj},
		{Name: "b", InputSchema: obj},
	}
	got := LoadTools(tools, nil, nil)
	var summary []string
	for _, lt := range got {
		s := lt.Name[:min(len(lt.Name), 8)] + ": "
		switch {
		case lt.Err == nil && lt.Schema != nil:
			s += "ok"
		case lt.Err != nil && lt.Schema == nil:
			s += "left out"
		default:
			s += "inconsistent"
		}
		summary = append(summary, s)
	}
	want := []string{"a: ok", "a: left out", "nnnnnnnn: left out", "bad: left out", "wordy: left out", "b: ok"}
	if diff := cmp.Diff(want, summary); diff != "" {
		t.Errorf("LoadTools (-want +got):\n%s", diff)
	}
	if got[1].Err != errDuplicateTool || len(got[2].Name) != MaxToolNameBytes {
		t.Errorf("duplicate: %v; long name kept at %d bytes", got[1].Err, len(got[2].Name))
	}
}
