package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// The hint of a failed probe of a remote server follows what failed, by
// the error's types and codes: a connection refused is told that nothing
// answered; a TLS failure and an HTTP error status, where the server was
// reached, are not (each on a loopback server of its own; net/http
// reports https to a plain server in words only, so it gets the hint of
// a failed request).
func TestRemoteFailureHints(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the client's refusal
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	tests := []struct {
		name, url, want string
	}{
		{"connection refused", closed, "next: nothing answered at the url"},
		{"HTTP 500", failing.URL + "/mcp", "next: the message says why the server did not answer"},
		{"untrusted certificate", untrusted.URL + "/mcp", "next: the TLS handshake with the url failed"},
		{"https to a plain HTTP server", "https://" + strings.TrimPrefix(plain.URL, "http://") + "/mcp", "next: the url was reached, but the request failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			mustRun(t, db, 0, "mcp", "add", "far", tt.url)
			r := mustRun(t, db, 1, "mcp", "probe", "far", "--timeout", "30s")
			if out := r.stdout + r.stderr; !strings.Contains(out, tt.want) || tt.want != "next: nothing answered at the url" && strings.Contains(out, "nothing answered") {
				t.Errorf("probe:\n%s%s", r.stdout, r.stderr)
			}
		})
	}
}
