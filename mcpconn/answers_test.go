package mcpconn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// refusingAfterLogin is an OAuth-protected MCP server on 127.0.0.1 (of
// transport typ) that, once the token is good, answers its first request
// as a server would and every later POST with HTTP 400 and body (of
// media type mt), as a server that wants a header the client did not
// send.
func refusingAfterLogin(t *testing.T, as *fakeAS, typ, mt, body string) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "refusing", Version: "1"}, nil)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	path, first := "/mcp", "initialize"
	if typ == resource.TransportSSE {
		// The stream's GET passes; every POST (initialize first) is refused.
		h, path, first = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil), "/sse", ""
	}
	refuse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			raw, _ := io.ReadAll(r.Body)
			var m struct{ Method string }
			_ = json.Unmarshal(raw, &m)
			if m.Method != first || first == "" {
				w.Header().Set("Content-Type", mt)
				w.Header().Set("X-Secret-Header", "s3cret-answer-header")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, body)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
		h.ServeHTTP(w, r)
	})
	return serveProtected(t, as, path, refuse)
}

// Issue 24 item 4: after a good login, a handshake whose next request
// gets HTTP 400 reports that answer, its status and the server's message
// as it wrote it (the first line of text/plain, the message of a JSON-RPC
// error), never the 401 before the login, a header of the answer or a
// token. Before, it said "the server requires authorization (HTTP 401
// Unauthorized)", the first failed answer.
func TestHandshakeReportsTheAnswerThatFailed(t *testing.T) {
	t.Parallel()
	const msg = "Bad Request: Missing MCP-Protocol-Version header"
	tests := []struct {
		name, typ, mt, body, want string
	}{
		{"streamable HTTP, text/plain", resource.TransportHTTP, "text/plain; charset=utf-8", msg + "\nsecond line\n",
			`the server refused the handshake (HTTP 400 Bad Request: "` + msg + `")`},
		{"streamable HTTP, JSON-RPC error", resource.TransportHTTP, "application/json",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"` + msg + `"}}`,
			`the server refused the handshake (HTTP 400 Bad Request: "` + msg + `")`},
		{"streamable HTTP, control characters", resource.TransportHTTP, "text/plain", "Bad \x1b[31mRequest\u202e",
			`the server refused the handshake (HTTP 400 Bad Request: "Bad ` + "\uFFFD" + `[31mRequest` + "\uFFFD" + `")`},
		{"streamable HTTP, a long message", resource.TransportHTTP, "text/plain", strings.Repeat("m", 2000),
			`the server refused the handshake (HTTP 400 Bad Request: "` + strings.Repeat("m", 512) + `...")`},
		// The SSE transport's POST answer is closed unread: its status only.
		{"SSE", resource.TransportSSE, "text/plain", msg, `the server refused the handshake (HTTP 400 Bad Request)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			as := newFakeAS(t)
			srv := resource.MCPServer{Type: tt.typ, URL: refusingAfterLogin(t, as, tt.typ, tt.mt, tt.body), OAuth: &resource.MCPOAuth{},
				StartupTimeoutMS: 20_000}
			c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{OAuth: &mcpconn.OAuthOptions{Authorize: followAuthorization}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := c.Connect(ctx, "remote", srv, nil)
			if err == nil {
				s.Close()
				t.Fatal("Connect succeeded")
			}
			var e *mcpconn.Error
			if !errors.As(err, &e) || !errors.Is(err, mcpconn.ErrHandshake) || e.Detail != tt.want {
				t.Errorf("Connect = %v\nwant the detail %q", err, tt.want)
			}
			if errors.Is(err, mcpconn.ErrUnauthorized) || errors.Is(err, mcpconn.ErrLoginRequired) || strings.Contains(err.Error(), "401") {
				t.Errorf("Connect = %v; the 401 before the login is not what failed", err)
			}
			for _, leak := range []string{"tok-", "s3cret", "second line"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("the error shows %q: %v", leak, err)
				}
			}
		})
	}
}
