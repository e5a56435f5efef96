package runtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/run"
)

// HostContentTool is the host tool of ContentResults' Run: it answers
// {"kind":K} with the content and structured content of
// mcptest.ContentResult(K), byte for byte.
const HostContentTool = "host_content"

// ContentNotice is the Notice ContentResults puts on its ".../notice"
// Results: it needs escaping in HTML only, so that an encoder that
// escapes HTML shows.
const ContentNotice = "configuration saved, but load failed: <x> & \"y\""

// replaced is what ContentResults' interceptor puts in the place of the
// content of a call whose ID starts with "replace".
const replaced = `[{"type":"text","text":"replaced"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]`

// NamedResult is one of ContentResults' Results.
type NamedResult struct {
	Name   string
	Result run.Result
}

// ContentResults runs each of mcptest's content kinds (ContentKinds,
// served by the fake server with FaultContentKinds) through a Run and
// returns the Results, each under a name:
//
//	mcp/KIND           the MCP call's Result, as Execute returned it
//	mcp/KIND/notice    the same with Notice set (ContentNotice)
//	mcp/KIND/replaced  the MCP call's Result whose Content an After
//	                   interceptor replaced by another array
//	host/KIND          a host tool's Result with the same content and
//	                   structured content bytes (HostContentTool)
//	host/KIND/notice   the same with Notice set
//
// so that every path content takes to the model is covered: ForModel,
// Blocks and the adapters on them.
func ContentResults(t testing.TB) []NamedResult {
	t.Helper()
	r := New(t, Repository(t), Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultContentKinds}}), run.Options{
		Permission: policy.AutoAllow(),
		HostTools: []run.HostTool{{
			Name:        HostContentTool,
			Description: "Answers with the content of a content kind.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"]}`),
			Handler: func(_ context.Context, req run.Request) (run.Result, error) {
				var in mcptest.ContentIn
				if err := json.Unmarshal(req.Arguments, &in); err != nil {
					return run.Result{}, err
				}
				var m map[string]json.RawMessage
				if err := json.Unmarshal(mcptest.ContentResult(in.Kind), &m); err != nil {
					return run.Result{}, err
				}
				return run.Result{Content: m["content"], Structured: m["structuredContent"]}, nil
			},
		}},
		Interceptors: []run.Interceptor{run.After(func(_ context.Context, req run.Request, res run.Result) run.Result {
			if strings.HasPrefix(req.CallID, "replace") {
				res.Content = json.RawMessage(replaced)
			}
			return res
		})},
	})
	var calls []run.Call
	for _, kind := range mcptest.ContentKinds {
		args := json.RawMessage(`{"kind":"` + kind + `"}`)
		calls = append(calls,
			run.Call{ID: "mcp/" + kind, Name: run.Alias(Notes, mcptest.ToolContent), Arguments: args},
			run.Call{ID: "replace/" + kind, Name: run.Alias(Notes, mcptest.ToolContent), Arguments: args},
			run.Call{ID: "host/" + kind, Name: HostContentTool, Arguments: args})
	}
	out, err := r.Execute(context.Background(), run.Batch{ID: "content", Agent: Agent, Calls: calls})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var named []NamedResult
	for _, res := range out.Results {
		kind, name := res.CallID[strings.IndexByte(res.CallID, '/')+1:], res.CallID
		if strings.HasPrefix(name, "replace/") {
			named = append(named, NamedResult{"mcp/" + kind + "/replaced", res})
			continue
		}
		noticed := res
		noticed.Notice = ContentNotice
		named = append(named, NamedResult{name, res}, NamedResult{name + "/notice", noticed})
	}
	return named
}

// GoldenText is b as the text of a golden file: b itself up to 4 KiB,
// else its length, its SHA-256 and its first 200 bytes (the many-blocks
// kind is 270 kB), which tell a change as surely.
func GoldenText(b []byte) string {
	if len(b) <= 4<<10 {
		return string(b)
	}
	return fmt.Sprintf("%d bytes, sha256 %x, starting %s", len(b), sha256.Sum256(b), b[:200])
}

var update = flag.Bool("update-golden", false, "rewrite the golden files of runtest.Golden")

// Golden compares got (name to exact text) with the golden file path
// (testdata/NAME.json, a JSON object): each name's text must be the same
// byte for byte. With -update-golden it writes got to the file instead.
func Golden(t testing.TB, path string, got map[string]string) {
	t.Helper()
	if *update {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(got); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the golden file (write it with -update-golden): %v", err)
	}
	var want map[string]string
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("golden file %s: %v", path, err)
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: missing", name)
		case g != w:
			t.Errorf("%s: not byte for byte the golden text:\ngot  %.2000s\nwant %.2000s", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: not in the golden file %s (write it with -update-golden)", name, path)
		}
	}
}
