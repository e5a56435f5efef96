// Package httptoken checks HTTP tokens (RFC 9110, section 5.6.2), the
// syntax of header field names: the one check behind a registration's
// header names (package resource) and a tool's x-mcp-header annotations
// (package mcpconn).
package httptoken

import "strings"

// Valid reports whether s is a token: one or more tchar, that is letters,
// digits and !#$%&'*+-.^_`|~ (no space, colon, control or non-ASCII
// character).
func Valid(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
