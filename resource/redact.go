package resource

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
)

// Redaction keeps credentials of MCP documents away from whoever reads
// them through a model: env and header values, URL user info and query,
// and argument values that look like credentials are replaced by Mask.
// Secret references (${env:NAME}, ${secret:NAME}) and ${cwd} stay as they
// are: they name a secret, they are not one. A write that sends a masked
// value back unchanged keeps the stored value (UnmaskMCP).

// Mask stands for a hidden value.
const Mask = "[redacted]"

// maskValue hides the literal parts of a value and keeps its references:
// "Bearer ${secret:api}" becomes "<redacted>${secret:api}".
func maskValue(s string) string {
	if s == "" {
		return ""
	}
	toks, msg, _ := scanValue(s, true)
	if msg != "" {
		return Mask
	}
	var b strings.Builder
	lastMasked := false
	for _, t := range toks {
		if t.kind == "" {
			if !lastMasked {
				b.WriteString(Mask)
			}
			lastMasked = true
			continue
		}
		b.WriteString(t.raw)
		lastMasked = false
	}
	return b.String()
}

// secretFlagWords are the parts of a flag name that say its value is a
// credential.
var secretFlagWords = []string{"token", "secret", "passw", "apikey", "api-key", "api_key", "auth", "credential", "bearer", "cookie", "session"}

// CredentialFlag reports whether a command-line flag such as "--api-key"
// or "-password" takes a credential as its value.
func CredentialFlag(flag string) bool {
	if !strings.HasPrefix(flag, "-") {
		return false
	}
	name := strings.ToLower(strings.TrimLeft(flag, "-"))
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

// LooksLikeSecret reports whether s looks like a credential: a known
// token prefix, or a long run of letters and digits that mixes both.
func LooksLikeSecret(s string) bool {
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

// MaskArgs returns args with credentials hidden: the value of a flag that
// names a credential (--token X, --api-key=X), an argument that looks like
// a credential, and the user info, query and secret-looking path of a URL.
// References stay.
func MaskArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && CredentialFlag(args[i-1]) && !strings.Contains(args[i-1], "=") && !strings.HasPrefix(a, "-") {
			out[i] = maskValue(a)
			continue
		}
		if flag, val, ok := strings.Cut(a, "="); ok && CredentialFlag(flag) {
			out[i] = flag + "=" + maskValue(val)
			continue
		}
		out[i] = maskText(a)
	}
	return out
}

// maskText hides the credentials inside free text: URLs and
// secret-looking words.
func maskText(s string) string {
	if strings.Contains(s, "://") {
		return MaskURL(s)
	}
	if LooksLikeSecret(s) {
		return maskValue(s)
	}
	return s
}

// MaskURL hides a URL's user info and query, and its path when a segment
// looks like a credential; scheme, host and a plain path stay, so the
// reader knows which server it is. A URL that does not parse is masked
// whole.
func MaskURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return Mask
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme + "://")
	}
	if u.User != nil {
		b.WriteString(Mask + "@")
	}
	b.WriteString(u.Host)
	path := u.EscapedPath()
	for _, seg := range strings.Split(path, "/") {
		if LooksLikeSecret(seg) {
			path = "/" + Mask
			break
		}
	}
	b.WriteString(path)
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteString("?" + Mask)
	}
	if u.Fragment != "" {
		b.WriteString("#" + Mask)
	}
	return b.String()
}

// RedactServer returns a copy of srv with its credentials masked: every
// env and header value's literal text, the URL's user info and query, and
// credential-like arguments.
func RedactServer(srv MCPServer) MCPServer {
	out := srv
	out.Args = MaskArgs(srv.Args)
	out.Env = maskMap(srv.Env)
	out.Headers = maskMap(srv.Headers)
	out.URL = MaskURL(srv.URL)
	return out
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

// RedactMCP returns an MCP document with each server entry masked as
// RedactServer does. Only the known fields of the entries are kept (a
// stored document has no others); a document that does not decode
// becomes an empty object, since it cannot be checked.
func RedactMCP(data json.RawMessage) json.RawMessage {
	var doc struct {
		MCPServers map[string]MCPServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return json.RawMessage(`{}`)
	}
	for name, srv := range doc.MCPServers {
		doc.MCPServers[name] = RedactServer(srv)
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
// server entry of stored, whatever the entry's name in data. It returns
// the new data, and whether it holds more masks than the stored document
// (a mask that matches no stored value, which a write must refuse rather
// than store).
func UnmaskMCP(stored, data json.RawMessage) (json.RawMessage, bool) {
	if maskCount(data) == 0 {
		return data, false
	}
	_, old, _ := checkMCP(stored)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return data, true
	}
	var servers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["mcpServers"], &servers); err != nil {
		return data, true
	}
	for name, entry := range servers {
		if entry == nil {
			continue
		}
		unmaskField(entry, "args", func(args []string) []string {
			masked := MaskArgs(old.Args)
			for i := range args {
				if i < len(masked) && args[i] == masked[i] && args[i] != old.Args[i] {
					args[i] = old.Args[i]
				}
			}
			return args
		})
		for _, f := range []struct {
			key string
			old map[string]string
		}{{"env", old.Env}, {"headers", old.Headers}} {
			unmaskField(entry, f.key, func(m map[string]string) map[string]string {
				for k, v := range m {
					if ov, ok := f.old[k]; ok && v == maskValue(ov) && v != ov {
						m[k] = ov
					}
				}
				return m
			})
		}
		unmaskField(entry, "url", func(u string) string {
			if u == MaskURL(old.URL) && u != old.URL {
				return old.URL
			}
			return u
		})
		servers[name] = entry
	}
	b, err := json.Marshal(servers)
	if err != nil {
		return data, true
	}
	top["mcpServers"] = b
	out, err := json.Marshal(top)
	if err != nil {
		return data, true
	}
	// A stored value may hold the mask's text itself: only masks beyond
	// those count.
	return out, maskCount(out) > maskCount(stored)
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
