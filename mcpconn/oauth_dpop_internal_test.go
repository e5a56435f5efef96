package mcpconn

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
)

// A DPoP proof (RFC 9449, section 4.2; issue 26 item 5): typ dpop+jwt,
// alg ES256, the public key (no d) in jwk, htm, htu without query,
// fragment or user info, iat, a fresh jti, ath for a resource request,
// nonce when given; signed by the key.
func TestDPoPProof(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	sum := sha256.Sum256([]byte("tok-a"))
	ath := base64.RawURLEncoding.EncodeToString(sum[:])
	tests := []struct {
		name, method, target, token, nonce string
		want                               map[string]any // claims but jti
	}{
		{name: "token request", method: "POST", target: "https://as.example/token",
			want: map[string]any{"htm": "POST", "htu": "https://as.example/token", "iat": float64(now.Unix())}},
		{name: "resource request with nonce", method: "POST", target: "https://u:p@mcp.example/mcp?a=1#f", token: "tok-a", nonce: "n-1",
			want: map[string]any{"htm": "POST", "htu": "https://mcp.example/mcp", "iat": float64(now.Unix()), "ath": ath, "nonce": "n-1"}},
		{name: "GET with an empty query", method: "GET", target: "https://mcp.example/mcp?", token: "tok-a",
			want: map[string]any{"htm": "GET", "htu": "https://mcp.example/mcp", "iat": float64(now.Unix()), "ath": ath}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, _ := url.Parse(tt.target)
			jtis := map[string]bool{}
			for range 2 {
				p, err := proof(key, tt.method, u, tt.token, tt.nonce, now)
				if err != nil {
					t.Fatal(err)
				}
				claims := jwt.MapClaims{}
				tok, err := jwt.ParseWithClaims(p, claims, func(tok *jwt.Token) (any, error) { return &key.PublicKey, nil },
					jwt.WithValidMethods([]string{"ES256"}), jwt.WithTimeFunc(func() time.Time { return now }))
				if err != nil {
					t.Fatalf("proof does not verify: %v", err)
				}
				jwk, _ := tok.Header["jwk"].(map[string]any)
				if tok.Header["typ"] != "dpop+jwt" || tok.Header["alg"] != "ES256" || jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk["d"] != nil || len(jwk) != 4 {
					t.Errorf("header = %v", tok.Header)
				}
				jti, _ := claims["jti"].(string)
				if len(jti) < 16 || jtis[jti] {
					t.Errorf("jti %q short or reused", jti)
				}
				jtis[jti] = true
				delete(claims, "jti")
				if d := cmp.Diff(tt.want, map[string]any(claims)); d != "" {
					t.Errorf("claims (-want +got):\n%s", d)
				}
				if strings.Contains(p, "tok-a") {
					t.Error("the proof holds the access token")
				}
			}
		})
	}
}

// A server's nonce is used only when bounded and printable (a hostile
// server's bytes go into a signed header).
func TestDPoPValidNonce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		nonce string
		want  bool
	}{
		{"abc-123_~.", true},
		{"", false},
		{strings.Repeat("n", maxDPoPNonceBytes), true},
		{strings.Repeat("n", maxDPoPNonceBytes+1), false},
		{"a b", false},
		{"a\"b", false},
		{"a\\b", false},
		{"a\nb", false},
		{"é", false},
	}
	for _, tt := range tests {
		if got := validNonce(tt.nonce); got != tt.want {
			t.Errorf("validNonce(%q) = %v, want %v", tt.nonce, got, tt.want)
		}
	}
}

// The stored key reads back as the same key; anything else is no key.
func TestDPoPKeyEncoding(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeDPoPKey(encodeDPoPKey(key)); got == nil || !got.Equal(key) {
		t.Error("the key does not read back")
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "!!", "AAAA", encodeDPoPKey(p384)} {
		if decodeDPoPKey(s) != nil {
			t.Errorf("decodeDPoPKey(%.10q) is a key", s)
		}
	}
}
