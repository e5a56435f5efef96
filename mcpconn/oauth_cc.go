package mcpconn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// clientCredentialsHandler is the OAuth handler of the client_credentials
// grant (machine to machine): the pre-registered client authenticates
// with its secret (client_secret_basic or client_secret_post) or a signed
// JWT (private_key_jwt), with no person and no stored token. The go-sdk's
// extauth handler binds its token source to the request that started it
// and has no JWT, so this one is ours.
type clientCredentialsHandler struct {
	o *oauthSession
	grantTokens
}

// grantTokens is what the grants without a person (client credentials,
// enterprise) share: the token source their Authorize set.
type grantTokens struct {
	mu sync.Mutex
	ts oauth2.TokenSource
}

func (g *grantTokens) TokenSource(context.Context) (oauth2.TokenSource, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ts, nil
}

// start gets the first token from src and keeps src (reused) for the
// session; a failure is the session's, value-free.
func (g *grantTokens) start(o *oauthSession, src oauth2.TokenSource) error {
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		var fe *flowError
		if errors.As(err, &fe) {
			return o.fail(fe.msg)
		}
		return o.fail("the OAuth authorization failed: " + oauthErrorText(err))
	}
	g.mu.Lock()
	g.ts = ts
	g.mu.Unlock()
	return nil
}

// allowedAuthServer finds the protected resource metadata, applies the
// one rule on where a secret or key may go (checkAuthServer) to the first
// authorization server it names, and notes that server as the session's
// issuer (noteIssuer).
func (o *oauthSession) allowedAuthServer(ctx context.Context, challenges []oauthex.Challenge, resourceURL string) (*oauthex.ProtectedResourceMetadata, error) {
	prm, _ := discoverResource(ctx, challenges, resourceURL, o.client)
	if prm == nil || len(prm.AuthorizationServers) == 0 {
		return nil, o.fail("the OAuth authorization failed: the server's protected resource metadata names no authorization server")
	}
	if err := o.checkAuthServer(prm.AuthorizationServers[0]); err != nil {
		return nil, err
	}
	o.noteIssuer(prm.AuthorizationServers[0])
	return prm, nil
}

// grantAuthServer is discoverAuthServer for a grant's Authorize: a
// metadata failure fails the session's OAuth, and a server without
// metadata gets its issuer's /token as the token endpoint. prm is nil
// (and err what Authorize returns) when there is no server to ask.
func (o *oauthSession) grantAuthServer(ctx context.Context, challenges []oauthex.Challenge, resourceURL string) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	prm, asm, err := o.discoverAuthServer(ctx, challenges, resourceURL)
	if prm == nil {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, o.fail("the OAuth authorization failed: reading the authorization server metadata: " + oauthErrorText(err))
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: strings.TrimSuffix(prm.AuthorizationServers[0], "/") + "/token"}
	}
	return prm, asm, nil
}

// discoverAuthServer finds the authorization server a grant without a
// person uses: allowedAuthServer, then the server's metadata (nil with a
// nil error when it has none).
func (o *oauthSession) discoverAuthServer(ctx context.Context, challenges []oauthex.Challenge, resourceURL string) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	prm, err := o.allowedAuthServer(ctx, challenges, resourceURL)
	if err != nil {
		return nil, nil, err
	}
	// The metadata's issuer must be the one named (the go-sdk checks), so
	// the check of the name covers the token endpoint and an assertion's
	// audience.
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], o.client)
	return prm, asm, err
}

// grantScopes are the scopes a grant asks for: the document's, else the
// challenge's, else the ones the resource supports.
func (o *oauthSession) grantScopes(challenges []oauthex.Challenge, prm *oauthex.ProtectedResourceMetadata) []string {
	scopes := slices.Clone(o.conf.Scopes)
	if len(scopes) == 0 {
		scopes = strings.Fields(challengeParam(challenges, "scope"))
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	return scopes
}

func (h *clientCredentialsHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if err := h.o.failedBefore(resp); err != nil {
		return err
	}
	defer resp.Body.Close()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(challenges) {
		return nil
	}
	prm, asm, err := h.o.grantAuthServer(ctx, challenges, req.URL.String())
	if prm == nil {
		return err
	}
	src := &clientCredentialsSource{o: h.o, tokenURL: asm.TokenEndpoint, issuer: asm.Issuer, resource: prm.Resource, scopes: h.o.grantScopes(challenges, prm),
		style: clientSecretStyle(h.o.conf.TokenEndpointAuth, asm.TokenEndpointAuthMethodsSupported)}
	return h.start(h.o, src)
}

// flowError is an error of ours whose text is value-free already.
type flowError struct{ msg string }

func (e *flowError) Error() string { return e.msg }

// clientCredentialsSource asks the token endpoint for a token each time
// the last one expired, with a fresh client assertion for private_key_jwt.
type clientCredentialsSource struct {
	o                          *oauthSession
	tokenURL, issuer, resource string
	scopes                     []string
	style                      oauth2.AuthStyle
}

func (s *clientCredentialsSource) Token() (*oauth2.Token, error) {
	cfg := &clientcredentials.Config{ClientID: s.o.conf.ClientID, TokenURL: s.tokenURL, Scopes: s.scopes, AuthStyle: s.style,
		EndpointParams: url.Values{}}
	if s.resource != "" {
		cfg.EndpointParams.Set("resource", s.resource)
	}
	if s.o.conf.TokenEndpointAuth == mcpdoc.AuthPrivateKeyJWT {
		assertion, err := clientAssertion(s.o.key, s.o.conf.ClientID, s.issuer, s.tokenURL)
		if err != nil {
			return nil, err
		}
		cfg.AuthStyle = oauth2.AuthStyleInParams
		cfg.EndpointParams.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		cfg.EndpointParams.Set("client_assertion", assertion)
	} else {
		cfg.ClientSecret = s.o.secret
	}
	ctx, cancel := s.o.setup.storeContext()
	defer cancel()
	t, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, s.o.client))
	if err != nil {
		return nil, &flowError{msg: "the OAuth authorization failed: " + oauthErrorText(err)}
	}
	s.o.dpop.setBound(t.TokenType) // a DPoP-bound token goes with its proof
	return t, nil
}

// clientSecretStyle picks how the secret goes to the token endpoint: the
// document's choice, else what the server supports (basic first, the
// default of RFC 7591).
func clientSecretStyle(chosen string, supported []string) oauth2.AuthStyle {
	switch {
	case chosen == mcpdoc.AuthClientSecretPost, chosen == mcpdoc.AuthNone:
		return oauth2.AuthStyleInParams
	case chosen == mcpdoc.AuthClientSecretBasic:
		return oauth2.AuthStyleInHeader
	case !slices.Contains(supported, "client_secret_basic") && slices.Contains(supported, "client_secret_post"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

// clientAssertion signs the JWT of private_key_jwt (RFC 7523): issuer and
// subject the client, audience the authorization server, valid for five
// minutes, with a random id. The key is PEM: PKCS#8, PKCS#1 (RSA, RS256)
// or SEC 1 (EC P-256, ES256).
func clientAssertion(keyPEM, clientID, issuer, tokenURL string) (string, error) {
	bad := &flowError{msg: "the private_key of the oauth field is not a PEM RSA or EC P-256 private key"}
	block, _ := pem.Decode([]byte(keyPEM))
	if block == nil {
		return "", bad
	}
	var key any
	var err error
	if key, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if key, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			if key, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
				return "", bad
			}
		}
	}
	alg := ""
	switch k := key.(type) {
	case *rsa.PrivateKey:
		alg = "RS256"
	case *ecdsa.PrivateKey:
		if k.Curve.Params().Name != "P-256" {
			return "", bad
		}
		alg = "ES256"
	default:
		return "", bad
	}
	aud := issuer
	if aud == "" {
		aud = tokenURL
	}
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iss": clientID, "sub": clientID, "aud": aud,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": rand.Text()})
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	var sig []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
	case *ecdsa.PrivateKey:
		var r, s *big.Int
		if r, s, err = ecdsa.Sign(rand.Reader, k, digest[:]); err == nil {
			sig = make([]byte, 64)
			r.FillBytes(sig[:32])
			s.FillBytes(sig[32:])
		}
	}
	if err != nil {
		return "", &flowError{msg: "signing the client assertion failed"}
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// discoverResource finds the protected resource metadata (RFC 9728) as
// the MCP authorization spec says: the challenge's resource_metadata, the
// well-known URL at the endpoint's path, then at the root; without any,
// the server's origin is its own authorization server (2025-03-26), and
// found is false.
func discoverResource(ctx context.Context, cs []oauthex.Challenge, endpoint string, client *http.Client) (prm *oauthex.ProtectedResourceMetadata, found bool) {
	ru, err := url.Parse(endpoint)
	if err != nil {
		return nil, false
	}
	type try struct{ metaURL, resource string }
	var tries []try
	if m := challengeParam(cs, "resource_metadata"); m != "" {
		tries = append(tries, try{m, endpoint})
	}
	mu := *ru
	mu.RawQuery, mu.Fragment = "", ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	tries = append(tries, try{mu.String(), endpoint})
	mu.Path = "/.well-known/oauth-protected-resource"
	root := *ru
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	tries = append(tries, try{mu.String(), root.String()})
	for _, t := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, t.metaURL, t.resource, client)
		if err == nil && prm != nil {
			return prm, true
		}
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: endpoint}, false
}
