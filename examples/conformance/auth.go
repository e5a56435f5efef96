package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The environment variable with the scenario's extra data: client
// credentials for the pre-registration and client-credentials scenarios.
const contextEnv = "MCP_CONFORMANCE_CONTEXT"

// maxContextBytes bounds MCP_CONFORMANCE_CONTEXT; the suite's are a few
// hundred bytes (a PEM key the largest).
const maxContextBytes = 64 << 10

// clientMetadataURL is the client ID metadata document the suite's CIMD
// scenarios expect a client to name as its client_id.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// redirectURL is where the suite's authorization server sends the code;
// nothing listens there: authorizeByRedirect reads the redirect itself.
const redirectURL = "http://127.0.0.1:3000/callback"

// authorizeTimeout bounds the request to the authorization endpoint.
const authorizeTimeout = 10 * time.Second

// scenarioContext is the part of MCP_CONFORMANCE_CONTEXT this client uses.
type scenarioContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	// The enterprise IdP of auth/cross-app-access-complete-flow: its
	// issuer, this client's ID there, and the ID token of the person.
	IdPIssuer   string `json:"idp_issuer"`
	IdPClientID string `json:"idp_client_id"`
	IdPIDToken  string `json:"idp_id_token"`
	// WorkloadJWT is the workload identity token of auth/wif-jwt-bearer,
	// as a Kubernetes pod would have it from its projected token file.
	WorkloadJWT string `json:"valid_jwt"`
	// ToolCalls are the calls a scenario wants made, in order
	// (http-custom-headers).
	ToolCalls []toolCall `json:"toolCalls"`
}

// toolCall is one call of a scenario: the server's tool name and the
// arguments.
type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// readContext decodes MCP_CONFORMANCE_CONTEXT; unset is the zero context.
func readContext() (scenarioContext, error) {
	var sc scenarioContext
	v := os.Getenv(contextEnv)
	if v == "" {
		return sc, nil
	}
	if len(v) > maxContextBytes {
		return sc, fmt.Errorf("%s is %d bytes; the limit is %d", contextEnv, len(v), maxContextBytes)
	}
	if err := json.Unmarshal([]byte(v), &sc); err != nil {
		return sc, fmt.Errorf("%s is not a JSON object of the scenario's data", contextEnv)
	}
	return sc, nil
}

// The names under which the registration refers to the context's
// credentials: a document holds ${secret:NAME}, never the value.
const (
	secretClientSecret = "client_secret"
	secretPrivateKey   = "private_key"
	secretWorkload     = "workload_token"
)

// secret resolves the registration's secret references from the
// scenario's context, as a host's secret manager would: the host hands it
// over as resource.SecretResolverFunc(sc.secret).
func (sc scenarioContext) secret(_ context.Context, ref resource.Ref, name string) (string, error) {
	if ref != serverRef {
		return "", errors.New("no secret for this registration")
	}
	switch {
	case name == secretClientSecret && sc.ClientSecret != "":
		return sc.ClientSecret, nil
	case name == secretPrivateKey && sc.PrivateKeyPEM != "":
		return sc.PrivateKeyPEM, nil
	case name == secretWorkload && sc.WorkloadJWT != "":
		return sc.WorkloadJWT, nil
	}
	return "", errors.New("no such secret")
}

// authorizeByRedirect is the interactive step of an authorization-code
// login done without a person: the suite's authorization server answers
// the authorization URL at once with a redirect to the redirect URI, so
// the client requests it, does not follow the redirect, and reads the
// code, state and iss from its Location. A host would open a browser
// instead.
func authorizeByRedirect(ctx context.Context, _ resource.Ref, authorizationURL string) (mcpconn.AuthorizationResponse, error) {
	var none mcpconn.AuthorizationResponse
	ctx, cancel := context.WithTimeout(ctx, authorizeTimeout)
	defer cancel()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authorizationURL, nil)
	if err != nil {
		return none, fmt.Errorf("authorization request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return none, fmt.Errorf("authorization request: %w", err)
	}
	resp.Body.Close() // the redirect's body says nothing we need
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return none, fmt.Errorf("the authorization endpoint answered %d, not a redirect", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return none, errors.New("the authorization endpoint's redirect has no valid Location")
	}
	q := loc.Query()
	if e := q.Get("error"); e != "" {
		return none, fmt.Errorf("the authorization endpoint refused: %.64q", e)
	}
	if q.Get("code") == "" {
		return none, errors.New("the authorization endpoint's redirect carries no code")
	}
	return mcpconn.AuthorizationResponse{Code: q.Get("code"), State: q.Get("state"), Issuer: q.Get("iss")}, nil
}

// oauthField is the registration's oauth field for an auth/* scenario:
// what a host's operator would write for such a server. The credentials
// of the context are referenced, never written.
func oauthField(name string, sc scenarioContext) *resource.MCPOAuth {
	o := &resource.MCPOAuth{}
	if sc.ClientID != "" {
		o.ClientID = sc.ClientID
	}
	if sc.ClientSecret != "" {
		o.ClientSecret = "${secret:" + secretClientSecret + "}"
	}
	if sc.IdPIssuer != "" {
		// Enterprise-managed authorization: the ID token the host got
		// from its IdP is exchanged, no person and no redirect.
		o.Grant = "enterprise"
		o.IdPIssuer = sc.IdPIssuer
		o.IdPClientID = sc.IdPClientID
	}
	if sc.WorkloadJWT != "" {
		// Workload identity federation: the workload's token is traded
		// with the jwt-bearer grant, no person and no redirect.
		o.Grant = "workload_identity"
		o.Assertion = "${secret:" + secretWorkload + "}"
	}
	if strings.HasPrefix(name, "auth/client-credentials-") {
		// A machine-to-machine client: no person, no redirect.
		o.Grant = "client_credentials"
		if sc.PrivateKeyPEM != "" {
			o.PrivateKey = "${secret:" + secretPrivateKey + "}"
			o.TokenEndpointAuth = "private_key_jwt"
		}
	}
	return o
}

// idToken is the host's IDToken step: the ID token the scenario's IdP
// issued, as a host would have it from its own OIDC login.
func (sc scenarioContext) idToken(context.Context, resource.Ref) (string, error) {
	if sc.IdPIDToken == "" {
		return "", errors.New("the scenario gave no ID token")
	}
	return sc.IdPIDToken, nil
}

// suiteAuthorizationServer is the operator's step for a client with a
// secret or key: agt sends them only to the authorization server
// oauth.authorization_server pins (or one on the server's origin), and
// the suite's authorization server runs on another port. An operator
// copies the issuer from the server's documentation; the suite has none,
// so this reads it from the scenario's protected resource metadata
// (RFC 9728, at the server's path, then at the root), trusting the suite
// as the operator trusts the provider.
func suiteAuthorizationServer(ctx context.Context, serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return "", errors.New("the server URL is not an absolute URL")
	}
	ctx, cancel := context.WithTimeout(ctx, authorizeTimeout)
	defer cancel()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	origin := u.Scheme + "://" + u.Host
	for _, try := range []struct{ metadataURL, resource string }{
		{origin + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), serverURL},
		{origin + "/.well-known/oauth-protected-resource", origin},
	} {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, try.metadataURL, try.resource, client)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			return prm.AuthorizationServers[0], nil
		}
	}
	return "", errors.New("the scenario's server names no authorization server in its protected resource metadata")
}
