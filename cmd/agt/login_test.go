package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agtsdk/agt"
)

// oauthServer is a bearer-protected go-sdk MCP server on 127.0.0.1 with
// its own authorization server (metadata, dynamic registration, an
// authorization endpoint that approves at once, a token endpoint): the
// server side of an OAuth login.
type oauthServer struct {
	mcpURL string
	token  string // the access token it grants and accepts

	// redirect, when set, replaces the query of the authorization
	// endpoint's redirect (a forged state, an error); the request's state
	// stays unless it names one.
	redirect url.Values

	mu     sync.Mutex
	issued int // tokens granted
	// issParam, when set, advertises
	// authorization_response_iss_parameter_supported and adds iss to the
	// redirect (RFC 9207).
	issParam bool
}

func startOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	return startOAuthServerWith(t, nil)
}

func startOAuthServerWith(t *testing.T, redirect url.Values) *oauthServer {
	t.Helper()
	o := &oauthServer{token: "tok-" + strings.Repeat("9", 24), redirect: redirect}
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	base := srv.URL
	o.mcpURL = base + "/mcp"

	server := mcp.NewServer(&mcp.Implementation{Name: "oauth-test-server", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you"}}}, struct{}{}, nil
	})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != o.token {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	prm := "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: base + prm})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	mux.Handle(prm, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: o.mcpURL, AuthorizationServers: []string{base},
	}))
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		md := map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":            []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		}
		o.mu.Lock()
		if o.issParam {
			md["authorization_response_iss_parameter_supported"] = true
		}
		o.mu.Unlock()
		writeJSON(w, 200, md)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&md)
		md["client_id"] = "cli-client"
		writeJSON(w, 201, md)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		back, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || q.Get("code_challenge") == "" {
			http.Error(w, "bad request", 400)
			return
		}
		v := back.Query()
		v.Set("code", "the-code")
		v.Set("state", q.Get("state"))
		o.mu.Lock()
		if o.issParam {
			v.Set("iss", base)
		}
		o.mu.Unlock()
		if o.redirect != nil {
			v = url.Values{"state": {q.Get("state")}} // unless the override has its own
			for k, vs := range o.redirect {
				v[k] = vs
			}
		}
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("code") != "the-code" || r.FormValue("code_verifier") == "" {
			writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		o.mu.Lock()
		o.issued++
		o.mu.Unlock()
		writeJSON(w, 200, map[string]any{"access_token": o.token, "token_type": "Bearer", "expires_in": 3600})
	})
	return o
}

// loginAsBrowser runs agt mcp login ref, reads the authorization URL it
// prints, and plays the browser: it follows the authorization server's
// redirect to agt's loopback listener.
func loginAsBrowser(t *testing.T, db, ref string) result {
	t.Helper()
	return loginAsSlowBrowser(t, db, ref, 0)
}

// loginAsSlowBrowser is loginAsBrowser with a person who takes delay to
// log in.
func loginAsSlowBrowser(t *testing.T, db, ref string, delay time.Duration) result {
	t.Helper()
	return loginAsBrowserAfter(t, db, ref, delay, nil)
}

// loginAsBrowserAfter is loginAsSlowBrowser where, once the authorization
// URL is printed, before(redirectURI) runs before the browser visits it:
// another local process's turn at agt's receiver.
func loginAsBrowserAfter(t *testing.T, db, ref string, delay time.Duration, before func(redirectURI string), flags ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agtBinary, append([]string{"--db", db, "mcp", "login", ref, "--timeout", "60s"}, flags...)...)
	cmd.Env = []string{"HOME=" + t.TempDir()}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	browsed := false
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if u := strings.TrimSpace(line); !browsed && strings.HasPrefix(u, "http://127.0.0.1:") && strings.Contains(u, "/authorize?") {
			browsed = true
			if before != nil {
				au, err := url.Parse(u)
				if err != nil {
					t.Fatal(err)
				}
				before(au.Query().Get("redirect_uri"))
			}
			time.Sleep(delay)
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
			if err != nil {
				t.Errorf("the browser's visit: %v", err)
				continue
			}
			page, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if !strings.Contains(string(page), "you may close this tab") && !strings.Contains(string(page), "You may close this tab") {
				t.Errorf("the redirect page says %q", page)
			}
		}
	}
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if !browsed {
		t.Errorf("agt mcp login printed no authorization URL:\n%s\n%s", out.String(), stderr.String())
	}
	return result{stdout: out.String(), stderr: stderr.String(), code: code}
}

// agt mcp login stores the token it receives through the loopback
// redirect; probe then uses it; logout forgets it, and probe then says
// to log in. The token never appears in any output.
func TestMCPLoginLogout(t *testing.T) {
	t.Parallel()
	srv := startOAuthServer(t)
	db := filepath.Join(t.TempDir(), "agt.db")
	var outputs []string
	keep := func(r result) result { outputs = append(outputs, r.stdout, r.stderr); return r }

	keep(mustRun(t, db, 0, "mcp", "add", "docs", "--transport", "http", "--oauth", srv.mcpURL))
	const noLogin = "oauth: no login stored; next: agt mcp login docs"
	if r := keep(mustRun(t, db, 0, "mcp", "test", "docs")); !strings.Contains(r.stdout, noLogin) {
		t.Errorf("mcp test before login does not say %q:\n%s", noLogin, r.stdout)
	}
	r := keep(runAgt(t, db, "", "mcp", "probe", "docs", "--timeout", "30s"))
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "next: agt mcp login docs") {
		t.Errorf("probe before login: exit %d, want 1 with the login hint:\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// A Run that mounts it says to log in, too.
	keep(mustRun(t, db, 0, "agent", "create", "helper"))
	keep(mustRun(t, db, 0, "agent", "update", "helper", "--add-mcp", "docs"))
	for _, args := range [][]string{{"agent", "tools", "helper"}, {"agent", "call", "helper", "mcp__docs__whoami", "{}", "--yes"}} {
		if r := keep(runAgt(t, db, "", args...)); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "next: agt mcp login docs") {
			t.Errorf("%v before login: exit %d, want 1 with the login hint:\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
	}

	r = keep(loginAsBrowser(t, db, "docs"))
	if r.code != 0 || !strings.Contains(r.stdout, "logged in to mcp docs: the token is kept in "+filepath.Join(filepath.Dir(db), agt.TokensFile)+" ") {
		t.Fatalf("login: exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = keep(runAgt(t, db, "", "mcp", "probe", "docs", "--timeout", "30s"))
	if r.code != 0 || !strings.Contains(r.stdout, "whoami") {
		t.Errorf("probe after login: exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = keep(runAgt(t, db, "", "agent", "call", "helper", "mcp__docs__whoami", "{}", "--yes"))
	if r.code != 0 {
		t.Errorf("agent call after login: exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := keep(mustRun(t, db, 0, "mcp", "test", "docs")); strings.Contains(r.stdout, noLogin) {
		t.Errorf("mcp test after login says %q:\n%s", noLogin, r.stdout)
	}
	r = keep(runAgt(t, db, "", "mcp", "get", "docs", "--json"))
	if strings.Contains(r.stdout, "access_token") {
		t.Errorf("the registration holds the token:\n%s", r.stdout)
	}

	r = keep(mustRun(t, db, 0, "mcp", "logout", "docs"))
	if !strings.Contains(r.stdout, "logged out of mcp docs") {
		t.Errorf("logout says:\n%s", r.stdout)
	}
	r = keep(runAgt(t, db, "", "mcp", "probe", "docs", "--timeout", "30s"))
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "next: agt mcp login docs") {
		t.Errorf("probe after logout: exit %d, want 1 with the login hint:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, o := range outputs {
		if strings.Contains(o, srv.token) || strings.Contains(o, "the-code") {
			t.Errorf("an output shows the token or the code:\n%s", o)
		}
	}
}

// Login and logout of a registration without oauth say so, with what it
// uses instead, and the flag that sets OAuth for a remote one; the
// receiver never starts, and nothing says "logged in" or "removed".
func TestMCPLoginNeedsOAuth(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "web", "--transport", "http", "https://mcp.example.com/mcp")
	mustRun(t, db, 0, "mcp", "add", "local", "--", "srv")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"mcp", "login", "web"}, []string{"mcp web does not use OAuth: there is nothing to log in to; its credentials are its headers (-H)", "next: if the server asks for an OAuth login: agt mcp update web --oauth"}},
		{[]string{"mcp", "logout", "web"}, []string{"mcp web does not use OAuth: there is nothing to log out of"}},
		{[]string{"mcp", "login", "local"}, []string{"mcp local is a stdio server, which does not use OAuth: there is nothing to log in to"}},
		{[]string{"mcp", "logout", "local"}, []string{"mcp local is a stdio server, which does not use OAuth: there is nothing to log out of"}},
		{[]string{"mcp", "logout", "lcoal"}, []string{"not found", "did you mean local?"}},
	} {
		r := runAgt(t, db, "", tc.args...)
		if r.code != 1 || strings.Contains(r.stdout, "logged") {
			t.Errorf("%v: exit %d; want 1 and no success:\n%s\n%s", tc.args, r.code, r.stdout, r.stderr)
		}
		assertContains(t, strings.Join(tc.args, " "), r.stderr, tc.want...)
	}
}

// login --scopes asks for the scopes given, in place of the
// registration's.
func TestMCPLoginScopes(t *testing.T) {
	t.Parallel()
	srv := startOAuthServer(t)
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "docs", "--oauth", "--oauth-scopes", "stored.scope", srv.mcpURL)
	r := loginAsBrowserAfter(t, db, "docs", 0, nil, "--scopes", "notes.read,notes.write")
	if r.code != 0 || !strings.Contains(r.stdout, "scope=notes.read+notes.write") || strings.Contains(r.stdout, "stored.scope") {
		t.Errorf("login --scopes: exit %d; want the scopes given in the authorization URL:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestShowableURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want bool
	}{
		{"https://auth.example/authorize?client_id=c&state=s", true},
		{"http://127.0.0.1:8080/authorize?x=1", true},
		{"https://auth.example/\x1b[2J", false},
		{"https://auth.example/a b", false},
		{"https://auth.example/\u202e", false},
		{"javascript:alert(1)", false},
		{"file:///etc/passwd", false},
		{"https://auth.example/" + strings.Repeat("a", 9000), false},
	}
	for _, tt := range tests {
		if got := showableURL(tt.url); got != tt.want {
			t.Errorf("showableURL(%q) = %t, want %t", tt.url, got, tt.want)
		}
	}
}

// The person's time in the browser is bounded by --timeout, not by the
// server's startup timeout (here 1 s, and the person takes 3 s).
func TestMCPLoginTakesItsTime(t *testing.T) {
	t.Parallel()
	srv := startOAuthServer(t)
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "docs", "--transport", "http", "--oauth", "--startup-timeout", "1s", srv.mcpURL)
	r := loginAsSlowBrowser(t, db, "docs", 3*time.Second)
	if r.code != 0 || !strings.Contains(r.stdout, "logged in to mcp docs") {
		t.Errorf("a login of 3 s with a startup timeout of 1 s: exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// An authorization server that advertises the RFC 9207 iss parameter:
// the loopback receiver passes the redirect's iss on, and the login
// succeeds.
func TestMCPLoginIssuerParameter(t *testing.T) {
	t.Parallel()
	srv := startOAuthServer(t)
	srv.mu.Lock()
	srv.issParam = true
	srv.mu.Unlock()
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "docs", "--transport", "http", "--oauth", srv.mcpURL)
	r := loginAsBrowser(t, db, "docs")
	if r.code != 0 || !strings.Contains(r.stdout, "logged in to mcp docs") {
		t.Errorf("login with iss: exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// Requests that are not the login's redirect (a forged state, a POST,
// sent by any local process while agt waits) get an error page and do not
// end the login: the real redirect then completes it (issue 23 item 11).
// Before: the first of them ended the login.
func TestMCPLoginIgnoresForeignRequests(t *testing.T) {
	t.Parallel()
	srv := startOAuthServer(t)
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "add", "docs", "--transport", "http", "--oauth", srv.mcpURL)
	client := &http.Client{Timeout: 30 * time.Second}
	var answers []int
	r := loginAsBrowserAfter(t, db, "docs", 0, func(redirectURI string) {
		for _, send := range []func() (*http.Response, error){
			func() (*http.Response, error) { return client.Get(redirectURI + "?code=forged-code&state=forged") },
			func() (*http.Response, error) {
				return client.Post(redirectURI+"?code=forged-code", "application/x-www-form-urlencoded", strings.NewReader("state=forged"))
			},
		} {
			resp, err := send()
			if err != nil {
				t.Errorf("a foreign request: %v", err)
				continue
			}
			resp.Body.Close()
			answers = append(answers, resp.StatusCode)
		}
	})
	if diff := cmp.Diff([]int{http.StatusBadRequest, http.StatusMethodNotAllowed}, answers); diff != "" {
		t.Errorf("the foreign requests' answers (-want +got):\n%s", diff)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "logged in to mcp docs") {
		t.Errorf("login after foreign requests: exit %d, want 0:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// A redirect with the login's state that fails it (the authorization
// server's refusal) ends it with the reason, and stores nothing.
func TestMCPLoginRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		redirect url.Values
		want     string
	}{
		{"refused", url.Values{"error": {"access_denied"}}, "the login failed: the authorization server refused the login: access_denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startOAuthServerWith(t, tt.redirect)
			db := filepath.Join(t.TempDir(), "agt.db")
			mustRun(t, db, 0, "mcp", "add", "docs", "--transport", "http", "--oauth", srv.mcpURL)
			r := loginAsBrowser(t, db, "docs")
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, want 1 and %q:\n%s", r.code, tt.want, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, "the-code") {
				t.Errorf("an output shows the code:\n%s\n%s", r.stdout, r.stderr)
			}
			if r := runAgt(t, db, "", "mcp", "test", "docs"); !strings.Contains(r.stdout, "oauth: no login stored") {
				t.Errorf("a refused login stored a credential:\n%s", r.stdout)
			}
		})
	}
}
