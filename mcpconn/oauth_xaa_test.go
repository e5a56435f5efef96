package mcpconn_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// fakeIdP is an enterprise IdP on 127.0.0.1: its OpenID configuration and
// a token endpoint that exchanges the ID token "tok-idtoken" of client
// "idp-client" for an identity assertion grant, checking each parameter
// of RFC 8693 the exchange must carry.
type fakeIdP struct {
	srv *httptest.Server

	mu        sync.Mutex
	exchanges int
	audience  string // the audience and resource the last exchange named
	resource  string
	// issuer, when set, is the issuer the metadata names in place of the
	// IdP's own URL.
	issuer string
}

func newFakeIdP(t *testing.T, jag string) *fakeIdP {
	idp := &fakeIdP{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		base := idp.srv.URL
		issuer := base
		if idp.issuer != "" {
			issuer = idp.issuer
		}
		writeJSON(w, map[string]any{"issuer": issuer, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token"})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f := r.Form
		if f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" || f.Get("client_id") != "idp-client" ||
			f.Get("subject_token") != "tok-idtoken" || f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token" ||
			f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]string{"error": "invalid_grant", "error_description": "echo " + f.Encode()})
			return
		}
		idp.mu.Lock()
		idp.exchanges++
		idp.audience, idp.resource = f.Get("audience"), f.Get("resource")
		idp.mu.Unlock()
		writeJSON(w, map[string]any{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
	})
	idp.srv = httptest.NewServer(mux)
	t.Cleanup(idp.srv.Close)
	return idp
}

// enterpriseFixture is a server behind fakeAS whose oauth field uses the
// enterprise grant with the IdP idp; idToken is the host's IDToken step.
func enterpriseFixture(t *testing.T, idToken func(context.Context, resource.Ref) (string, error)) (*oauthFixture, *fakeIdP) {
	f := newOAuthFixture(t)
	f.as.jag = "tok-idjag"
	idp := newFakeIdP(t, "tok-idjag")
	f.srv.OAuth = &resource.MCPOAuth{Grant: mcpdoc.GrantEnterprise, ClientID: "m2m", ClientSecret: "${secret:m2m}",
		IdPIssuer: idp.srv.URL, IdPClientID: "idp-client", AuthorizationServer: f.as.srv.URL}
	f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		OAuth:     &mcpconn.OAuthOptions{Tokens: f.tokens, IDToken: idToken},
		LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"m2m": "tok-client-secret"}}},
	})
	return f, idp
}

// The enterprise grant: the host's ID token is exchanged at the IdP for
// an ID-JAG naming the authorization server (audience) and the server
// (resource), which the pre-registered client trades, authenticated with
// client_secret_basic, for the access token; nothing is stored.
func TestOAuthEnterprise(t *testing.T) {
	t.Parallel()
	f, idp := enterpriseFixture(t, func(context.Context, resource.Ref) (string, error) { return "tok-idtoken", nil })
	if err := f.callHello(t); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	idp.mu.Lock()
	exchanges, audience, res := idp.exchanges, idp.audience, idp.resource
	idp.mu.Unlock()
	if exchanges != 1 || audience != f.as.srv.URL || res != f.srv.URL {
		t.Errorf("token exchanges = %d with audience %q and resource %q, want 1 with %q and %q", exchanges, audience, res, f.as.srv.URL, f.srv.URL)
	}
	if f.as.lastAuth != "basic:m2m" {
		t.Errorf("client authentication of the jwt-bearer grant = %q, want basic:m2m", f.as.lastAuth)
	}
	if _, err := f.tokens.Load(context.Background(), "remote"); !errors.Is(err, resource.ErrNotFound) {
		t.Errorf("the enterprise grant stored a token: %v", err)
	}
}

// Without the host's IDToken step the connection needs a login; an ID
// token the IdP refuses fails it with a reason that carries no token, no
// secret and nothing of the IdP's answer.
func TestOAuthEnterpriseRefused(t *testing.T) {
	t.Parallel()
	f, _ := enterpriseFixture(t, nil)
	if err := f.callHello(t); !errors.Is(err, mcpconn.ErrLoginRequired) {
		t.Errorf("Connect without IDToken = %v, want ErrLoginRequired", err)
	}
	f, idp := enterpriseFixture(t, func(context.Context, resource.Ref) (string, error) { return "tok-idtoken-forged", nil })
	err := f.callHello(t)
	if err == nil || !strings.Contains(err.Error(), "token exchange at the IdP") {
		t.Fatalf("Connect with a refused ID token = %v, want the token exchange's failure", err)
	}
	assertNoTokens(t, "error", err.Error())
	if strings.Contains(err.Error(), "echo") || strings.Contains(err.Error(), idp.srv.URL) {
		t.Errorf("the error carries the IdP's answer or URL: %v", err)
	}
}

// The IdP's metadata must name the issuer it was read for (RFC 8414
// section 3.3): metadata naming another issuer is not used, and no ID
// token leaves the host.
func TestOAuthEnterpriseIdPIssuerChecked(t *testing.T) {
	t.Parallel()
	asked := false
	f, idp := enterpriseFixture(t, func(context.Context, resource.Ref) (string, error) { asked = true; return "tok-idtoken", nil })
	idp.issuer = "https://idp.attacker.example"
	err := f.callHello(t)
	if err == nil || !strings.Contains(err.Error(), "names another issuer") {
		t.Fatalf("Connect = %v, want the IdP issuer refused", err)
	}
	idp.mu.Lock()
	defer idp.mu.Unlock()
	if asked || idp.exchanges != 0 {
		t.Errorf("the ID token was asked for (%v) or exchanged (%d times) with a mismatched IdP", asked, idp.exchanges)
	}
	if strings.Contains(err.Error(), "attacker") {
		t.Errorf("the error quotes the metadata: %v", err)
	}
}
