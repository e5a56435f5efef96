package resource

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// Secret references keep credentials out of the stored documents: an env
// value, a header value or an argument may hold ${env:NAME} (read from the
// host process's environment) or ${secret:NAME} (asked of the host's
// SecretResolver). They are resolved only when a server starts, into the
// launch or the request, and never written back. ${env:NAME:-DEFAULT}
// gives the literal DEFAULT (no '$' nor '}') when NAME is unset or empty,
// or when the host does not bind NAME to the registration, as the shells
// and other MCP hosts read ${NAME:-DEFAULT}. $${ writes a literal ${. A
// NAME is at most 128 bytes and a resolved value at most 64 KiB (fixed).

// Limits of secret references.
const (
	// maxSecretNameBytes bounds the NAME of one reference.
	maxSecretNameBytes = 128
	// maxSecretValueBytes bounds one resolved value: a resolver or an
	// environment variable that returns more fails the start.
	maxSecretValueBytes = 64 << 10
)

// SecretResolver resolves the ${secret:NAME} references of a server. ref
// is the registration the reference belongs to, so a host can bind a
// secret to the servers allowed to use it. Its error is never shown: the
// start fails with a message that names the reference only. It must be
// safe for concurrent use.
type SecretResolver interface {
	Resolve(ctx context.Context, ref Ref, name string) (string, error)
}

// SecretResolverFunc is a func used as a SecretResolver, so a host needs
// no type of its own to set LaunchEnv.Secrets:
//
//	Secrets: resource.SecretResolverFunc(func(ctx context.Context, ref resource.Ref, name string) (string, error) {
//		return vault.Read(ctx, string(ref)+"/"+name)
//	}),
//
// Its Resolve calls f; f must be safe for concurrent use.
type SecretResolverFunc func(ctx context.Context, ref Ref, name string) (string, error)

// Resolve calls f(ctx, ref, name); a nil f resolves nothing (an error,
// which the caller reports as a SecretError naming the reference).
func (f SecretResolverFunc) Resolve(ctx context.Context, ref Ref, name string) (string, error) {
	if f == nil {
		return "", errors.New("resource: LaunchEnv.Secrets is a nil SecretResolverFunc; set it to a func")
	}
	return f(ctx, ref, name)
}

// SecretError says why a secret reference could not be resolved. It names
// the field (a JSON pointer inside the server entry, like "/env/API_KEY")
// and the reference as written (like "${secret:github}"), never a value
// nor the resolver's own error.
type SecretError struct {
	Field     string
	Reference string
	Message   string
	Fix       string

	// unset: the variable is not readable (not bound, not set), so that
	// a reference with a default takes the default.
	unset bool
}

func (e *SecretError) Error() string {
	s := "resource: secret reference " + e.Reference + " in " + e.Field + ": " + e.Message
	if e.Fix != "" {
		s += " (fix: " + e.Fix + ")"
	}
	return s
}

// resolver resolves one reference of kind "env" or "secret".
type resolver func(kind, name string) (string, error)

// bind returns the resolver of the secret references of one start of ref
// under ctx, for ResolveLaunch and a remote server's headers and oauth
// secrets (package mcpconn resolves them at a connect, through
// internal/resourcefn.BindSecrets): ${env:NAME} as SecretEnv binds it,
// ${secret:NAME} by Secrets. A nil s resolves none.
func (s *LaunchEnv) bind(ctx context.Context, ref Ref) func(kind, name string) (string, error) {
	return func(kind, name string) (string, error) {
		var v string
		switch kind {
		case "env":
			if s == nil || !envBound(ref, name, s.SecretEnv) {
				// Bound per registration: an agent that registers its own
				// server gets no host variable the host did not bind to it.
				fix := "have the host bind it to this registration, as REF=NAME in the allowed reference env names (" + s.field("SecretEnv") + "), or use a ${secret:...} reference"
				if s != nil && envAllowed(name, bareEntries(s.SecretEnv)) {
					// The form of entries changed: say so rather than leave a
					// host that lists the bare name guessing.
					fix = "the allowed reference env names (" + s.field("SecretEnv") + ") list this name without a registration, which binds nothing: write REF=NAME for the registrations that may read it, or *=NAME for all"
				}
				return "", &SecretError{Message: "the host does not let registration " + string(ref) + " read this environment variable", Fix: fix, unset: true}
			}
			environ := s.Environ
			if environ == nil {
				environ = os.Environ
			}
			found := false
			for _, kv := range environ() {
				if k, val, ok := strings.Cut(kv, "="); ok && k == name {
					v, found = val, true
				}
			}
			if !found {
				return "", &SecretError{Message: "the environment variable is not set in the host process", Fix: "set it in the host's environment", unset: true}
			}
		case "secret":
			if s == nil || s.Secrets == nil {
				return "", &SecretError{Message: "no secret resolver is configured", Fix: "give the host a SecretResolver (" + s.field("Secrets") + "), or use an allowed ${env:...} reference"}
			}
			var err error
			v, err = s.Secrets.Resolve(ctx, ref, name)
			if err != nil {
				// The resolver's text may quote what it looked up: dropped.
				return "", &SecretError{Message: "the secret resolver failed", Fix: "check that the resolver knows this secret and allows it for this server"}
			}
		}
		if len(v) > maxSecretValueBytes {
			return "", &SecretError{Message: fmt.Sprintf("the resolved value is longer than %d bytes", maxSecretValueBytes), Fix: "store a shorter value"}
		}
		return v, nil
	}
}

// bareEntries returns the entries of allow that name no registration.
func bareEntries(allow []string) []string {
	var bare []string
	for _, a := range allow {
		if !strings.Contains(a, "=") {
			bare = append(bare, a)
		}
	}
	return bare
}

// envBound reports whether a SecretEnv entry REF=NAME lets registration
// ref read the host variable name; each side is matched as an env name
// list entry (exact, or a prefix ending in '*').
func envBound(ref Ref, name string, allow []string) bool {
	for _, a := range allow {
		r, n, ok := strings.Cut(a, "=")
		if ok && envAllowed(string(ref), []string{r}) && envAllowed(name, []string{n}) {
			return true
		}
	}
	return false
}

// Placeholder scanning: one scanner for validation, launch and headers.

// token is one piece of a value: literal text, or a ${...} placeholder.
type token struct {
	lit    string // literal text (escapes already undone) when kind == ""
	kind   string // "env", "secret", or "cwd" (for ${cwd} and ${workspace})
	name   string
	def    string // the default of ${env:NAME:-DEFAULT}
	hasDef bool
	raw    string // the placeholder as written
}

// scanValue splits s into literal text and placeholders. $${ is a literal
// ${. It returns a finding-style message and fix for a malformed
// placeholder; cwdPlaceholders says whether ${cwd} and ${workspace} exist
// in this field.
func scanValue(s string, cwdPlaceholders bool) ([]token, string, string) {
	var out []token
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, token{lit: lit.String()})
			lit.Reset()
		}
	}
	known := "${env:NAME} and ${secret:NAME}"
	if cwdPlaceholders {
		known = "${cwd}, ${workspace}, " + known
	}
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			lit.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			lit.WriteByte(s[i])
			i++
			continue
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			return nil, "unclosed ${ placeholder; only " + known + " exist", "close it with }, or write $${ for a literal ${"
		}
		body := s[i+2 : i+2+j]
		raw := s[i : i+3+j]
		i += 3 + j
		kind, name, hasKind := strings.Cut(body, ":")
		switch {
		case !hasKind && (body == "cwd" || body == "workspace") && cwdPlaceholders:
			flush()
			out = append(out, token{kind: "cwd", raw: raw})
		case hasKind && kind == "env" && strings.Contains(name, ":-"):
			// ${env:NAME:-DEFAULT}: the default is literal text.
			n, def, _ := strings.Cut(name, ":-")
			if !validEnvRefName(n) {
				return nil, "malformed reference name: an env name is letters, digits and _, not starting with a digit", "write ${env:API_TOKEN:-default}"
			}
			if !literalEnvDefault(def) {
				return nil, "the default of an env reference is literal text: it may not hold $ or another reference", "write the default value itself, like ${env:LEVEL:-info}"
			}
			flush()
			out = append(out, token{kind: "env", name: n, def: def, hasDef: true, raw: raw})
		case hasKind && kind == "env" && validEnvRefName(name):
			flush()
			out = append(out, token{kind: "env", name: name, raw: raw})
		case hasKind && kind == "secret" && validSecretName(name):
			flush()
			out = append(out, token{kind: "secret", name: name, raw: raw})
		case hasKind && (kind == "env" || kind == "secret"):
			return nil, "malformed reference name: an env name is letters, digits and _, not starting with a digit; a secret name is letters, digits and . _ - /", "write ${env:API_TOKEN} or ${secret:github-token}"
		default:
			return nil, "unknown placeholder; only " + known + " exist (environment variables are written ${env:NAME})", "use one of them, or write $${ for a literal ${"
		}
	}
	flush()
	return out, "", ""
}

// literalEnvDefault: the default of ${env:NAME:-DEFAULT} is literal text.
func literalEnvDefault(def string) bool { return strings.IndexByte(def, '$') < 0 }

func validEnvRefName(n string) bool {
	if n == "" || len(n) > maxSecretNameBytes || n[0] >= '0' && n[0] <= '9' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func validSecretName(n string) bool {
	if n == "" || len(n) > maxSecretNameBytes {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/", c) >= 0) {
			return false
		}
	}
	return true
}

// expandValue resolves the placeholders of one value. cwd == "" means the
// field has no ${cwd}; resolve == nil leaves references as written (a
// static check). forbidden lists bytes a resolved value may not hold here.
func expandValue(field, s, cwd string, resolve resolver, forbidden string) (string, error) {
	toks, msg, fix := scanValue(s, cwd != "")
	if msg != "" {
		return "", &SecretError{Field: field, Reference: "${", Message: msg, Fix: fix}
	}
	var b strings.Builder
	for _, t := range toks {
		switch t.kind {
		case "":
			if resolve == nil {
				// Keep the escape: the value is still in stored form.
				b.WriteString(strings.ReplaceAll(t.lit, "${", "$${"))
			} else {
				b.WriteString(t.lit)
			}
		case "cwd":
			b.WriteString(cwd)
		default:
			if resolve == nil {
				b.WriteString(t.raw)
				continue
			}
			v, err := resolve(t.kind, t.name)
			var se *SecretError
			if t.hasDef && (err == nil && v == "" || errors.As(err, &se) && se.unset) {
				v, err = t.def, nil
			}
			if err != nil {
				se, ok := err.(*SecretError)
				if !ok {
					se = &SecretError{Message: "resolving the reference failed"}
				}
				return "", &SecretError{Field: field, Reference: t.raw, Message: se.Message, Fix: se.Fix}
			}
			if strings.ContainsAny(v, forbidden) {
				return "", &SecretError{Field: field, Reference: t.raw, Message: "the resolved value holds a byte not allowed here (NUL, or a line break in a header)", Fix: "store the value without it"}
			}
			b.WriteString(v)
		}
	}
	return b.String(), nil
}

// resolveHeaders returns a copy of a remote server's headers with their
// secret references resolved by resolve (from LaunchEnv.bind) and $${
// unescaped. Errors are *SecretError, without values.
func resolveHeaders(headers map[string]string, resolve func(kind, name string) (string, error)) (map[string]string, error) {
	if len(headers) == 0 {
		return headers, nil
	}
	if resolve == nil {
		resolve = (&LaunchEnv{}).bind(context.Background(), "")
	}
	out := make(map[string]string, len(headers))
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		v, err := expandValue("/headers"+pointer(k), headers[k], "", resolve, "\r\n\x00")
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}
