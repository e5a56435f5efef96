package mcpconn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
)

// fileResolver is a host's secret resolver that reads the workload
// identity token from a file at each resolution, as a host on Kubernetes
// reads its projected service account token (which the kubelet rotates).
func fileResolver(path string) resource.SecretResolverFunc {
	return func(_ context.Context, ref resource.Ref, name string) (string, error) {
		if ref != "remote" || name != "wif" {
			return "", errors.New("no such secret")
		}
		b, err := os.ReadFile(path)
		return strings.TrimSpace(string(b)), err
	}
}

// workloadFixture is a server behind fakeAS whose oauth field uses the
// workload_identity grant with the token in the file it returns; the
// authorization server accepts the workload tokens accepted.
func workloadFixture(t *testing.T, clientID string, accepted ...string) (*oauthFixture, string) {
	f := newOAuthFixture(t)
	f.as.set(func(a *fakeAS) {
		a.workload = map[string]bool{}
		for _, tok := range accepted {
			a.workload[tok] = true
		}
	})
	path := filepath.Join(t.TempDir(), "token")
	f.srv.OAuth = &resource.MCPOAuth{Grant: mcpdoc.GrantWorkloadIdentity, Assertion: "${secret:wif}", ClientID: clientID,
		AuthorizationServer: f.as.srv.URL}
	f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: f.tokens}, LaunchEnv: &resource.LaunchEnv{Secrets: fileResolver(path)}})
	return f, path
}

func writeToken(t *testing.T, path, tok string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Issue 26 item 6: the workload identity token is traded with the
// jwt-bearer grant (RFC 7523: its grant_type, the token as assertion, the
// server as resource), the access token it gives reaches the MCP server,
// and nothing is stored. The token file is read at each exchange: after
// the kubelet rotates it (and the authorization server stops accepting
// the old one), the next exchange sends the new one.
func TestOAuthWorkloadIdentity(t *testing.T) {
	t.Parallel()
	for _, clientID := range []string{"", "wl-client"} {
		t.Run("client "+clientID, func(t *testing.T) {
			t.Parallel()
			f, path := workloadFixture(t, clientID, "tok-wif-1", "tok-wif-2")
			writeToken(t, path, "tok-wif-1")
			if err := f.callHello(t); err != nil {
				t.Fatalf("Connect: %v", err)
			}
			writeToken(t, path, "tok-wif-2")
			f.as.set(func(a *fakeAS) { delete(a.workload, "tok-wif-1") })
			if err := f.callHello(t); err != nil {
				t.Fatalf("Connect after the rotation: %v", err)
			}
			f.as.mu.Lock()
			got := map[string][]string{"grants": f.as.grants, "assertions": f.as.assertions, "resources": f.as.resources, "client_ids": f.as.clientIDs}
			auth := f.as.lastAuth
			f.as.mu.Unlock()
			want := map[string][]string{"grants": {"urn:ietf:params:oauth:grant-type:jwt-bearer", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
				"assertions": {"tok-wif-1", "tok-wif-2"}, "resources": {f.srv.URL, f.srv.URL}, "client_ids": {clientID, clientID}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("token requests (-want +got):\n%s", d)
			}
			if auth != "none" {
				t.Errorf("client authentication = %q, want none (no secret: client_id in the body)", auth)
			}
			if _, err := f.tokens.Load(context.Background(), "remote"); !errors.Is(err, resource.ErrNotFound) {
				t.Errorf("the workload identity grant stored a token: %v", err)
			}
		})
	}
}

// Issue 26 item 6: a workload token the authorization server refuses
// fails the connection once, with no retry and no other grant, and a
// reason that carries no token nor the server's answer (its
// error_description echoes the request); a token the host cannot resolve
// fails it naming the reference, and nothing is sent.
func TestOAuthWorkloadIdentityRefused(t *testing.T) {
	t.Parallel()
	f, path := workloadFixture(t, "", "tok-wif-good")
	writeToken(t, path, "tok-wif-forged")
	err := f.callHello(t)
	if !errors.Is(err, mcpconn.ErrUnauthorized) || !strings.Contains(err.Error(), "jwt-bearer grant") || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("Connect with a refused workload token: %v, want ErrUnauthorized naming the jwt-bearer grant and invalid_grant", err)
	}
	assertNoTokens(t, "error", err.Error())
	if strings.Contains(err.Error(), "echo") || strings.Contains(err.Error(), "wif") {
		t.Errorf("the error carries the server's answer or the token: %v", err)
	}
	f.as.mu.Lock()
	grants := f.as.grants
	f.as.mu.Unlock()
	if d := cmp.Diff([]string{"urn:ietf:params:oauth:grant-type:jwt-bearer"}, grants); d != "" {
		t.Errorf("token requests after a refusal (-want +got):\n%s", d)
	}

	f, _ = workloadFixture(t, "", "tok-wif-good") // no token file
	err = f.callHello(t)
	if err == nil || !strings.Contains(err.Error(), "${secret:wif}") || !strings.Contains(err.Error(), "oauth.assertion") {
		t.Fatalf("Connect without the token file: %v, want an error naming oauth.assertion and ${secret:wif}", err)
	}
	f.as.mu.Lock()
	grants = f.as.grants
	f.as.mu.Unlock()
	if len(grants) != 0 {
		t.Errorf("token requests without a workload token: %v", grants)
	}
}

// Issue 26 item 6: the workload token is a credential: like a client
// secret it goes only to the authorization server oauth.authorization_server
// pins (or one on the server's origin). The fake's is on another port:
// without the pin, nothing reaches its token endpoint.
func TestOAuthWorkloadIdentityOnlyToPinnedAuthServer(t *testing.T) {
	t.Parallel()
	f, path := workloadFixture(t, "", "tok-wif-1")
	f.srv.OAuth.AuthorizationServer = ""
	writeToken(t, path, "tok-wif-1")
	err := f.callHello(t)
	if !errors.Is(err, mcpconn.ErrUnauthorized) || !strings.Contains(err.Error(), "oauth.authorization_server") {
		t.Fatalf("Connect: %v, want ErrUnauthorized naming oauth.authorization_server", err)
	}
	f.as.mu.Lock()
	assertions := f.as.assertions
	f.as.mu.Unlock()
	if len(assertions) != 0 {
		t.Errorf("the unpinned authorization server received %d workload tokens", len(assertions))
	}
}
