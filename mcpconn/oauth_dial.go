package mcpconn

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// errNonPublicAddress: an OAuth request would reach a private, loopback,
// link-local or reserved address while the MCP server is on a public one.
var errNonPublicAddress = errors.New("an OAuth request to a private, loopback, link-local or reserved address is refused: the MCP server is on a public address")

// reservedPrefixes are the special-purpose ranges that are neither
// private nor loopback in net/netip's terms but reach no public host.
var reservedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// nonPublic reports whether ip reaches no public host.
func nonPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range reservedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// checkDialed refuses a connection to a non-public address.
func checkDialed(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || nonPublic(ip) {
		return errNonPublicAddress
	}
	return nil
}

// publicOnly returns base with its dialing restricted to public
// addresses: the OAuth flow's URLs come from the server's metadata, so a
// hostile server could point them at the host's internal network. The
// check runs at dial time, on the address dialed (a name that resolves to
// an internal address is refused too). A base that is not an
// *http.Transport, or that sends through a proxy (which dials for it), is
// returned as is: its owner has taken over dialing.
func publicOnly(base http.RoundTripper) http.RoundTripper {
	t, ok := base.(*http.Transport)
	if !ok || proxied(t) {
		return base
	}
	t = t.Clone()
	if dial := t.DialContext; dial != nil {
		// The host's own dialer: the address it reached is checked
		// before anything is sent.
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if err := checkDialed(c.RemoteAddr().String()); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		}
		return t
	}
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error { return checkDialed(address) },
	}).DialContext
	return t
}

// proxied reports whether t sends requests through a proxy.
func proxied(t *http.Transport) bool {
	if t.Proxy == nil {
		return false
	}
	req, err := http.NewRequest(http.MethodGet, "https://proxy-check.invalid", nil)
	if err != nil {
		return false
	}
	u, err := t.Proxy(req)
	return err == nil && u != nil
}

// serverIsNonPublic reports whether the MCP server at serverURL is on a
// non-public address (an internal or loopback server): its authorization
// server may then be too. A name is resolved, bounded by ctx; a name that
// does not resolve counts as public.
func serverIsNonPublic(ctx context.Context, serverURL string) bool {
	u, err := url.Parse(serverURL)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if ip, err := netip.ParseAddr(host); err == nil {
		return nonPublic(ip)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if nonPublic(ip) {
			return true
		}
	}
	return false
}
