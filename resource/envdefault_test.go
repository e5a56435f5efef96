package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/resource"
)

// ${env:NAME:-DEFAULT} takes DEFAULT when NAME is unset, empty, or not
// bound to the registration (the shells' ${NAME:-DEFAULT}), in args, env
// and headers alike; a value that is readable wins.
func TestEnvReferenceDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := filepath.Join(dir, "srv")
	writeExecutable(t, cmd, 0o755)
	host := func() []string { return []string{"SET=host-value", "EMPTY=", "OTHER=other-value"} }
	bound := &resource.LaunchEnv{Inherit: []string{}, Environ: host, SecretEnv: []string{"notes=SET", "notes=EMPTY", "notes=UNSET"}}
	tests := []struct {
		name    string
		value   string
		want    string
		wantErr string // a piece of the SecretError, "" for none
	}{
		{name: "set and bound: the value", value: "${env:SET:-dflt}", want: "host-value"},
		{name: "bound but unset: the default", value: "${env:UNSET:-dflt}", want: "dflt"},
		{name: "bound but empty: the default", value: "${env:EMPTY:-dflt}", want: "dflt"},
		{name: "set but not bound: the default, never the value", value: "${env:OTHER:-dflt}", want: "dflt"},
		{name: "an empty default", value: "a${env:UNSET:-}b", want: "ab"},
		{name: "a default with colons and slashes", value: "${env:UNSET:-http://localhost:3000/mcp}", want: "http://localhost:3000/mcp"},
		{name: "no default: not bound fails", value: "${env:OTHER}", wantErr: "does not let registration notes read"},
		{name: "no default: unset fails", value: "${env:UNSET}", wantErr: "not set in the host process"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := resource.MCPServer{Command: cmd, Cwd: dir, Args: []string{tc.value}, Env: map[string]string{"V": tc.value}}
			l, err := resource.ResolveLaunch(srv, bound, resourcefn.BindSecrets(bound, context.Background(), "notes"))
			hdrs, herr := resourcefn.ResolveHeaders(map[string]string{"X": tc.value}, resourcefn.BindSecrets(bound, context.Background(), "notes"))
			if tc.wantErr != "" {
				var se *resource.SecretError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(herr, &se) {
					t.Fatalf("launch err = %v, headers err = %v; want a SecretError with %q", err, herr, tc.wantErr)
				}
				return
			}
			if err != nil || herr != nil {
				t.Fatalf("launch err = %v, headers err = %v", err, herr)
			}
			if diff := cmp.Diff([]string{cmd, tc.want}, l.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"V=" + tc.want}, l.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if hdrs["X"] != tc.want {
				t.Errorf("header = %q; want %q", hdrs["X"], tc.want)
			}
		})
	}
}

// The default is written by the one reference grammar: a write checks it,
// and a reader who must not see credentials sees it masked (a default may
// be one), while the name stays.
func TestEnvReferenceDefaultGrammar(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := func(v string) json.RawMessage {
		b, _ := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"s": {Command: "srv", Cwd: dir, Env: map[string]string{"K": v}}}})
		return b
	}
	for _, tc := range []struct {
		value, wantErr string
	}{
		{"${env:LEVEL:-info}", ""},
		{"${env:LEVEL:-}", ""},
		{"x${env:URL:-http://h:1/p}y", ""},
		{"${env:LEVEL:-${env:OTHER}}", "literal text"},
		{"${env:LEVEL:-$HOME}", "literal text"},
		{"${env:1BAD:-x}", "malformed reference name"},
		{"${secret:s:-x}", "malformed reference name"},
	} {
		_, _, err := resource.ValidateMCP(doc(tc.value))
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v; want %q", tc.value, err, tc.wantErr)
		}
	}

	masked := string(resource.RedactMCP(doc("${env:TOKEN:-sk-live-0123456789}")))
	if strings.Contains(masked, "sk-live") || !strings.Contains(masked, "${env:TOKEN:-"+resource.Mask+"}") {
		t.Errorf("redacted document shows the default or loses the name: %s", masked)
	}
	if got := resourcefn.MaskArgs([]string{"--token=${env:TOKEN:-sk-live-0123456789}"}); strings.Contains(got[0], "sk-live") {
		t.Errorf("MaskArgs shows the default: %q", got)
	}
	if vals := credentialValues(resource.MCPServer{Command: "srv", Env: map[string]string{"K": "${env:TOKEN:-sk-live-0123456789}"}}); !strings.Contains(strings.Join(vals, ","), "sk-live-0123456789") {
		t.Errorf("CredentialValues = %q; want the default among them (the scrubber hides it)", vals)
	}
	// A masked default sent back unchanged keeps the stored one.
	stored := doc("${env:TOKEN:-sk-live-0123456789}")
	back, err := resource.UnmaskMCP(stored, resource.RedactMCP(stored))
	if err != nil || !strings.Contains(string(back), "sk-live-0123456789") {
		t.Errorf("UnmaskMCP = %s, %v; want the stored default back", back, err)
	}
}

// A func converted to SecretResolverFunc is a SecretResolver: it is asked
// with the registration's reference and the secret's name, and its answer
// (or its failure, never shown) is what the start gets.
func TestSecretResolverFunc(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := filepath.Join(dir, "srv")
	writeExecutable(t, cmd, 0o755)
	var asked []string
	env := &resource.LaunchEnv{Inherit: []string{}, Secrets: resource.SecretResolverFunc(func(_ context.Context, ref resource.Ref, name string) (string, error) {
		asked = append(asked, string(ref)+":"+name)
		if ref != "notes" {
			return "", errors.New("vault: no secret " + name + " for " + string(ref))
		}
		return "value-of-" + name, nil
	})}
	srv := resource.MCPServer{Command: cmd, Cwd: dir, Args: []string{"--token=${secret:gh}"}}
	l, err := resource.ResolveLaunch(srv, env, resourcefn.BindSecrets(env, context.Background(), "notes"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{cmd, "--token=value-of-gh"}, l.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	_, err = resource.ResolveLaunch(srv, env, resourcefn.BindSecrets(env, context.Background(), "other"))
	var se *resource.SecretError
	if !errors.As(err, &se) || strings.Contains(err.Error(), "vault") {
		t.Errorf("a refusing func: err = %v, want a SecretError without the func's text", err)
	}
	if diff := cmp.Diff([]string{"notes:gh", "other:gh"}, asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	// A nil func resolves nothing: a SecretError, not a panic at launch.
	nilEnv := &resource.LaunchEnv{Inherit: []string{}, Secrets: resource.SecretResolverFunc(nil)}
	if _, err := resource.ResolveLaunch(srv, nilEnv, resourcefn.BindSecrets(nilEnv, context.Background(), "notes")); !errors.As(err, &se) {
		t.Errorf("a nil func: err = %v, want a SecretError", err)
	}
}
