package resource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/internal/mcpdoc"
)

// maxOAuthScopes bounds the scopes of one oauth field.
const maxOAuthScopes = 64

// MCPOAuth says that a remote server is reached with OAuth, and what the
// host knows beforehand; the rest (the authorization server, its
// endpoints, the scopes) is discovered from the server. It is
// configuration: it holds no token and no secret value, only references.
type MCPOAuth struct {
	// ClientID is a client pre-registered with the authorization server.
	// "" means none: the client is registered by a client ID metadata
	// document or dynamically.
	ClientID string `json:"client_id,omitempty"`
	// ClientSecret is the pre-registered client's secret, as a
	// ${secret:NAME} reference only; "" means a public client.
	ClientSecret string `json:"client_secret,omitempty"`
	// PrivateKey is the PEM private key (RSA or EC P-256) that signs the
	// client assertion of private_key_jwt, as a ${secret:NAME} reference
	// only. "" means none.
	PrivateKey string `json:"private_key,omitempty"`
	// Scopes are the scopes asked for. Nil means the ones the server
	// names (its WWW-Authenticate challenge, then its scopes_supported).
	Scopes []string `json:"scopes,omitempty"`
	// Registration is how the client is registered: "auto" (or "") uses
	// the pre-registered client (ClientID) if there is one, else the
	// client ID metadata document where the authorization server
	// supports it, else dynamic registration (deprecated), the order of
	// the MCP 2026-07-28 client registration; "preregistered", "dynamic"
	// and "metadata_document" use that one only.
	Registration string `json:"registration,omitempty"`
	// ClientMetadataURL is the https URL of the host's client ID metadata
	// document; "" means the host's default (if any).
	ClientMetadataURL string `json:"client_metadata_url,omitempty"`
	// Grant is "authorization_code" (or "", a person logs in),
	// "client_credentials" (a machine-to-machine host: ClientID with
	// ClientSecret or PrivateKey, no person), "enterprise"
	// (enterprise-managed authorization: the host's ID token is exchanged
	// at the enterprise IdP for an identity assertion grant, RFC 8693,
	// which the pre-registered client trades for the access token, RFC
	// 7523) or "workload_identity" (workload identity federation: the
	// host's workload identity token, Assertion, is traded for the access
	// token with the jwt-bearer grant of RFC 7523, with no person).
	Grant string `json:"grant,omitempty"`
	// TokenEndpointAuth is how the client authenticates to the token
	// endpoint: "" (what the authorization server supports),
	// "client_secret_basic", "client_secret_post", "none", or
	// "private_key_jwt" (client_credentials with PrivateKey).
	TokenEndpointAuth string `json:"token_endpoint_auth,omitempty"`
	// IdPIssuer is the enterprise IdP's issuer URL (grant "enterprise"):
	// its metadata names the token endpoint of the exchange. "" means
	// none.
	IdPIssuer string `json:"idp_issuer,omitempty"`
	// IdPClientID is the client registered at the IdP (grant
	// "enterprise"). "" means none.
	IdPClientID string `json:"idp_client_id,omitempty"`
	// IdPClientSecret is that client's secret, as a ${secret:NAME}
	// reference only; "" means a public client at the IdP.
	IdPClientSecret string `json:"idp_client_secret,omitempty"`
	// AuthorizationServer pins the issuer of the authorization server
	// that may receive ClientSecret or PrivateKey: an https URL (http on a
	// loopback host only). "" means only an authorization server on the
	// MCP server's own origin (scheme, host and port) receives them; the
	// server's metadata names the authorization server, so without the
	// pin a hostile server could name one that collects the secret.
	AuthorizationServer string `json:"authorization_server,omitempty"`
	// Assertion is the workload identity token of grant
	// "workload_identity", as a ${secret:NAME} reference only, resolved
	// anew at each exchange (a rotated token is picked up). "" means none.
	Assertion string `json:"assertion,omitempty"`
}

// oauthFields lists the fields of the oauth object, with what each must be.
func oauthFields(o *MCPOAuth) []serverField {
	return []serverField{
		{"assertion", &o.Assertion, "a string"},
		{"authorization_server", &o.AuthorizationServer, "a string"},
		{"client_id", &o.ClientID, "a string"},
		{"client_metadata_url", &o.ClientMetadataURL, "a string"},
		{"client_secret", &o.ClientSecret, "a string"},
		{"grant", &o.Grant, "a string"},
		{"idp_client_id", &o.IdPClientID, "a string"},
		{"idp_client_secret", &o.IdPClientSecret, "a string"},
		{"idp_issuer", &o.IdPIssuer, "a string"},
		{"private_key", &o.PrivateKey, "a string"},
		{"registration", &o.Registration, "a string"},
		{"scopes", &o.Scopes, "an array of strings"},
		{"token_endpoint_auth", &o.TokenEndpointAuth, "a string"},
	}
}

func oauthFieldNames() []string {
	var names []string
	for _, f := range oauthFields(&MCPOAuth{}) {
		names = append(names, f.key)
	}
	return names
}

// checkOAuth checks the oauth field (raw as written) of a remote server
// and returns it decoded; field is its JSON pointer.
func checkOAuth(field string, raw json.RawMessage) (*MCPOAuth, []Finding) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, []Finding{errf(field, findcode.WrongType, "oauth must be an object, not null", `leave the field out, or write {} to use OAuth with everything discovered`)}
	}
	obj, ok := decodeObject(raw)
	if !ok {
		return nil, []Finding{errf(field, findcode.WrongType, "oauth must be an object", `write {"client_id": "...", "scopes": ["..."]}, or {} to discover everything`)}
	}
	var fs []Finding
	sub := func(k string) string { return field + pointer(k) }
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !contains(oauthFieldNames(), k) {
			fs = append(fs, unknownField(sub(k), oauthFieldNames()))
		}
	}
	o := &MCPOAuth{}
	for _, f := range oauthFields(o) {
		if v, ok := obj[f.key]; ok {
			if err := json.Unmarshal(v, f.into); err != nil {
				fs = append(fs, errf(sub(f.key), findcode.WrongType, f.key+" must be "+f.want, "write it as "+f.want))
			}
		}
	}
	fs = append(fs, checkText(sub("client_id"), o.ClientID, false)...)
	for _, s := range []struct{ k, v string }{{"client_secret", o.ClientSecret}, {"private_key", o.PrivateKey}, {"idp_client_secret", o.IdPClientSecret}, {"assertion", o.Assertion}} {
		if s.v != "" && !isSecretReference(s.v) {
			fs = append(fs, errf(sub(s.k), findcode.OAuth, s.k+" must be a single ${secret:NAME} reference; a value written in the document is refused", "store the value with the host's secret resolver and write ${secret:NAME}"))
		}
	}
	if len(o.Scopes) > maxOAuthScopes {
		fs = append(fs, errf(sub("scopes"), findcode.Limit, fmt.Sprintf("scopes holds %d items; the limit is %d", len(o.Scopes), maxOAuthScopes), "ask for fewer scopes"))
	} else {
		for i, s := range o.Scopes {
			if !validScope(s) {
				fs = append(fs, errf(sub("scopes")+pointer(fmt.Sprint(i)), findcode.OAuth, "a scope must be 1 to 256 printable ASCII characters without spaces, quotes or backslashes", "write one scope per item"))
			}
		}
	}
	enum := func(k, v string, allowed ...string) {
		if v != "" && !contains(allowed, v) {
			fs = append(fs, errf(sub(k), findcode.OAuth, k+" is not one of "+strings.Join(allowed, ", "), "write one of them, or leave the field out"))
		}
	}
	enum("registration", o.Registration, mcpdoc.Registrations...)
	enum("grant", o.Grant, mcpdoc.Grants...)
	enum("token_endpoint_auth", o.TokenEndpointAuth, mcpdoc.Auths...)
	if o.ClientMetadataURL != "" {
		if u, err := url.Parse(o.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" || len(o.ClientMetadataURL) > 2048 {
			fs = append(fs, errf(sub("client_metadata_url"), findcode.OAuth, "client_metadata_url must be an https URL with a path (the client ID metadata document)", `write it like "https://host.example.com/oauth/client.json"`))
		}
	}
	if o.AuthorizationServer != "" && !validIssuerURL(o.AuthorizationServer) {
		fs = append(fs, errf(sub("authorization_server"), findcode.OAuth, "authorization_server must be the issuer URL of the authorization server: https (http only on a loopback host), with a host, without query or fragment", `write it like "https://auth.example.com"`))
	}
	if o.Registration == mcpdoc.RegistrationPreregistered && o.ClientID == "" {
		fs = append(fs, errf(sub("client_id"), findcode.OAuth, `registration "preregistered" needs client_id`, "set client_id (and client_secret for a confidential client)"))
	}
	if (o.ClientSecret != "" || o.PrivateKey != "") && o.ClientID == "" {
		fs = append(fs, errf(sub("client_id"), findcode.OAuth, "a client secret or private key needs the client_id it belongs to", "set client_id"))
	}
	switch o.TokenEndpointAuth {
	case mcpdoc.AuthClientSecretBasic, mcpdoc.AuthClientSecretPost:
		if o.ClientSecret == "" {
			fs = append(fs, errf(sub("client_secret"), findcode.OAuth, "token_endpoint_auth "+o.TokenEndpointAuth+" needs client_secret", "set client_secret to a ${secret:NAME} reference"))
		}
	case mcpdoc.AuthPrivateKeyJWT:
		if o.PrivateKey == "" {
			fs = append(fs, errf(sub("private_key"), findcode.OAuth, "token_endpoint_auth private_key_jwt needs private_key", "set private_key to a ${secret:NAME} reference holding a PEM key"))
		}
		if o.Grant != mcpdoc.GrantClientCredentials {
			fs = append(fs, errf(sub("token_endpoint_auth"), findcode.OAuth, "private_key_jwt is supported with the client_credentials grant only", `set grant to "client_credentials"`))
		}
	}
	if o.PrivateKey != "" && o.TokenEndpointAuth != mcpdoc.AuthPrivateKeyJWT {
		fs = append(fs, errf(sub("private_key"), findcode.OAuth, "private_key is used only with token_endpoint_auth private_key_jwt", `set token_endpoint_auth to "private_key_jwt", or remove private_key`))
	}
	if o.Grant == mcpdoc.GrantClientCredentials {
		if o.ClientID == "" {
			fs = append(fs, errf(sub("client_id"), findcode.OAuth, "the client_credentials grant needs client_id", "set client_id and client_secret (or private_key)"))
		} else if o.ClientSecret == "" && o.PrivateKey == "" {
			fs = append(fs, errf(sub("client_secret"), findcode.OAuth, "the client_credentials grant needs client_secret or private_key", "set one of them to a ${secret:NAME} reference"))
		}
		if o.Registration != "" && o.Registration != mcpdoc.RegistrationAuto && o.Registration != mcpdoc.RegistrationPreregistered {
			fs = append(fs, errf(sub("registration"), findcode.OAuth, "the client_credentials grant uses the pre-registered client only", `leave registration out or write "preregistered"`))
		}
	}
	fs = append(fs, checkEnterprise(sub, o)...)
	fs = append(fs, checkWorkloadIdentity(sub, o)...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Field < fs[j].Field })
	return o, fs
}

// checkEnterprise checks the fields of the enterprise grant: they belong
// to it, and it needs them.
func checkEnterprise(sub func(string) string, o *MCPOAuth) []Finding {
	var fs []Finding
	fs = append(fs, checkText(sub("idp_client_id"), o.IdPClientID, false)...)
	if o.Grant != mcpdoc.GrantEnterprise {
		for _, f := range []struct{ k, v string }{{"idp_issuer", o.IdPIssuer}, {"idp_client_id", o.IdPClientID}, {"idp_client_secret", o.IdPClientSecret}} {
			if f.v != "" {
				fs = append(fs, errf(sub(f.k), findcode.OAuth, f.k+` is used only with grant "enterprise"`, `set grant to "enterprise", or remove `+f.k))
			}
		}
		return fs
	}
	if o.IdPIssuer == "" {
		fs = append(fs, errf(sub("idp_issuer"), findcode.OAuth, `grant "enterprise" needs idp_issuer`, `set idp_issuer to the IdP's issuer URL, like "https://idp.example.com"`))
	} else if !validIssuerURL(o.IdPIssuer) {
		fs = append(fs, errf(sub("idp_issuer"), findcode.OAuth, "idp_issuer must be an https URL (http only on a loopback host) without query or fragment", `write it like "https://idp.example.com"`))
	}
	if o.IdPClientID == "" {
		fs = append(fs, errf(sub("idp_client_id"), findcode.OAuth, `grant "enterprise" needs idp_client_id`, "set idp_client_id to the client registered at the IdP"))
	}
	if o.ClientID == "" {
		fs = append(fs, errf(sub("client_id"), findcode.OAuth, `grant "enterprise" needs client_id`, "set client_id (and client_secret) to the client registered at the server's authorization server"))
	}
	if o.Registration != "" && o.Registration != mcpdoc.RegistrationAuto && o.Registration != mcpdoc.RegistrationPreregistered {
		fs = append(fs, errf(sub("registration"), findcode.OAuth, `grant "enterprise" uses the pre-registered client only`, `leave registration out or write "preregistered"`))
	}
	return fs
}

// checkWorkloadIdentity checks the field of the workload identity grant:
// it belongs to it, and it needs it.
func checkWorkloadIdentity(sub func(string) string, o *MCPOAuth) []Finding {
	if o.Grant != mcpdoc.GrantWorkloadIdentity {
		if o.Assertion != "" {
			return []Finding{errf(sub("assertion"), findcode.OAuth, `assertion is used only with grant "workload_identity"`, `set grant to "workload_identity", or remove assertion`)}
		}
		return nil
	}
	var fs []Finding
	if o.Assertion == "" {
		fs = append(fs, errf(sub("assertion"), findcode.OAuth, `grant "workload_identity" needs assertion`, "set assertion to a ${secret:NAME} reference the host's secret resolver answers with the workload identity token"))
	}
	if o.Registration != "" && o.Registration != mcpdoc.RegistrationAuto && o.Registration != mcpdoc.RegistrationPreregistered {
		fs = append(fs, errf(sub("registration"), findcode.OAuth, `grant "workload_identity" uses the pre-registered client (or none) only`, `leave registration out or write "preregistered"`))
	}
	return fs
}

// validIssuerURL reports whether s can be an issuer (RFC 8414 section 2):
// https, or http on a loopback host (a local test server), with a host
// and neither query nor fragment, at most 2048 bytes.
func validIssuerURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || len(s) > 2048 || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		if h == "localhost" {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

// isSecretReference reports whether s is exactly one ${secret:NAME}
// reference and nothing else.
func isSecretReference(s string) bool {
	toks, msg, _ := scanValue(s, false)
	return msg == "" && len(toks) == 1 && toks[0].kind == "secret"
}

// validScope reports whether s is a scope-token of RFC 6749 section 3.3,
// at most 256 bytes.
func validScope(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// resolveOAuthSecret resolves one secret reference of the oauth field
// (client_secret, private_key, idp_client_secret or assertion, named by
// key) with resolve (from
// LaunchEnv.bind). "" stays "". Errors are *SecretError naming the field
// and the reference, without values.
func resolveOAuthSecret(key, value string, resolve func(kind, name string) (string, error)) (string, error) {
	if value == "" {
		return "", nil
	}
	field := "/oauth" + pointer(key)
	if !isSecretReference(value) {
		return "", &SecretError{Field: field, Reference: "${", Message: "the value is not a single ${secret:NAME} reference", Fix: "write ${secret:NAME} and store the value with the host's secret resolver"}
	}
	if resolve == nil {
		resolve = (&LaunchEnv{}).bind(context.Background(), "")
	}
	return expandValue(field, value, "", resolve, "\x00")
}
