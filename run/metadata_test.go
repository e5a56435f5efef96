package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// A Run's ToolInfo carries the server's title, annotations, outputSchema
// and _meta (exact bytes) and its JSON names them; a tool that requires
// tasks is skipped with the reason and is not callable, one that allows
// them is.
func TestRunToolMetadata(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, "meta")
		mem.opts.Faults = []mcptest.Fault{mcptest.FaultToolMetadata}
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})

		var rich run.ToolInfo
		for _, ti := range r.Tools() {
			if ti.Source.Tool == mcptest.ToolMetaRich {
				rich = ti
			}
		}
		if rich.Title != mcptest.MetaRichTitle || rich.Annotations == nil || !rich.Annotations.ReadOnlyHint ||
			string(rich.OutputSchema) != mcptest.MetaRichOutputSchema || string(rich.Meta) != mcptest.MetaRichMeta {
			t.Errorf("meta_rich = %+v", rich)
		}
		raw, err := json.Marshal(rich)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatal(err)
		}
		if string(fields["output_schema"]) != mcptest.MetaRichOutputSchema || string(fields["meta"]) != mcptest.MetaRichMeta ||
			string(fields["title"]) != `"`+mcptest.MetaRichTitle+`"` || fields["annotations"] == nil {
			t.Errorf("ToolInfo JSON = %s", raw)
		}
		// Without them (a host tool), the JSON has no new keys.
		for _, ti := range r.Tools() {
			if ti.Source.Tool != mcptest.ToolEcho {
				continue
			}
			ti.Title, ti.Annotations, ti.OutputSchema = "", nil, nil
			var keys map[string]json.RawMessage
			if err := json.Unmarshal([]byte(mustJSON(t, ti)), &keys); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"title", "annotations", "output_schema", "meta"} {
				if _, ok := keys[k]; ok {
					t.Errorf("ToolInfo JSON without %s has the key", k)
				}
			}
		}

		if st := r.SkippedTools(); len(st) != 0 {
			t.Errorf("skipped tools = %v, want none: a tool that requires tasks is called as a task (issue 26 item 1)", st)
		}
		// The fake server lists task_required but answers it at once: a
		// server may always answer without a task.
		out, err := r.Execute(context.Background(), batch(
			call("c0", run.Alias("meta", mcptest.ToolTaskRequired), `{"text":"req"}`),
			call("c1", run.Alias("meta", mcptest.ToolTaskOptional), `{"text":"opt"}`),
			call("c2", run.Alias("meta", mcptest.ToolTaskForbidden), `{"text":"forb"}`)))
		if err != nil || !slices.Equal(codes(out), []run.Code{"", "", ""}) {
			t.Errorf("calls of task_required, task_optional, task_forbidden = %v, %v", codes(out), err)
		}
	})
}

// Issue 24 item 6, SPEC R5.4: a call of a tool the registration excludes,
// or of one the Run left out, is still an unknown tool that rejects the
// whole batch, but its message says why the tool is not there, for the
// model too, and never echoes the arguments; a name no server listed keeps
// the plain message. Both alias forms (a readable and a hashed reference).
func TestRunSaysWhyAToolIsNotOffered(t *testing.T) {
	t.Parallel()
	refs := []resource.Ref{"meta", "team/my_tools"} // the second's aliases carry it as a hash
	repo := newRepo(t)
	for _, ref := range refs {
		srv := inMemoryServer(t)
		srv.DisabledTools = []string{mcptest.ToolNoteDelete}
		putMCP(t, repo, ref, srv)
	}
	putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: refs})
	mem := newInMemory()
	mem.opts.Faults = []mcptest.Fault{mcptest.FaultToolMetadata, mcptest.FaultInvalidSchema}
	r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})
	const badSchemaTool = "bad_invalid_schema" // mcptest.FaultInvalidSchema
	var why string
	for _, st := range r.SkippedTools() {
		if st.Source.Tool == badSchemaTool {
			why = st.Err.Error()
		}
	}

	const secret = "s3cr3t-argument"
	args := `{"id":"` + secret + `","text":"` + secret + `"}`
	const (
		excluded = "the tool %q is excluded by its server's registration (enabled_tools/disabled_tools); the batch was not run"
		unknown  = "no tool named %q in this run; the batch was not run"
	)
	leftOut := "the tool %q was left out of this run: " + why + "; the batch was not run"
	for _, tc := range []struct {
		name       string
		alias      string
		format     string // of the message, with the alias
		notOffered bool
	}{
		{"excluded", run.Alias("meta", mcptest.ToolNoteDelete), excluded, true},
		{"excluded, hashed reference", run.Alias("team/my_tools", mcptest.ToolNoteDelete), excluded, true},
		{"left out", run.Alias("meta", badSchemaTool), leftOut, true},
		{"left out, hashed reference", run.Alias("team/my_tools", badSchemaTool), leftOut, true},
		{"never listed", run.Alias("meta", "note_remove"), unknown, false},
		{"excluded name under another mount", run.Alias("other", mcptest.ToolNoteDelete), unknown, false},
	} {
		// A valid call first: the rejection still stops the whole batch.
		out, err := r.Execute(context.Background(), batch(
			call("ok", run.Alias("meta", mcptest.ToolEcho), `{"text":"x"}`),
			call("c1", tc.alias, args)))
		var be *run.BatchError
		if !errors.As(err, &be) || be.Code != run.CodeUnknownTool || be.CallID != "c1" {
			t.Errorf("%s: Execute = %v; want an unknown_tool BatchError for c1", tc.name, err)
			continue
		}
		want := fmt.Sprintf(tc.format, tc.alias)
		if be.Message != want {
			t.Errorf("%s: message\n%q\nwant\n%q", tc.name, be.Message, want)
		}
		if got := notOffered(err); got != tc.notOffered {
			t.Errorf("%s: errors.Is(err, ErrToolNotOffered) = %v; want %v", tc.name, got, tc.notOffered)
		}
		for _, res := range out.Results {
			if res.Code != run.CodeUnknownTool || res.Message != want {
				t.Errorf("%s: result %s = %s %q", tc.name, res.CallID, res.Code, res.Message)
			}
		}
		if text := string(be.ToolError()); !strings.Contains(text, "unknown_tool") || strings.Contains(text, secret) {
			t.Errorf("%s: ToolError %s", tc.name, text)
		}
	}
	if n := mem.counters.Calls(); n != 0 {
		t.Errorf("the servers got %d calls of rejected batches", n)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// enabled_tools and disabled_tools: a Run lists only the tools the
// registration offers, an excluded tool is an unknown tool that never
// reaches the server, and exclusion is not a skipped tool.
func TestRunToolSelection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		enabled, disabled []string
		want              []string
	}{
		{name: "all", want: []string{"echo", "environment", "note_create", "note_delete", "note_list", "search", "sleep", "tree"}},
		{name: "none", enabled: []string{}, want: nil},
		{name: "enabled globs", enabled: []string{"note_*", "echo"}, want: []string{"echo", "note_create", "note_delete", "note_list"}},
		{name: "disabled after enabled", enabled: []string{"note_*", "echo"}, disabled: []string{"*_delete", "ech?"}, want: []string{"note_create", "note_list"}},
		{name: "disabled only, every name", disabled: []string{"*e*"}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			srv := inMemoryServer(t)
			srv.EnabledTools, srv.DisabledTools = tc.enabled, tc.disabled
			putMCP(t, repo, "sel", srv)
			putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{"sel"}})
			mem := newInMemory()
			r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})
			var got []string
			for _, ti := range r.Tools() {
				got = append(got, ti.Source.Tool)
			}
			if diff := cmp.Diff(tc.want, got, cmpEmpty); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if len(r.SkippedTools()) != 0 || len(r.MountErrors()) != 0 {
				t.Errorf("skipped %v, mount errors %v", r.SkippedTools(), r.MountErrors())
			}
			if !slices.Contains(tc.want, mcptest.ToolEcho) {
				_, err := r.Execute(context.Background(), batch(call("c1", run.Alias("sel", mcptest.ToolEcho), `{"text":"x"}`)))
				var be *run.BatchError
				if !errors.As(err, &be) || be.Code != run.CodeUnknownTool {
					t.Errorf("call of excluded echo = %v, want unknown_tool", err)
				}
				if n := mem.counters.Calls(); n != 0 {
					t.Errorf("the server received %d calls", n)
				}
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

// Run.Instructions lists each loaded mount's instructions in the agent's
// order of mounts; a mount that failed (not registered) has none.
func TestRunInstructions(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, "zeta", "alpha")
		putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{"zeta", "gone", "alpha"}})
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})
		want := []run.ServerInstructions{{Ref: "zeta", Text: "agt fake MCP server for tests"}, {Ref: "alpha", Text: "agt fake MCP server for tests"}}
		if diff := cmp.Diff(want, r.Instructions()); diff != "" {
			t.Errorf("Instructions (-want +got):\n%s", diff)
		}
	})
}

// The fingerprint covers alias, source and input schema only: the same
// tools with or without title, annotations, outputSchema and _meta give
// the same fingerprint, and the fake server's default tools give the one
// they gave before ToolInfo carried metadata (a suspended Run stays
// resumable across the upgrade).
func TestFingerprintIgnoresMetadata(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		dialWith := func(tool *mcp.Tool) *mcpconn.Connector {
			return mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
				s := mcp.NewServer(&mcp.Implementation{Name: "fp", Version: "1"}, nil)
				s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
				serverEnd, clientEnd := mcp.NewInMemoryTransports()
				if _, err := s.Connect(context.WithoutCancel(ctx), serverEnd, nil); err != nil {
					return nil, err
				}
				return clientEnd, nil
			}})
		}
		schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
		repo, _ := setupEra(t, e, "fp")
		plain := newRun(t, &run.Options{Repository: repo, Connector: dialWith(&mcp.Tool{Name: "t", InputSchema: schema})})
		rich := newRun(t, &run.Options{Repository: repo, Connector: dialWith(&mcp.Tool{Name: "t", InputSchema: schema,
			Title: "T", Description: "d", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
			OutputSchema: json.RawMessage(`{"type":"object"}`), Meta: mcp.Meta{"k": "v"}})})
		if plain.Fingerprint() != rich.Fingerprint() {
			t.Errorf("metadata changed the fingerprint: %s vs %s", plain.Fingerprint(), rich.Fingerprint())
		}
		if ti := rich.Tools()[0]; ti.Title != "T" || ti.OutputSchema == nil || ti.Meta == nil {
			t.Errorf("rich ToolInfo = %+v", ti)
		}

		// Computed on main before this change, for the default fake server
		// mounted as "notes" by the agent "writer" with zero static inputs.
		const before = "ccf325b037ef4918d0fc709086e161874976f239c280f1eb1f73c72495d37e09"
		repo, mem := setupEra(t, e, "notes")
		if got := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()}).Fingerprint(); got != before {
			t.Errorf("Fingerprint = %s, want %s as before", got, before)
		}
	})
}
