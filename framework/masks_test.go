package framework_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// countingServer is an MCP server on loopback that counts the requests
// carrying the header value planted.
func countingServer(t *testing.T, planted string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	server := mcptest.NewServer(nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Authorization"), planted) {
			n.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

// readBack returns the document resource_read shows the model, decoded
// for patching.
func readBack(t *testing.T, m *model, ref string) map[string]map[string]map[string]any {
	t.Helper()
	read := structured[resource.Resource](t, m.one(framework.ToolResourceRead, `{"kind":"mcp","reference":"`+ref+`"}`))
	var doc map[string]map[string]map[string]any
	if err := json.Unmarshal(read.Data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func writeArgs(ref string, doc any) string {
	b, _ := json.Marshal(map[string]any{"kind": "mcp", "reference": ref, "data": doc})
	return string(b)
}

// issue 23 item 2: an agent reads a remote registration whose
// Authorization header is a literal, points url at another origin and
// sends the mask back for the header. The write must be refused, naming
// the header, and the other origin must never see the literal; at the
// same origin the mask still keeps the stored value.
func TestMaskNotRestoredForAnotherOrigin(t *testing.T) {
	t.Parallel()
	const planted = "Bearer hdrS3cret-item2-planted"
	a, _ := countingServer(t, planted)
	tests := []struct {
		name    string
		url     func(b *httptest.Server) string
		refused bool
	}{
		{"another origin", func(b *httptest.Server) string { return b.URL + "/mcp" }, true},
		{"same origin, another path", func(*httptest.Server) string { return a.URL + "/other" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, atB := countingServer(t, planted)
			hst := newHost(t, nil)
			data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"corp": map[string]any{
				"type": "http", "url": a.URL + "/mcp", "headers": map[string]string{"Authorization": planted}}}})
			hst.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "corp", Create: true, Data: data})
			hst.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
			m := &model{t: t, r: hst.newRun(t, "boss", policy.AutoAllow())}

			doc := readBack(t, m, "corp")
			doc["mcpServers"]["corp"]["url"] = tt.url(b)
			res := m.one(framework.ToolResourceWrite, writeArgs("corp", doc))
			rep := m.one(framework.ToolMCPProbe, `{"reference":"corp"}`)
			if !tt.refused {
				mustOK(t, res)
				mustOK(t, rep)
				stored, err := hst.svc.Read(context.Background(), resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: "corp"})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(stored.Data), planted) {
					t.Errorf("a write at the same origin lost the stored header: %s", stored.Data)
				}
				return
			}
			if res.Code != run.CodeInvalidArguments {
				t.Errorf("write: code %q, want %q", res.Code, run.CodeInvalidArguments)
			}
			if len(res.Violations) == 0 || res.Violations[0].Path != "/data/mcpServers/corp/headers/Authorization" {
				t.Errorf("violations = %+v, want the header named", res.Violations)
			}
			if got := atB.Load(); got != 0 {
				t.Errorf("the other origin received the stored header in %d requests, want 0", got)
			}
		})
	}
}

// issue 23 item 2, stdio: an agent reads a registration whose env holds a
// literal, changes command to another program and sends the mask back for
// the env value. The write must be refused, naming the env value, and the
// other program never started with it; with the command unchanged the mask
// keeps the stored value.
func TestMaskNotRestoredForAnotherCommand(t *testing.T) {
	t.Parallel()
	const planted = "envS3cret-item2-planted"
	fake := mcptest.Command(t)
	// Another program: a copy of the fake server at another path, which
	// reports its environment like the original.
	other := filepath.Join(t.TempDir(), filepath.Base(fake))
	bin, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		command string
		refused bool
	}{
		{"another command", other, true},
		{"same command", fake, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hst := newHost(t, &mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{TerminateGrace: 200e6}})
			data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"local": map[string]any{
				"command": fake, "cwd": t.TempDir(), "env": map[string]string{"PLANTED": planted}}}})
			hst.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "local", Create: true, Data: data})
			hst.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true,
				Data: json.RawMessage(`{"manager":true,"mcps":["local"]}`)})
			m := &model{t: t, r: hst.newRun(t, "boss", policy.AutoAllow())}
			env := func() mcptest.EnvironmentOut {
				return structured[mcptest.EnvironmentOut](t, m.one(run.Alias("local", mcptest.ToolEnvironment), `{"names":["PLANTED"]}`))
			}
			before := env()

			doc := readBack(t, m, "local")
			doc["mcpServers"]["local"]["command"] = tt.command
			doc["mcpServers"]["local"]["description"] = "patched"
			out := m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(writeArgs("local", doc))})
			after := env()
			if !tt.refused {
				mustOK(t, out.Results[0])
				if after.EnvDigests["PLANTED"] != mcptest.Digest(planted) {
					t.Errorf("with the command unchanged the server got PLANTED %q, want the stored value", after.Env["PLANTED"])
				}
				return
			}
			if c := out.Results[0].Code; c != run.CodeInvalidArguments {
				t.Errorf("write: code %q, want %q", c, run.CodeInvalidArguments)
			}
			if v := out.Results[0].Violations; len(v) == 0 || v[0].Path != "/data/mcpServers/local/env/PLANTED" {
				t.Errorf("violations = %+v, want the env value named", v)
			}
			if after.PID != before.PID {
				t.Errorf("the server was restarted (pid %d, then %d) and got PLANTED %q: another command started with the stored env", before.PID, after.PID, after.Env["PLANTED"])
			}
		})
	}
}
