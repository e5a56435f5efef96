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
		{nil, []string{"mcp", "get", "remote"}, "http://127.0.0.1:1/[redacted]?[redacted]"},
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

// issue 23 item 6: mcp get hides the credentials of docker-style NAME=VALUE
// arguments, headers given as arguments and opaque URL path segments, and
// says "credentials hidden" only when it hid something.
func TestMoreCredentialFormsHidden(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	secrets := []string{"dockerS3cret", "hdrOneS3cret", "hdrNextS3cret", "XXXXXXXXXXXXXXXXXXXXXXXX"}
	mustRun(t, db, 0, "mcp", "create", "docker", "--command", mcptest.Command(t), "--cwd", t.TempDir(),
		"--arg", "run", "--arg", "-e", "--arg", "DB_PASSWORD="+secrets[0],
		"--arg", "--header=Authorization: Bearer "+secrets[1], "--arg", "-H", "--arg", "Authorization: Bearer "+secrets[2])
	mustRun(t, db, 0, "mcp", "create", "hook", "--url", "https://hooks.example.com/services/T0/B0/"+secrets[3])
	mustRun(t, db, 0, "mcp", "create", "plain", "--command", mcptest.Command(t), "--cwd", t.TempDir(), "--arg", "--port", "--arg", "8080")
	mustRun(t, db, 0, "mcp", "create", "plainurl", "--url", "HTTPS://mcp.example.com/mcp#")
	const claim = "credentials hidden"
	shown := 0
	for _, c := range []struct {
		ref   string
		claim bool
	}{{"docker", true}, {"hook", true}, {"plain", false}, {"plainurl", false}} {
		r := mustRun(t, db, 0, "mcp", "get", c.ref)
		for _, s := range secrets {
			if strings.Contains(r.stdout+r.stderr, s) {
				shown++
				t.Errorf("agt mcp get %s shows %q:\n%s", c.ref, s, r.stdout)
			}
		}
		if got := strings.Contains(r.stdout, claim); got != c.claim {
			t.Errorf("agt mcp get %s says %q: %v, want %v:\n%s", c.ref, claim, got, c.claim, r.stdout)
		}
	}
	if shown > 0 {
		t.Errorf("%d of %d credentials shown in clear", shown, len(secrets))
	}
}
