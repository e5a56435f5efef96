package mcpconn

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// DPoP (RFC 9449; the MCP extension io.modelcontextprotocol/auth/dpop):
// when the authorization server's metadata lists ES256 in
// dpop_signing_alg_values_supported, the token requests carry a proof of
// a P-256 key the session keeps, and a token the server binds to it
// (token_type DPoP) is presented with the DPoP scheme and a fresh proof
// on each request. The key is stored with the token (never shown).

// maxDPoPNonceBytes bounds a DPoP-Nonce a server sends; a longer or
// non-printable one is ignored.
const maxDPoPNonceBytes = 512

// maxDPoPEndpoints bounds the token endpoints a session notes (an
// authorization server, an enterprise IdP).
const maxDPoPEndpoints = 8

// dpopAlg is the one proof algorithm agt signs with.
const dpopAlg = "ES256"

// dpopState is a session's DPoP key and the servers' nonces.
type dpopState struct {
	mu  sync.Mutex
	key *ecdsa.PrivateKey
	// tokenURLs are the token endpoints whose servers support DPoP,
	// at most maxDPoPEndpoints.
	tokenURLs map[string]bool
	bound     bool // the current access token is DPoP-bound
	// issuer is the authorization server key is bound to: a flow
	// toward another one gets a new key (forIssuer), so two
	// authorization servers never see the same key (SEP-2352).
	issuer  string
	asNonce string
	rsNonce string
}

// encodeDPoPKey renders key for the token store (PKCS #8, base64url).
func encodeDPoPKey(key *ecdsa.PrivateKey) string {
	if key == nil {
		return ""
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(der)
}

// decodeDPoPKey reads a stored key; nil for anything but a P-256 key.
func decodeDPoPKey(s string) *ecdsa.PrivateKey {
	der, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil
	}
	return ec
}

// restore takes the key and binding of a stored credential.
func (d *dpopState) restore(c storedCredential) {
	key := decodeDPoPKey(c.DPoPKey)
	d.mu.Lock()
	defer d.mu.Unlock()
	if key == nil {
		return
	}
	d.key = key
	d.issuer = c.Issuer
	d.noteTokenURL(c.TokenURL)
	d.bound = strings.EqualFold(c.TokenType, "DPoP")
}

// forIssuer starts a flow toward issuer: a key of another authorization
// server (or of an unknown one) is dropped with that server's nonce, and
// the next token request makes a new one.
func (d *dpopState) forIssuer(issuer string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.key != nil && !sameIssuer(d.issuer, issuer) {
		d.key, d.bound, d.asNonce = nil, false, ""
	}
	d.issuer = issuer
}

// noteTokenURL records a token endpoint that takes proofs; d.mu held.
func (d *dpopState) noteTokenURL(u string) {
	if u == "" {
		return
	}
	if d.tokenURLs == nil {
		d.tokenURLs = map[string]bool{}
	}
	if len(d.tokenURLs) < maxDPoPEndpoints {
		d.tokenURLs[u] = true
	}
}

// takesProof reports whether u is a noted token endpoint; d.mu held.
func (d *dpopState) takesProof(u *url.URL) bool {
	for e := range d.tokenURLs {
		if sameEndpoint(u, e) {
			return true
		}
	}
	return false
}

// setBound records whether the token now in use is DPoP-bound.
func (d *dpopState) setBound(tokenType string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bound = d.key != nil && strings.EqualFold(tokenType, "DPoP")
}

// storedKey is the key to store with a token of tokenType, or "".
func (d *dpopState) storedKey() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return encodeDPoPKey(d.key)
}

// proof signs a DPoP proof (RFC 9449, section 4.2) for a request of
// method to target; accessToken, when not "", gives the ath claim.
func proof(key *ecdsa.PrivateKey, method string, target *url.URL, accessToken, nonce string, now time.Time) (string, error) {
	u := *target
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	u.User = nil
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	claims := jwt.MapClaims{
		"jti": base64.RawURLEncoding.EncodeToString(jti[:]),
		"htm": method,
		"htu": u.String(),
		"iat": now.Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["typ"] = "dpop+jwt"
	t.Header["jwk"] = publicJWK(&key.PublicKey)
	return t.SignedString(key)
}

// publicJWK is the public key's JWK (RFC 7518, section 6.2.1).
func publicJWK(pub *ecdsa.PublicKey) map[string]string {
	b, _ := pub.Bytes() // uncompressed point: 0x04 || X || Y
	return map[string]string{
		"kty": "EC",
		"crv": "P-256",
		"x":   base64.RawURLEncoding.EncodeToString(b[1:33]),
		"y":   base64.RawURLEncoding.EncodeToString(b[33:65]),
	}
}

// validNonce reports whether a DPoP-Nonce may be used: bounded and
// printable ASCII without quotes or backslashes (RFC 9449, section 8.1).
func validNonce(n string) bool {
	return n != "" && len(n) <= maxDPoPNonceBytes && strings.IndexFunc(n, func(r rune) bool {
		return r < 0x21 || r > 0x7e || r == '"' || r == '\\'
	}) < 0
}

// replay returns a copy of req to send again, or nil when its body
// cannot be read again.
func replay(req *http.Request) *http.Request {
	again := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil
		}
		b, err := req.GetBody()
		if err != nil {
			return nil
		}
		again.Body = b
	}
	return again
}

// dpopTokenTransport is the OAuth flow's transport of a session: it
// notes whether the authorization server supports DPoP from its metadata,
// and then signs a proof for each token request and answers the
// server's use_dpop_nonce once.
type dpopTokenTransport struct {
	base http.RoundTripper
	d    *dpopState
}

func (t *dpopTokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/.well-known/") {
		resp, err := t.base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		// The body is bounded below (oauthBodyTransport).
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		var meta struct {
			TokenEndpoint string   `json:"token_endpoint"`
			DPoPAlgs      []string `json:"dpop_signing_alg_values_supported"`
		}
		if json.Unmarshal(b, &meta) == nil && meta.TokenEndpoint != "" && slices.Contains(meta.DPoPAlgs, dpopAlg) {
			t.d.mu.Lock()
			t.d.noteTokenURL(meta.TokenEndpoint)
			t.d.mu.Unlock()
		}
		return resp, nil
	}
	t.d.mu.Lock()
	on := req.Method == http.MethodPost && t.d.takesProof(req.URL)
	if on && t.d.key == nil {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.d.mu.Unlock()
			return nil, err
		}
		t.d.key = key
	}
	key, nonce := t.d.key, t.d.asNonce
	t.d.mu.Unlock()
	if !on {
		return t.base.RoundTrip(req)
	}
	first := replay(req)
	if first == nil {
		first = req.Clone(req.Context())
	}
	resp, err := t.sendWithProof(first, key, nonce)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		return resp, err
	}
	fresh := resp.Header.Get("DPoP-Nonce")
	if !validNonce(fresh) || fresh == nonce {
		return resp, nil
	}
	b, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var e struct {
		Error string `json:"error"`
	}
	if rerr != nil || json.Unmarshal(b, &e) != nil || e.Error != "use_dpop_nonce" {
		return resp, nil
	}
	t.d.mu.Lock()
	t.d.asNonce = fresh
	t.d.mu.Unlock()
	again := replay(req)
	if again == nil {
		return resp, nil
	}
	// One retry: a server that asks for yet another nonce is answered
	// with its refusal.
	return t.sendWithProof(again, key, fresh)
}

func (t *dpopTokenTransport) sendWithProof(req *http.Request, key *ecdsa.PrivateKey, nonce string) (*http.Response, error) {
	p, err := proof(key, req.Method, req.URL, "", nonce, time.Now())
	if err != nil {
		return nil, err
	}
	req.Header.Set("DPoP", p)
	return t.base.RoundTrip(req)
}

// sameEndpoint reports whether u is the endpoint e, ignoring the query.
func sameEndpoint(u *url.URL, e string) bool {
	eu, err := url.Parse(e)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Scheme, eu.Scheme) && strings.EqualFold(u.Host, eu.Host) && u.EscapedPath() == eu.EscapedPath()
}

// dpopResourceTransport presents a DPoP-bound token to the MCP server:
// the go-sdk (or oauthRoundTripper) sets "Bearer <token>"; this turns it
// into "DPoP <token>" with a fresh proof, and answers the server's
// use_dpop_nonce challenge once.
type dpopResourceTransport struct {
	base http.RoundTripper
	d    *dpopState
}

func (t *dpopResourceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.d.mu.Lock()
	key, bound, nonce := t.d.key, t.d.bound, t.d.rsNonce
	t.d.mu.Unlock()
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || !bound || key == nil {
		return t.base.RoundTrip(req)
	}
	first := replay(req)
	if first == nil {
		first = req.Clone(req.Context())
	}
	resp, err := t.send(first, key, tok, nonce)
	if err != nil {
		return resp, err
	}
	fresh := resp.Header.Get("DPoP-Nonce")
	if !validNonce(fresh) {
		return resp, nil
	}
	t.d.mu.Lock()
	t.d.rsNonce = fresh
	t.d.mu.Unlock()
	if resp.StatusCode != http.StatusUnauthorized || fresh == nonce || !nonceChallenge(resp.Header.Values("WWW-Authenticate")) {
		return resp, nil
	}
	again := replay(req)
	if again == nil {
		return resp, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	// One retry: a server that asks for yet another nonce gets its 401
	// back, and the go-sdk's Authorize handles it.
	return t.send(again, key, tok, fresh)
}

func (t *dpopResourceTransport) send(req *http.Request, key *ecdsa.PrivateKey, tok, nonce string) (*http.Response, error) {
	p, err := proof(key, req.Method, req.URL, tok, nonce, time.Now())
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "DPoP "+tok)
	req.Header.Set("DPoP", p)
	return t.base.RoundTrip(req)
}

// nonceChallenge reports whether a 401's challenges ask for a DPoP nonce.
func nonceChallenge(values []string) bool {
	cs, _ := oauthex.ParseWWWAuthenticate(values)
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "dpop") && c.Params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}
