package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// grantTypeJWTBearer is the grant of RFC 7523 section 2.1.
const grantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// enterpriseHandler is the OAuth handler of the "enterprise" grant
// (enterprise-managed authorization): the host's ID token is exchanged at
// the IdP for an identity assertion grant (ID-JAG, RFC 8693), which the
// pre-registered client trades for the access token at the server's
// authorization server (RFC 7523). go-sdk's extauth.EnterpriseHandler is
// not used: it always sends the client secret in the body, where an
// authorization server may accept client_secret_basic only. Nothing is
// stored: a new token is obtained from a new ID token.
type enterpriseHandler struct {
	o *oauthSession
	grantTokens
}

func (h *enterpriseHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if err := h.o.failedBefore(resp); err != nil {
		return err
	}
	defer resp.Body.Close()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(challenges) {
		return nil // not an authorization matter: the retry reports it
	}
	if h.o.setup.idToken == nil {
		h.o.loginRequired.Store(true)
		return ErrLoginRequired
	}
	client := h.o.client
	// The jwt-bearer grant sends the client secret: discoverAuthServer
	// applies the one rule on where it may go.
	prm, asm, err := h.o.discoverAuthServer(ctx, challenges, req.URL.String())
	if prm == nil {
		return err
	}
	if err != nil || asm == nil {
		return h.o.fail("the OAuth authorization failed: reading the authorization server metadata: " + metadataErrorText(err))
	}
	idpTokenURL, err := idpTokenEndpoint(ctx, h.o.conf.IdPIssuer, client)
	if err != nil {
		return h.o.fail("the OAuth authorization failed: reading the metadata of the IdP of idp_issuer: " + oauthErrorText(err))
	}
	scopes := h.o.grantScopes(challenges, prm)
	resourceURI := prm.Resource
	if resourceURI == "" {
		resourceURI = h.o.resource
	}
	src := &enterpriseSource{o: h.o, idpTokenURL: idpTokenURL, tokenURL: asm.TokenEndpoint, audience: asm.Issuer,
		resource: resourceURI, scopes: scopes, style: clientSecretStyle(h.o.conf.TokenEndpointAuth, asm.TokenEndpointAuthMethodsSupported)}
	return h.start(h.o, src)
}

func metadataErrorText(err error) string {
	if err == nil {
		return "none was found"
	}
	return oauthErrorText(err)
}

// enterpriseSource obtains a token: an ID token from the host, the ID-JAG
// from the IdP, the access token from the authorization server.
type enterpriseSource struct {
	o                                         *oauthSession
	idpTokenURL, tokenURL, audience, resource string
	scopes                                    []string
	style                                     oauth2.AuthStyle
}

func (s *enterpriseSource) Token() (*oauth2.Token, error) {
	ctx, cancel := s.o.setup.storeContext()
	defer cancel()
	idToken, err := s.o.setup.idToken(ctx, s.o.ref)
	if err != nil || idToken == "" {
		// The host's text may hold what it read from the IdP.
		return nil, &flowError{msg: "the host's IDToken step gave no ID token"}
	}
	idp := &oauthex.ClientCredentials{ClientID: s.o.conf.IdPClientID}
	if s.o.idpSecret != "" {
		idp.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: s.o.idpSecret}
	}
	jag, err := oauthex.ExchangeToken(ctx, s.idpTokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG, Audience: s.audience, Resource: s.resource, Scope: s.scopes,
		SubjectToken: idToken, SubjectTokenType: oauthex.TokenTypeIDToken,
	}, idp, s.o.client)
	if err != nil {
		return nil, &flowError{msg: "the OAuth authorization failed: the token exchange at the IdP: " + oauthErrorText(err)}
	}
	if typ, _ := jag.Extra("issued_token_type").(string); typ != oauthex.TokenTypeIDJAG || jag.AccessToken == "" {
		return nil, &flowError{msg: "the OAuth authorization failed: the IdP did not issue an identity assertion grant (ID-JAG)"}
	}
	return s.o.jwtBearerGrant(ctx, s.tokenURL, s.scopes, s.style, jag.AccessToken, nil)
}

// jwtBearerGrant trades assertion for an access token at tokenURL (RFC
// 7523 section 2.1), once: a refusal is the caller's, value-free, and no
// other grant is tried. The pre-registered client, if any, authenticates
// as style says with its secret; without a secret its client_id goes in
// the body (a public client, RFC 6749 section 3.2.1). extra adds
// parameters (resource).
func (o *oauthSession) jwtBearerGrant(ctx context.Context, tokenURL string, scopes []string, style oauth2.AuthStyle, assertion string, extra url.Values) (*oauth2.Token, error) {
	params := url.Values{"grant_type": {grantTypeJWTBearer}, "assertion": {assertion}}
	for k, v := range extra {
		params[k] = v
	}
	if o.secret == "" {
		style = oauth2.AuthStyleInParams
	}
	// clientcredentials lets grant_type be replaced.
	cfg := &clientcredentials.Config{ClientID: o.conf.ClientID, ClientSecret: o.secret, TokenURL: tokenURL, Scopes: scopes,
		AuthStyle: style, EndpointParams: params}
	t, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, o.client))
	if err != nil {
		return nil, &flowError{msg: "the OAuth authorization failed: the jwt-bearer grant at the authorization server: " + oauthErrorText(err)}
	}
	o.dpop.setBound(t.TokenType) // a DPoP-bound token goes with its proof
	return t, nil
}

var _ auth.OAuthHandler = (*enterpriseHandler)(nil)

// idpTokenEndpoint reads the token endpoint from the metadata of the IdP
// issuer: RFC 8414 and OpenID Connect discovery, in the order of the MCP
// authorization spec, with the issuer check of RFC 8414 section 3.3. It
// is not go-sdk's auth.GetAuthServerMetadata, which also requires PKCE
// support: an IdP's token exchange uses no authorization code.
func idpTokenEndpoint(ctx context.Context, issuer string, client *http.Client) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return "", errors.New("idp_issuer is not an absolute URL")
	}
	path := strings.TrimSuffix(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	candidates := []string{origin + "/.well-known/oauth-authorization-server" + path, origin + "/.well-known/openid-configuration" + path}
	if path != "" {
		candidates = append(candidates, origin+path+"/.well-known/openid-configuration")
	}
	for _, c := range candidates {
		var meta struct {
			Issuer        string `json:"issuer"`
			TokenEndpoint string `json:"token_endpoint"`
		}
		found, err := getMetadata(ctx, client, c, &meta)
		if err != nil {
			return "", err
		}
		if !found {
			continue
		}
		if strings.TrimSuffix(meta.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return "", errors.New("the IdP's metadata names another issuer")
		}
		t, err := url.Parse(meta.TokenEndpoint)
		if err != nil || t.Host == "" || !(t.Scheme == "https" || t.Scheme == "http" && isLoopback(t.Hostname())) {
			return "", errors.New("the IdP's token_endpoint is not an https URL")
		}
		return meta.TokenEndpoint, nil
	}
	return "", errors.New("the IdP publishes no metadata")
}

// getMetadata GETs a metadata document into v; a 4xx answer is not found.
func getMetadata(ctx context.Context, client *http.Client, u string, v any) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return false, nil
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Errorf("the IdP's metadata answered HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		if errors.Is(err, errOAuthResponseTooLarge) {
			return false, err
		}
		return false, errors.New("the IdP's metadata is not a JSON object")
	}
	return true, nil
}

// isLoopback reports whether host names this machine's loopback, the
// only place a plain-http endpoint is accepted.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
