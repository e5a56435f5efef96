package contract_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/contract"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
)

// The pinned reference servers of package.json, checked with the default
// options (read-only tools only, seed 0). They speak 2025-11-25 only (the
// TypeScript SDK 1.x): agt asks for 2026-07-28 first and falls back, as it
// does for any legacy server. Each test records what the checker finds.

// realCheck runs the check and logs its table.
func realCheck(t *testing.T, srv resource.MCPServer, opts *contract.Options) *contract.Report {
	t.Helper()
	rep, err := contract.Run(context.Background(), mcpconn.NewConnector(nil), "real", srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = contract.WriteTable(&b, rep)
	t.Log("\n" + b.String())
	if rep.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocol version %q, want 2025-11-25", rep.ProtocolVersion)
	}
	return rep
}

func classCounts(rep *contract.Report) map[string]map[contract.Class]int {
	out := map[string]map[contract.Class]int{}
	for _, tr := range rep.Tools {
		out[tr.Name] = tr.Classes
	}
	return out
}

type counts = map[string]map[contract.Class]int

func TestServerEverything(t *testing.T) {
	t.Parallel()
	node, script := runtest.Node(t, "..", "@modelcontextprotocol/server-everything/dist/index.js")
	srv := resource.MCPServer{Command: node, Args: []string{script, "stdio"}, Cwd: t.TempDir(),
		// Its default run lasts 10 s, the whole case timeout: every case
		// of it would time out and start the server again.
		DisabledTools: []string{"trigger-long-running-operation"}}
	rep := realCheck(t, srv, nil)
	// It agrees with its schemas (zod, checked by the TypeScript SDK before
	// the handler runs): nothing laxer, stricter or leaked. Tolerated: it
	// reads a key named twice, invalid UTF-8 and lone surrogates, which
	// agt never sends. Business: get-resource-reference refuses the ids
	// past its resources.
	want := counts{
		"echo":                   {contract.Accepted: 2, contract.Refused: 2, contract.Tolerated: 3},
		"get-annotated-message":  {contract.Accepted: 5, contract.Refused: 6, contract.Tolerated: 1},
		"get-env":                {contract.Accepted: 2, contract.Tolerated: 3},
		"get-resource-links":     {contract.Accepted: 5, contract.Refused: 3, contract.Tolerated: 3},
		"get-resource-reference": {contract.Accepted: 4, contract.Refused: 3, contract.Business: 2, contract.Tolerated: 3},
		"get-structured-content": {contract.Accepted: 4, contract.Refused: 5, contract.Tolerated: 1},
		"get-sum":                {contract.Accepted: 2, contract.Refused: 4, contract.Tolerated: 3},
		"get-tiny-image":         {contract.Accepted: 2, contract.Tolerated: 3},
	}
	if diff := cmp.Diff(want, classCounts(rep)); diff != "" {
		t.Errorf("classes per tool (-want +got):\n%s", diff)
	}
	if !rep.Passed() {
		t.Error("the report fails")
	}
}

func TestServerFilesystem(t *testing.T) {
	t.Parallel()
	node, script := runtest.Node(t, "..", "@modelcontextprotocol/server-filesystem/dist/index.js")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\nworld\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	business := []contract.Case{
		{Tool: "read_text_file", Name: "a file", Arguments: json.RawMessage(`{"path":"a.txt"}`), Expect: contract.ExpectResult, Text: "hello"},
		{Tool: "read_text_file", Name: "head and tail", Arguments: json.RawMessage(`{"path":"a.txt","head":1,"tail":1}`), Expect: contract.ExpectError, Text: "Cannot specify both"},
		{Tool: "list_directory", Name: "the root", Arguments: json.RawMessage(`{"path":"."}`), Expect: contract.ExpectResult, Text: "a.txt"},
		{Tool: "get_file_info", Name: "a file", Arguments: json.RawMessage(`{"path":"a.txt"}`), Expect: contract.ExpectResult, Text: "size"},
		{Tool: "search_files", Name: "by glob", Arguments: json.RawMessage(`{"path":".","pattern":"*.txt"}`), Expect: contract.ExpectResult, Text: "a.txt"},
	}
	srv := resource.MCPServer{Command: node, Args: []string{script, root}, Cwd: root}
	rep := realCheck(t, srv, &contract.Options{Business: business})
	// Its parser agrees with its schemas: nothing laxer or stricter. But
	// its errors quote the path they could not open ("ENOENT: no such file
	// or directory, open '...'", the generated path): every schema-valid case whose
	// generated path does not exist is leaked, the finding the checker is
	// for (an error text reaches the model and the logs). Business:
	// read_file and read_text_file refuse head and tail together, a rule
	// its schema does not state. Tolerated: it reads a key named twice,
	// invalid UTF-8 and lone surrogates, which agt never sends. The
	// business cases, with paths that exist, are accepted.
	want := counts{
		"read_file":                 {contract.Refused: 6, contract.Business: 1, contract.Leaked: 5},
		"read_text_file":            {contract.Accepted: 1, contract.Refused: 7, contract.Business: 1, contract.Leaked: 5},
		"read_media_file":           {contract.Refused: 4, contract.Leaked: 3},
		"read_multiple_files":       {contract.Accepted: 3, contract.Refused: 4, contract.Tolerated: 3},
		"list_directory":            {contract.Accepted: 1, contract.Refused: 4, contract.Leaked: 3},
		"list_directory_with_sizes": {contract.Refused: 6, contract.Leaked: 5},
		"directory_tree":            {contract.Refused: 6, contract.Leaked: 4},
		"search_files":              {contract.Accepted: 1, contract.Refused: 8, contract.Leaked: 4},
		"get_file_info":             {contract.Accepted: 1, contract.Refused: 4, contract.Leaked: 3},
		"list_allowed_directories":  {contract.Accepted: 2, contract.Tolerated: 3},
	}
	if diff := cmp.Diff(want, classCounts(rep)); diff != "" {
		t.Errorf("classes per tool (-want +got):\n%s", diff)
	}
	// The tools that write are skipped: only read-only ones are called.
	var skipped []string
	for _, s := range rep.Plan.Skipped {
		skipped = append(skipped, s.Name)
	}
	if diff := cmp.Diff([]string{"write_file", "edit_file", "create_directory", "move_file"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}
