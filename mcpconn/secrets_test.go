package mcpconn_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// mapResolver is a host's resolver: it answers the secrets bound to one
// registration and records who asked.
type mapResolver struct {
	for_    resource.Ref
	secrets map[string]string
	fail    error

	mu    sync.Mutex
	asked []string
}

func (r *mapResolver) Resolve(_ context.Context, ref resource.Ref, name string) (string, error) {
	r.mu.Lock()
	r.asked = append(r.asked, string(ref)+":"+name)
	r.mu.Unlock()
	if r.fail != nil {
		return "", r.fail
	}
	v, ok := r.secrets[name]
	if !ok || ref != r.for_ {
		return "", errors.New("unknown secret")
	}
	return v, nil
}

// References in env values and args reach the server resolved; the
// document stays as written, and $${ is a literal ${.
func TestSecretReferencesReachTheServer(t *testing.T) {
	t.Parallel()
	const envSecret, argSecret = "env-s3cret-1", "arg-s3cret-2"
	srv, tag := fakeStdio(t)
	srv.Args = append(srv.Args, "--", "--key=${secret:gh}", "$${kept}")
	srv.Env = map[string]string{"TOKEN": "${env:HOST_TOKEN}", "BOTH": "${secret:gh}/${cwd}"}
	want := srv
	want.Args, want.Env = slices.Clone(srv.Args), maps.Clone(srv.Env)
	res := &mapResolver{for_: "notes", secrets: map[string]string{"gh": argSecret}}
	c := quickConnector(&mcpconn.ConnectorOptions{
		LaunchEnv: &resource.LaunchEnv{Secrets: res, SecretEnv: []string{"other=HOST_TOKEN", "note*=HOST_*"}, Environ: func() []string { return []string{"PATH=/usr/bin:/bin", "HOST_TOKEN=" + envSecret} }},
	})
	s, err := c.Connect(context.Background(), "notes", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := environment(t, s, "TOKEN", "BOTH")
	s.Close()
	assertNoLeftovers(t, tag)
	// The values themselves come back masked (issue 23 item 4): their
	// digests say what the server got.
	if got.EnvDigests["TOKEN"] != mcptest.Digest(envSecret) || got.EnvDigests["BOTH"] != mcptest.Digest(argSecret+"/"+srv.Cwd) {
		t.Errorf("env = %v; want the resolved values", got.Env)
	}
	tail := got.ArgDigests[len(got.ArgDigests)-2:]
	if diff := cmp.Diff([]string{mcptest.Digest("--key=" + argSecret), mcptest.Digest("${kept}")}, tail); diff != "" {
		t.Errorf("args %q (-want +got):\n%s", got.Args, diff)
	}
	if diff := cmp.Diff(want, srv); diff != "" {
		t.Errorf("Connect changed the caller's document (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"notes:gh", "notes:gh"}, res.asked); diff != "" {
		t.Errorf("resolver calls (-want +got):\n%s", diff)
	}
}

// A header reference reaches a remote server resolved, and only there.
func TestSecretReferenceInAHeader(t *testing.T) {
	t.Parallel()
	const secret = "hdr-s3cret-3"
	server := mcptest.NewServer(nil)
	var mu sync.Mutex
	var seen []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"api": secret}}}})
	srv := resource.MCPServer{Type: "http", URL: ts.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer ${secret:api}"}}
	s, err := c.Connect(context.Background(), "remote", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || seen[0] != "Bearer "+secret {
		t.Errorf("Authorization headers seen %q; want the resolved value", seen)
	}
	if srv.Headers["Authorization"] != "Bearer ${secret:api}" {
		t.Error("Connect changed the caller's headers")
	}
}

// A reference that cannot be resolved fails the start with ErrSecret,
// names the reference and what to set, holds no value nor the resolver's
// text, and starts nothing.
func TestSecretReferenceErrors(t *testing.T) {
	t.Parallel()
	const leaked = "LEAKED-v4lue"
	environ := func() []string {
		return []string{"PATH=/usr/bin", "ALLOWED=" + leaked, "DENIED=" + leaked, "NUL_VALUE=a"}
	}
	tests := []struct {
		name     string
		opts     mcpconn.ConnectorOptions
		env      map[string]string
		args     []string
		wantText []string
	}{
		{name: "env name not allowed", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{SecretEnv: []string{"ref=ALLOWED"}}},
			env: map[string]string{"K": "${env:DENIED}"}, wantText: []string{"${env:DENIED}", "/env/K", "SecretEnv"}},
		{name: "env not allowed by default", env: map[string]string{"K": "${env:ALLOWED}"},
			wantText: []string{"${env:ALLOWED}", "does not let registration ref"}},
		// issue 23 item 3: a host variable is read only by the
		// registrations it is bound to.
		{name: "env bound to another registration", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{SecretEnv: []string{"other=ALLOWED", "re=ALLOWED", "ref/*=ALLOWED"}}},
			env: map[string]string{"K": "${env:ALLOWED}"}, wantText: []string{"${env:ALLOWED}", "/env/K", "registration ref", "REF=NAME"}},
		{name: "a bare name binds no registration", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{SecretEnv: []string{"ALLOWED", "*"}}},
			env: map[string]string{"K": "${env:ALLOWED}"}, wantText: []string{"${env:ALLOWED}", "registration ref", "SecretEnv", "without a registration", "*=NAME"}},
		{name: "env unset", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{SecretEnv: []string{"*=MISSING"}}},
			args: []string{"--x=${env:MISSING}"}, wantText: []string{"${env:MISSING}", "/args/2", "not set"}},
		{name: "no resolver", args: []string{"${secret:gh}"}, wantText: []string{"${secret:gh}", "no secret resolver", "ConnectorOptions.LaunchEnv.Secrets"}},
		{name: "resolver fails", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{fail: errors.New("vault said " + leaked)}}},
			env: map[string]string{"K": "${secret:gh}"}, wantText: []string{"${secret:gh}", "resolver failed"}},
		{name: "resolver refuses another server", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "other", secrets: map[string]string{"gh": leaked}}}},
			env: map[string]string{"K": "${secret:gh}"}, wantText: []string{"${secret:gh}", "resolver failed"}},
		{name: "resolved value with a NUL", opts: mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "ref", secrets: map[string]string{"gh": leaked + "\x00"}}}},
			args: []string{"${secret:gh}"}, wantText: []string{"${secret:gh}", "not allowed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, tag := fakeStdio(t)
			srv.Env = tt.env
			srv.Args = append(srv.Args, tt.args...)
			opts := tt.opts
			opts.LaunchEnv = withEnviron(opts.LaunchEnv, environ)
			s, err := quickConnector(&opts).Connect(context.Background(), "ref", srv, nil)
			if err == nil {
				s.Close()
				t.Fatal("Connect succeeded; want ErrSecret")
			}
			assertNoLeftovers(t, tag)
			if !errors.Is(err, mcpconn.ErrSecret) {
				t.Errorf("err = %v; want ErrSecret", err)
			}
			msg := err.Error()
			if strings.Contains(msg, leaked) {
				t.Errorf("error %q holds the value", msg)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// A header value resolved to a line break would split the request: it is
// refused before anything is sent.
func TestSecretReferenceHeaderInjection(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer ts.Close()
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "r", secrets: map[string]string{"x": "a\r\nX-Evil: 1"}}}})
	_, err := c.Connect(context.Background(), "r", resource.MCPServer{Type: "http", URL: ts.URL, Headers: map[string]string{"X": "${secret:x}"}}, nil)
	if !errors.Is(err, mcpconn.ErrSecret) || strings.Contains(err.Error(), "Evil") {
		t.Errorf("err = %v; want ErrSecret without the value", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests; want none", n)
	}
}

// A server the launch allowlist refuses is refused before any of its
// secrets is asked for: the resolver never learns of it.
func TestAllowlistBeforeSecrets(t *testing.T) {
	t.Parallel()
	res := &mapResolver{for_: "ref", secrets: map[string]string{"gh": "v"}}
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		LaunchEnv: &resource.LaunchEnv{Secrets: res, Allow: &resource.LaunchAllowlist{Commands: []string{}, Origins: []string{}}},
	})
	srv, tag := fakeStdio(t)
	srv.Env = map[string]string{"K": "${secret:gh}"}
	remote := resource.MCPServer{Type: "http", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"A": "${secret:gh}"}}
	for _, doc := range []resource.MCPServer{srv, remote} {
		if _, err := c.Connect(context.Background(), "ref", doc, nil); !errors.Is(err, mcpconn.ErrNotAllowed) {
			t.Errorf("Connect = %v; want ErrNotAllowed", err)
		}
	}
	assertNoLeftovers(t, tag)
	if len(res.asked) != 0 {
		t.Errorf("the resolver was asked %q for refused servers", res.asked)
	}
}
