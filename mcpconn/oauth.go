package mcpconn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/internal/weborigin"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Defaults of the OAuth settings.
const (
	// defaultOAuthRedirectURL is the redirect URI of the interactive
	// login when OAuthOptions.RedirectURL is "".
	defaultOAuthRedirectURL = "http://127.0.0.1/callback"
	// defaultMaxOAuthResponseBytes bounds one response of the OAuth flow
	// (metadata, registration, token): the authorization server is as
	// hostile as the MCP server.
	defaultMaxOAuthResponseBytes = 1 << 20
	// defaultOAuthRequestTimeout bounds one HTTP request of the OAuth flow.
	defaultOAuthRequestTimeout = 30 * time.Second
	// maxStoredCredentialBytes bounds a credential read from the token
	// store; a larger one is treated as none.
	maxStoredCredentialBytes = 256 << 10
)

// ErrLoginRequired: the server requires an OAuth login and none is usable
// (never done, logged out, revoked, or expired without a refresh token),
// and the connection has no interactive step (OAuthOptions.Authorize) to
// do one. Nothing was called. Log in with Connector.Login, then connect
// again.
var ErrLoginRequired = errors.New("mcpconn: the server requires an OAuth login")

// OAuthOptions configures OAuth for the remote servers whose document has
// an "oauth" field. A nil *OAuthOptions means all defaults.
type OAuthOptions struct {
	// Tokens keeps the credentials a login obtains (tokens, the client
	// registration) and the refreshed ones. Nil means an in-memory store
	// for the Connector's life (resource.NewMemoryTokenStore).
	Tokens resource.TokenStore
	// Authorize is the host's interactive step: it gets the authorization
	// URL, leads a person (or a test) through it, and returns what the
	// redirect to RedirectURL carried: code, state and iss. Nil means no interactive login
	// during Connect: a server that needs one fails with ErrLoginRequired
	// (Connector.Login takes its own).
	Authorize func(ctx context.Context, ref resource.Ref, authorizationURL string) (AuthorizationResponse, error)
	// IDToken is the host's step of the "enterprise" grant: it returns
	// the OpenID Connect ID token of the person (or workload) at the
	// enterprise IdP, which is exchanged for the server's token. Nil
	// means none: a server of that grant fails with ErrLoginRequired.
	IDToken func(ctx context.Context, ref resource.Ref) (idToken string, err error)
	// RedirectURL is the redirect URI of the interactive login. "" means
	// http://127.0.0.1/callback.
	RedirectURL string
	// ClientMetadataURL is the https URL of the host's client ID metadata
	// document, used when a document's oauth has no client_metadata_url.
	// "" means none.
	ClientMetadataURL string
	// MaxResponseBytes bounds one response of the OAuth flow. 0 means 1 MiB.
	MaxResponseBytes int
	// RequestTimeout bounds one HTTP request of the OAuth flow. 0 means 30 s.
	RequestTimeout time.Duration
}

// AuthorizationResponse is what the redirect of an interactive login
// carried (RFC 6749, section 4.1.2; RFC 9207): the host's Authorize step
// reads the parameters from the redirect URI's query and returns them
// unchanged.
type AuthorizationResponse struct {
	// Code is the code parameter. "" fails the login.
	Code string
	// State is the state parameter, checked against the authorization
	// URL's.
	State string
	// Issuer is the iss parameter (RFC 9207). "" means the redirect had
	// none, which fails the login with an authorization server that
	// advertises authorization_response_iss_parameter_supported. A
	// present one must be that server's issuer, and fails the login with
	// a server that does not advertise the parameter.
	Issuer string
}

// LoginOptions are the choices of one Connector.Login; nil means the
// Connector's OAuthOptions.
type LoginOptions struct {
	// RedirectURL replaces OAuthOptions.RedirectURL; "" keeps it.
	RedirectURL string
	// Authorize replaces OAuthOptions.Authorize; nil keeps it. A login
	// needs one or the other.
	Authorize func(ctx context.Context, ref resource.Ref, authorizationURL string) (AuthorizationResponse, error)
	// Timeout bounds the whole login, the person's step included, in place
	// of the document's startup_timeout_ms. 0 means DefaultLoginTimeout
	// (10 minutes).
	Timeout time.Duration
}

// DefaultLoginTimeout bounds a Connector.Login when LoginOptions.Timeout
// is 0: a person has to find the browser tab.
const DefaultLoginTimeout = 10 * time.Minute

// oauthSetup is the Connector's OAuth configuration with the defaults
// applied.
type oauthSetup struct {
	tokens      resource.TokenStore
	authorize   func(ctx context.Context, ref resource.Ref, authorizationURL string) (AuthorizationResponse, error)
	redirectURL string
	metadataURL string
	idToken     func(ctx context.Context, ref resource.Ref) (string, error)
	// client reaches public addresses only (the flow's URLs come from
	// the server); internalClient any, for a server on an internal or
	// loopback address.
	client         *http.Client
	internalClient *http.Client
	timeout        time.Duration // OAuthOptions.RequestTimeout, resolved

	refreshMu  sync.Mutex
	refreshing map[resource.Ref]*sync.Mutex // see refreshLock
}

func newOAuthSetup(o *OAuthOptions, base http.RoundTripper) *oauthSetup {
	var opts OAuthOptions
	if o != nil {
		opts = *o
	}
	s := &oauthSetup{tokens: opts.Tokens, authorize: opts.Authorize, redirectURL: opts.RedirectURL, metadataURL: opts.ClientMetadataURL, idToken: opts.IDToken}
	if s.tokens == nil {
		s.tokens = resource.NewMemoryTokenStore()
	}
	if s.redirectURL == "" {
		s.redirectURL = defaultOAuthRedirectURL
	}
	maxBytes := opts.MaxResponseBytes
	if maxBytes <= 0 {
		maxBytes = defaultMaxOAuthResponseBytes
	}
	timeout := opts.RequestTimeout
	if timeout <= 0 {
		timeout = defaultOAuthRequestTimeout
	}
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	s.timeout = timeout
	newClient := func(rt http.RoundTripper) *http.Client {
		return &http.Client{
			Transport: &oauthBodyTransport{base: rt, max: int64(maxBytes)},
			Timeout:   timeout,
			// A redirect is answered as it is: metadata and tokens come
			// from the URL asked, never from where a hostile server sends
			// us.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	s.client = newClient(publicOnly(base))
	s.internalClient = newClient(base)
	return s
}

// clientFor returns the OAuth client of a connection to serverURL: public
// addresses only, unless the server itself is on a non-public one.
func (s *oauthSetup) clientFor(ctx context.Context, serverURL string) *http.Client {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if serverIsNonPublic(ctx, serverURL) {
		return s.internalClient
	}
	return s.client
}

// oauthBodyTransport fails a response body that goes past max bytes.
type oauthBodyTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *oauthBodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &oauthBody{rc: resp.Body, left: t.max}
	return resp, nil
}

// errOAuthResponseTooLarge: an OAuth response went past MaxResponseBytes.
var errOAuthResponseTooLarge = errors.New("an OAuth response is larger than OAuthOptions.MaxResponseBytes")

type oauthBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *oauthBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the bound from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, errOAuthResponseTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *oauthBody) Close() error { return b.rc.Close() }

// storedCredential is what the token store keeps for a registration: the
// token and what refreshing it needs. It is bound to the server URL it was
// obtained for (Resource) and to the authorization server that issued it
// (Issuer, SEP-2352): a document whose url changed does not use it, and
// once the server names another authorization server it is not used nor
// refreshed, and a new registration and login replace it
// (credentialUsable).
type storedCredential struct {
	Version  int    `json:"v"`
	Resource string `json:"resource"`
	ClientID string `json:"client_id"`
	// ClientSecret is a dynamically registered client's secret; a
	// pre-registered one stays behind its ${secret:NAME} reference.
	ClientSecret string `json:"client_secret,omitempty"`
	TokenURL     string `json:"token_url"`
	// Issuer is the authorization server the token, the refresh token
	// and a dynamically registered client belong to: the one the server
	// named at login. A pre-registered client's secret goes with a
	// refresh only while checkAuthServer still lets it go there. ""
	// (a credential stored before issuers were kept) binds to no issuer:
	// it is refreshed at its own TokenURL only, until the connection
	// discovers the issuer (after a 401 or 403) or the next login.
	Issuer       string    `json:"issuer,omitempty"`
	AuthStyle    int       `json:"auth_style,omitempty"`
	Scopes       []string  `json:"scopes,omitempty"`
	AccessToken  string    `json:"access_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// RefusedRefresh is the digest of the refresh token whose refusal
	// dropped the token: a Run whose refresh of that same token succeeded
	// meanwhile (the refusal was its rotation) still stores its token.
	RefusedRefresh string `json:"refused_refresh,omitempty"`
	// DPoPKey is the private key the token is bound to (DPoP, RFC 9449),
	// PKCS #8 in base64url; "" for a bearer token. It never leaves the
	// store but in the proofs it signs.
	DPoPKey string `json:"dpop_key,omitempty"`
}

// refreshDigest names a refresh token in the store without keeping it.
func refreshDigest(refresh string) string {
	sum := sha256.Sum256([]byte(refresh))
	return hex.EncodeToString(sum[:16])
}

const credentialVersion = 1

// decodeCredential reads stored bytes; ok is false for anything unusable
// (too large, damaged, another version), which counts as no login.
func decodeCredential(b []byte) (storedCredential, bool) {
	var c storedCredential
	if len(b) == 0 || len(b) > maxStoredCredentialBytes || json.Unmarshal(b, &c) != nil || c.Version != credentialVersion {
		return storedCredential{}, false
	}
	return c, true
}

func (c storedCredential) token() *oauth2.Token {
	if c.AccessToken == "" && c.RefreshToken == "" {
		return nil
	}
	return &oauth2.Token{AccessToken: c.AccessToken, TokenType: c.TokenType, RefreshToken: c.RefreshToken, Expiry: c.Expiry}
}

func (c *storedCredential) setToken(t *oauth2.Token) {
	c.AccessToken, c.TokenType, c.RefreshToken, c.Expiry = t.AccessToken, t.TokenType, t.RefreshToken, t.Expiry
}

// oauthSession is the OAuth state of one connection.
type oauthSession struct {
	setup     *oauthSetup
	ref       resource.Ref
	resource  string // the server URL
	conf      *resource.MCPOAuth
	secret    string // the pre-registered client's secret, resolved
	key       string // the private_key_jwt key, resolved (PEM)
	idpSecret string // the enterprise grant's IdP client secret, resolved
	// secrets resolves the workload identity grant's assertion at each
	// exchange (the Connector's).
	secrets   *resource.LaunchEnv
	authorize func(ctx context.Context, ref resource.Ref, authorizationURL string) (AuthorizationResponse, error)
	redirect  string
	login     bool         // Connector.Login: ignore the stored token
	client    *http.Client // the OAuth flow's, see oauthSetup.clientFor, with the DPoP proofs
	dpop      *dpopState   // the DPoP key and nonces (oauth_dpop.go)

	// issuer is the authorization server the server named at this
	// session's last discovery (nil before one): a login stores it, and a
	// stored credential of another issuer is not used (SEP-2352).
	issuer        atomic.Pointer[string]
	loginRequired atomic.Bool
	failure       atomic.Pointer[string] // why the flow failed, value-free
}

// namedIssuer is the authorization server the server named at this
// session's last discovery, or "" before one.
func (o *oauthSession) namedIssuer() string {
	if p := o.issuer.Load(); p != nil {
		return *p
	}
	return ""
}

// noteIssuer records the authorization server the server names now; a
// DPoP key of another issuer is not used with it.
func (o *oauthSession) noteIssuer(issuer string) {
	o.issuer.Store(&issuer)
	o.dpop.forIssuer(issuer)
}

// sameIssuer compares two issuer identifiers without a final slash.
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

func (o *oauthSession) fail(reason string) error {
	o.failure.CompareAndSwap(nil, &reason)
	return errors.New(reason)
}

// checkAuthServer is the one rule on where the configured client secret,
// private key or workload identity token may go: the server's metadata
// names the authorization server, so a hostile server could name one that
// collects them. With one configured, the issuer must equal
// oauth.authorization_server, or, with no pin, have the server's origin.
// The error is value-free and names the field to set.
func (o *oauthSession) checkAuthServer(issuer string) error {
	if reason := o.authServerRefusal(issuer); reason != "" {
		return o.fail(reason)
	}
	return nil
}

// authServerRefusal is checkAuthServer's rule: why issuer may not get
// the configured secret, key or workload token, or "".
func (o *oauthSession) authServerRefusal(issuer string) string {
	if o.secret == "" && o.key == "" && o.conf.Grant != mcpdoc.GrantWorkloadIdentity {
		return ""
	}
	if pin := o.conf.AuthorizationServer; pin != "" {
		if !sameIssuer(issuer, pin) {
			return "the OAuth authorization server the server names is not oauth.authorization_server; the client secret, key or workload token is not sent to it (set oauth.authorization_server to the issuer they belong to)"
		}
		return ""
	}
	if !sameOrigin(issuer, o.resource) {
		return "the OAuth authorization server the server names is on another origin than the server; the client secret, key or workload token is not sent to it (set oauth.authorization_server to the issuer they belong to)"
	}
	return ""
}

// credentialUsable reports whether a stored credential may serve this
// session: obtained for this server URL, with a token, from the
// authorization server the server names now (once this session knows
// it; a credential that names no issuer is not used then either), and,
// for the pre-registered client, from one checkAuthServer still lets its
// secret go to (a changed oauth.authorization_server needs a new login,
// not an error).
func (o *oauthSession) credentialUsable(c storedCredential) bool {
	if c.Resource != o.resource || c.token() == nil {
		return false
	}
	if named := o.namedIssuer(); named != "" && !sameIssuer(named, c.Issuer) {
		return false
	}
	return c.ClientID != o.conf.ClientID || o.authServerRefusal(c.Issuer) == ""
}

// sameOrigin reports whether a and b have the same origin
// (scheme, host and port, default ports made
// explicit); a without a host has none.
func sameOrigin(a, b string) bool {
	ua, err := url.Parse(a)
	if err != nil || ua.Host == "" {
		return false
	}
	ub, err := url.Parse(b)
	return err == nil && weborigin.Of(ua) == weborigin.Of(ub)
}

// storeContext bounds a token store call made where no context exists
// (a token refresh inside the transport): the store's own work and one
// request to the token endpoint.
func (s *oauthSetup) storeContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*s.timeout)
}

// handler builds the go-sdk OAuth handler of the connection.
func (o *oauthSession) handler(ctx context.Context) (auth.OAuthHandler, error) {
	if o.conf.Grant == mcpdoc.GrantClientCredentials {
		return &clientCredentialsHandler{o: o}, nil
	}
	if o.conf.Grant == mcpdoc.GrantEnterprise {
		return &enterpriseHandler{o: o}, nil
	}
	if o.conf.Grant == mcpdoc.GrantWorkloadIdentity {
		return &workloadHandler{o: o}, nil
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              o.redirect,
		AuthorizationCodeFetcher: o.fetchCode,
		RequestRefreshToken:      true,
		Client:                   o.client,
		NewTokenSource: func(tctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			return o.storeNewToken(c, t)
		},
	}
	if len(o.conf.Scopes) > 0 {
		scopes := slices.Clone(o.conf.Scopes)
		cfg.ScopeFilter = func([]string) []string { return slices.Clone(scopes) }
	}
	// The registration order of the 2026-07-28 spec: the client the
	// document pre-registers, else the client ID metadata document where
	// the authorization server supports it, else dynamic registration
	// (deprecated). The go-sdk tries the metadata document before a
	// pre-registered client, so with "auto" it gets one of the two.
	reg := o.conf.Registration
	auto := reg == "" || reg == mcpdoc.RegistrationAuto
	var pre *oauthex.ClientCredentials
	if o.conf.ClientID != "" && (auto || reg == mcpdoc.RegistrationPreregistered) {
		pre = &oauthex.ClientCredentials{ClientID: o.conf.ClientID}
		if o.secret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.secret}
		}
		cfg.PreregisteredClient = pre
	}
	metadataURL := o.conf.ClientMetadataURL
	if metadataURL == "" {
		metadataURL = o.setup.metadataURL
	}
	if metadataURL != "" && (auto && pre == nil || reg == mcpdoc.RegistrationMetadataDocument) {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: metadataURL}
	}
	if auto || reg == mcpdoc.RegistrationDynamic {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{o.redirect},
			ClientName:              "agt",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	if !o.login {
		ts, err := o.storedTokenSource(ctx)
		if err != nil {
			return nil, err
		}
		if ts != nil {
			cfg.InitialTokenSource = ts
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		// The go-sdk's text may quote a URL of the document: kept out.
		return nil, &Error{Ref: o.ref, Op: "connect", Kind: ErrInvalidServer,
			Detail: "the oauth settings cannot make a client registration (set client_id, client_metadata_url (an https URL with a path), or let registration be dynamic; RedirectURL must be an absolute URL)"}
	}
	ah := &authCodeHandler{inner: h, o: o}
	if pre != nil && pre.ClientSecretAuth != nil {
		ah.pre = pre
	}
	return ah, nil
}

// authCodeHandler keeps the interactive flow from starting when the
// connection has no Authorize step, its errors value-free, and the
// pre-registered client's secret away from an authorization server
// checkAuthServer refuses.
type authCodeHandler struct {
	inner *auth.AuthorizationCodeHandler
	o     *oauthSession
	// pre is the go-sdk's pre-registered client when it has a secret;
	// mu serialises the flows (which set its Issuer).
	pre *oauthex.ClientCredentials
	mu  sync.Mutex
}

func (h *authCodeHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return h.inner.TokenSource(ctx)
}

// failedBefore is the error of a flow that already failed in this
// connection (closing resp's body), or nil: a failed flow is not run
// again in the same connection. The era probe's fallback (initialize
// after server/discover) would otherwise ask the person, and the
// authorization server, twice; a grant without a person would retry a
// refused exchange (SEP-1933 says not to).
func (o *oauthSession) failedBefore(resp *http.Response) error {
	if o.loginRequired.Load() {
		resp.Body.Close()
		return ErrLoginRequired
	}
	if f := o.failure.Load(); f != nil {
		resp.Body.Close()
		return errors.New(*f)
	}
	return nil
}

func (h *authCodeHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if err := h.o.failedBefore(resp); err != nil {
		return err
	}
	if h.o.authorize == nil {
		defer resp.Body.Close()
		challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if resp.StatusCode == http.StatusForbidden && !insufficientScope(challenges) {
			return nil // not an authorization matter: the retry reports it
		}
		h.o.loginRequired.Store(true)
		return ErrLoginRequired
	}
	// The issuer the server names is checked here (a pre-registered
	// client's secret), and noted: the login stores it with the
	// credential (SEP-2352). With a secret it is then pinned in the
	// go-sdk's pre-registered client, which refuses any other issuer: an
	// answer that changes between the two discoveries gets no secret.
	h.mu.Lock()
	defer h.mu.Unlock()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode != http.StatusForbidden || insufficientScope(challenges) {
		prm, err := h.o.allowedAuthServer(ctx, challenges, req.URL.String())
		if err != nil {
			resp.Body.Close()
			return err
		}
		if h.pre != nil {
			h.pre.Issuer = prm.AuthorizationServers[0]
		}
	}
	if err := h.inner.Authorize(ctx, req, resp); err != nil {
		if h.o.loginRequired.Load() {
			return ErrLoginRequired
		}
		return h.o.fail("the OAuth authorization failed: " + oauthErrorText(err))
	}
	return nil
}

// insufficientScope reports whether a bearer challenge says
// insufficient_scope: the one 403 that is an authorization matter (a
// step-up); any other 403 is left to the retry to report.
func insufficientScope(cs []oauthex.Challenge) bool {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// fetchCode is the go-sdk's AuthorizationCodeFetcher: the host's step.
func (o *oauthSession) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	if o.authorize == nil {
		o.loginRequired.Store(true)
		return nil, ErrLoginRequired
	}
	res, err := o.authorize(ctx, o.ref, args.URL)
	if err != nil {
		// The host's text may hold what it read from the redirect.
		return nil, o.fail("the host's Authorize step failed")
	}
	// The go-sdk checks the iss against the issuer whose metadata it
	// used (RFC 9207, mix-up defence).
	return &auth.AuthorizationResult{Code: res.Code, State: res.State, Iss: res.Issuer}, nil
}

// oauthErrorText renders an error of the OAuth flow without values: the
// token endpoint's answer is reduced to its status and error code, URLs
// lose their path and query, quoted values and response bodies are
// dropped.
func oauthErrorText(err error) string {
	if errors.Is(err, errOAuthResponseTooLarge) {
		return errOAuthResponseTooLarge.Error()
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return retrieveErrorText(re)
	}
	msg := hideURLs(err).Error()
	if i := strings.Index(msg, "Response:"); i >= 0 {
		msg = msg[:i]
	}
	var b strings.Builder
	inQuote := false
	for _, r := range msg {
		switch {
		case r == '"':
			if !inQuote {
				b.WriteString("(value)")
			}
			inQuote = !inQuote
		case !inQuote:
			b.WriteRune(r)
		}
	}
	return boundServerText(strings.TrimSpace(b.String()))
}

func retrieveErrorText(re *oauth2.RetrieveError) string {
	s := "the token endpoint refused the request"
	if re.Response != nil {
		s += fmt.Sprintf(" (HTTP %d)", re.Response.StatusCode)
	}
	if code := re.ErrorCode; code != "" {
		if len(code) > 64 || strings.IndexFunc(code, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_') }) >= 0 {
			code = "(not a standard error code)"
		}
		s += " with error " + code
	}
	return s
}

// storeNewToken keeps the token a login obtained, with what refreshing it
// needs, and returns the token source that writes refreshes back.
func (o *oauthSession) storeNewToken(c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
	cred := storedCredential{Version: credentialVersion, Resource: o.resource, ClientID: c.ClientID,
		TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes}
	cred.Issuer = o.namedIssuer()
	if c.ClientID != o.conf.ClientID {
		cred.ClientSecret = c.ClientSecret // a dynamically registered client's
	}
	cred.setToken(t)
	o.dpop.setBound(t.TokenType)
	cred.DPoPKey = o.dpop.storedKey()
	b, err := json.Marshal(cred)
	if err != nil {
		return nil, err
	}
	ctx, cancel := o.setup.storeContext()
	defer cancel()
	if err := o.setup.tokens.Update(ctx, o.ref, func([]byte) ([]byte, error) { return b, nil }); err != nil {
		return nil, o.fail("storing the OAuth token failed (the token store's error is not shown)")
	}
	return &storeTokenSource{o: o, tok: t}, nil
}

// storedTokenSource returns the token source of the stored credential, or
// nil when none is usable for this server.
func (o *oauthSession) storedTokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	b, err := o.setup.tokens.Load(ctx, o.ref)
	if errors.Is(err, resource.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Ref: o.ref, Op: "connect", Kind: ErrStart, Detail: "reading the OAuth token store failed (its error is not shown)"}
	}
	cred, ok := decodeCredential(b)
	if !ok || !o.credentialUsable(cred) {
		return nil, nil
	}
	o.dpop.restore(cred)
	return &storeTokenSource{o: o, tok: cred.token()}, nil
}

// stillNamed reports whether the server still names issuer as its
// authorization server, before a refresh sends issuer the refresh token:
// the issuer this session discovered, else the server's protected
// resource metadata read now (one request per refresh; a server without
// one, or a credential without an issuer, is taken as unchanged).
func (o *oauthSession) stillNamed(ctx context.Context, issuer string) bool {
	if issuer == "" {
		return true
	}
	named := o.namedIssuer()
	if named == "" {
		prm, found := discoverResource(ctx, nil, o.resource, o.client)
		if !found || len(prm.AuthorizationServers) == 0 {
			return true
		}
		named = prm.AuthorizationServers[0]
	}
	return sameIssuer(named, issuer)
}

// storeTokenSource gives the stored token while it is valid, and refreshes
// it optimistically: it reads the stored credential, refreshes outside
// the store's lock (a refresh is an HTTP request; the store's Update must
// be quick), then writes the result only if the stored refresh token is
// still the one it used; otherwise another Run refreshed meanwhile and
// its token is taken. Within the process, the refreshes of one
// registration are serialised (oauthSetup.refreshLock), so two Runs of
// one host refresh once; the other registrations are not held up.
type storeTokenSource struct {
	o   *oauthSession
	mu  sync.Mutex
	tok *oauth2.Token // the token last given; the credential is read from the store at each refresh
}

// errRevoked makes the go-sdk transport send the request without a token
// (and so reach Authorize) rather than fail it.
var errRevoked = &oauth2.RetrieveError{ErrorCode: "invalid_grant"}

// errTokenStore: the token store failed; its error may quote a path or a
// value, so it is not shown.
var errTokenStore = errors.New("mcpconn: the OAuth token store failed (its error is not shown)")

// refreshLock returns the mutex that serialises the refreshes of ref in
// this Connector.
func (s *oauthSetup) refreshLock(ref resource.Ref) *sync.Mutex {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if s.refreshing == nil {
		s.refreshing = map[resource.Ref]*sync.Mutex{}
	}
	m := s.refreshing[ref]
	if m == nil {
		m = &sync.Mutex{}
		s.refreshing[ref] = m
	}
	return m
}

func (s *storeTokenSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok != nil && s.tok.Valid() {
		return s.tok, nil
	}
	lock := s.o.setup.refreshLock(s.o.ref)
	lock.Lock()
	defer lock.Unlock()
	ctx, cancel := s.o.setup.storeContext()
	defer cancel()

	b, err := s.o.setup.tokens.Load(ctx, s.o.ref)
	if err != nil && !errors.Is(err, resource.ErrNotFound) {
		return nil, errTokenStore
	}
	cred, ok := decodeCredential(b)
	if !ok || !s.o.credentialUsable(cred) {
		// Logged out meanwhile, or from an authorization server the
		// server no longer names: a new login replaces it.
		s.tok = nil
		return nil, errRevoked
	}
	stored := cred.token()
	s.o.dpop.restore(cred) // the key the stored token (or refresh token) is bound to
	if stored.Valid() && (s.tok == nil || stored.AccessToken != s.tok.AccessToken) {
		s.tok = stored // refreshed by another Run
		return stored, nil
	}
	if stored.RefreshToken == "" {
		s.tok = nil
		return nil, errRevoked
	}
	used := stored.RefreshToken
	if !s.o.stillNamed(ctx, cred.Issuer) {
		// The server moved to another authorization server (SEP-2352):
		// the refresh token and client stay with theirs, unused, and the
		// request without a token leads to a new registration and login.
		s.tok = nil
		return nil, errRevoked
	}

	secret := cred.ClientSecret
	if cred.ClientID == s.o.conf.ClientID {
		secret = s.o.secret // credentialUsable applied checkAuthServer's rule
	}
	conf := &oauth2.Config{ClientID: cred.ClientID, ClientSecret: secret, Scopes: cred.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: cred.TokenURL, AuthStyle: oauth2.AuthStyle(cred.AuthStyle)}}
	expired := *stored
	expired.Expiry = time.Unix(1, 0) // force the refresh
	rctx := context.WithValue(ctx, oauth2.HTTPClient, s.o.client)
	t, refreshErr := conf.TokenSource(rctx, &expired).Token()
	revoked := false
	if refreshErr != nil {
		var re *oauth2.RetrieveError
		revoked = errors.As(refreshErr, &re) && (re.ErrorCode == "invalid_grant" || re.Response != nil && (re.Response.StatusCode == http.StatusBadRequest || re.Response.StatusCode == http.StatusUnauthorized))
		if !revoked {
			return nil, errors.New("mcpconn: refreshing the OAuth token failed: " + oauthErrorText(refreshErr))
		}
	}

	// Write back only over the credential the refresh started from.
	var out *oauth2.Token
	gone := false
	err = s.o.setup.tokens.Update(ctx, s.o.ref, func(old []byte) ([]byte, error) {
		out, gone = nil, false
		now, ok := decodeCredential(old)
		switch {
		case ok && now.Resource == s.o.resource && now.token() == nil && !revoked && now.RefusedRefresh == refreshDigest(used):
			// Another Run's refresh of the same token was refused
			// because this one rotated it: this token is the live one.
		case !ok || now.Resource != s.o.resource || now.token() == nil:
			gone = true // logged out meanwhile: stays so
			return old, nil
		case now.RefreshToken != used:
			// Another Run (another process) refreshed meanwhile.
			if tok := now.token(); tok.Valid() {
				out = tok
			} else {
				gone = true
			}
			return old, nil
		case revoked:
			// Revoked or expired: the token is gone, the client
			// registration stays for the next login.
			now.AccessToken, now.RefreshToken, now.Expiry = "", "", time.Time{}
			now.RefusedRefresh = refreshDigest(used)
			gone = true
			return json.Marshal(now)
		}
		now.setToken(t)
		now.RefusedRefresh = ""
		out = t
		return json.Marshal(now)
	})
	if err != nil {
		if refreshErr != nil {
			return nil, errTokenStore
		}
		// The refresh succeeded and its refresh token may have rotated
		// the stored one away: this connection keeps the new token in
		// memory rather than lose it with the write.
		s.o.dpop.setBound(t.TokenType)
		s.tok = t
		return t, nil
	}
	if gone || out == nil {
		s.tok = nil
		return nil, errRevoked
	}
	s.o.dpop.setBound(out.TokenType)
	s.tok = out
	return out, nil
}

// oauthFor prepares the OAuth state of a connection to srv, or nil when
// its document has no oauth.
func (c *Connector) oauthFor(ctx context.Context, s *Session, srv resource.MCPServer, login *LoginOptions) (*oauthSession, error) {
	if srv.OAuth == nil {
		return nil, nil
	}
	bind := resourcefn.BindSecrets(&c.launchEnv, ctx, string(s.ref))
	secret, err := resourcefn.ResolveOAuthSecret("client_secret", srv.OAuth.ClientSecret, bind)
	if se := secretError(s.ref, err); se != nil {
		return nil, se
	}
	key, err := resourcefn.ResolveOAuthSecret("private_key", srv.OAuth.PrivateKey, bind)
	if se := secretError(s.ref, err); se != nil {
		return nil, se
	}
	idpSecret, err := resourcefn.ResolveOAuthSecret("idp_client_secret", srv.OAuth.IdPClientSecret, bind)
	if se := secretError(s.ref, err); se != nil {
		return nil, se
	}
	d := &dpopState{}
	shared := c.oauth.clientFor(ctx, srv.URL)
	client := *shared
	client.Transport = &dpopTokenTransport{base: shared.Transport, d: d}
	o := &oauthSession{setup: c.oauth, ref: s.ref, resource: srv.URL, conf: srv.OAuth, secret: secret, key: key, idpSecret: idpSecret,
		authorize: c.oauth.authorize, redirect: c.oauth.redirectURL, client: &client, dpop: d, secrets: &c.launchEnv}
	if login != nil {
		o.login = true
		if login.Authorize != nil {
			o.authorize = login.Authorize
		}
		if login.RedirectURL != "" {
			o.redirect = login.RedirectURL
		}
	}
	return o, nil
}

// Login runs the OAuth login of the server srv stored under ref now: it
// connects with the interactive step (opts.Authorize, else
// OAuthOptions.Authorize), lists the tools, closes, and keeps the
// credential in the token store; a stored token is not used. For the
// client_credentials grant it checks that a token is granted. The document
// must have an "oauth" field.
func (c *Connector) Login(ctx context.Context, ref resource.Ref, srv resource.MCPServer, opts *LoginOptions) error {
	if srv.OAuth == nil {
		return &Error{Ref: ref, Op: "login", Kind: ErrInvalidServer, Detail: `the server's document has no "oauth" field: set "oauth": {} to use OAuth`}
	}
	if t := srv.Transport(); t != resource.TransportHTTP && t != resource.TransportSSE {
		return &Error{Ref: ref, Op: "login", Kind: ErrInvalidServer, Detail: `OAuth needs a remote server ("type": "http" or "sse")`}
	}
	if opts == nil {
		opts = &LoginOptions{}
	}
	if opts.Authorize == nil && c.oauth.authorize == nil && !grantWithoutPerson(srv.OAuth.Grant) {
		return &Error{Ref: ref, Op: "login", Kind: ErrInvalidServer, Detail: "a login needs an Authorize step: set LoginOptions.Authorize or OAuthOptions.Authorize"}
	}
	sess, err := c.connect(ctx, ref, srv, nil, opts)
	if err != nil {
		return err
	}
	defer sess.Close()
	_, err = sess.Tools(ctx)
	return err
}

// Logout deletes the credential stored for ref: the next connection to a
// server that requires OAuth needs a login.
func (c *Connector) Logout(ctx context.Context, ref resource.Ref) error {
	if err := c.oauth.tokens.Update(ctx, ref, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		return &Error{Ref: ref, Op: "logout", Detail: "the OAuth token store failed (its error is not shown)"}
	}
	return nil
}

// oauthRoundTripper does for the SSE transport, which has no OAuth hook,
// what the streamable transport does with its OAuthHandler: it adds the
// handler's token to each request and, on a 401 or 403, runs Authorize
// once and sends the request again.
type oauthRoundTripper struct {
	base     http.RoundTripper
	h        auth.OAuthHandler
	endpoint string // the server url, the resource the token is for
}

func (t *oauthRoundTripper) withToken(req *http.Request) (*http.Request, error) {
	req = req.Clone(req.Context())
	ts, err := t.h.TokenSource(req.Context())
	if err != nil || ts == nil {
		return req, err
	}
	tok, err := ts.Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
		// Sent without a token: the 401 leads to Authorize.
	case err != nil:
		return nil, err
	default:
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return req, nil
}

func (t *oauthRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	first, err := t.withToken(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(first)
	if err != nil || resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return resp, err
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil // cannot be sent again
	}
	// The resource is the server url, whatever endpoint answered.
	at := req.Clone(req.Context())
	if u, perr := url.Parse(t.endpoint); perr == nil {
		at.URL = u
	}
	if err := t.h.Authorize(req.Context(), at, resp); err != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	if again, err = t.withToken(again); err != nil {
		return nil, err
	}
	return t.base.RoundTrip(again)
}
