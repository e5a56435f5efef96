package mcpconn_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// asLog is what a fakeAS received: every request's bytes (request line,
// headers, body), the bodies of its registration requests, the client_id
// of each authorization request, and the public key (jwk x) of each DPoP
// proof.
type asLog struct {
	mu            sync.Mutex
	raw           bytes.Buffer
	registrations []map[string]any
	authorizeIDs  []string
	dpopKeys      []string
}

// recordAS makes as keep an asLog. With secret, its dynamic registration
// also issues a client secret (client_secret_post), so a registered
// client has one to leak; with dpop, its metadata advertises DPoP (ES256)
// and its tokens stay Bearer tokens. Call it before the first request to
// as.
func recordAS(as *fakeAS, secret, dpop bool) *asLog {
	l := &asLog{}
	as.set(func(a *fakeAS) { a.dpop = dpop })
	inner := as.srv.Config.Handler
	as.srv.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		dump, _ := httputil.DumpRequest(r, false)
		l.mu.Lock()
		l.raw.Write(dump)
		l.raw.Write(body)
		switch r.URL.Path {
		case "/register":
			var md map[string]any
			_ = json.Unmarshal(body, &md)
			l.registrations = append(l.registrations, md)
		case "/authorize":
			l.authorizeIDs = append(l.authorizeIDs, r.URL.Query().Get("client_id"))
		}
		if p := r.Header.Get("DPoP"); p != "" {
			var h struct{ JWK struct{ X string } }
			head, _, _ := strings.Cut(p, ".")
			b, _ := base64.RawURLEncoding.DecodeString(head)
			_ = json.Unmarshal(b, &h)
			l.dpopKeys = append(l.dpopKeys, h.JWK.X)
		}
		l.mu.Unlock()
		if r.URL.Path != "/register" || !secret {
			inner.ServeHTTP(rw, r)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		var md map[string]any
		if json.Unmarshal(rec.Body.Bytes(), &md) != nil {
			rw.WriteHeader(http.StatusInternalServerError)
			return
		}
		md["client_secret"] = as.next("tok-secret-")
		md["token_endpoint_auth_method"] = "client_secret_post"
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(rw).Encode(md)
	})
	return l
}

func (l *asLog) snapshot() (raw string, registrations int, authorizeIDs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.raw.String(), len(l.registrations), append([]string(nil), l.authorizeIDs...)
}

func (l *asLog) keys() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.dpopKeys...)
}

// issuerWorld is the fake MCP server (mcptest, of one era) behind a
// bearer check, whose protected resource metadata names authorization
// server a, or b once moved is set; the server accepts the tokens of
// the one it names only (a migration, SEP-2352).
type issuerWorld struct {
	a, b       *fakeAS
	aLog, bLog *asLog
	moved      atomic.Bool
	url        string
}

func newIssuerWorld(t *testing.T, era mcptest.Era, dpop bool) *issuerWorld {
	w := &issuerWorld{a: newFakeAS(t), b: newFakeAS(t)}
	w.a.tag, w.b.tag = "a", "b"
	w.aLog, w.bLog = recordAS(w.a, true, dpop), recordAS(w.b, true, dpop)
	backend, err := url.Parse(mcptest.ServeHTTP(t, &mcptest.ServerOptions{Era: era}))
	if err != nil {
		t.Fatal(err)
	}
	backend.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(backend)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(rw http.ResponseWriter, r *http.Request) {
		writeJSON(rw, map[string]any{"resource": "http://" + r.Host + "/mcp", "authorization_servers": []string{w.named().srv.URL}})
	})
	mux.HandleFunc("/mcp", func(rw http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			tok = ""
		}
		if _, err := w.named().verify(r.Context(), tok, r); err != nil {
			rw.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.Header.Del("Authorization")
		proxy.ServeHTTP(rw, r)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	w.url = ts.URL + "/mcp"
	return w
}

// named is the authorization server the server names now.
func (w *issuerWorld) named() *fakeAS {
	if w.moved.Load() {
		return w.b
	}
	return w.a
}

func openTokens(t *testing.T, path string) *boltrepo.TokenStore {
	t.Helper()
	s, err := boltrepo.OpenTokenStore(path, &boltrepo.TokenStoreOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tryListTools connects through c as "remote" and lists the tools.
func tryListTools(c *mcpconn.Connector, srv resource.MCPServer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, "remote", srv, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Tools(ctx)
	return err
}

func storedIn(t *testing.T, tokens resource.TokenStore) map[string]any {
	t.Helper()
	return (&oauthFixture{tokens: tokens}).stored(t)
}

// Issue 26 item 4 (SEP-2352, conformance auth/authorization-server-migration):
// a stored credential is bound to the authorization server that issued
// it. After the server moves to another one, a restarted host (a new
// Connector on the same bbolt file) sends nothing of the old credential
// anywhere: the new authorization server never sees the old access
// token, refresh token, client ID or client secret, the old one gets no
// refresh, a Connect without an interactive step needs a login, and with
// one the client registers anew (dynamic registration), uses the
// pre-registered client the document now pins, or its client ID
// metadata document (portable across issuers: no registration), and the
// stored credential names the new issuer. Both protocol eras; a stored token still valid
// and one expired (a refresh is due). With authorization servers that
// support DPoP, b never sees the key a's tokens were bound to.
func TestOAuthIssuerMigration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		era     mcptest.Era
		expired bool
		pre     bool // the pre-registered client m2m with a secret, pinned to the issuer in use
		dpop    bool
		cimd    bool // both authorization servers support the host's client ID metadata document
	}{
		{name: "dynamic modern", era: mcptest.EraModern},
		{name: "dynamic modern expired", era: mcptest.EraModern, expired: true},
		{name: "dynamic legacy", era: mcptest.EraLegacy},
		{name: "dynamic legacy expired", era: mcptest.EraLegacy, expired: true},
		{name: "preregistered modern expired", era: mcptest.EraModern, expired: true, pre: true},
		{name: "preregistered legacy", era: mcptest.EraLegacy, pre: true},
		{name: "dynamic modern dpop", era: mcptest.EraModern, dpop: true},
		{name: "dynamic legacy expired dpop", era: mcptest.EraLegacy, expired: true, dpop: true},
		{name: "metadata document modern expired", era: mcptest.EraModern, expired: true, cimd: true},
		{name: "metadata document legacy", era: mcptest.EraLegacy, cimd: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newIssuerWorld(t, tt.era, tt.dpop)
			srv := resource.MCPServer{Type: resource.TransportHTTP, URL: w.url, OAuth: &resource.MCPOAuth{}}
			if tt.pre {
				srv.OAuth = &resource.MCPOAuth{ClientID: "m2m", ClientSecret: "${secret:m2m}", AuthorizationServer: w.a.srv.URL}
			}
			const clientDoc = "https://agent.example.com/oauth/client.json"
			w.a.set(func(a *fakeAS) { a.cimd = tt.cimd })
			w.b.set(func(a *fakeAS) { a.cimd = tt.cimd })
			hostDoc := ""
			if tt.cimd {
				hostDoc = clientDoc
			}
			connector := func(tokens resource.TokenStore, authorize func(context.Context, resource.Ref, string) (mcpconn.AuthorizationResponse, error)) *mcpconn.Connector {
				return mcpconn.NewConnector(&mcpconn.ConnectorOptions{
					OAuth:     &mcpconn.OAuthOptions{Tokens: tokens, Authorize: authorize, ClientMetadataURL: hostDoc},
					LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"m2m": "tok-client-secret"}}},
				})
			}
			path := filepath.Join(t.TempDir(), "tokens.db")
			first := openTokens(t, path)
			if err := connector(first, followAuthorization).Login(context.Background(), "remote", srv, nil); err != nil {
				t.Fatalf("Login at a: %v", err)
			}
			if err := tryListTools(connector(first, nil), srv); err != nil {
				t.Fatalf("tools/list with a's token: %v", err)
			}
			old := storedIn(t, first)
			if old["issuer"] != w.a.srv.URL {
				t.Fatalf("stored issuer = %v, want a's %s", old["issuer"], w.a.srv.URL)
			}
			// What must never reach b: everything a issued.
			var leak []string
			for _, k := range []string{"access_token", "refresh_token", "client_id", "client_secret"} {
				v, _ := old[k].(string)
				if tt.pre && (k == "client_id" || k == "client_secret") {
					continue // the host's pre-registered client, which the document now pins to b
				}
				if tt.cimd && (k == "client_id" || k == "client_secret") {
					continue // a metadata document's URL is portable across issuers; it has no secret
				}
				if v == "" {
					t.Fatalf("a's credential has no %s", k)
				}
				leak = append(leak, v)
			}
			if tt.expired {
				expireStored(t, first)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}

			w.moved.Store(true)
			if tt.pre {
				srv.OAuth.AuthorizationServer = w.b.srv.URL
			}
			aHits := w.a.hits.Load()
			tokens := openTokens(t, path)
			t.Cleanup(func() { tokens.Close() })
			if err := tryListTools(connector(tokens, nil), srv); !errors.Is(err, mcpconn.ErrLoginRequired) {
				t.Fatalf("Connect after the move without an Authorize step: %v, want ErrLoginRequired", err)
			}
			if err := tryListTools(connector(tokens, followAuthorization), srv); err != nil {
				t.Fatalf("Connect after the move with an Authorize step: %v", err)
			}

			if n := w.a.hits.Load() - aHits; n != 0 {
				t.Errorf("the old authorization server got %d requests after the move", n)
			}
			raw, registrations, ids := w.bLog.snapshot()
			for _, v := range leak {
				if strings.Contains(raw, v) {
					t.Errorf("the new authorization server received a value a issued (%.12s...)", v)
				}
			}
			if tt.dpop {
				aKeys, bKeys := w.aLog.keys(), w.bLog.keys()
				if len(aKeys) == 0 || len(bKeys) == 0 {
					t.Fatalf("DPoP proofs: %d at a, %d at b; want some at each", len(aKeys), len(bKeys))
				}
				for _, k := range bKeys {
					if slices.Contains(aKeys, k) {
						t.Errorf("b received a proof of the key bound to a's tokens")
					}
				}
			}
			now := storedIn(t, tokens)
			if now["issuer"] != w.b.srv.URL {
				t.Errorf("stored issuer after the move = %v, want b's %s", now["issuer"], w.b.srv.URL)
			}
			if tt.pre || tt.cimd {
				want := "m2m"
				if tt.cimd {
					want = clientDoc
				}
				if len(ids) == 0 || ids[0] != want || registrations != 0 {
					t.Errorf("b: authorization client IDs %q, %d registrations; want %s and no registration", ids, registrations, want)
				}
				return
			}
			if registrations != 1 || len(ids) == 0 || !strings.HasPrefix(ids[0], "dyn-b") || now["client_id"] != ids[0] {
				t.Errorf("b: %d registrations, authorization client IDs %q, stored client %v; want one new registration used and stored",
					registrations, ids, now["client_id"])
			}
		})
	}
}

// Issue 26 item 4 (SEP-837): dynamic client registration sends the
// application_type that fits the redirect URI: "native" for a loopback
// or custom-scheme redirect (a CLI or desktop host), "web" for a remote
// https one. Read from the registration request on the wire.
func TestOAuthRegistrationApplicationType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		redirect string
		want     string
	}{
		{redirect: "", want: "native"}, // the default, http://127.0.0.1/callback
		{redirect: "http://localhost:8976/callback", want: "native"},
		{redirect: "http://[::1]:8976/callback", want: "native"},
		{redirect: "com.example.agent:/oauth/callback", want: "native"},
		{redirect: "https://agent.example.com/oauth/callback", want: "web"},
	}
	for _, tt := range tests {
		t.Run(tt.redirect, func(t *testing.T) {
			t.Parallel()
			f := newOAuthFixture(t)
			log := recordAS(f.as, false, false)
			f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: f.tokens, RedirectURL: tt.redirect}})
			f.login(t)
			log.mu.Lock()
			defer log.mu.Unlock()
			if len(log.registrations) != 1 {
				t.Fatalf("%d registrations, want 1", len(log.registrations))
			}
			if got := log.registrations[0]["application_type"]; got != tt.want {
				t.Errorf("application_type = %v, want %q", got, tt.want)
			}
		})
	}
}

// Issue 26 item 4: the client registration agt uses. A client ID metadata
// document (the host's ClientMetadataURL, or the document's
// client_metadata_url) is used where the authorization server advertises
// client_id_metadata_document_supported, with no registration request;
// dynamic registration (deprecated) only where it does not. A client the
// document pre-registers comes first, as the 2026-07-28 client
// registration order says.
func TestOAuthClientRegistrationOrder(t *testing.T) {
	t.Parallel()
	const hostDoc = "https://agent.example.com/oauth/client.json"
	const serverDoc = "https://agent.example.com/oauth/other-client.json"
	tests := []struct {
		name          string
		cimd          bool
		hostDoc       string
		oauth         resource.MCPOAuth
		wantClient    string // "dyn-" for a dynamically registered one
		registrations int
	}{
		{name: "metadata document supported", cimd: true, hostDoc: hostDoc, wantClient: hostDoc},
		{name: "document's metadata URL", cimd: true, hostDoc: hostDoc, oauth: resource.MCPOAuth{ClientMetadataURL: serverDoc}, wantClient: serverDoc},
		{name: "metadata document not supported", hostDoc: hostDoc, wantClient: "dyn-", registrations: 1},
		{name: "no metadata document", cimd: true, wantClient: "dyn-", registrations: 1},
		{name: "pre-registered first", cimd: true, hostDoc: hostDoc, oauth: resource.MCPOAuth{ClientID: "m2m"}, wantClient: "m2m"},
		{name: "metadata document chosen", cimd: true, hostDoc: hostDoc,
			oauth: resource.MCPOAuth{ClientID: "m2m", Registration: mcpdoc.RegistrationMetadataDocument}, wantClient: hostDoc},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newOAuthFixture(t)
			f.as.set(func(a *fakeAS) { a.cimd = tt.cimd })
			log := recordAS(f.as, false, false)
			f.srv.OAuth = &tt.oauth
			f.c = mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Tokens: f.tokens, ClientMetadataURL: tt.hostDoc}})
			f.login(t)
			_, registrations, ids := log.snapshot()
			if len(ids) != 1 || !strings.HasPrefix(ids[0], tt.wantClient) || registrations != tt.registrations {
				t.Errorf("authorization client IDs %q, %d registrations; want one of %q, %d registrations", ids, registrations, tt.wantClient, tt.registrations)
			}
			if got, _ := f.stored(t)["client_id"].(string); len(ids) == 1 && got != ids[0] {
				t.Errorf("stored client_id %q, want the one authorized, %q", got, ids[0])
			}
		})
	}
}

// Issue 26 item 4: the grants without a person store nothing and
// discover the authorization server at each flow; after the server moves
// to an authorization server other than the one oauth.authorization_server
// pins, the next Connect fails naming that field, and the new server gets
// no request at all: not the client secret (client_credentials), nor
// the workload identity token (workload_identity). Both protocol eras.
func TestOAuthGrantIssuerMigration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		era   mcptest.Era
		oauth resource.MCPOAuth
	}{
		{name: "client credentials modern", era: mcptest.EraModern,
			oauth: resource.MCPOAuth{Grant: mcpdoc.GrantClientCredentials, ClientID: "m2m", ClientSecret: "${secret:m2m}"}},
		{name: "client credentials legacy", era: mcptest.EraLegacy,
			oauth: resource.MCPOAuth{Grant: mcpdoc.GrantClientCredentials, ClientID: "m2m", ClientSecret: "${secret:m2m}"}},
		{name: "workload identity modern", era: mcptest.EraModern,
			oauth: resource.MCPOAuth{Grant: mcpdoc.GrantWorkloadIdentity, Assertion: "${secret:wif}"}},
		{name: "workload identity legacy", era: mcptest.EraLegacy,
			oauth: resource.MCPOAuth{Grant: mcpdoc.GrantWorkloadIdentity, Assertion: "${secret:wif}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newIssuerWorld(t, tt.era, false)
			w.a.set(func(a *fakeAS) { a.workload = map[string]bool{"tok-wif-1": true} })
			w.b.set(func(a *fakeAS) { a.workload = map[string]bool{"tok-wif-1": true} })
			oauth := tt.oauth
			oauth.AuthorizationServer = w.a.srv.URL
			srv := resource.MCPServer{Type: resource.TransportHTTP, URL: w.url, OAuth: &oauth}
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{
				OAuth:     &mcpconn.OAuthOptions{},
				LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "remote", secrets: map[string]string{"m2m": "tok-client-secret", "wif": "tok-wif-1"}}},
			})
			if err := tryListTools(c, srv); err != nil {
				t.Fatalf("tools/list through a: %v", err)
			}
			w.moved.Store(true)
			err := tryListTools(c, srv)
			if !errors.Is(err, mcpconn.ErrUnauthorized) || !strings.Contains(err.Error(), "oauth.authorization_server") {
				t.Fatalf("Connect after the move: %v, want ErrUnauthorized naming oauth.authorization_server", err)
			}
			if n := w.b.hits.Load(); n != 0 {
				t.Errorf("the authorization server the pin does not name got %d requests", n)
			}
		})
	}
}

// A credential stored before issuers were kept (no "issuer") still
// serves after the upgrade: no forced login; its expired token is
// refreshed at its own token endpoint, and the refreshed credential
// stays as it was bound.
func TestOAuthCredentialWithoutIssuer(t *testing.T) {
	t.Parallel()
	f := newExpiredLogin(t)
	err := f.tokens.Update(context.Background(), "remote", func(old []byte) ([]byte, error) {
		var m map[string]any
		if err := json.Unmarshal(old, &m); err != nil {
			return nil, err
		}
		delete(m, "issuer")
		return json.Marshal(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.callHello(t); err != nil {
		t.Fatalf("Connect with a credential that names no issuer: %v", err)
	}
	f.as.mu.Lock()
	refreshes := f.as.refreshes
	f.as.mu.Unlock()
	if refreshes != 1 {
		t.Errorf("%d refreshes, want 1", refreshes)
	}
	if m := f.stored(t); m["issuer"] != nil || !strings.HasPrefix(fmt.Sprint(m["access_token"]), "tok-access-") {
		t.Errorf("stored after the refresh: issuer %v, access token kept %v", m["issuer"], m["access_token"] != nil)
	}
}
