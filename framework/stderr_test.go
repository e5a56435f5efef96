package framework_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// stderrSecret is what the hostile server of these tests prints on stderr
// before it exits, as a server that dumps its environment does.
const stderrSecret = "PASSWORD=hunter2-stderr-secret"

func leakyServerData(t *testing.T) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"leaky": map[string]any{
		"command": "/bin/sh", "args": []string{"-c", "echo '" + stderrSecret + "' >&2; exit 3"}, "cwd": t.TempDir(),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// bannerServerData registers the fake server that prints mcptest.Banner
// (a token in it) on stdout before it serves.
func bannerServerData(t *testing.T) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"leaky": map[string]any{
		"command": mcptest.Command(t), "args": []string{"-fault", string(mcptest.FaultBanner)}, "cwd": t.TempDir(),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// serverOutputs are the two ways a stdio server's output could reach a
// model: its stderr, and (issue 23 item 5) a banner on stdout where the
// handshake's answer should be.
var serverOutputs = []struct {
	name   string
	data   func(*testing.T) json.RawMessage
	secret string
	// says is what the report's error says instead of the output.
	says  string
	field func(*mcpconn.ProbeReport) string
	// traces are other signs of the output that model text must not
	// hold either: the banner's start, and the JSON decoder's error that
	// quotes its first byte.
	traces []string
}{
	{"stderr", leakyServerData, stderrSecret, "exit status 3", func(r *mcpconn.ProbeReport) string { return r.StderrTail }, nil},
	{"stdout banner", bannerServerData, mcptest.BannerToken, "non-JSON on stdout", func(r *mcpconn.ProbeReport) string { return r.StdoutHead },
		[]string{"Server starting", "invalid character"}},
}

// holdsTrace reports the first trace of a server's output in text, or "".
func holdsTrace(text string, traces []string) string {
	for _, tr := range traces {
		if strings.Contains(text, tr) {
			return tr
		}
	}
	return ""
}

// A server's output does not reach the model through the framework tools
// (the mcp_probe answer, the notice of the refresh its registration
// caused) unless the host opts in; the Prober's report and error (what the
// CLI prints) and the audit keep it.
func TestServerStderrReachesTheModelOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	for _, out := range serverOutputs {
		for _, allowed := range []bool{false, true} {
			name := out.name
			if allowed {
				name += ", ServerStderrToModel"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				h := newHost(t, nil)
				h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
				good, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": map[string]any{"command": mcptest.Command(t), "cwd": t.TempDir()}}})
				h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "notes", Create: true, Data: good})
				h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "leaky", Create: true, Data: out.data(t)})
				h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Data: json.RawMessage(`{"mcps":["notes"]}`)})
				r, err := run.New(context.Background(), &run.Options{
					Agent: "boss", Repository: h.repo, Connector: h.connector, Permission: policy.AutoAllow(), Auditor: h.audit,
					HostTools:           framework.Tools(h.svc, h.prober, &framework.Options{ServerStderrToModel: allowed}),
					ServerStderrToModel: allowed,
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = r.Close() })
				m := &model{t: t, r: r}

				// mcp_probe: everything the model reads of the answer.
				res := m.one(framework.ToolMCPProbe, `{"reference":"leaky"}`)
				rep := structured[mcpconn.ProbeReport](t, res)
				if rep.OK || !strings.Contains(rep.Error, out.says) {
					t.Fatalf("report = %+v, want not OK, saying %q", rep, out.says)
				}
				if strings.Contains(rep.Error, out.secret) {
					t.Errorf("the report's error holds the server's output: %q", rep.Error)
				}
				if got := strings.Contains(out.field(&rep), out.secret); got != allowed {
					t.Errorf("the report's output field = %q, want the server's output: %v", out.field(&rep), allowed)
				}
				answer := string(res.ForModel()) + string(res.Content) + string(res.Structured)
				if got := strings.Contains(answer, out.secret); got != allowed {
					t.Errorf("the mcp_probe answer holds the server's output: %v, want %v:\n%s", got, allowed, res.ForModel())
				}
				if tr := holdsTrace(answer, out.traces); !allowed && tr != "" {
					t.Errorf("the mcp_probe answer holds %q:\n%s", tr, answer)
				}

				// A resource_write that mounts the leaky server: the refresh
				// fails, and its notice is the model's.
				batch := m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(`{"kind":"agent","reference":"boss","add":{"mcps":["leaky"]}}`)})
				mustOK(t, batch.Results[0])
				if batch.Refresh == nil || batch.Refresh.OK {
					t.Fatalf("refresh = %+v, want a failure", batch.Refresh)
				}
				want := 0
				if allowed {
					want = 1
				}
				if n := strings.Count(batch.Notice(), out.secret); n != want {
					t.Errorf("the notice holds the server's output %d times, want %d:\n%s", n, want, batch.Notice())
				}
				if tr := holdsTrace(batch.Notice(), out.traces); !allowed && tr != "" {
					t.Errorf("the notice holds %q:\n%s", tr, batch.Notice())
				}
				if !strings.Contains(batch.Notice(), out.says) {
					t.Errorf("the notice does not say %q:\n%s", out.says, batch.Notice())
				}
				if n := strings.Count(h.audit.messages("refresh"), out.secret); n != 1 {
					t.Errorf("the refresh audit holds the server's output %d times, want 1", n)
				}

				// The Prober itself (the CLI's agt mcp probe) keeps it, in the
				// error and in the report's own field, not in the report's error.
				prep, err := h.prober.Probe(context.Background(), "leaky")
				if err == nil || !strings.Contains(err.Error(), out.secret) {
					t.Errorf("Probe error = %v, want the server's output", err)
				}
				if prep == nil || !strings.Contains(out.field(prep), out.secret) || strings.Contains(prep.Error, out.secret) {
					t.Errorf("Probe report = %+v, want the server's output in its own field only", prep)
				}
			})
		}
	}
}
