package mcpconn

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/resource"
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
		{Name: strings.Repeat("n", maxToolNameBytes+1), InputSchema: obj},
		{Name: "bad", InputSchema: json.RawMessage(`{"type":"string"}`)},
		{Name: "wordy", Description: strings.Repeat("d", maxToolDescriptionBytes+1), InputSchema: obj},
		{Name: "titled", Title: strings.Repeat("t", maxToolTitleBytes+1), InputSchema: obj},
		{Name: "annotated", Annotations: &mcp.ToolAnnotations{Title: strings.Repeat("t", maxToolTitleBytes+1)}, InputSchema: obj},
		{Name: "shaped", OutputSchema: json.RawMessage(`"` + strings.Repeat("o", maxToolOutputSchemaBytes) + `"`), InputSchema: obj},
		{Name: "tagged", Meta: json.RawMessage(`"` + strings.Repeat("m", maxToolMetaBytes) + `"`), InputSchema: obj},
		{Name: "task", TaskSupport: taskSupportRequired, InputSchema: obj},
		{Name: "task_ok", TaskSupport: taskSupportOptional, Meta: json.RawMessage(`{}`), InputSchema: obj},
		{Name: "b", InputSchema: obj},
	}
	got, excluded := loadTools(tools, resource.MCPServer{}, nil, nil)
	if len(excluded) != 0 {
		t.Errorf("excluded %q without enabled_tools or disabled_tools", excluded)
	}
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
	want := []string{"a: ok", "a: left out", "nnnnnnnn: left out", "bad: left out", "wordy: left out",
		"titled: left out", "annotate: left out", "shaped: left out", "tagged: left out", "task: ok", "task_ok: ok", "b: ok"}
	if diff := cmp.Diff(want, summary); diff != "" {
		t.Errorf("LoadTools (-want +got):\n%s", diff)
	}
	if got[1].Err != errDuplicateTool || len(got[2].Name) != maxToolNameBytes || got[9].Err != nil {
		t.Errorf("duplicate: %v; long name kept at %d bytes; task: %v", got[1].Err, len(got[2].Name), got[9].Err)
	}
	for i, field := range map[int]string{5: "title", 6: "annotations.title", 7: "outputSchema", 8: "_meta"} {
		if got[i].Err == nil || !strings.Contains(got[i].Err.Error(), "tool's "+field+" is") {
			t.Errorf("%s: %v; want the field %s named", got[i].Name, got[i].Err, field)
		}
	}

	// The registration's selection comes first: an excluded tool is not
	// judged (not even one over a bound), a name past maxToolNameBytes
	// is never matched and keeps its reason.
	got, excluded = loadTools(tools, resource.MCPServer{DisabledTools: []string{"t*", "a", "*"}}, nil, nil)
	wantExcluded := []string{"a", "a", "bad", "wordy", "titled", "annotated", "shaped", "tagged", "task", "task_ok", "b"}
	if diff := cmp.Diff(wantExcluded, excluded); diff != "" || len(got) != 1 || got[0].Err == nil || len(got[0].Name) != maxToolNameBytes {
		t.Errorf("disabled *: %d loaded; excluded (-want +got):\n%s", len(got), diff)
	}
}
