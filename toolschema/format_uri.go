package toolschema

import (
	"strings"
	"unicode/utf8"
)

// URIs and IRIs by the RFC 3986 and RFC 3987 grammar (net/url is more
// lenient), and URI templates by RFC 6570. One pass each, no regexps.

// ASCII character classes of RFC 3986, section 2.
const (
	classUnreserved uint8 = 1 << iota // ALPHA DIGIT - . _ ~
	classSubDelim                     // ! $ & ' ( ) * + , ; =
)

var uriClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = classUnreserved
		t[c-'a'+'A'] = classUnreserved
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = classUnreserved
	}
	for _, c := range "-._~" {
		t[c] = classUnreserved
	}
	for _, c := range "!$&'()*+,;=" {
		t[c] = classSubDelim
	}
	return t
}()

// uriComponent describes which characters one component allows besides
// unreserved and sub-delims.
type uriComponent struct {
	extra    string // further ASCII characters
	pct      bool   // pct-encoded triplets
	iprivate bool   // RFC 3987 private-use characters (iquery only)
}

var (
	compUserinfo = uriComponent{extra: ":", pct: true}
	compRegName  = uriComponent{pct: true}
	compPath     = uriComponent{extra: ":@/", pct: true}
	compQuery    = uriComponent{extra: ":@/?", pct: true, iprivate: true}
	compFragment = uriComponent{extra: ":@/?", pct: true}
	compIPFuture = uriComponent{extra: ":"}
)

// validComponent reports whether every character of s is allowed in comp;
// non-ASCII only in an IRI (ucschar, and iprivate where comp allows it).
func validComponent(s string, comp uriComponent, iri bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case uriClass[c] != 0, strings.IndexByte(comp.extra, c) >= 0:
				i++
			case c == '%' && comp.pct && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
				i += 3
			default:
				return false
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !iri || !(isUcschar(r) || comp.iprivate && isIprivate(r)) {
			return false
		}
		i += size
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isUcschar: RFC 3987, 2.2.
func isUcschar(r rune) bool {
	switch {
	case 0xA0 <= r && r <= 0xD7FF, 0xF900 <= r && r <= 0xFDCF, 0xFDF0 <= r && r <= 0xFFEF:
		return true
	case 0x10000 <= r && r <= 0xEFFFD:
		return r&0xFFFF <= 0xFFFD && (r < 0xE0000 || r >= 0xE1000)
	}
	return false
}

// isIprivate: RFC 3987, 2.2.
func isIprivate(r rune) bool {
	return 0xE000 <= r && r <= 0xF8FF || 0xF0000 <= r && r <= 0xFFFFD || 0x100000 <= r && r <= 0x10FFFD
}

// isURI reports whether s is a URI (RFC 3986, 3), or with reference a
// URI-reference (4.1); iri extends both to RFC 3987.
func isURI(s string, iri, reference bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	rest := s
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		if !validComponent(rest[i+1:], compFragment, iri) {
			return false
		}
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		if !validComponent(rest[i+1:], compQuery, iri) {
			return false
		}
		rest = rest[:i]
	}
	// A colon before the first slash ends a scheme; in a relative reference
	// it could only be in the first segment, which path-noscheme forbids.
	colon := strings.IndexByte(rest, ':')
	if slash := strings.IndexByte(rest, '/'); colon >= 0 && (slash < 0 || colon < slash) {
		if !isScheme(rest[:colon]) {
			return false
		}
		rest = rest[colon+1:]
	} else if !reference {
		return false
	}
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		authority, path := after, ""
		if i := strings.IndexByte(after, '/'); i >= 0 {
			authority, path = after[:i], after[i:]
		}
		return validAuthority(authority, iri) && validComponent(path, compPath, iri)
	}
	return validComponent(rest, compPath, iri)
}

// isScheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func isScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// validAuthority: [ userinfo "@" ] host [ ":" port ] (RFC 3986, 3.2).
func validAuthority(a string, iri bool) bool {
	if i := strings.IndexByte(a, '@'); i >= 0 {
		if !validComponent(a[:i], compUserinfo, iri) {
			return false
		}
		a = a[i+1:]
	}
	host, port := a, ""
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 || !validIPLiteral(a[1:end]) {
			return false
		}
		host, port = "", a[end+1:]
		if port != "" {
			p, ok := strings.CutPrefix(port, ":")
			if !ok {
				return false
			}
			port = p
		}
	} else if i := strings.IndexByte(a, ':'); i >= 0 {
		host, port = a[:i], a[i+1:]
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	// reg-name covers IPv4address too: "999.1.1.1" is a valid reg-name.
	return validComponent(host, compRegName, iri)
}

// validIPLiteral: IPv6address / IPvFuture, between the brackets.
func validIPLiteral(s string) bool {
	if s != "" && (s[0] == 'v' || s[0] == 'V') {
		version, rest, ok := strings.Cut(s[1:], ".")
		if !ok || version == "" || rest == "" {
			return false
		}
		for i := 0; i < len(version); i++ {
			if !isHex(version[i]) {
				return false
			}
		}
		return validComponent(rest, compIPFuture, false)
	}
	return isIPv6(s)
}

// isURITemplate reports whether s is a URI Template of any level of RFC
// 6570 (section 2). The apostrophe is a literal, as erratum 6937 corrects;
// the operators reserved for future extensions ("=", ",", "!", "@", "|")
// are refused, since no template processor can expand them.
func isURITemplate(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 || !isTemplateExpression(s[i+1:i+1+end]) {
				return false
			}
			i += end + 2
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 3
		case c < utf8.RuneSelf:
			if c <= ' ' || c == 0x7F || strings.IndexByte(`"<>\^`+"`"+`|}`, c) >= 0 {
				return false
			}
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !isUcschar(r) && !isIprivate(r) {
				return false
			}
			i += size
		}
	}
	return true
}

// isTemplateExpression: [ operator ] variable-list, between the braces.
func isTemplateExpression(e string) bool {
	if e != "" && strings.IndexByte("+#./;?&", e[0]) >= 0 {
		e = e[1:]
	}
	for {
		spec, rest, more := strings.Cut(e, ",")
		if !isVarspec(spec) {
			return false
		}
		if !more {
			return true
		}
		e = rest
	}
}

// isVarspec: varname [ ":" max-length / "*" ].
func isVarspec(v string) bool {
	if name, ok := strings.CutSuffix(v, "*"); ok {
		return isVarname(name)
	}
	name, prefix, ok := strings.Cut(v, ":")
	if ok {
		// max-length = %x31-39 0*3DIGIT
		if prefix == "" || len(prefix) > 4 || prefix[0] < '1' || prefix[0] > '9' {
			return false
		}
		for i := 1; i < len(prefix); i++ {
			if prefix[i] < '0' || prefix[i] > '9' {
				return false
			}
		}
	}
	return isVarname(name)
}

// isVarname: varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" /
// pct-encoded.
func isVarname(n string) bool {
	if n == "" || n[0] == '.' || n[len(n)-1] == '.' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case isAlpha(c), '0' <= c && c <= '9', c == '_':
		case c == '.':
			if n[i-1] == '.' {
				return false
			}
		case c == '%':
			if i+2 >= len(n) || !isHex(n[i+1]) || !isHex(n[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}
