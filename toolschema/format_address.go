package toolschema

import (
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// isIPv4 reports whether s is dotted-decimal IPv4 (RFC 2673, 3.2): four
// decimal octets of one to three ASCII digits, without a sign, leading
// zeros or anything around them.
func isIPv4(s string) bool {
	if len(s) < 7 || len(s) > 15 {
		return false
	}
	parts := 0
	for s != "" {
		n, digits := 0, 0
		for digits < len(s) && '0' <= s[digits] && s[digits] <= '9' {
			n = n*10 + int(s[digits]-'0')
			digits++
		}
		if digits == 0 || digits > 3 || n > 255 || (digits > 1 && s[0] == '0') {
			return false
		}
		parts++
		s = s[digits:]
		if s == "" {
			break
		}
		if s[0] != '.' || parts == 4 || len(s) == 1 {
			return false
		}
		s = s[1:]
	}
	return parts == 4
}

// isIPv6 reports whether s is an IPv6 address as RFC 4291 writes it, with
// no zone (RFC 3986 has none; netip would accept "%zone").
func isIPv6(s string) bool {
	if strings.IndexByte(s, '%') >= 0 {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

const (
	maxLocalPartBytes = 64  // RFC 5321, 4.5.3.1.1
	maxDomainBytes    = 255 // RFC 5321, 4.5.3.1.2
)

// isEmail reports whether s is an RFC 5321 Mailbox: a dot-string or quoted
// local part, "@", and a host name or an IPv4 or IPv6 address literal. With
// idn, RFC 6531 adds any non-ASCII UTF-8 to the local part and U-labels to
// the domain, which is NFC-normalised first (RFC 6531 leaves that to the
// sender, so an unnormalised domain is not malformed).
func isEmail(s string, idn bool) bool {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at > maxLocalPartBytes || !utf8.ValidString(s) {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if !isLocalPart(local, idn) {
		return false
	}
	if strings.HasPrefix(domain, "[") {
		lit, ok := strings.CutSuffix(domain[1:], "]")
		if !ok {
			return false
		}
		if v6, ok := strings.CutPrefix(lit, "IPv6:"); ok {
			return isIPv6(v6)
		}
		return isIPv4(lit)
	}
	if idn {
		if len(domain) > maxIDNHostnameInput {
			return false
		}
		return isHostname(norm.NFC.String(domain), true)
	}
	return len(domain) <= maxDomainBytes && isHostname(domain, false)
}

// isLocalPart: Dot-string or Quoted-string (RFC 5321, 4.1.2), with
// UTF8-non-ascii allowed in atoms and quoted text when idn (RFC 6531, 3.3).
func isLocalPart(local string, idn bool) bool {
	if quoted, ok := strings.CutPrefix(local, `"`); ok {
		body, ok := strings.CutSuffix(quoted, `"`)
		if !ok {
			return false
		}
		for i := 0; i < len(body); i++ {
			c := body[i]
			switch {
			case c == '\\':
				i++
				if i == len(body) || body[i] < 32 || body[i] > 126 {
					return false
				}
			case c == 32 || c == 33 || 35 <= c && c <= 91 || 93 <= c && c <= 126:
			case c >= utf8.RuneSelf && idn:
			default:
				return false
			}
		}
		return true
	}
	atomLen := 0
	for i := 0; i < len(local); i++ {
		c := local[i]
		switch {
		case c == '.':
			if atomLen == 0 {
				return false
			}
			atomLen = 0
			continue
		case c < utf8.RuneSelf && isAtext(c), c >= utf8.RuneSelf && idn:
		default:
			return false
		}
		atomLen++
	}
	return atomLen > 0
}

// isAtext: RFC 5322, 3.2.3.
func isAtext(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}
