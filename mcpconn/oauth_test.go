package mcpconn_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// fakeAS is a small OAuth 2.1 authorization server on 127.0.0.1:
// metadata, dynamic registration, authorization with PKCE, and a token
// endpoint for authorization codes, rotating refresh tokens and client
// credentials. Every token it issues starts with "tok-" so a test can
// look for any of them in an output.
type fakeAS struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	n         int
	codes     map[string]string // code -> PKCE challenge
	access    map[string]time.Time
	scopeOf   map[string]string // code, access or refresh token -> granted scope
	asked     []string          // the scope of each authorization request
	refresh   map[string]bool   // live refresh tokens (single use)
	lifetime  time.Duration
	refreshes int
	revoked   bool
	clients   map[string]string // client id -> secret (pre-registered)
	lastAuth  string            // the client authentication of the last token request
	// credentialed counts the token requests that carried a client
	// secret (basic or form) or a client assertion.
	credentialed int
	// hold, when set, delays each refresh so that concurrent ones overlap.
	hold time.Duration
	// refreshArrived, when set, gets a value as a refresh request
	// arrives, which then waits until release is closed.
	refreshArrived chan struct{}
	release        chan struct{}
	// registerBody, when set, is the raw answer of the registration
	// endpoint.
	registerBody string
	// hits counts the requests the server received.
	hits atomic.Int64
	// jwtKey verifies the client assertions of private_key_jwt.
	jwtKey *ecdsa.PublicKey
	// jag is the identity assertion grant the jwt-bearer grant accepts.
	jag string
	// workload are the workload identity tokens the jwt-bearer grant
	// accepts with no client authentication; grants lists the grant_type
	// of each token request, assertions the assertion and resources the
	// resource of each jwt-bearer request, clientIDs its client_id.
	workload   map[string]bool
	grants     []string
	assertions []string
	resources  []string
	clientIDs  []string
	// issParam, when set, advertises
	// authorization_response_iss_parameter_supported and adds iss to
	// the authorization redirect (RFC 9207).
	issParam bool
	// tag, when set, goes into every value the server issues after the
	// prefix (tok-access-TAG1), telling two servers' values apart.
	tag string
	// cimd, when set, advertises client_id_metadata_document_supported.
	cimd bool
	// dpop, when set, advertises DPoP (dpop_signing_alg_values_supported
	// ES256); the tokens stay Bearer tokens unless a test changes them.
	dpop bool
}

func newFakeAS(t *testing.T) *fakeAS {
	a := &fakeAS{t: t, codes: map[string]string{}, access: map[string]time.Time{}, refresh: map[string]bool{}, scopeOf: map[string]string{},
		lifetime: time.Hour, clients: map[string]string{"m2m": "tok-client-secret"}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		base := a.srv.URL
		md := map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"read", "offline_access"},
			"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "private_key_jwt"}}
		a.mu.Lock()
		if a.issParam {
			md["authorization_response_iss_parameter_supported"] = true
		}
		if a.cimd {
			md["client_id_metadata_document_supported"] = true
		}
		if a.dpop {
			md["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		a.mu.Unlock()
		writeJSON(w, md)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		raw := a.registerBody
		a.mu.Unlock()
		if raw != "" {
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, raw)
			return
		}
		var md map[string]any
		_ = json.NewDecoder(r.Body).Decode(&md)
		md["client_id"] = a.next("dyn-")
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, md)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("resource") == "" {
			http.Error(w, "PKCE and resource required", http.StatusBadRequest)
			return
		}
		code := a.next("code-")
		a.mu.Lock()
		a.codes[code] = q.Get("code_challenge")
		a.scopeOf[code] = q.Get("scope")
		a.asked = append(a.asked, q.Get("scope"))
		issParam := a.issParam
		a.mu.Unlock()
		redirect := q.Get("redirect_uri") + "?code=" + code + "&state=" + url.QueryEscape(q.Get("state"))
		if issParam {
			redirect += "&iss=" + url.QueryEscape(a.srv.URL)
		}
		http.Redirect(w, r, redirect, http.StatusFound)
	})
	mux.HandleFunc("/token", a.token)
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAS) next(prefix string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	return fmt.Sprintf("%s%s%d", prefix, a.tag, a.n)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (a *fakeAS) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	a.mu.Lock()
	if _, p, ok := r.BasicAuth(); ok && p != "" || r.Form.Get("client_secret") != "" || r.Form.Get("client_assertion") != "" {
		a.credentialed++
	}
	if u, _, ok := r.BasicAuth(); ok {
		a.lastAuth = "basic:" + u
	} else if r.Form.Get("client_assertion") != "" {
		a.lastAuth = "jwt"
	} else {
		a.lastAuth = "none"
	}
	hold, arrived, release := a.hold, a.refreshArrived, a.release
	a.grants = append(a.grants, r.Form.Get("grant_type"))
	a.mu.Unlock()
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": "echo " + r.Form.Encode()})
	}
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		a.mu.Lock()
		challenge, ok := a.codes[r.Form.Get("code")]
		delete(a.codes, r.Form.Get("code"))
		a.mu.Unlock()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			fail("invalid_grant")
			return
		}
	case "refresh_token":
		time.Sleep(hold)
		if arrived != nil {
			arrived <- struct{}{}
			<-release
		}
		a.mu.Lock()
		live := a.refresh[r.Form.Get("refresh_token")] && !a.revoked
		delete(a.refresh, r.Form.Get("refresh_token")) // rotation: single use
		a.refreshes++
		a.mu.Unlock()
		if !live {
			fail("invalid_grant")
			return
		}
	case "client_credentials":
		u, p, ok := r.BasicAuth()
		switch {
		case ok && a.clients[u] == p:
		case !ok && a.jwtKey != nil && a.validAssertion(r.Form.Get("client_assertion")):
		default:
			fail("invalid_client")
			return
		}
		access := a.issueAccess()
		writeJSON(w, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(a.lifetime.Seconds())})
		return
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		a.mu.Lock()
		jag := a.jag
		a.assertions = append(a.assertions, r.Form.Get("assertion"))
		a.resources = append(a.resources, r.Form.Get("resource"))
		a.clientIDs = append(a.clientIDs, r.Form.Get("client_id"))
		workload := a.workload[r.Form.Get("assertion")]
		a.mu.Unlock()
		if workload {
			access := a.issueAccess()
			writeJSON(w, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(a.lifetime.Seconds())})
			return
		}
		u, p, ok := r.BasicAuth()
		if !ok || a.clients[u] != p || jag == "" || r.Form.Get("assertion") != jag {
			fail("invalid_grant")
			return
		}
		access := a.issueAccess()
		writeJSON(w, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(a.lifetime.Seconds())})
		return
	default:
		fail("unsupported_grant_type")
		return
	}
	access := a.issueAccess()
	refresh := a.next("tok-refresh-")
	a.mu.Lock()
	a.refresh[refresh] = true
	scope := a.scopeOf[r.Form.Get("code")] + a.scopeOf[r.Form.Get("refresh_token")]
	a.scopeOf[access], a.scopeOf[refresh] = scope, scope
	a.mu.Unlock()
	writeJSON(w, map[string]any{"access_token": access, "token_type": "Bearer", "refresh_token": refresh, "expires_in": int(a.lifetime.Seconds())})
}

// validAssertion checks a client assertion of private_key_jwt: ES256
// signed by jwtKey, for client m2m, with this server as audience.
func (a *fakeAS) validAssertion(jwt string) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return false
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(a.jwtKey, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return false
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Iss, Sub, Aud string
		Exp           int64
	}
	return json.Unmarshal(payload, &claims) == nil && claims.Iss == "m2m" && claims.Sub == "m2m" && claims.Aud == a.srv.URL && claims.Exp > time.Now().Unix()
}

func (a *fakeAS) issueAccess() string {
	access := a.next("tok-access-")
	a.mu.Lock()
	a.access[access] = time.Now().Add(a.lifetime)
	a.mu.Unlock()
	return access
}

func (a *fakeAS) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.access[token]
	if !ok || time.Now().After(exp) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Expiration: exp, Scopes: strings.Fields(a.scopeOf[token])}, nil
}

// protectedServer starts a go-sdk streamable MCP server on 127.0.0.1 that
// requires a bearer token of as, with its protected resource metadata;
// it returns the MCP endpoint.
func protectedServer(t *testing.T, as *fakeAS) string {
	return protectedServerOf(t, as, resource.TransportHTTP)
}

// protectedServerOf is protectedServer of transport typ ("http" at /mcp,
// "sse" at /sse).
func protectedServerOf(t *testing.T, as *fakeAS, typ string) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	path := "/mcp"
	if typ == resource.TransportSSE {
		h, path = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil), "/sse"
	}
	return serveProtected(t, as, path, h)
}

// serveProtected serves h at path on 127.0.0.1, behind a bearer token of
// as, with its protected resource metadata; it returns the endpoint.
func serveProtected(t *testing.T, as *fakeAS, path string, h http.Handler) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource"+path, func(w http.ResponseWriter, r *http.Request) {
		// The resource as the client named the server (a test may reach
		// it by another name).
		writeJSON(w, map[string]any{"resource": "http://" + r.Host + path, "authorization_servers": []string{as.srv.URL}})
	})
	mux.Handle(path, auth.RequireBearerToken(as.verify, nil)(h))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + path
}

// followAuthorization is the host's Authorize step of the tests: it
// follows the authorization URL without following the final redirect,
// and reads code, state and iss from its Location.
func followAuthorization(ctx context.Context, _ resource.Ref, authURL string) (mcpconn.AuthorizationResponse, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return mcpconn.AuthorizationResponse{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return mcpconn.AuthorizationResponse{}, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return mcpconn.AuthorizationResponse{}, fmt.Errorf("no code in the redirect (status %d)", resp.StatusCode)
	}
	q := loc.Query()
	return mcpconn.AuthorizationResponse{Code: q.Get("code"), State: q.Get("state"), Issuer: q.Get("iss")}, nil
}

type oauthFixture struct {
	as     *fakeAS
	srv    resource.MCPServer
	tokens resource.TokenStore
	c      *mcpconn.Connector
}

func newOAuthFixture(t *testing.T) *oauthFixture {
	as := newFakeAS(t)
	f := &oauthFixture{as: as, tokens: resource.NewMemoryTokenStore()}
	f.srv = resource.MCPServer{Type: resource.TransportHTTP, URL: protectedServer(t, as), OAuth: &resource.MCPOAuth{}}
	f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: f.tokens}})
	return f
}

func (f *oauthFixture) login(t *testing.T) {
	t.Helper()
	if err := f.c.Login(context.Background(), "remote", f.srv, &mcpconn.LoginOptions{Authorize: followAuthorization}); err != nil {
		t.Fatalf("Login: %v", err)
	}
}

// newExpiredLogin returns a fixture logged in whose stored access token
// has expired, so the next Connect refreshes it.
func newExpiredLogin(t *testing.T) *oauthFixture {
	t.Helper()
	f := newOAuthFixture(t)
	f.login(t)
	expireStored(t, f.tokens)
	return f
}

// set changes the authorization server's behaviour under its lock.
func (a *fakeAS) set(change func(a *fakeAS)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	change(a)
}

// callAtOnce runs callHello on each fixture concurrently and returns
// their errors.
func callAtOnce(t *testing.T, fs ...*oauthFixture) []error {
	errs := make(chan error, len(fs))
	for _, f := range fs {
		go func() { errs <- f.callHello(t) }()
	}
	out := make([]error, 0, len(fs))
	for range fs {
		out = append(out, <-errs)
	}
	return out
}

// callHello connects without an interactive step and calls the tool.
func (f *oauthFixture) callHello(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := f.c.Connect(ctx, "remote", f.srv, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "hello", []byte(`{}`))
	if err != nil {
		return err
	}
	if resultText(res) != "hi" {
		t.Errorf("hello = %q", resultText(res))
	}
	return nil
}

func (f *oauthFixture) stored(t *testing.T) map[string]any {
	t.Helper()
	b, err := f.tokens.Load(context.Background(), "remote")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Without a login, a Connect fails at once with ErrLoginRequired, without
// registering a client; after a login (dynamic registration, PKCE), the
// stored token serves the next Connects with no interactive step.
func TestOAuthLoginThenStoredToken(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	err := f.callHello(t)
	if !errors.Is(err, mcpconn.ErrLoginRequired) {
		t.Fatalf("Connect before login: %v, want ErrLoginRequired", err)
	}
	if !strings.Contains(err.Error(), "remote") || strings.Contains(err.Error(), "agt mcp") {
		t.Errorf("error does not name the ref, or names the CLI: %v", err)
	}
	if f.as.n != 0 {
		t.Errorf("the authorization server was contacted %d times without a login step", f.as.n)
	}
	f.login(t)
	m := f.stored(t)
	if !strings.HasPrefix(fmt.Sprint(m["client_id"]), "dyn-") || !strings.HasPrefix(fmt.Sprint(m["refresh_token"]), "tok-refresh-") || m["resource"] != f.srv.URL {
		t.Fatalf("stored credential = %v", m)
	}
	issued := f.as.n
	for range 2 {
		if err := f.callHello(t); err != nil {
			t.Fatalf("Connect with the stored token: %v", err)
		}
	}
	if f.as.n != issued {
		t.Errorf("the authorization server issued %d more items for connections with a valid stored token", f.as.n-issued)
	}
	if err := f.c.Logout(context.Background(), "remote"); err != nil {
		t.Fatal(err)
	}
	if err := f.callHello(t); !errors.Is(err, mcpconn.ErrLoginRequired) {
		t.Fatalf("Connect after logout: %v, want ErrLoginRequired", err)
	}
}

// A token stored for another url is not sent to this one.
func TestOAuthStoredTokenBoundToURL(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	f.login(t)
	other := *f.srv.OAuth
	moved := f.srv
	moved.OAuth = &other
	moved.URL = f.srv.URL + "?tenant=other"
	f.srv = moved
	if err := f.callHello(t); !errors.Is(err, mcpconn.ErrLoginRequired) {
		t.Fatalf("Connect to another url with the stored token: %v, want ErrLoginRequired", err)
	}
}

// An expired token is refreshed with the refresh token, and the new pair
// is written back: the next Connect uses it without another refresh.
func TestOAuthRefreshWrittenBack(t *testing.T) {
	t.Parallel()
	f := newExpiredLogin(t)
	old := f.stored(t)["refresh_token"]
	if err := f.callHello(t); err != nil {
		t.Fatalf("Connect with an expired token: %v", err)
	}
	m := f.stored(t)
	if m["refresh_token"] == old || f.as.refreshes != 1 {
		t.Fatalf("after the refresh: stored refresh token %v (old %v), %d refreshes", m["refresh_token"], old, f.as.refreshes)
	}
	if err := f.callHello(t); err != nil || f.as.refreshes != 1 {
		t.Fatalf("second Connect: %v, %d refreshes (want 1)", err, f.as.refreshes)
	}
}

// expireStored makes the stored access token expired.
func expireStored(t *testing.T, tokens resource.TokenStore) {
	t.Helper()
	expireStoredRef(t, tokens, "remote")
}

func expireStoredRef(t *testing.T, tokens resource.TokenStore, ref resource.Ref) {
	t.Helper()
	err := tokens.Update(context.Background(), ref, func(old []byte) ([]byte, error) {
		var m map[string]any
		if err := json.Unmarshal(old, &m); err != nil {
			return nil, err
		}
		m["expiry"] = time.Now().Add(-time.Hour)
		return json.Marshal(m)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A revoked grant (the refresh fails with invalid_grant) is a login
// required, and the token is dropped from the store.
func TestOAuthRevokedNeedsLogin(t *testing.T) {
	t.Parallel()
	f := newExpiredLogin(t)
	f.as.set(func(a *fakeAS) { a.revoked = true })
	err := f.callHello(t)
	if !errors.Is(err, mcpconn.ErrLoginRequired) {
		t.Fatalf("Connect after revocation: %v, want ErrLoginRequired", err)
	}
	if m := f.stored(t); m["refresh_token"] != nil || m["access_token"] != nil {
		t.Errorf("the revoked token stays stored: %v", m)
	}
}

// Two Runs whose token expired refresh at once: the refresh tokens are
// single use, so the second must take the token the first wrote back
// rather than spend the old refresh token again (which would fail).
func TestOAuthConcurrentRefresh(t *testing.T) {
	t.Parallel()
	f := newExpiredLogin(t)
	f.as.set(func(a *fakeAS) { a.hold = 200 * time.Millisecond })
	for _, err := range callAtOnce(t, f, f) {
		if err != nil {
			t.Errorf("concurrent Connect: %v", err)
		}
	}
	if f.as.refreshes != 1 {
		t.Errorf("%d refreshes, want 1", f.as.refreshes)
	}
	if err := f.callHello(t); err != nil {
		t.Errorf("Connect after the concurrent refreshes: %v", err)
	}
}

// signingKey is a fresh P-256 key and its PKCS #8 PEM, the form a
// private_key_jwt client is registered with.
func signingKey(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// The client_credentials grant: the pre-registered client gets a token
// with its secret (client_secret_basic) or a signed assertion
// (private_key_jwt), with no person and nothing stored.
func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	key, keyPEM := signingKey(t)
	for _, tc := range []struct {
		name     string
		oauth    resource.MCPOAuth
		wantAuth string
	}{
		{"client_secret_basic", resource.MCPOAuth{Grant: "client_credentials", ClientID: "m2m", ClientSecret: "${secret:m2m}", TokenEndpointAuth: "client_secret_basic"}, "basic:m2m"},
		{"private_key_jwt", resource.MCPOAuth{Grant: "client_credentials", ClientID: "m2m", PrivateKey: "${secret:m2m.key}", TokenEndpointAuth: "private_key_jwt"}, "jwt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newOAuthFixture(t)
			f.as.jwtKey = &key.PublicKey
			f.srv.OAuth = &tc.oauth
			f.srv.OAuth.AuthorizationServer = f.as.srv.URL
			f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{
				OAuth:     &mcpconn.OAuthOptions{Tokens: f.tokens},
				LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"m2m": "tok-client-secret", "m2m.key": keyPEM}}},
			})
			if err := f.callHello(t); err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if f.as.lastAuth != tc.wantAuth {
				t.Errorf("client authentication = %q, want %q", f.as.lastAuth, tc.wantAuth)
			}
			if _, err := f.tokens.Load(context.Background(), "remote"); !errors.Is(err, resource.ErrNotFound) {
				t.Errorf("client credentials stored a token: %v", err)
			}
		})
	}
}

// A wrong client secret fails the connection with a value-free error.
func TestOAuthClientCredentialsRefused(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	f.srv.OAuth = &resource.MCPOAuth{Grant: "client_credentials", ClientID: "m2m", ClientSecret: "${secret:m2m}", AuthorizationServer: f.as.srv.URL}
	f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"m2m": "tok-wrong-secret"}}}})
	err := f.callHello(t)
	if !errors.Is(err, mcpconn.ErrUnauthorized) || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("Connect with a wrong secret: %v, want ErrUnauthorized naming invalid_client", err)
	}
	assertNoTokens(t, "error", err.Error())
}

// assertNoTokens fails if text holds a token, code or secret of the
// fake authorization server (all start with "tok-" or "code-").
func assertNoTokens(t *testing.T, what, text string) {
	t.Helper()
	for _, needle := range []string{"tok-", "code-", "code_verifier", "PRIVATE KEY"} {
		if strings.Contains(text, needle) {
			t.Errorf("%s holds %q: %s", what, needle, text)
		}
	}
}

// No token, code or secret appears in any error of the flows, even when
// the token endpoint echoes the request (as the fake's error_description
// does), nor in a probe report.
func TestOAuthNoTokenInOutput(t *testing.T) {
	t.Parallel()
	f := newExpiredLogin(t)
	f.as.set(func(a *fakeAS) { a.revoked = true })
	err := f.callHello(t)
	if err == nil {
		t.Fatal("Connect after revocation succeeded")
	}
	assertNoTokens(t, "revoked error", err.Error())

	// A login whose code the token endpoint refuses.
	bad := func(ctx context.Context, ref resource.Ref, u string) (mcpconn.AuthorizationResponse, error) {
		res, err := followAuthorization(ctx, ref, u)
		res.Code = "code-forged"
		return res, err
	}
	err = f.c.Login(context.Background(), "remote", f.srv, &mcpconn.LoginOptions{Authorize: bad})
	if err == nil {
		t.Fatal("Login with a forged code succeeded")
	}
	assertNoTokens(t, "login error", err.Error())
	if !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("login error does not say what the token endpoint answered: %v", err)
	}

	// Probe reports of the server, without and with a login.
	repo := newMemRepo()
	repo.store(t, "remote", f.srv)
	for _, login := range []bool{false, true} {
		if login {
			f.login(t)
		}
		rep, _ := mcpconn.NewProber(repo, f.c, nil).Probe(context.Background(), "remote")
		b, _ := json.Marshal(rep)
		assertNoTokens(t, "probe report", string(b))
		if rep == nil || rep.OK != login {
			t.Errorf("probe report (login %v) = %s", login, b)
		}
	}
}

// The authorization server is hostile too: an endless metadata document
// fails the login at MaxResponseBytes.
func TestOAuthResponseBounded(t *testing.T) {
	t.Parallel()
	as := newFakeAS(t)
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer": "`))
		chunk := []byte(strings.Repeat("x", 32<<10))
		for i := 0; i < 4096 && r.Context().Err() == nil; i++ { // 128 MiB at most
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(endless.Close)
	as.srv.Close()
	as.srv = endless
	srv := resource.MCPServer{Type: resource.TransportHTTP, URL: protectedServer(t, as), OAuth: &resource.MCPOAuth{}}
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{MaxResponseBytes: 64 << 10}})
	start := time.Now()
	err := c.Login(context.Background(), "remote", srv, &mcpconn.LoginOptions{Authorize: followAuthorization})
	if err == nil || !strings.Contains(err.Error(), "MaxResponseBytes") {
		t.Fatalf("Login against an endless metadata document: %v, want the response bound", err)
	}
	t.Logf("failed after %v: %v", time.Since(start), err)
}

// A login with a pre-registered client sends its secret to the token
// endpoint but never stores it: it stays behind its reference, and the
// refresh resolves it again.
func TestOAuthPreregisteredSecretNotStored(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	f.srv.OAuth = &resource.MCPOAuth{ClientID: "m2m", ClientSecret: "${secret:m2m}", Registration: "preregistered", AuthorizationServer: f.as.srv.URL}
	f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		OAuth:     &mcpconn.OAuthOptions{Tokens: f.tokens},
		LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"m2m": "tok-client-secret"}}},
	})
	f.login(t)
	if f.as.lastAuth != "basic:m2m" {
		t.Errorf("token request authenticated as %q, want basic:m2m", f.as.lastAuth)
	}
	b, _ := f.tokens.Load(context.Background(), "remote")
	if strings.Contains(string(b), "tok-client-secret") || !strings.Contains(string(b), `"client_id":"m2m"`) {
		t.Errorf("stored credential = %s: want the client id and no secret", b)
	}
	expireStored(t, f.tokens)
	if err := f.callHello(t); err != nil || f.as.lastAuth != "basic:m2m" {
		t.Errorf("refresh with the pre-registered client: %v, authenticated as %q", err, f.as.lastAuth)
	}
}

// An authorization server that never answers costs one
// OAuthOptions.RequestTimeout per request, not the startup timeout.
func TestOAuthRequestTimeout(t *testing.T) {
	t.Parallel()
	as := newFakeAS(t)
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	t.Cleanup(stuck.Close)
	as.srv.Close()
	as.srv = stuck
	srv := resource.MCPServer{Type: resource.TransportHTTP, URL: protectedServer(t, as), OAuth: &resource.MCPOAuth{}}
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{RequestTimeout: 200 * time.Millisecond}})
	start := time.Now()
	err := c.Login(context.Background(), "remote", srv, &mcpconn.LoginOptions{Authorize: followAuthorization})
	took := time.Since(start)
	if err == nil || took > 20*time.Second {
		t.Fatalf("Login against a stuck authorization server: %v after %v", err, took)
	}
	assertNoTokens(t, "error", err.Error())
	t.Logf("failed after %v: %v", took, err)
}

// An authorization server that advertises the RFC 9207 iss parameter is
// usable: the login succeeds when the host's Authorize step returns the
// redirect's iss, and fails, naming neither issuer, when the step returns
// another issuer (a mix-up) or none.
func TestOAuthLoginIssuer(t *testing.T) {
	t.Parallel()
	const forged = "https://forged-issuer.example/as"
	for _, tt := range []struct {
		name    string
		issuer  func(redirected string) string
		wantErr bool
	}{
		{"the redirect's iss", func(iss string) string { return iss }, false},
		{"another issuer", func(string) string { return forged }, true},
		{"no iss", func(string) string { return "" }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newOAuthFixture(t)
			f.as.set(func(a *fakeAS) { a.issParam = true })
			var redirected string
			authorize := func(ctx context.Context, ref resource.Ref, u string) (mcpconn.AuthorizationResponse, error) {
				res, err := followAuthorization(ctx, ref, u)
				redirected = res.Issuer
				res.Issuer = tt.issuer(res.Issuer)
				return res, err
			}
			err := f.c.Login(context.Background(), "remote", f.srv, &mcpconn.LoginOptions{Authorize: authorize})
			if redirected != f.as.srv.URL {
				t.Fatalf("the redirect's iss is %q, want the fake's issuer %q", redirected, f.as.srv.URL)
			}
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Login with the redirect's iss: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Login succeeded")
			}
			for _, v := range []string{forged, f.as.srv.URL, strings.TrimPrefix(f.as.srv.URL, "http://")} {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the error names the issuer %q: %v", v, err)
				}
			}
			assertNoTokens(t, "error", err.Error())
			// The token endpoint deletes a code it redeems.
			f.as.mu.Lock()
			unredeemed := len(f.as.codes)
			f.as.mu.Unlock()
			if unredeemed != 1 {
				t.Errorf("%d codes left unredeemed, want 1: the code went to the token endpoint despite the issuer check", unredeemed)
			}
			t.Logf("refused: %v", err)
		})
	}
}

// A login waits for the person's step up to LoginOptions.Timeout, not
// the document's startup timeout, and says which bound ended it.
func TestOAuthLoginTimeout(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	f.srv.StartupTimeoutMS = 50
	slow := func(ctx context.Context, ref resource.Ref, u string) (mcpconn.AuthorizationResponse, error) {
		select {
		case <-ctx.Done():
			return mcpconn.AuthorizationResponse{}, ctx.Err()
		case <-time.After(300 * time.Millisecond): // longer than startup_timeout_ms
		}
		return followAuthorization(ctx, ref, u)
	}
	if err := f.c.Login(context.Background(), "remote", f.srv, &mcpconn.LoginOptions{Authorize: slow}); err != nil {
		t.Fatalf("Login slower than startup_timeout_ms: %v", err)
	}
	stuck := func(ctx context.Context, _ resource.Ref, _ string) (mcpconn.AuthorizationResponse, error) {
		<-ctx.Done()
		return mcpconn.AuthorizationResponse{}, ctx.Err()
	}
	start := time.Now()
	err := f.c.Login(context.Background(), "remote", f.srv, &mcpconn.LoginOptions{Authorize: stuck, Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "LoginOptions.Timeout") || time.Since(start) > 20*time.Second {
		t.Fatalf("Login with a stuck step: %v after %v, want the login timeout", err, time.Since(start))
	}
}

// The SSE transport has no OAuth hook of the go-sdk: the same login,
// stored token and refresh work through agt's round tripper.
func TestOAuthSSE(t *testing.T) {
	t.Parallel()
	as := newFakeAS(t)
	tokens := resource.NewMemoryTokenStore()
	f := &oauthFixture{as: as, tokens: tokens,
		srv: resource.MCPServer{Type: resource.TransportSSE, URL: protectedServerOf(t, as, resource.TransportSSE), OAuth: &resource.MCPOAuth{}},
		c:   mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: tokens}})}
	if err := f.callHello(t); !errors.Is(err, mcpconn.ErrLoginRequired) {
		t.Fatalf("Connect before login: %v, want ErrLoginRequired", err)
	}
	f.login(t)
	if err := f.callHello(t); err != nil {
		t.Fatalf("Connect with the stored token: %v", err)
	}
	expireStored(t, tokens)
	if err := f.callHello(t); err != nil || as.refreshes != 1 {
		t.Fatalf("Connect with an expired token: %v, %d refreshes (want 1)", err, as.refreshes)
	}
}

// A damaged, oversized or foreign credential in the token store counts as
// no login: the Connect fails with ErrLoginRequired, nothing is sent. The
// store is a fake that gives the same bytes whatever is written (a
// damaged file the host's store reads back).
func TestOAuthDamagedStoredCredential(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	for _, stored := range [][]byte{
		[]byte(`{"v": 1, "resource": `),
		[]byte(`{"v": 2, "access_token": "tok-x"}`),
		append([]byte(`{"v": 1, "access_token": "`), append(make([]byte, mcpconn.MaxStoredCredentialBytes), '"', '}')...),
		[]byte(`[]`),
	} {
		f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: fixedTokenStore(stored)}})
		if err := f.callHello(t); !errors.Is(err, mcpconn.ErrLoginRequired) {
			t.Errorf("stored %.40q: Connect = %v, want ErrLoginRequired", stored, err)
		}
	}
}

// fixedTokenStore is a token store whose credential is the same bytes,
// whatever is written.
type fixedTokenStore []byte

func (s fixedTokenStore) Load(context.Context, resource.Ref) ([]byte, error) {
	return slices.Clone(s), nil
}

func (s fixedTokenStore) Update(_ context.Context, _ resource.Ref, f func([]byte) ([]byte, error)) error {
	_, err := f(slices.Clone(s))
	return err
}

// Step-up: a tool call answered 403 insufficient_scope runs the flow
// again (the host's Authorize set on the Connector) for the union of the
// scopes, once, and the call then succeeds.
func TestOAuthStepUp(t *testing.T) {
	t.Parallel()
	as := newFakeAS(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	var base string
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{as.srv.URL}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		need := "read"
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			need = "read write"
		}
		info, err := as.verify(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r)
		switch {
		case err != nil:
			w.Header().Set("WWW-Authenticate", `Bearer scope="read"`)
			w.WriteHeader(http.StatusUnauthorized)
		case !hasScopes(info.Scopes, strings.Fields(need)):
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+need+`"`)
			w.WriteHeader(http.StatusForbidden)
		default:
			h.ServeHTTP(w, r)
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	base = ts.URL
	f := &oauthFixture{as: as, tokens: resource.NewMemoryTokenStore(),
		srv: resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL + "/mcp", OAuth: &resource.MCPOAuth{}}}
	f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: f.tokens, Authorize: followAuthorization}})
	if err := f.callHello(t); err != nil {
		t.Fatalf("call needing a step-up: %v", err)
	}
	as.mu.Lock()
	var asked []string
	for _, a := range as.asked { // the go-sdk's scope union has no order
		fields := strings.Fields(a)
		slices.Sort(fields)
		asked = append(asked, strings.Join(fields, " "))
	}
	as.mu.Unlock()
	// offline_access: the authorization server offers it and agt keeps
	// refresh tokens.
	if diff := cmp.Diff([]string{"offline_access read", "offline_access read write"}, asked); diff != "" {
		t.Fatalf("scopes of the authorization requests (-want +got):\n%s", diff)
	}
}

func hasScopes(granted, need []string) bool {
	for _, n := range need {
		if !slices.Contains(granted, n) {
			return false
		}
	}
	return true
}

// The server's metadata names the authorization server: a configured
// client secret or key goes only to the issuer oauth.authorization_server
// pins, or with no pin to one on the server's origin. The fake
// authorization server is on another port of 127.0.0.1, so another
// origin: without the pin, or with a pin naming another issuer, its token
// endpoint never receives the secret or an assertion, and the error names
// the field to set and no value.
func TestOAuthSecretOnlyToPinnedAuthServer(t *testing.T) {
	t.Parallel()
	key, keyPEM := signingKey(t)
	const otherIssuer = "https://auth.example.com"
	for _, tc := range []struct {
		name  string
		oauth resource.MCPOAuth
		pin   string // "as" is the fake authorization server's URL
		ok    bool
	}{
		{"authorization code, no pin", resource.MCPOAuth{ClientID: "m2m", ClientSecret: "${secret:m2m}", Registration: "preregistered"}, "", false},
		{"authorization code, other pin", resource.MCPOAuth{ClientID: "m2m", ClientSecret: "${secret:m2m}", Registration: "preregistered"}, otherIssuer, false},
		{"authorization code, pinned", resource.MCPOAuth{ClientID: "m2m", ClientSecret: "${secret:m2m}", Registration: "preregistered"}, "as", true},
		{"client secret basic, no pin", resource.MCPOAuth{Grant: "client_credentials", ClientID: "m2m", ClientSecret: "${secret:m2m}", TokenEndpointAuth: "client_secret_basic"}, "", false},
		{"client secret post, other pin", resource.MCPOAuth{Grant: "client_credentials", ClientID: "m2m", ClientSecret: "${secret:m2m}", TokenEndpointAuth: "client_secret_post"}, otherIssuer, false},
		{"private key jwt, no pin", resource.MCPOAuth{Grant: "client_credentials", ClientID: "m2m", PrivateKey: "${secret:m2m.key}", TokenEndpointAuth: "private_key_jwt"}, "", false},
		{"private key jwt, pinned", resource.MCPOAuth{Grant: "client_credentials", ClientID: "m2m", PrivateKey: "${secret:m2m.key}", TokenEndpointAuth: "private_key_jwt"}, "as", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newOAuthFixture(t)
			f.as.jwtKey = &key.PublicKey
			f.srv.OAuth = &tc.oauth
			f.srv.OAuth.AuthorizationServer = tc.pin
			if tc.pin == "as" {
				f.srv.OAuth.AuthorizationServer = f.as.srv.URL
			}
			f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{
				OAuth:     &mcpconn.OAuthOptions{Tokens: f.tokens, Authorize: followAuthorization},
				LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"m2m": "tok-client-secret", "m2m.key": keyPEM}}},
			})
			err := f.callHello(t)
			f.as.mu.Lock()
			credentialed := f.as.credentialed
			f.as.mu.Unlock()
			if tc.ok {
				if err != nil || credentialed == 0 {
					t.Fatalf("Connect with the pin: %v, %d credentialed token requests", err, credentialed)
				}
				return
			}
			if credentialed != 0 {
				t.Errorf("the unpinned authorization server received the client credential %d times", credentialed)
			}
			if !errors.Is(err, mcpconn.ErrUnauthorized) || !strings.Contains(err.Error(), "oauth.authorization_server") {
				t.Fatalf("Connect: %v, want ErrUnauthorized naming oauth.authorization_server", err)
			}
			assertNoTokens(t, "error", err.Error())
			if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "example.com") {
				t.Errorf("the error quotes a URL: %v", err)
			}
		})
	}
}

// A refresh is an HTTP request of unbounded duration (up to the request
// timeout): it must not hold the token store. While the token endpoint
// keeps registration a's refresh waiting, the store answers at once:
// registration b, whose token is valid, connects, and another opener of
// the bbolt file gets its lock.
func TestOAuthRefreshDoesNotHoldTheStore(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"memory", "bolt"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := newOAuthFixture(t)
			path := filepath.Join(t.TempDir(), "tokens.db")
			if kind == "bolt" {
				store, err := boltrepo.OpenTokenStore(path, &boltrepo.TokenStoreOptions{NoSync: true, LockTimeout: 10 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { store.Close() })
				f.tokens = store
				f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: f.tokens}})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, ref := range []resource.Ref{"a", "b"} {
				if err := f.c.Login(ctx, ref, f.srv, &mcpconn.LoginOptions{Authorize: followAuthorization}); err != nil {
					t.Fatalf("Login %s: %v", ref, err)
				}
			}
			expireStoredRef(t, f.tokens, "a")
			arrived, release := make(chan struct{}, 1), make(chan struct{})
			f.as.set(func(a *fakeAS) { a.refreshArrived, a.release = arrived, release })
			released := false
			defer func() {
				if !released {
					close(release)
				}
			}()

			aDone := make(chan error, 1)
			go func() {
				s, err := f.c.Connect(ctx, "a", f.srv, nil)
				if err == nil {
					s.Close()
				}
				aDone <- err
			}()
			select {
			case <-arrived:
			case <-ctx.Done():
				t.Fatal("a's refresh never reached the token endpoint")
			}

			// a's refresh is held at the token endpoint from here on.
			bDone := make(chan error, 1)
			bStart := time.Now()
			go func() {
				s, err := f.c.Connect(ctx, "b", f.srv, nil)
				if err == nil {
					_, err = s.Tools(ctx)
					s.Close()
				}
				if err == nil && kind == "bolt" {
					var other *boltrepo.TokenStore
					other, err = boltrepo.OpenTokenStore(path, &boltrepo.TokenStoreOptions{NoSync: true, LockTimeout: 10 * time.Second})
					if err == nil {
						_, err = other.Load(ctx, "b")
						other.Close()
					}
				}
				bDone <- err
			}()
			select {
			case err := <-bDone:
				if err != nil {
					t.Errorf("b during a's refresh: %v", err)
				}
				t.Logf("b connected and listed (and reopened the store) in %s while a's refresh was held", time.Since(bStart))
			case <-aDone:
				t.Fatal("a's Connect ended before its refresh was released")
			case <-time.After(20 * time.Second):
				t.Fatal("b's Connect waited for a's refresh: the store is held during the HTTP call")
			}
			close(release)
			released = true
			if err := <-aDone; err != nil {
				t.Errorf("a after its refresh: %v", err)
			}
		})
	}
}

// Two Connectors on one store (as two processes) refresh at once: the
// rotating authorization server grants one refresh and refuses the reused
// refresh token; the loser takes the token the winner stored, or, if its
// refusal was stored first, the winner's token replaces that refusal: the
// login is never lost.
func TestOAuthConcurrentRefreshAcrossConnectors(t *testing.T) {
	t.Parallel()
	f := newExpiredLogin(t)
	f.as.set(func(a *fakeAS) { a.hold = 200 * time.Millisecond })
	second := &oauthFixture{as: f.as, srv: f.srv, tokens: f.tokens,
		c: mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: f.tokens}})}
	// The loser may find the login dropped if its refusal reached the
	// store before the winner's token: that Run fails, the login stays.
	failed := 0
	for _, err := range callAtOnce(t, f, second) {
		if err != nil {
			failed++
			if !errors.Is(err, mcpconn.ErrLoginRequired) {
				t.Errorf("concurrent Connect: %v", err)
			}
		}
	}
	if failed == 2 {
		t.Errorf("both concurrent Connects failed")
	}
	if err := second.callHello(t); err != nil {
		t.Errorf("Connect after the concurrent refreshes: %v", err)
	}
	if m := f.stored(t); m["refresh_token"] == nil || m["refresh_token"] == "" {
		t.Errorf("the stored credential lost its refresh token")
	}
}

// failingWrites is a token store whose writes fail once failing is set
// (a full disk, a lost database), over a working memory store.
type failingWrites struct {
	resource.TokenStore
	failing atomic.Bool
}

func (s *failingWrites) Update(ctx context.Context, ref resource.Ref, f func([]byte) ([]byte, error)) error {
	if s.failing.Load() {
		return errors.New("disk full")
	}
	return s.TokenStore.Update(ctx, ref, f)
}

// A refresh that succeeds while the store cannot be written keeps the new
// token in memory: the authorization server rotated the refresh token, so
// dropping the answer would lose the login for this connection.
func TestOAuthRefreshKeptWhenTheStoreWriteFails(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	store := &failingWrites{TokenStore: f.tokens}
	f.tokens = store
	f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: store}})
	f.login(t)
	expireStored(t, f.tokens)
	store.failing.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := f.c.Connect(ctx, "remote", f.srv, nil)
	if err != nil {
		t.Fatalf("Connect with a refresh the store cannot keep: %v", err)
	}
	defer s.Close()
	for i := range 2 {
		if _, err := s.CallTool(ctx, "hello", []byte(`{}`)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	f.as.mu.Lock()
	refreshes := f.as.refreshes
	f.as.mu.Unlock()
	if refreshes != 1 {
		t.Errorf("%d refreshes, want 1: the refreshed token was not kept", refreshes)
	}
}

// The 401 an SSE server answers goes to the OAuth flow, which drains its
// body: that body is bounded by MaxMessageBytes like every other one. The
// server would send 256 MiB; the client stops reading past the bound and
// the connection fails with ErrLimit.
func TestOAuthSSEChallengeBodyBounded(t *testing.T) {
	t.Parallel()
	as := newFakeAS(t)
	var written atomic.Int64
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/.well-known/oauth-protected-resource/sse", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": base + "/sse", "authorization_servers": []string{as.srv.URL}})
	})
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/sse"`)
		w.WriteHeader(http.StatusUnauthorized)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for range (256 << 20) / len(chunk) {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	base = ts.URL
	const maxMessage = 64 << 10
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		OAuth:  &mcpconn.OAuthOptions{Authorize: followAuthorization},
		Limits: &mcpconn.Limits{MaxMessageBytes: maxMessage}})
	srv := resource.MCPServer{Type: resource.TransportSSE, URL: ts.URL + "/sse", OAuth: &resource.MCPOAuth{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	s, err := c.Connect(ctx, "remote", srv, nil)
	if err == nil {
		s.Close()
	}
	elapsed := time.Since(start)
	if !errors.Is(err, mcpconn.ErrLimit) {
		t.Errorf("Connect to a server whose 401 never ends: %v, want ErrLimit", err)
	}
	// Socket buffers hold a few MiB at most beyond what the client read.
	if n := written.Load(); n > 32<<20 {
		t.Errorf("the server wrote %d bytes of its 401 before the client stopped; want the bound (%d) plus buffers", n, maxMessage)
	}
	t.Logf("error after %s; the server wrote %d bytes", elapsed, written.Load())
}

// The OAuth flow's URLs come from the server's metadata: an MCP server on
// a public address that names an authorization server on a loopback (or
// private) address gets no request sent there. The host's dialer maps
// example.com to the loopback test server, so the MCP server counts as
// public (by its name); the authorization server it names is 127.0.0.1
// and receives nothing.
func TestOAuthInternalAuthServerRefusedForPublicServer(t *testing.T) {
	t.Parallel()
	as := newFakeAS(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": "https://" + r.Host + "/mcp", "authorization_servers": []string{as.srv.URL}})
	})
	mux.Handle("/mcp", auth.RequireBearerToken(as.verify, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	ts := httptest.NewTLSServer(mux) // its certificate names example.com
	t.Cleanup(ts.Close)
	endpoint, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{}
	transport := ts.Client().Transport.(*http.Transport).Clone()
	transport.Proxy = nil
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil && host == "example.com" {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		return dialer.DialContext(ctx, network, addr)
	}
	t.Cleanup(transport.CloseIdleConnections)
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{HTTPTransport: transport,
		OAuth: &mcpconn.OAuthOptions{Authorize: followAuthorization}})
	srv := resource.MCPServer{Type: resource.TransportHTTP, URL: "https://example.com:" + endpoint.Port() + "/mcp", OAuth: &resource.MCPOAuth{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, "remote", srv, nil)
	if err == nil {
		s.Close()
		t.Fatal("Connect succeeded through an authorization server on a loopback address")
	}
	if !errors.Is(err, mcpconn.ErrUnauthorized) {
		t.Errorf("Connect: %v, want ErrUnauthorized", err)
	}
	if n := as.hits.Load(); n != 0 {
		t.Errorf("the loopback authorization server received %d requests", n)
	}
	t.Logf("Connect: %v", err)
}

// An authorization server's text that reaches an error (here a broken
// registration answer the go-sdk quotes) loses the control characters a
// terminal would act on: the CLI prints these errors.
func TestOAuthErrorHasNoControlCharacters(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	f.as.registerBody = "\x1b[2J\x1b]0;owned\x07\u202e not json"
	err := f.c.Login(context.Background(), "remote", f.srv, &mcpconn.LoginOptions{Authorize: followAuthorization})
	if err == nil {
		t.Fatal("Login with a broken registration answer succeeded")
	}
	if strings.ContainsAny(err.Error(), "\x1b\x07\u202e") {
		t.Errorf("the error carries control characters: %q", err.Error())
	}
}
