package framework_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// boundResolver answers one secret to the servers it is bound to.
func boundResolver(value string, for_ ...resource.Ref) resource.SecretResolverFunc {
	return func(_ context.Context, ref resource.Ref, name string) (string, error) {
		if slices.Contains(for_, ref) && name == "tok" {
			return value, nil
		}
		return "", errors.New("no secret " + name + " for " + string(ref) + " (value " + value + ")")
	}
}

// Secrets planted in an env value, a header, an argument and a URL query,
// plus the values behind ${secret:...} and ${env:...} references, reach
// the servers and none of what the model, the audit or a refresh notice
// is told: all five framework tools, a write that sends the masks back, a
// failing probe and a failed refresh.
func TestSecretsNeverReachTheModel(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			secrets := map[string]string{
				"env value":     "envS3cret-planted-1",
				"header":        "hdrS3cret-planted-2",
				"argument":      "argS3cret-planted-3",
				"url query":     "urlS3cret-planted-4",
				"secret ref":    "refS3cret-resolved-5",
				"env reference": "envRefS3cret-resolved-6",
			}
			// The remote server records what it receives.
			var mu sync.Mutex
			var gotAuth, gotKey []string
			server := mcptest.NewServer(nil)
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				gotAuth = append(gotAuth, r.Header.Get("Authorization"))
				gotKey = append(gotKey, r.URL.Query().Get("key"))
				mu.Unlock()
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close) // after the Run, which holds a session to it, is closed
			// A port nothing listens on, for the remote probe that fails.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			deadURL := "http://" + l.Addr().String() + "/mcp?key=" + secrets["url query"]
			l.Close()

			hst := newHost(t, &mcpconn.ConnectorOptions{
				Limits: &mcpconn.Limits{TerminateGrace: 200e6},
				LaunchEnv: &resource.LaunchEnv{Secrets: boundResolver(secrets["secret ref"], "local", "remote"), SecretEnv: []string{"local=AGT_TEST_REF"}, Environ: func() []string {
					return []string{"PATH=" + os.Getenv("PATH"), "AGT_TEST_REF=" + secrets["env reference"]}
				}},
			})
			dir := t.TempDir()
			local := map[string]any{
				"command": mcptest.Command(t), "cwd": dir,
				"args": []string{"-era", string(e), "--", "--api-key=" + secrets["argument"], "--token", "${secret:tok}"},
				"env":  map[string]string{"PLANTED": secrets["env value"], "FROM_REF": "${secret:tok}", "FROM_ENV": "${env:AGT_TEST_REF}"},
			}
			remote := map[string]any{
				"type": "http", "url": ts.URL + "/mcp?key=" + secrets["url query"],
				"headers": map[string]string{"Authorization": "Bearer " + secrets["header"], "X-Ref": "${secret:tok}"},
			}
			broken := map[string]any{
				"command": mcptest.Command(t), "cwd": dir,
				"args": []string{"-fault", string(mcptest.FaultExitAtStart), "--api-key=" + secrets["argument"]},
				"env":  map[string]string{"PLANTED": secrets["env value"]},
			}
			brokenRemote := map[string]any{"url": deadURL, "headers": map[string]string{"Authorization": "Bearer " + secrets["header"]}}
			for ref, entry := range map[string]map[string]any{"local": local, "remote": remote, "broken": broken, "broken-remote": brokenRemote} {
				data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": entry}})
				hst.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: resource.Ref(ref), Create: true, Data: data})
			}
			hst.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true,
				Data: json.RawMessage(`{"manager":true,"mcps":["local","remote"]}`)})
			m := &model{t: t, r: hst.newRun(t, "boss", policy.AutoAllow())}

			var seen strings.Builder // everything the model is told
			record := func(out run.Outcome) run.Outcome {
				for _, r := range out.Results {
					fmt.Fprintf(&seen, "%s\n%s\n%s\n", r.Content, r.Structured, r.ToolError())
				}
				if out.Refresh != nil {
					fmt.Fprintf(&seen, "%+v\n", *out.Refresh)
				}
				return out
			}
			call := func(name, args string) run.Result {
				t.Helper()
				return record(m.batch(run.Call{Name: name, Arguments: json.RawMessage(args)})).Results[0]
			}

			for _, ref := range []string{"local", "remote", "broken", "broken-remote"} {
				mustOK(t, call(framework.ToolResourceRead, `{"kind":"mcp","reference":"`+ref+`"}`))
				mustOK(t, call(framework.ToolResourceTest, `{"kind":"mcp","reference":"`+ref+`"}`))
				rep := structured[mcpconn.ProbeReport](t, call(framework.ToolMCPProbe, `{"reference":"`+ref+`"}`))
				if wantOK := !strings.HasPrefix(ref, "broken"); rep.OK != wantOK {
					t.Errorf("probe %s: ok = %v, want %v (%s)", ref, rep.OK, wantOK, rep.Error)
				}
			}
			mustOK(t, call(framework.ToolAgentMCPList, `{}`))

			// A write of another field, sending the read document back with its
			// masks, keeps every stored value.
			for _, ref := range []string{"local", "remote"} {
				read := structured[resource.Resource](t, call(framework.ToolResourceRead, `{"kind":"mcp","reference":"`+ref+`"}`))
				if !strings.Contains(string(read.Data), resource.Mask) {
					t.Fatalf("read of %s shows no mask: %s", ref, read.Data)
				}
				var doc map[string]map[string]map[string]any
				if err := json.Unmarshal(read.Data, &doc); err != nil {
					t.Fatal(err)
				}
				doc["mcpServers"]["s"]["description"] = "patched"
				args, _ := json.Marshal(map[string]any{"kind": "mcp", "reference": ref, "data": doc})
				mustOK(t, call(framework.ToolResourceWrite, string(args)))
				stored, err := hst.svc.Read(context.Background(), resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: resource.Ref(ref)})
				if err != nil {
					t.Fatal(err)
				}
				kept := map[string][]string{"local": {"env value", "argument"}, "remote": {"header", "url query"}}[ref]
				for _, what := range kept {
					if !strings.Contains(string(stored.Data), secrets[what]) {
						t.Errorf("the write of %s lost the stored %s: %s", ref, what, stored.Data)
					}
				}
				if strings.Contains(string(stored.Data), resource.Mask) || !strings.Contains(string(stored.Data), "patched") {
					t.Errorf("stored %s after the patch: %s", ref, stored.Data)
				}
			}
			// A mask that matches nothing stored is refused, not saved.
			mustCode(t, call(framework.ToolResourceWrite, `{"kind":"mcp","reference":"remote","data":{"mcpServers":{"s":{"url":"https://x.example","headers":{"New":"`+resource.Mask+`"}}}}}`), run.CodeInvalidArguments)

			// A failed refresh: the mounted server now needs a secret nobody has.
			read := structured[resource.Resource](t, call(framework.ToolResourceRead, `{"kind":"mcp","reference":"local"}`))
			var doc map[string]map[string]map[string]any
			_ = json.Unmarshal(read.Data, &doc)
			doc["mcpServers"]["s"]["env"].(map[string]any)["MISSING"] = "${secret:missing}"
			args, _ := json.Marshal(map[string]any{"kind": "mcp", "reference": "local", "data": doc})
			out := record(m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: args}))
			mustOK(t, out.Results[0])
			if out.Refresh == nil || out.Refresh.OK || !strings.Contains(out.Notice(), "${secret:missing}") {
				t.Fatalf("refresh after an unresolvable reference: %+v", out.Refresh)
			}

			hst.audit.mu.Lock()
			for _, rec := range hst.audit.recs {
				fmt.Fprintf(&seen, "%+v\n", rec)
			}
			hst.audit.mu.Unlock()
			for what, s := range secrets {
				if strings.Contains(seen.String(), s) {
					t.Errorf("the %s reached the model, a notice or the audit", what)
				}
			}

			// The servers received every secret: the old session kept running.
			env := structured[mcptest.EnvironmentOut](t, m.one(run.Alias("local", mcptest.ToolEnvironment), `{"names":["PLANTED","FROM_REF","FROM_ENV"]}`))
			want := map[string]string{"PLANTED": secrets["env value"], "FROM_REF": secrets["secret ref"], "FROM_ENV": secrets["env reference"]}
			// What it echoes is masked (issue 23 item 4); the digests say what it
			// got.
			for k, v := range want {
				if env.EnvDigests[k] != mcptest.Digest(v) {
					t.Errorf("the server's %s = %q, want the resolved value", k, env.Env[k])
				}
			}
			for _, arg := range []string{"--api-key=" + secrets["argument"], "--token", secrets["secret ref"]} {
				if !slices.Contains(env.ArgDigests, mcptest.Digest(arg)) {
					t.Errorf("the server's args %q lack the secrets", env.Args)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(gotAuth) == 0 || gotAuth[0] != "Bearer "+secrets["header"] || gotKey[0] != secrets["url query"] {
				t.Errorf("the remote server got Authorization %q and key %q", gotAuth, gotKey)
			}
		})
	}
}

// issue 23 item 3: ${env:NAME} is bound to the registrations the host
// names, as ${secret:NAME} is through its resolver. With ADV_HOST_KEY
// listed as before (a bare name) and bound to the host's registration, a
// manager registers its own
// server with K=${env:ADV_HOST_KEY}, mounts it and asks it for K. Before
// the fix it read the host's value; now the start is refused with an
// error that names the reference and the env name, never the value, and
// the host's registration still reads it.
func TestAgentRegistrationCannotReadHostEnv(t *testing.T) {
	const value = "hostKeyS3cret-item3"
	h := newHost(t, &mcpconn.ConnectorOptions{
		LaunchEnv: &resource.LaunchEnv{SecretEnv: []string{"ADV_HOST_KEY", "hosted=ADV_HOST_KEY"}, Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH"), "ADV_HOST_KEY=" + value} }},
	})
	cwd := t.TempDir()
	server, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{
		"command": mcptest.Command(t), "cwd": cwd, "env": map[string]string{"K": "${env:ADV_HOST_KEY}"}}}})
	h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: "hosted", Create: true, Data: server})
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true,"mcps":["hosted"]}`)})
	m := &model{t: t, r: h.newRun(t, "boss", policy.AutoAllow())}
	readK := func(ref string) run.Result {
		return m.one(run.Alias(resource.Ref(ref), mcptest.ToolEnvironment), `{"names":["K"]}`)
	}
	if got := structured[mcptest.EnvironmentOut](t, readK("hosted")); got.EnvDigests["K"] != mcptest.Digest(value) {
		t.Fatalf("the host's registration does not read its bound env: K = %q", got.Env["K"])
	}

	args, _ := json.Marshal(map[string]any{"kind": "mcp", "reference": "mine", "create": true, "data": json.RawMessage(server)})
	mustOK(t, m.one(framework.ToolResourceWrite, string(args)))
	out := m.batch(run.Call{Name: framework.ToolResourceWrite, Arguments: json.RawMessage(`{"kind":"agent","reference":"boss","add":{"mcps":["mine"]}}`)})
	mustOK(t, out.Results[0])
	if hasTool(m.r, run.Alias("mine", mcptest.ToolEnvironment)) {
		got := structured[mcptest.EnvironmentOut](t, readK("mine")).EnvDigests["K"]
		t.Fatalf("the agent's own registration read the host's env value (%v)", got == mcptest.Digest(value))
	}
	if out.Refresh == nil || out.Refresh.OK || !errors.Is(out.Refresh.Err, mcpconn.ErrSecret) {
		t.Fatalf("refresh with the agent's registration: %+v, want ErrSecret", out.Refresh)
	}
	msg := out.Refresh.Err.Error()
	for _, want := range []string{"${env:ADV_HOST_KEY}", "mine", "SecretEnv"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not name %s", msg, want)
		}
	}
	if strings.Contains(msg, value) {
		t.Errorf("refusal %q holds the value", msg)
	}
	rep := structured[mcpconn.ProbeReport](t, m.one(framework.ToolMCPProbe, `{"reference":"mine"}`))
	if rep.OK || strings.Contains(rep.Error, value) {
		t.Errorf("probe of the agent's registration: %+v", rep)
	}
}
