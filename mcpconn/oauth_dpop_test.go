package mcpconn_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dpopWorld is a fakeAS that supports DPoP (issue 26 item 5) and an MCP
// server that requires DPoP-bound tokens, checking every proof as RFC
// 9449 sections 4.3 and 7.1 say.
type dpopWorld struct {
	as  *fakeAS
	srv resource.MCPServer

	mu sync.Mutex
	// asNonce and rsNonce, when set, are demanded by the token endpoint
	// and the MCP server; endless makes the MCP server demand a new one
	// for every request.
	asNonce, rsNonce string
	endless          bool
	jkt              map[string]string // access token -> thumbprint it is bound to
	jtis             map[string]bool
	tokenProofs      int // token requests with a valid proof
	asChallenges     int
	rsChallenges     int
	dpopCalls        int // MCP requests with a valid DPoP token and proof
	// sends counts the MCP requests by token and body: a nonce
	// challenge is answered by sending the same request once more.
	sends map[string]int
	bad   []string
}

func (w *dpopWorld) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bad = append(w.bad, fmt.Sprintf(format, args...))
}

// checkProof verifies a proof for method and htu and returns its key's
// thumbprint (RFC 7638) and nonce.
func (w *dpopWorld) checkProof(r *http.Request, htu, accessToken string) (jkt, nonce string, err error) {
	vals := r.Header.Values("DPoP")
	if len(vals) != 1 {
		return "", "", fmt.Errorf("%d DPoP headers", len(vals))
	}
	var jwk map[string]any
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(vals[0], claims, func(t *jwt.Token) (any, error) {
		if t.Header["typ"] != "dpop+jwt" {
			return nil, errors.New("typ is not dpop+jwt")
		}
		jwk, _ = t.Header["jwk"].(map[string]any)
		if jwk == nil || jwk["d"] != nil || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
			return nil, errors.New("jwk is not a public P-256 key")
		}
		x, _ := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["x"]))
		y, _ := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["y"]))
		// The uncompressed point: 0x04, then X and Y of 32 bytes each.
		return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuedAt())
	if err != nil {
		return "", "", err
	}
	if claims["htm"] != r.Method || claims["htu"] != htu {
		return "", "", fmt.Errorf("htm %v htu %v, want %s %s", claims["htm"], claims["htu"], r.Method, htu)
	}
	if _, ok := claims["iat"].(float64); !ok {
		return "", "", errors.New("no iat")
	}
	jti, _ := claims["jti"].(string)
	want := ""
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		want = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if ath, _ := claims["ath"].(string); ath != want {
		return "", "", fmt.Errorf("ath %q, want %q", ath, want)
	}
	w.mu.Lock()
	seen := w.jtis[jti]
	w.jtis[jti] = true
	w.mu.Unlock()
	if jti == "" || seen {
		return "", "", fmt.Errorf("jti %q missing or reused", jti)
	}
	canon := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, jwk["x"], jwk["y"])
	sum := sha256.Sum256([]byte(canon))
	nonce, _ = claims["nonce"].(string)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nonce, nil
}

func newDPoPWorld(t *testing.T, asNonce, rsNonce string) *dpopWorld {
	as := newFakeAS(t)
	w := &dpopWorld{as: as, asNonce: asNonce, rsNonce: rsNonce, jkt: map[string]string{}, jtis: map[string]bool{}, sends: map[string]int{}}
	as.set(func(a *fakeAS) { a.dpop = true })
	inner := as.srv.Config.Handler
	as.srv.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token":
			jkt, nonce, err := w.checkProof(r, as.srv.URL+"/token", "")
			if err != nil {
				w.fail("token request proof: %v", err)
				rw.WriteHeader(http.StatusBadRequest)
				writeJSON(rw, map[string]string{"error": "invalid_dpop_proof"})
				return
			}
			w.mu.Lock()
			w.tokenProofs++
			demand := w.asNonce != "" && (w.endless || nonce != w.asNonce)
			if demand {
				w.asChallenges++
				if w.endless {
					w.asNonce = fmt.Sprintf("as-nonce-%d", w.asChallenges)
				}
			}
			asNonce := w.asNonce
			w.mu.Unlock()
			if demand {
				rw.Header().Set("DPoP-Nonce", asNonce)
				rw.Header().Set("Content-Type", "application/json")
				rw.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(rw, `{"error":"use_dpop_nonce"}`)
				return
			}
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			var tok map[string]any
			if json.Unmarshal(rec.Body.Bytes(), &tok) != nil || rec.Code != http.StatusOK {
				rw.WriteHeader(rec.Code)
				_, _ = rw.Write(rec.Body.Bytes())
				return
			}
			tok["token_type"] = "DPoP"
			w.mu.Lock()
			w.jkt[fmt.Sprint(tok["access_token"])] = jkt
			w.mu.Unlock()
			writeJSON(rw, tok)
		default:
			inner.ServeHTTP(rw, r)
		}
	})

	server := protectedMCPServer()
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(rw http.ResponseWriter, r *http.Request) {
		writeJSON(rw, map[string]any{"resource": "http://" + r.Host + "/mcp", "authorization_servers": []string{as.srv.URL}})
	})
	bearer := auth.RequireBearerToken(as.verify, nil)(server)
	mux.Handle("/mcp", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok {
			rw.Header().Set("WWW-Authenticate", `DPoP algs="ES256"`)
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		if scheme != "DPoP" {
			w.fail("MCP request with scheme %q", scheme)
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		jkt, nonce, err := w.checkProof(r, "http://"+r.Host+"/mcp", tok)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha256.Sum256(append([]byte(tok+" "), body...))
		w.mu.Lock()
		w.sends[string(sum[:])]++
		bound := w.jkt[tok]
		demand := w.rsNonce != "" && (w.endless || nonce != w.rsNonce)
		if demand {
			w.rsChallenges++
			if w.endless {
				w.rsNonce = fmt.Sprintf("rs-nonce-%d", w.rsChallenges)
			}
		}
		rsNonce := w.rsNonce
		w.mu.Unlock()
		if err != nil || jkt != bound {
			w.fail("MCP request proof: %v (key bound %v)", err, jkt == bound)
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		if demand {
			rw.Header().Set("DPoP-Nonce", rsNonce)
			rw.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.mu.Lock()
		w.dpopCalls++
		w.mu.Unlock()
		r.Header.Set("Authorization", "Bearer "+tok)
		bearer.ServeHTTP(rw, r)
	}))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	w.srv = resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL + "/mcp", OAuth: &resource.MCPOAuth{}}
	return w
}

// protectedMCPServer is the go-sdk streamable server of protectedServer.
func protectedMCPServer() http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
}

func (w *dpopWorld) fixture(tokens resource.TokenStore) *oauthFixture {
	return &oauthFixture{as: w.as, srv: w.srv, tokens: tokens,
		c: mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: tokens}})}
}

func (w *dpopWorld) problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.bad...)
}

// Issue 26 item 5: with an authorization server that supports DPoP, the
// token request carries a proof, the token is presented with the DPoP
// scheme and a fresh proof (htu without the query, ath, a new jti) on
// each MCP request, and the key is stored with the token: a new
// Connector on the same store (a restarted host) uses the stored token
// with the same key, with no token request.
func TestOAuthDPoP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		asNonce, rsNonce string
	}{
		{name: "no nonce"},
		{name: "nonces of both servers", asNonce: "as-n", rsNonce: "rs-n"}, // RFC 9449 sections 8 and 9
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newDPoPWorld(t, tt.asNonce, tt.rsNonce)
			path := filepath.Join(t.TempDir(), "tokens.db")
			first, err := boltrepo.OpenTokenStore(path, &boltrepo.TokenStoreOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			f := w.fixture(first)
			f.login(t)
			if err := f.callHello(t); err != nil {
				t.Fatalf("call: %v", err)
			}
			m := f.stored(t)
			key, _ := m["dpop_key"].(string)
			if m["token_type"] != "DPoP" || key == "" {
				t.Fatalf("stored token_type %v, dpop key stored %v", m["token_type"], key != "")
			}
			w.mu.Lock()
			proofs, calls := w.tokenProofs, w.dpopCalls
			asC, rsC := w.asChallenges, w.rsChallenges
			w.mu.Unlock()
			if calls == 0 {
				t.Fatal("no MCP request carried a DPoP token and proof")
			}
			if tt.asNonce != "" && (asC != 1 || proofs != 2) {
				t.Errorf("token endpoint: %d nonce challenges, %d proofs; want 1 and 2", asC, proofs)
			}
			if tt.rsNonce != "" && rsC == 0 {
				t.Error("the MCP server never challenged for a nonce")
			}

			// A restarted host: a new Connector on the same store file.
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			reopened, err := boltrepo.OpenTokenStore(path, &boltrepo.TokenStoreOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { reopened.Close() })
			again := w.fixture(reopened)
			if err := again.callHello(t); err != nil {
				t.Fatalf("call after a restart: %v", err)
			}
			w.mu.Lock()
			if w.tokenProofs != proofs {
				t.Errorf("the restarted host made %d token requests; the stored token and key serve", w.tokenProofs-proofs)
			}
			w.mu.Unlock()
			if got := again.stored(t)["dpop_key"]; got != key {
				t.Error("the stored key changed")
			}
			if p := w.problems(); len(p) > 0 {
				t.Errorf("the servers refused: %q", p)
			}
		})
	}
}

// A server that demands a new nonce at every request gets one retry per
// request, not a loop, and the error holds no key, proof or token.
func TestOAuthDPoPEndlessNonce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		asNonce, rsNonce string
		wantToken        int // token requests
	}{
		{name: "authorization server", asNonce: "n0", wantToken: 2},
		// The login, then one more after the go-sdk's Authorize on the
		// 401 the retry got.
		{name: "MCP server", rsNonce: "n0", wantToken: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newDPoPWorld(t, tt.asNonce, tt.rsNonce)
			w.endless = true
			f := w.fixture(resource.NewMemoryTokenStore())
			err := f.c.Login(context.Background(), "remote", f.srv, &mcpconn.LoginOptions{Authorize: followAuthorization})
			if err == nil {
				t.Fatal("login against a server that never accepts a nonce succeeded")
			}
			assertNoTokens(t, "error", err.Error())
			if strings.Contains(err.Error(), "eyJ") || strings.Contains(err.Error(), "nonce-") {
				t.Errorf("error holds a proof or nonce: %v", err)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.tokenProofs != tt.wantToken {
				t.Errorf("%d token requests, want %d", w.tokenProofs, tt.wantToken)
			}
			// Each MCP request is sent at most twice with one token.
			if tt.rsNonce != "" && w.rsChallenges == 0 {
				t.Error("the MCP server never challenged")
			}
			for _, n := range w.sends {
				if n > 2 {
					t.Errorf("an MCP request was sent %d times with one token, want at most 2", n)
				}
			}
		})
	}
}

// The stored key is a credential: a stored DPoP token's error texts and
// a probe report hold no part of it.
func TestOAuthDPoPKeyNotShown(t *testing.T) {
	t.Parallel()
	w := newDPoPWorld(t, "", "")
	f := w.fixture(resource.NewMemoryTokenStore())
	f.login(t)
	key := fmt.Sprint(f.stored(t)["dpop_key"])
	repo := newMemRepo()
	repo.store(t, "remote", f.srv)
	rep, _ := mcpconn.NewProber(repo, f.c, nil).Probe(context.Background(), "remote")
	b, _ := json.Marshal(rep)
	w.as.set(func(a *fakeAS) { a.revoked = true })
	expireStored(t, f.tokens)
	err := f.callHello(t)
	if err == nil {
		t.Fatal("call after revocation succeeded")
	}
	for what, text := range map[string]string{"probe report": string(b), "error": err.Error()} {
		if bytes.Contains([]byte(text), []byte(key[:16])) || strings.Contains(text, "eyJ") {
			t.Errorf("%s holds the key or a proof: %s", what, text)
		}
	}
}

// The client_credentials grant gets a DPoP-bound token too, with the
// nonces of both servers, and presents it with its proof.
func TestOAuthDPoPClientCredentials(t *testing.T) {
	t.Parallel()
	w := newDPoPWorld(t, "as-n", "rs-n")
	f := w.fixture(resource.NewMemoryTokenStore())
	f.srv.OAuth = &resource.MCPOAuth{Grant: "client_credentials", ClientID: "m2m", ClientSecret: "${secret:m2m}",
		TokenEndpointAuth: "client_secret_basic", AuthorizationServer: w.as.srv.URL}
	f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{
		OAuth:     &mcpconn.OAuthOptions{Tokens: f.tokens},
		LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"m2m": "tok-client-secret"}}},
	})
	if err := f.callHello(t); err != nil {
		t.Fatalf("call: %v", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dpopCalls == 0 || w.asChallenges != 1 || len(w.bad) > 0 {
		t.Errorf("%d DPoP calls, %d nonce challenges at the token endpoint, refusals %q", w.dpopCalls, w.asChallenges, w.bad)
	}
}
