// Package resourcefn hands agt's own packages (mcpconn, agt, cmd/agt)
// functions of package resource that a host has no use for: the binding
// of a start's secret references to its registration, the resolution of
// a remote server's headers and oauth secrets at a start, the literal
// credentials a connection scrubs, the masking of a URL or an argument
// vector in an error or a listing, the option a LaunchEnv's fix texts
// name, and the scheme of a store URL. Package resource sets every variable in its
// init, so they are set in any program that imports resource (every
// caller does); the code stays in resource, next to the unexported rules
// it is made of (the scan of secret references, the credential
// heuristics), and so stays one implementation.
//
// This is the accessor pattern of grpc-go's and protobuf's internal
// packages: resource may import nothing of agt's but leaf packages, and
// these functions are plumbing between agt's packages, not API. Since
// this package may not import resource, the two that take a
// *resource.LaunchEnv take it as any.
package resourcefn

import "context"

// ResolveHeaders returns a copy of a remote server's headers with their
// secret references resolved by resolve (from BindSecrets; nil
// resolves none) and $${ unescaped. Errors are *resource.SecretError,
// without values.
var ResolveHeaders func(headers map[string]string, resolve func(kind, name string) (string, error)) (map[string]string, error)

// ResolveOAuthSecret resolves one secret reference of the oauth field
// (client_secret, private_key, idp_client_secret or assertion, named by
// key) with resolve (from BindSecrets). "" stays "". Errors
// are *resource.SecretError naming the field and the reference, without
// values.
var ResolveOAuthSecret func(key, value string, resolve func(kind, name string) (string, error)) (string, error)

// MaskURL hides a URL's user info, query and fragment, and its path when
// a segment looks like a credential or is an opaque token; scheme, host
// and a plain path stay, so the reader knows which server it is. A URL
// with nothing to hide is returned as it is; one that does not parse is
// masked whole. The mask is resource's, "[redacted]".
var MaskURL func(raw string) string

// MaskArgs returns args with credentials hidden: the value of a flag that
// names a credential (--token X, --api-key=X), of an assignment to such a
// name (-e DB_PASSWORD=X), of a credential header (-H "Authorization:
// Bearer X"), an argument that looks like a credential, and the user
// info, query and secret-looking path of a URL. References stay. An
// argument with nothing to hide is returned as it is.
var MaskArgs func(args []string) []string

// StoreScheme returns the scheme of a store URL ("postgres" for
// "postgres://..."), or "" when store is not a URL (a file path): the
// rule resource.OpenStore looks its opener up by.
var StoreScheme func(store string) string

// EnvRefName reports whether name may stand in ${env:NAME}: letters,
// digits and _, not starting with a digit, at most 128 bytes.
var EnvRefName func(name string) bool

// CredentialValues returns the credentials a server's args, env values,
// headers and url hold as literal text, for a connection that masks them
// in what its server sends back: every env value's literal text, the
// values of credential headers and of headers that look like one, the
// credential arguments, the url's user info, credential query values and
// token-like path segments ("Bearer x" gives x too). References are not
// there. The result may hold duplicates and short texts.
var CredentialValues func(args []string, env, headers map[string]string, url string) []string

// BindSecrets returns the resolver of the secret references of one start
// of registration ref under ctx: env (a *resource.LaunchEnv, nil for none)
// resolves ${env:NAME} as its SecretEnv binds it and ${secret:NAME} by its
// Secrets. It is what resource.ResolveLaunch, ResolveHeaders and
// ResolveOAuthSecret take as resolve.
var BindSecrets func(env any, ctx context.Context, ref string) func(kind, name string) (string, error)

// SetLaunchEnvOption records on env (a *resource.LaunchEnv) the option the
// host set it through, which the fix texts of its launch and secret errors
// name ("mcpconn.ConnectorOptions.LaunchEnv"): agt.Host gives its Service
// the Connector's, and a Service names its own option otherwise.
var SetLaunchEnvOption func(env any, option string)

// LiteralEnvDefault reports whether def may be the DEFAULT of
// ${env:NAME:-DEFAULT}: literal text, without $.
var LiteralEnvDefault func(def string) bool
