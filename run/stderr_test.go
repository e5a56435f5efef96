package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// stderrSecret is what the hostile servers of these tests print on stderr,
// as a server that dumps its environment or echoes an earlier call's
// argument does.
const stderrSecret = "PASSWORD=hunter2-stderr-secret"

// leakyStartServer writes the secret on stderr and exits before the
// handshake.
func leakyStartServer(tb testing.TB) resource.MCPServer {
	return resource.MCPServer{Type: resource.TransportStdio, Command: "/bin/sh",
		Args: []string{"-c", "echo '" + stderrSecret + "' >&2; exit 3"}, Cwd: tb.TempDir()}
}

// leakyCrashServer writes the secret on stderr, then serves as the fake
// server whose "crash" tool ends the process mid-call.
func leakyCrashServer(tb testing.TB) resource.MCPServer {
	srv := stdioServer(tb, "-fault", string(mcptest.FaultCrashOnCall))
	return resource.MCPServer{Type: resource.TransportStdio, Command: "/bin/sh",
		Args: []string{"-c", `echo '` + stderrSecret + `' >&2; exec "$0" "$@"`, srv.Command, "-fault", string(mcptest.FaultCrashOnCall)},
		Cwd:  srv.Cwd}
}

// A server's stderr never reaches the model through a Run (the failed
// refresh's notice, the message and ToolError of a call whose server died)
// unless the host opts in, and then it appears once; the Go errors and the
// audit keep it either way.
func TestServerStderrReachesTheModelOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		for _, allowed := range []bool{false, true} {
			name := "default"
			if allowed {
				name = "ServerStderrToModel"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				repo := newRepo(t)
				crashy := resource.Ref("crashy")
				putMCP(t, repo, notes, stdioServerEra(t, e))
				putMCP(t, repo, crashy, leakyCrashServer(t))
				putAgent(t, repo, testAgent, resource.AgentDocument{MCPs: []resource.Ref{notes, crashy}})
				audit := &auditLog{}
				r := newRun(t, &run.Options{Repository: repo, HostTools: []run.HostTool{writeMCPTool(repo)}, Auditor: audit,
					ServerStderrToModel: allowed})
				if len(r.MountErrors()) != 0 {
					t.Fatalf("mount errors: %v", r.MountErrors())
				}

				// A call whose server dies under it.
				out, err := r.Execute(context.Background(), batch(call("boom", run.Alias(crashy, mcptest.ToolCrash), `{}`)))
				if err != nil {
					t.Fatal(err)
				}
				res := out.Results[0]
				if res.Code != run.CodeUnavailable {
					t.Fatalf("crash call: %s", res.ToolError())
				}
				if calls := audit.records("call"); len(calls) != 1 || !strings.Contains(calls[0].Message, stderrSecret) {
					t.Errorf("the call's audit record = %+v, want the server's stderr in its message", calls)
				}
				for what, text := range map[string]string{"Result.Message": res.Message, "ToolError": string(res.ToolError()), "ForModel": string(res.ForModel())} {
					if got := strings.Contains(text, stderrSecret); got != allowed {
						t.Errorf("%s holds the server's stderr: %v, want %v:\n%s", what, got, allowed, text)
					}
				}

				// A refresh that fails because the new server writes the secret
				// on stderr and exits.
				args, _ := json.Marshal(map[string]any{"ref": notes, "server": leakyStartServer(t)})
				out, err = r.Execute(context.Background(), batch(run.Call{ID: "w", Name: "write_mcp", Arguments: args}))
				if err != nil {
					t.Fatal(err)
				}
				if out.Refresh == nil || out.Refresh.OK {
					t.Fatalf("refresh = %+v, want a failure", out.Refresh)
				}
				notice := out.Notice()
				if !strings.HasPrefix(notice, "configuration saved, but load failed: mount notes: ") {
					t.Errorf("notice = %q", notice)
				}
				want := 0
				if allowed {
					want = 1
				}
				if n := strings.Count(notice, stderrSecret); n != want {
					t.Errorf("the notice holds the server's stderr %d times, want %d:\n%s", n, want, notice)
				}

				// The Go errors and the audit keep it, once.
				if n := strings.Count(out.Refresh.Err.Error(), stderrSecret); n != 1 {
					t.Errorf("RefreshReport.Err holds the stderr %d times, want 1: %v", n, out.Refresh.Err)
				}
				if f := out.Refresh.Failures; len(f) != 1 || !strings.Contains(f[0].StderrTail, stderrSecret) || strings.Count(f[0].Error(), stderrSecret) != 1 {
					t.Errorf("refresh failures = %+v", f)
				}
				var ce *mcpconn.Error
				if !errors.As(out.Refresh.Err, &ce) || !errors.Is(out.Refresh.Err, mcpconn.ErrHandshake) {
					t.Errorf("RefreshReport.Err = %v, want the *mcpconn.Error in its chain", out.Refresh.Err)
				}
				// The crash batch's boundary restarted the crashed server; the
				// write's refresh is the last record.
				recs := audit.records("refresh")
				if len(recs) == 0 || strings.Count(recs[len(recs)-1].Message, stderrSecret) != 1 || recs[len(recs)-1].Code != run.CodeUnavailable {
					t.Errorf("refresh audit = %+v, want the stderr once, code unavailable", recs)
				}
			})
		}
	})
}
