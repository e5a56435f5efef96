package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// Secrets planted in an env value, a header, an argument, a URL query and
// path, and the value behind an ${env:...} reference, appear in no human
// output: get, list, test, a probe that works and one that fails. A
// reference reads only the names AGT_SECRET_ENV lists, for the
// registrations it binds them to.
func TestSecretsHiddenInHumanOutput(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	secrets := []string{"envS3cret-planted", "hdrS3cret-planted", "argS3cret-planted", "urlS3cret-planted", "ghp_pathS3cret1234", "refS3cret-resolved"}
	var all strings.Builder
	out := func(r result) { all.WriteString(r.stdout + r.stderr) }
	out(mustRun(t, db, 0, "mcp", "create", "local", "--command", mcptest.Command(t), "--cwd", t.TempDir(),
		"--arg", "--", "--arg", "--api-key="+secrets[2], "--arg", "--token", "--arg", "${env:AGT_T_REF}",
		"--env", "PLANTED="+secrets[0], "--env", "FROM=${env:AGT_T_REF}"))
	out(mustRun(t, db, 0, "mcp", "create", "broken", "--command", mcptest.Command(t), "--cwd", t.TempDir(),
		"--arg", "-fault", "--arg", "exit-at-start", "--arg", "--password", "--arg", secrets[2], "--env", "PLANTED="+secrets[0]))
	out(mustRun(t, db, 0, "mcp", "create", "remote", "--url", "http://127.0.0.1:1/hook/"+secrets[4]+"?key="+secrets[3],
		"--header", "Authorization: Bearer "+secrets[1]))
	allowed := []string{"AGT_SECRET_ENV=AGT_T_REF", "AGT_T_REF=" + secrets[5]}

	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"mcp", "get", "local"}, "--api-key=[redacted]"},
		{nil, []string{"mcp", "get", "broken"}, "--password [redacted]"},
		{nil, []string{"mcp", "get", "remote"}, "http://127.0.0.1:1/***?***"},
		{nil, []string{"mcp", "list"}, "local"},
		{nil, []string{"mcp", "test", "local"}, "ok"},
		{allowed, []string{"mcp", "probe", "local"}, "ok"},
		{allowed, []string{"mcp", "probe", "broken"}, "exit status"},
		{allowed, []string{"mcp", "probe", "remote"}, "remote"},
		{nil, []string{"mcp", "probe", "local"}, "AGT_SECRET_ENV"},
		{[]string{"AGT_T_REF=" + secrets[5]}, []string{"mcp", "probe", "local"}, "${env:AGT_T_REF}"},
		// REF=NAME binds the name to one registration (issue 23 item 3).
		{[]string{"AGT_SECRET_ENV=local=AGT_T_REF", "AGT_T_REF=" + secrets[5]}, []string{"mcp", "probe", "local"}, "ok"},
		{[]string{"AGT_SECRET_ENV=other=AGT_T_REF", "AGT_T_REF=" + secrets[5]}, []string{"mcp", "probe", "local"}, "registration local"},
	} {
		r := runAgtEnv(t, c.env, db, "", c.args...)
		out(r)
		if !strings.Contains(r.stdout+r.stderr, c.want) {
			t.Errorf("agt %s (env %q) does not say %q:\n%s%s", strings.Join(c.args, " "), c.env, c.want, r.stdout, r.stderr)
		}
	}
	for _, s := range secrets {
		if strings.Contains(all.String(), s) {
			t.Errorf("human output shows %q:\n%s", s, all.String())
		}
	}
}
