package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.RemoveBuilt()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak: goroutines left after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Contract tests (SPEC R1.3): they call the running fake server for real,
// over stdio through the Connector, so the server's own parsing and checks
// are what is tested, not a client-side schema check. Each limit is probed
// exactly at and just past its bound. The cases run in order: the notes
// cases build on each other.
func TestContract(t *testing.T) {
	srv := resource.MCPServer{Command: mcptest.Command(t), Cwd: t.TempDir()}
	s, err := mcpconn.NewConnector(nil).Connect(context.Background(), "contract", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	rep := strings.Repeat
	tests := []struct {
		name    string
		tool    string
		args    string
		wantErr string // "" = success; else a substring of the isError text
		wantOut string // for success, a substring of the structured output
	}{
		// search: required fields, types, integer bounds, lengths, enum, nested object, arrays.
		{name: "search valid", tool: "search", args: `{"query":"a","limit":3}`, wantOut: `"results":["alpha","beta","gamma"]`},
		{name: "search missing required limit", tool: "search", args: `{"query":"a"}`, wantErr: "limit"},
		{name: "search missing required query", tool: "search", args: `{"limit":3}`, wantErr: "query"},
		{name: "search limit wrong type", tool: "search", args: `{"query":"a","limit":"3"}`, wantErr: "limit"},
		{name: "search limit not an integer", tool: "search", args: `{"query":"a","limit":1.5}`, wantErr: "limit"},
		{name: "search limit at minimum 1", tool: "search", args: `{"query":"a","limit":1}`, wantOut: `"results":["alpha"]`},
		{name: "search limit below minimum", tool: "search", args: `{"query":"a","limit":0}`, wantErr: "minimum"},
		{name: "search limit at maximum 100", tool: "search", args: `{"query":"a","limit":100}`, wantOut: `"results"`},
		{name: "search limit above maximum", tool: "search", args: `{"query":"a","limit":101}`, wantErr: "maximum"},
		{name: "search query at max length", tool: "search", args: `{"query":"` + rep("q", mcptest.SearchQueryMaxLen) + `","limit":1}`, wantOut: `"results":[]`},
		{name: "search query past max length", tool: "search", args: `{"query":"` + rep("q", mcptest.SearchQueryMaxLen+1) + `","limit":1}`, wantErr: "query"},
		{name: "search query empty (min length 1)", tool: "search", args: `{"query":"","limit":1}`, wantErr: "query"},
		{name: "search sort in enum", tool: "search", args: `{"query":"a","limit":2,"sort":"newest"}`, wantOut: `"results":["beta","alpha"]`},
		{name: "search sort not in enum", tool: "search", args: `{"query":"a","limit":2,"sort":"oldest"}`, wantErr: "sort"},
		{name: "search nested filter valid", tool: "search", args: `{"query":"a","limit":1,"filter":{"after":"2024-01-31","tags":["x"]}}`, wantOut: `"results"`},
		{name: "search nested pattern violated", tool: "search", args: `{"query":"a","limit":1,"filter":{"after":"yesterday"}}`, wantErr: "after"},
		{name: "search nested array at max items", tool: "search", args: `{"query":"a","limit":1,"filter":{"tags":["1","2","3","4","5"]}}`, wantOut: `"results"`},
		{name: "search nested array past max items", tool: "search", args: `{"query":"a","limit":1,"filter":{"tags":["1","2","3","4","5","6"]}}`, wantErr: "tags"},
		{name: "search unknown field", tool: "search", args: `{"query":"a","limit":1,"extra":true}`, wantErr: "extra"},
		{name: "search nested unknown field", tool: "search", args: `{"query":"a","limit":1,"filter":{"color":"red"}}`, wantErr: "color"},

		// note_create: pattern, lengths, enum, arrays; then business rules and permissions.
		{name: "note create valid", tool: "note_create", args: `{"owner":"alice","title":"first","tags":["t"],"priority":"high"}`, wantOut: `"id":"n1"`},
		{name: "note create missing owner", tool: "note_create", args: `{"title":"x"}`, wantErr: "owner"},
		{name: "note create owner breaks pattern", tool: "note_create", args: `{"owner":"Alice","title":"x"}`, wantErr: "owner"},
		{name: "note create owner at max length 32", tool: "note_create", args: `{"owner":"` + "o" + rep("x", 31) + `","title":"long owner"}`, wantOut: `"id":"n2"`},
		{name: "note create owner past max length", tool: "note_create", args: `{"owner":"` + "o" + rep("x", 32) + `","title":"x"}`, wantErr: "owner"},
		{name: "note create tags at max items", tool: "note_create", args: `{"owner":"bob","title":"five tags","tags":["1","2","3","4","5"]}`, wantOut: `"id":"n3"`},
		{name: "note create title at max length", tool: "note_create", args: `{"owner":"alice","title":"` + rep("t", mcptest.NoteTitleMaxLen) + `"}`, wantOut: `"id":"n4"`},
		{name: "note create title past max length", tool: "note_create", args: `{"owner":"alice","title":"` + rep("t", mcptest.NoteTitleMaxLen+1) + `"}`, wantErr: "title"},
		{name: "note create title empty", tool: "note_create", args: `{"owner":"alice","title":""}`, wantErr: "title"},
		{name: "note create body at max length", tool: "note_create", args: `{"owner":"bob","title":"b","body":"` + rep("b", mcptest.NoteBodyMaxLen) + `"}`, wantOut: `"id":"n5"`},
		{name: "note create body past max length", tool: "note_create", args: `{"owner":"bob","title":"c","body":"` + rep("b", mcptest.NoteBodyMaxLen+1) + `"}`, wantErr: "body"},
		{name: "note create tags past max items", tool: "note_create", args: `{"owner":"bob","title":"d","tags":["1","2","3","4","5","6"]}`, wantErr: "tags"},
		{name: "note create empty tag", tool: "note_create", args: `{"owner":"bob","title":"d","tags":[""]}`, wantErr: "tags"},
		{name: "note create priority not in enum", tool: "note_create", args: `{"owner":"bob","title":"d","priority":"urgent"}`, wantErr: "priority"},
		{name: "note create duplicate title (business rule)", tool: "note_create", args: `{"owner":"alice","title":"first"}`, wantErr: "conflict"},
		{name: "note list limit at minimum", tool: "note_list", args: `{"limit":1}`, wantOut: `"notes":[{"id":"n1"`},
		{name: "note list limit below minimum", tool: "note_list", args: `{"limit":0}`, wantErr: "limit"},
		{name: "note list limit at maximum", tool: "note_list", args: `{"limit":100,"owner":"bob"}`, wantOut: `"id":"n5"`},
		{name: "note list limit above maximum", tool: "note_list", args: `{"limit":101}`, wantErr: "limit"},
		{name: "note delete by another caller (permission)", tool: "note_delete", args: `{"id":"n1","caller":"bob"}`, wantErr: "permission denied"},
		{name: "note delete id breaks pattern", tool: "note_delete", args: `{"id":"x1","caller":"alice"}`, wantErr: "id"},
		{name: "note delete by the owner", tool: "note_delete", args: `{"id":"n1","caller":"alice"}`},
		{name: "note delete again (business error)", tool: "note_delete", args: `{"id":"n1","caller":"alice"}`, wantErr: "not found"},

		// tree: the recursive $defs/$ref type.
		{name: "tree valid three levels", tool: "tree", args: `{"root":{"name":"a","children":[{"name":"b","children":[{"name":"c"}]},{"name":"d"}]}}`, wantOut: `"depth":3`},
		{name: "tree deep node missing name", tool: "tree", args: `{"root":{"name":"a","children":[{"children":[]}]}}`, wantErr: "name"},
		{name: "tree deep node wrong type", tool: "tree", args: `{"root":{"name":"a","children":[{"name":7}]}}`, wantErr: "name"},
		{name: "tree name at max length", tool: "tree", args: `{"root":{"name":"` + rep("n", mcptest.TreeNameMaxLen) + `"}}`, wantOut: `"nodes":1`},
		{name: "tree name empty (min length 1)", tool: "tree", args: `{"root":{"name":""}}`, wantErr: "name"},
		{name: "tree children at max items", tool: "tree", args: `{"root":{"name":"r","children":[` + nodes(50) + `]}}`, wantOut: `"nodes":51`},
		{name: "tree children past max items", tool: "tree", args: `{"root":{"name":"r","children":[` + nodes(51) + `]}}`, wantErr: "children"},
		{name: "environment names at max items", tool: "environment", args: `{"names":[` + names(64) + `]}`, wantOut: `"cwd"`},
		{name: "environment names past max items", tool: "environment", args: `{"names":[` + names(65) + `]}`, wantErr: "names"},
		{name: "tree name past max length", tool: "tree", args: `{"root":{"name":"` + rep("n", mcptest.TreeNameMaxLen+1) + `"}}`, wantErr: "name"},

		// sleep and echo bounds.
		{name: "sleep at minimum 0", tool: "sleep", args: `{"ms":0}`, wantOut: `"slept_ms"`},
		{name: "sleep below minimum", tool: "sleep", args: `{"ms":-1}`, wantErr: "ms"},
		{name: "sleep above maximum", tool: "sleep", args: fmt.Sprintf(`{"ms":%d}`, mcptest.SleepMaxMS+1), wantErr: "ms"},
		{name: "echo text at max length", tool: "echo", args: `{"text":"` + rep("e", mcptest.EchoTextMaxLen) + `"}`},
		{name: "echo text past max length", tool: "echo", args: `{"text":"` + rep("e", mcptest.EchoTextMaxLen+1) + `"}`, wantErr: "text"},
		{name: "echo not an object", tool: "echo", args: `["text"]`, wantErr: "arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.CallTool(context.Background(), tt.tool, json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			text := resultText(res)
			if tt.wantErr != "" {
				if !res.IsError || !strings.Contains(text, tt.wantErr) {
					t.Errorf("got isError=%v %q; want an error mentioning %q", res.IsError, trim(text), tt.wantErr)
				}
				return
			}
			if res.IsError {
				t.Fatalf("got error %q; want success", trim(text))
			}
			out := res.Structured
			if !strings.Contains(string(out), tt.wantOut) {
				t.Errorf("output %s lacks %s", trim(string(out)), tt.wantOut)
			}
		})
	}
}

// SPEC R1.3: sleep exactly at its maximum is accepted (the server starts
// sleeping, so the short tool timeout ends the call), not refused.
func TestContractSleepAtMaximum(t *testing.T) {
	srv := resource.MCPServer{Command: mcptest.Command(t), Cwd: t.TempDir(), ToolTimeoutMS: 300}
	s, err := mcpconn.NewConnector(nil).Connect(context.Background(), "contract", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.CallTool(context.Background(), mcptest.ToolSleep, json.RawMessage(fmt.Sprintf(`{"ms":%d}`, mcptest.SleepMaxMS)))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("sleep at maximum = %v; want it accepted and cut by the tool timeout", err)
	}
}

func nodes(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"name":"c%d"}`, i)
	}
	return strings.Join(parts, ",")
}

func names(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"V%d"`, i)
	}
	return strings.Join(parts, ",")
}

func resultText(res *mcpconn.CallResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*content.Text); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
