// Package weborigin is agt's one rule for a URL's origin (RFC 6454):
// the unit the launch allowlist admits (package resource), that a
// registration's headers and credentials are sent to, and that redirects
// and OAuth endpoints may not leave (package mcpconn).
package weborigin

import (
	"net"
	"net/url"
	"strings"
)

// Of returns u's origin, scheme://host:port, in lower case, with the
// scheme's default port made explicit.
func Of(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
