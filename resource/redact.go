package resource

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/internal/weborigin"
)

// Redaction keeps credentials of MCP documents away from whoever reads
// them through a model: env and header values, URL user info and query,
// and argument values that look like credentials are replaced by Mask.
// Secret references (${env:NAME}, ${secret:NAME}) and ${cwd} stay as they
// are: they name a secret, they are not one. A write that sends a masked
// value back unchanged keeps the stored value (UnmaskMCP).

// Mask stands for a hidden value.
const Mask = "[redacted]"

// hider receives the credentials a mask stands for (credentialValues);
// a nil hider receives nothing.
type hider func(string)

func (h hider) hide(s string) {
	if h != nil && s != "" {
		h(s)
	}
}

// maskValue hides the literal parts of a value and keeps its references:
// "Bearer ${secret:api}" becomes "<redacted>${secret:api}".
func maskValue(s string) string { return maskValueTo(s, nil) }

// maskValueTo is maskValue, handing each literal part it hides to h.
func maskValueTo(s string, h hider) string {
	if s == "" {
		return ""
	}
	toks, msg, _ := scanValue(s, true)
	if msg != "" {
		h.hide(s)
		return Mask
	}
	var b strings.Builder
	lastMasked := false
	for _, t := range toks {
		if t.kind == "" {
			h.hide(t.lit)
			if !lastMasked {
				b.WriteString(Mask)
			}
			lastMasked = true
			continue
		}
		if t.hasDef && t.def != "" {
			// The default is a literal, and may be a credential.
			h.hide(t.def)
			b.WriteString("${env:" + t.name + ":-" + Mask + "}")
		} else {
			b.WriteString(t.raw)
		}
		lastMasked = false
	}
	return b.String()
}

// secretFlagWords are the parts of a flag name that say its value is a
// credential.
var secretFlagWords = []string{"token", "secret", "passw", "apikey", "api-key", "api_key", "auth", "credential", "bearer", "cookie", "session"}

// credentialFlag reports whether a command-line flag such as "--api-key"
// or "-password" takes a credential as its value.
func credentialFlag(flag string) bool {
	if !strings.HasPrefix(flag, "-") {
		return false
	}
	return credentialName(strings.TrimLeft(flag, "-"))
}

// credentialName reports whether the name of a flag, an environment
// variable or a header (API_TOKEN, x-api-key, Authorization) says its value
// is a credential.
func credentialName(name string) bool {
	name = strings.ToLower(name)
	if name == "key" || strings.HasSuffix(name, "-key") || strings.HasSuffix(name, "_key") {
		return true
	}
	for _, w := range secretFlagWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// secretPrefixes start well-known credential formats.
var secretPrefixes = []string{"sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-", "AKIA", "ASIA", "AIza", "ya29.", "eyJ", "Bearer ", "Basic "}

// looksLikeSecret reports whether s looks like a credential: a known
// token prefix, or a long run of letters and digits that mixes both.
func looksLikeSecret(s string) bool {
	for _, p := range secretPrefixes {
		if strings.HasPrefix(s, p) && len(s) > len(p)+4 {
			return true
		}
	}
	run, letters, digits := 0, false, false
	for i := 0; i <= len(s); i++ {
		var c byte
		if i < len(s) {
			c = s[i]
		}
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			run, letters = run+1, true
		case c >= '0' && c <= '9':
			run, digits = run+1, true
		case c == '-' || c == '_':
			run++
		default:
			if run >= 24 && letters && digits {
				return true
			}
			run, letters, digits = 0, false, false
		}
	}
	return false
}

// maskArgs returns args with credentials hidden: the value of a flag that
// names a credential (--token X, --api-key=X), of an assignment to such a
// name (-e DB_PASSWORD=X, --env=API_TOKEN=X), of a credential header
// (-H "Authorization: Bearer X", --header=Cookie:X), an argument that
// looks like a credential, and the user info, query and secret-looking
// path of a URL. References stay. An argument with nothing to hide is
// returned as it is.
func maskArgs(args []string) []string { return maskArgsTo(args, nil) }

// maskArgsTo is maskArgs, handing each credential it hides to h.
func maskArgsTo(args []string, h hider) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && credentialFlag(args[i-1]) && !strings.Contains(args[i-1], "=") && !strings.HasPrefix(a, "-") {
			out[i] = maskValueTo(a, h)
			continue
		}
		out[i] = maskArgTo(a, h)
	}
	return out
}

// maskArgTo hides the credentials inside one argument, handing them to h.
func maskArgTo(a string, h hider) string {
	if flag, val, ok := strings.Cut(a, "="); ok && credentialFlag(flag) {
		return flag + "=" + maskValueTo(val, h)
	}
	if strings.Contains(a, "://") {
		return maskURLTo(a, h)
	}
	// NAME=VALUE, alone or as a flag's value (--env=NAME=VALUE).
	prefix, rest := "", a
	if strings.HasPrefix(a, "-") {
		if flag, val, ok := strings.Cut(a, "="); ok {
			prefix, rest = flag+"=", val
		}
	}
	if name, val, ok := strings.Cut(rest, "="); ok && validEnvRefName(name) && credentialName(name) {
		return prefix + name + "=" + maskValueTo(val, h)
	}
	// "Name: value", alone or after a flag in the same argument
	// (--header=Name: value, "--header Name: value").
	if i := strings.IndexByte(a, ':'); i > 0 {
		head, val := a[:i], a[i+1:]
		name := head[strings.LastIndexAny(head, " =")+1:]
		if headerName(name) && credentialName(name) {
			v := strings.TrimLeft(val, " \t")
			return a[:len(a)-len(v)] + maskValueTo(v, h)
		}
	}
	if looksLikeSecret(a) {
		return maskValueTo(a, h)
	}
	return a
}

// headerName reports whether s can be an HTTP header name as written in
// command lines: letters, digits, '-' and '_'.
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// opaqueSegment reports whether a URL path segment is a long run of
// letters and digits with no separator, like the last segment of a
// webhook URL: words in paths are shorter, or joined by '-', '_' or '.'.
func opaqueSegment(seg string) bool {
	if len(seg) < 24 {
		return false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// maskURL hides a URL's user info, query and fragment, and its path when
// a segment looks like a credential (looksLikeSecret) or is an opaque
// token (a run of 24 or more letters and digits); scheme, host and a plain
// path stay, so the reader knows which server it is. A URL with nothing to
// hide is returned as it is; one that does not parse is masked whole.
func maskURL(raw string) string { return maskURLTo(raw, nil) }

// maskURLTo is maskURL, handing to h the credentials among what it hides:
// the user name, the password and user:password (what a Basic
// Authorization header carries), each token-like path segment, and the
// values of query parameters whose name says credential or that look like
// one; the whole text of a URL that does not parse. The fragment, which
// no request carries, is hidden but not handed on.
func maskURLTo(raw string, h hider) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || !utf8.ValidString(u.Host) {
		// A host escaped into bytes that are not text would not survive
		// the JSON of a read and a write back.
		h.hide(raw)
		return Mask
	}
	hidden := false
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme + "://")
	}
	if u.User != nil {
		b.WriteString(Mask + "@")
		hidden = true
		h.hide(u.User.Username())
		if pw, ok := u.User.Password(); ok {
			h.hide(pw)
			h.hide(u.User.Username() + ":" + pw)
		}
	}
	b.WriteString(u.Host)
	path := u.EscapedPath()
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if looksLikeSecret(seg) || opaqueSegment(seg) {
			path, hidden = "/"+Mask, true
			if h == nil {
				break
			}
			if plain, err := url.PathUnescape(seg); err == nil {
				seg = plain
			}
			h.hide(seg)
		}
	}
	b.WriteString(path)
	if u.RawQuery != "" {
		b.WriteString("?" + Mask)
		hidden = true
		if h != nil {
			for k, vs := range u.Query() {
				for _, v := range vs {
					if credentialName(k) || looksLikeSecret(v) {
						h.hide(v)
					}
				}
			}
		}
	} else if u.ForceQuery {
		b.WriteString("?")
	}
	if u.Fragment != "" {
		b.WriteString("#" + Mask)
		hidden = true
	}
	if !hidden {
		return raw
	}
	return b.String()
}

// redactServer returns a copy of srv with its credentials masked: every
// env and header value's literal text, the URL's user info and query, and
// credential-like arguments.
func redactServer(srv MCPServer) MCPServer {
	out := srv
	out.Args = maskArgs(srv.Args)
	out.Env = maskMap(srv.Env)
	out.Headers = maskMap(srv.Headers)
	out.URL = maskURL(srv.URL)
	return out
}

// credentialValues returns the credentials srv holds as literal text,
// for a connection that masks them in what its server sends back (package
// mcpconn does): the literal text of every env value; of the header
// values whose name says credential (Authorization, Cookie, X-Api-Key,
// ...) or whose text looks like one; the credential arguments RedactMCP
// hides in args; and the
// url's user info (user, password, user:password), credential query
// values and token-like path segments. A text of the form "Scheme
// credentials" (Bearer x, Basic x) gives its credentials alone too, and
// Basic also their decoded user:password. References are not there:
// their values exist only at a start. The result may hold duplicates and
// short texts, and says nothing about which field each came from.
// Package mcpconn and the CLI reach it through
// internal/resourcefn.CredentialValues.
func credentialValues(srv MCPServer) []string {
	var out []string
	h := hider(func(s string) {
		out = append(out, s)
		scheme, cred, ok := strings.Cut(s, " ")
		if !ok || cred == "" || strings.ContainsAny(cred, " \t") || !isWord(scheme) {
			return
		}
		out = append(out, cred)
		if strings.EqualFold(scheme, "basic") {
			if plain, err := base64.StdEncoding.DecodeString(cred); err == nil && utf8.Valid(plain) {
				out = append(out, string(plain))
			}
		}
	})
	for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
		maskValueTo(srv.Env[k], h)
	}
	for _, k := range slices.Sorted(maps.Keys(srv.Headers)) {
		credential := credentialName(k)
		maskValueTo(srv.Headers[k], func(lit string) {
			if credential || looksLikeSecret(lit) {
				h(lit)
			}
		})
	}
	maskArgsTo(srv.Args, h)
	maskURLTo(srv.URL, h)
	return out
}

// isWord reports whether s is a non-empty run of ASCII letters, like an
// HTTP authentication scheme.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func maskMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = maskValue(v)
	}
	return out
}

// RedactMCP returns an MCP document with each server entry's credentials
// masked: every env and header value's literal text, the URL's user info
// and query, and credential-like arguments. Only the known fields of the
// entries are kept (a stored document has no others); a document that
// does not decode becomes an empty object, since it cannot be checked.
func RedactMCP(data json.RawMessage) json.RawMessage {
	var doc struct {
		MCPServers map[string]MCPServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return json.RawMessage(`{}`)
	}
	for name, srv := range doc.MCPServers {
		doc.MCPServers[name] = redactServer(srv)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return out
}

// UnmaskMCP restores, in the data of an MCP write, the values sent back
// as the mask: a value equal to the masked form of the stored one becomes
// the stored one, so a writer who read a redacted document can patch other
// fields and send the rest back unchanged. It compares with the only
// server entry of stored, whatever the entry's name in data.
//
// A stored value is restored only for the destination it was written for
// (destination): header values and the url for the url's origin
// (scheme://host:port), env values and args for the same launch line: the command,
// the PATH of env it is looked up in, cwd and the other args. Else a writer could read a redacted credential
// and send it, by its mask, to a server of its own.
//
// It returns the new data, or a *DocumentError (errors.Is ErrInvalid)
// naming the field, within the document, of a mask it cannot restore: one
// whose destination changed, or one that matches no stored value (storing
// it would lose the secret).
func UnmaskMCP(stored, data json.RawMessage) (json.RawMessage, error) {
	if maskCount(data) == 0 {
		return data, nil
	}
	_, old, _ := checkMCP(stored)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, unmatchedMask("")
	}
	var servers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["mcpServers"], &servers); err != nil {
		return nil, unmatchedMask("")
	}
	firstUnmatched := ""
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		entry := servers[name]
		if entry == nil {
			continue
		}
		at := func(segs ...string) string { return pointer(append([]string{"mcpServers", name}, segs...)...) }
		var restored []string
		unmaskField(entry, "url", func(u string) string {
			if u == maskURL(old.URL) && u != old.URL {
				restored = append(restored, at("url"))
				return old.URL
			}
			if strings.Contains(u, Mask) && u != old.URL && firstUnmatched == "" {
				firstUnmatched = at("url")
			}
			return u
		})
		for _, f := range []struct {
			key string
			old map[string]string
		}{{"headers", old.Headers}, {"env", old.Env}} {
			unmaskField(entry, f.key, func(m map[string]string) map[string]string {
				for _, k := range slices.Sorted(maps.Keys(m)) {
					ov, ok := f.old[k]
					switch {
					case ok && m[k] == maskValue(ov) && m[k] != ov:
						m[k] = ov
						restored = append(restored, at(f.key, k))
					case strings.Contains(m[k], Mask) && (!ok || m[k] != ov) && firstUnmatched == "":
						firstUnmatched = at(f.key, k)
					}
				}
				return m
			})
		}
		unmaskField(entry, "args", func(args []string) []string {
			masked := maskArgs(old.Args)
			for i := range args {
				switch {
				case i < len(masked) && args[i] == masked[i] && args[i] != old.Args[i]:
					args[i] = old.Args[i]
					restored = append(restored, at("args", strconv.Itoa(i)))
				case strings.Contains(args[i], Mask) && (i >= len(old.Args) || args[i] != old.Args[i]) && firstUnmatched == "":
					firstUnmatched = at("args", strconv.Itoa(i))
				}
			}
			return args
		})
		if len(restored) > 0 {
			b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: entry}})
			_, cur, err := DecodeMCP(b)
			if want := destination(old); err != nil || destination(cur) != want || want == "" {
				why := "the url's origin"
				if old.Transport() == TransportStdio {
					why = "the command, its other args, the PATH in env or cwd"
				}
				e := invalid(restored[0], findcode.Request,
					"the mask stands for a stored value that may go only where it was written for, and "+why+" (or the transport) changed",
					"send the value itself again, or a secret reference such as ${secret:NAME}")
				for _, f := range restored[1:] {
					e.More = append(e.More, errf(f, findcode.Request, "the mask stands for a stored value that may go only where it was written for", e.Fix))
				}
				return nil, e
			}
		}
		servers[name] = entry
	}
	b, err := json.Marshal(servers)
	if err != nil {
		return nil, unmatchedMask("")
	}
	top["mcpServers"] = b
	out, err := json.Marshal(top)
	if err != nil {
		return nil, unmatchedMask("")
	}
	// A stored value may hold the mask's text itself: only masks beyond
	// those count.
	if maskCount(out) > maskCount(stored) {
		return nil, unmatchedMask(firstUnmatched)
	}
	return out, nil
}

// destination is where the stored values of srv go, for UnmaskMCP: the
// url's origin for a remote server; for a stdio one, the command as
// written with the PATH of env it is looked up in (the host's PATH when
// env sets none, which no document changes), cwd, which relative PATH
// entries resolve against, and the other args in their masked form: a
// launcher's args say what it runs (npx -y pkg), so changed ones are
// another program. Env names are not part of it: the ones that change how
// a program starts are refused to agent callers (admitEnv). "" is no
// destination: a url that does not parse.
func destination(srv MCPServer) string {
	if srv.Transport() == TransportStdio {
		path, set := srv.Env["PATH"]
		parts := []string{TransportStdio, srv.Command, strconv.FormatBool(set), path, filepath.Clean(srv.Cwd), strconv.Itoa(len(srv.Args))}
		parts = append(parts, maskArgs(srv.Args)...)
		return strings.Join(parts, "\x00")
	}
	u, err := url.Parse(srv.URL)
	if err != nil || u.Host == "" {
		return ""
	}
	return "remote\x00" + weborigin.Of(u)
}

// unmatchedMask refuses a mask that stands for no stored value.
func unmatchedMask(field string) *DocumentError {
	return invalid(field, findcode.Request, "the mask "+Mask+" matches no stored value here",
		"send the mask back unchanged to keep a stored value, or write the new value (a secret reference such as ${secret:NAME} keeps it out of the document)")
}

// maskCount counts the masks in a JSON text, however its characters are
// escaped.
func maskCount(data json.RawMessage) int {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return bytes.Count(data, []byte(Mask))
	}
	norm, _ := json.Marshal(v)
	return bytes.Count(norm, []byte(Mask))
}

func unmaskField[T any](entry map[string]json.RawMessage, key string, f func(T) T) {
	raw, ok := entry[key]
	if !ok {
		return
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return
	}
	if b, err := json.Marshal(f(v)); err == nil {
		entry[key] = b
	}
}
