// Package mcpdoc is the one home of the closed sets of values of a stored
// MCP document's fields (docs/registrations.md): the eras and protocol
// versions protocol_version may pin, and the values of the oauth object's
// registration, grant and token_endpoint_auth. Package resource's decoder
// judges a document with them; mcpconn and cmd/agt act on them.
//
// They are values of a document's JSON, not Go API: a host writes them as
// strings in the document and has no need to name them in code.
// docs/registrations.md documents each (a test checks that it names every
// one).
package mcpdoc

// The eras protocol_version may name instead of a version: the newest
// version of the era.
const (
	EraModern = "modern"
	EraLegacy = "legacy"
)

// ProtocolVersions lists the MCP protocol versions protocol_version may
// pin, newest first: the modern one, then the legacy ones (with the
// initialize handshake).
func ProtocolVersions() []string {
	return []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// Values of oauth.registration.
const (
	RegistrationAuto             = "auto"
	RegistrationPreregistered    = "preregistered"
	RegistrationDynamic          = "dynamic"
	RegistrationMetadataDocument = "metadata_document"
)

// Values of oauth.grant.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantEnterprise is enterprise-managed authorization: the host's ID
	// token is exchanged at the enterprise IdP for an identity assertion
	// grant (RFC 8693), which the pre-registered client trades for the
	// access token at the server's authorization server (RFC 7523).
	GrantEnterprise = "enterprise"
	// GrantWorkloadIdentity is workload identity federation: the host's
	// workload identity token (a Kubernetes service account token, a
	// cloud's identity token), named by oauth.assertion, is traded for the
	// access token at the server's authorization server with the
	// jwt-bearer grant (RFC 7523), with no person.
	GrantWorkloadIdentity = "workload_identity"
)

// Values of oauth.token_endpoint_auth.
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// Registrations, Grants and Auths list the values of each oauth field, in
// the order of the messages that name them.
var (
	Registrations = []string{RegistrationAuto, RegistrationPreregistered, RegistrationDynamic, RegistrationMetadataDocument}
	Grants        = []string{GrantAuthorizationCode, GrantClientCredentials, GrantEnterprise, GrantWorkloadIdentity}
	Auths         = []string{AuthNone, AuthClientSecretBasic, AuthClientSecretPost, AuthPrivateKeyJWT}
)
