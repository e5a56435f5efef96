package weborigin

import (
	"net/url"
	"testing"
)

// Issue 27: one origin rule. Case and default ports never make two
// origins of one; a path, query or user info is not part of it.
func TestOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"https://MCP.Example.com/mcp?x=1", "https://mcp.example.com:443"},
		{"HTTPS://mcp.example.com:443", "https://mcp.example.com:443"},
		{"http://u:p@127.0.0.1/", "http://127.0.0.1:80"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"https://[::1]/", "https://[::1]:443"},
		{"https://mcp.example.com:8443", "https://mcp.example.com:8443"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(u); got != tc.want {
			t.Errorf("Of(%s) = %s; want %s", tc.url, got, tc.want)
		}
	}
}
