package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// authorizeByRedirect reads the code, state and iss from the authorization
// endpoint's redirect without following it, and refuses an answer that is
// not a redirect with a code.
func TestAuthorizeByRedirect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, location string
		status         int
		wantCode       string
		wantIssuer     string
		wantErr        string
	}{
		{"redirect", redirectURL + "?code=c-1&state=s-1", http.StatusFound, "c-1", "", ""},
		{"redirect with iss", redirectURL + "?code=c-1&state=s-1&iss=http%3A%2F%2Flocalhost%3A9%2Fas", http.StatusFound, "c-1", "http://localhost:9/as", ""},
		{"not a redirect", "", http.StatusOK, "", "", "answered 200, not a redirect"},
		{"refused", redirectURL + "?error=access_denied&state=s-1", http.StatusFound, "", "", `refused: "access_denied"`},
		{"no code", redirectURL + "?state=s-1", http.StatusFound, "", "", "carries no code"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tt.location != "" {
				w.Header().Set("Location", tt.location)
			}
			w.WriteHeader(tt.status)
		}))
		res, err := authorizeByRedirect(context.Background(), serverRef, srv.URL+"/authorize?state=s-1")
		srv.Close()
		want := mcpconn.AuthorizationResponse{Code: tt.wantCode, State: "s-1", Issuer: tt.wantIssuer}
		switch {
		case tt.wantErr == "" && (err != nil || res != want):
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, res, err, want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}

// The scenario's context is bounded, and its credentials reach the
// registration only as ${secret:NAME} references, resolved for the
// scenario's server alone.
func TestScenarioContext(t *testing.T) {
	t.Setenv(contextEnv, `{"name":"auth/client-credentials-jwt","client_id":"cc","private_key_pem":"PEM-VALUE","signing_algorithm":"ES256"}`)
	sc, err := readContext()
	if err != nil {
		t.Fatal(err)
	}
	field := oauthField("auth/client-credentials-jwt", sc)
	want := &resource.MCPOAuth{ClientID: "cc", Grant: "client_credentials", PrivateKey: "${secret:private_key}", TokenEndpointAuth: "private_key_jwt"}
	if diff := cmp.Diff(want, field); diff != "" {
		t.Errorf("oauthField (-want +got):\n%s", diff)
	}
	if b, _ := json.Marshal(field); strings.Contains(string(b), "PEM-VALUE") {
		t.Errorf("the registration holds the key: %s", b)
	}
	if v, err := sc.secret(context.Background(), serverRef, secretPrivateKey); err != nil || v != "PEM-VALUE" {
		t.Errorf("Resolve(private_key) = %q, %v", v, err)
	}
	if _, err := sc.secret(context.Background(), "other", secretPrivateKey); err == nil {
		t.Error("another registration got the key")
	}

	t.Setenv(contextEnv, `{"client_id": "pre", "client_secret": "SECRET-VALUE"}`)
	if sc, err = readContext(); err != nil {
		t.Fatal(err)
	}
	want = &resource.MCPOAuth{ClientID: "pre", ClientSecret: "${secret:client_secret}"}
	if diff := cmp.Diff(want, oauthField("auth/pre-registration", sc)); diff != "" {
		t.Errorf("oauthField of pre-registration (-want +got):\n%s", diff)
	}

	t.Setenv(contextEnv, `{"client_secret": "`+strings.Repeat("x", maxContextBytes)+`"}`)
	if _, err := readContext(); err == nil || strings.Contains(err.Error(), "xxx") {
		t.Errorf("an oversized context: %v, want an error without its text", err)
	}
	t.Setenv(contextEnv, `{"client_secret": 7, "x": "SECRET-VALUE"`)
	if _, err := readContext(); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a malformed context: %v, want an error without its text", err)
	}
}

// The operator's step of the secret-carrying scenarios reads the issuer
// from the server's protected resource metadata, at the server's path or
// at the root, and fails when none names one.
func TestSuiteAuthorizationServer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, path, body string
		want             string
	}{
		{"path-based", "/.well-known/oauth-protected-resource/mcp", `{"resource": "BASE/mcp", "authorization_servers": ["http://localhost:9/as"]}`, "http://localhost:9/as"},
		{"root", "/.well-known/oauth-protected-resource", `{"resource": "BASE", "authorization_servers": ["http://localhost:9"]}`, "http://localhost:9"},
		{"none named", "/.well-known/oauth-protected-resource/mcp", `{"resource": "BASE/mcp", "authorization_servers": []}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var base string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != tt.path {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, strings.ReplaceAll(tt.body, "BASE", base))
			}))
			defer srv.Close()
			base = srv.URL
			got, err := suiteAuthorizationServer(context.Background(), srv.URL+"/mcp")
			if tt.want == "" {
				if err == nil {
					t.Errorf("got %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
