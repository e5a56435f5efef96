package framework_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/internal/runtest/need"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// interpreter finds an installed interpreter, or skips the case; under
// CI=true a missing one fails, so the case cannot silently stop running.
func interpreter(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		need.Missing(t, name, "install it (the case runs a script with it)")
	}
	return p
}

// issue 23 item 1: environment variables are code for interpreters. The
// allowlist admits three scripts (bash, python, perl) that start the fake
// server; a manager only changes a registration's env and probes it.
// Before the fix each write was accepted, each probe reported ok, and an
// unlisted command ran: 3 of 3 markers. Now each write is refused naming
// the env field, nothing runs, and the registration stays admitted.
func TestAgentEnvCannotMakeAnAdmittedInterpreterRunAnything(t *testing.T) {
	fake := mcptest.Command(t)
	dir, cwd := t.TempDir(), t.TempDir()
	type tc struct {
		lang, shebang, body string
		env                 func(marker string) map[string]string
	}
	cases := []tc{
		{"bash", "bash", `exec '` + fake + `' "$@"`, func(m string) map[string]string {
			return map[string]string{"BASH_ENV": "$(: > '" + m + "')"}
		}},
		// antigravity opens a browser at import; BROWSER names a perl
		// program, which PERL5OPT steers.
		{"python", "python3", "import os, sys\nos.execv('" + fake + "', ['" + fake + "'] + sys.argv[1:])", func(m string) map[string]string {
			return map[string]string{"PYTHONWARNINGS": "all:0:antigravity.x:0:0", "BROWSER": "perlthanks", "PERL5OPT": "-Mbase;system(q(echo>" + m + "));exit"}
		}},
		{"perl", "perl", `exec '` + fake + `', @ARGV;`, func(m string) map[string]string {
			return map[string]string{"PERL5OPT": "-Mbase;system(q(echo>" + m + "))"}
		}},
	}
	var allow []string
	scripts := map[string]string{}
	for _, c := range cases {
		script := filepath.Join(dir, c.lang+"-server")
		scripts[c.lang] = script
		allow = append(allow, script)
	}
	env := &resource.LaunchEnv{Allow: &resource.LaunchAllowlist{Commands: allow}}
	h := newHost(t, &mcpconn.ConnectorOptions{LaunchEnv: env})
	h.svc = resource.NewService(h.repo, &resource.ServiceOptions{LaunchEnv: env})
	h.prober = mcpconn.NewProber(h.repo, h.connector, nil)
	h.write(t, resource.WriteRequest{Kind: resource.KindAgent, Ref: "boss", Create: true, Data: json.RawMessage(`{"manager":true}`)})
	m := &model{t: t, r: h.newRun(t, "boss", policy.AutoAllow())}

	for _, c := range cases {
		t.Run(c.lang, func(t *testing.T) {
			interp := interpreter(t, c.shebang)
			if c.lang == "python" {
				interpreter(t, "perlthanks")
			}
			script := scripts[c.lang]
			if err := os.WriteFile(script, []byte("#!"+interp+"\n"+c.body+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			ref := resource.Ref(c.lang)
			h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: ref, Create: true, Data: serverData(script, cwd)})
			if rep := structured[mcpconn.ProbeReport](t, m.one(framework.ToolMCPProbe, `{"reference":"`+c.lang+`"}`)); !rep.OK {
				t.Fatalf("the admitted %s server does not probe ok: %+v", c.lang, rep)
			}

			marker := filepath.Join(t.TempDir(), "ran")
			envv := c.env(marker)
			data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": script, "cwd": cwd, "env": envv}}})
			args, _ := json.Marshal(map[string]any{"kind": "mcp", "reference": c.lang, "data": json.RawMessage(data)})
			res := m.one(framework.ToolResourceWrite, string(args))
			m.one(framework.ToolMCPProbe, `{"reference":"`+c.lang+`"}`)
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("an env-only edit made the admitted %s server run an unlisted command (write: %s)", c.lang, res.ToolError())
			}
			mustCode(t, res, run.CodeUnauthorized)
			te := string(res.ToolError())
			if !strings.Contains(te, "/env/") || !strings.Contains(te, "LaunchAllowlist.Env") || strings.Contains(te, marker) {
				t.Errorf("refusal %s does not name the env field and what the host sets, or repeats a value", te)
			}

			// The host's own registration with the same env is stored, and its
			// start is refused under the allowlist all the same.
			h.write(t, resource.WriteRequest{Kind: resource.KindMCP, Ref: ref, Data: data})
			if rep := structured[mcpconn.ProbeReport](t, m.one(framework.ToolMCPProbe, `{"reference":"`+c.lang+`"}`)); rep.OK || !strings.Contains(rep.Error, "launch allowlist") {
				t.Errorf("probe of a host registration with start-altering env under the allowlist: %+v", rep)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the host-written %s registration ran an unlisted command under the allowlist", c.lang)
			}
			// Without an allowlist the env does run the marker: the checks
			// above can fail.
			_, srv, err := resource.DecodeMCP(data)
			if err != nil {
				t.Fatal(err)
			}
			if s, err := mcpconn.NewConnector(nil).Connect(context.Background(), ref, srv, nil); err == nil {
				_ = s.Close()
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the %s env did not run the marker without an allowlist: %v", c.lang, err)
			}
		})
	}
}
