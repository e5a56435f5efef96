package mcptest

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolDropSession is the tool of FaultDropSession: it answers, then ends
// the session of its call.
const ToolDropSession = "drop_session"

// DropSessionBody is the body of the 404 Not Found that FaultDropSession
// answers a request of an ended session with: the Python SDK's
// StreamableHTTPSessionManager answers so (JSON-RPC error -32600
// "Session not found", with the id "server-error", since it does not read
// the request).
const DropSessionBody = `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Session not found"}}`

// sessionDropper stands before the streamable HTTP handler with
// FaultDropSession: it answers the requests of the sessions it ended, and
// every GET, itself.
type sessionDropper struct {
	mu    sync.Mutex
	ended map[string]bool
}

// drop ends the session id: from now on its requests get 404.
func (d *sessionDropper) drop(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended == nil {
		d.ended = map[string]bool{}
	}
	d.ended[id] = true
}

func (d *sessionDropper) isEnded(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ended[id]
}

func (d *sessionDropper) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// No standalone stream: the session has no other way to learn
			// that it ended than the 404 of its next request.
			w.Header().Set("Allow", "POST, DELETE")
			http.Error(w, "method not allowed: this server offers no event stream on GET", http.StatusMethodNotAllowed)
			return
		}
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && d.isEnded(id) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(DropSessionBody))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// addDropSessionTool adds ToolDropSession; drop ends a session (nil: the
// server is not served by Main over streamable HTTP, and the tool says so).
func addDropSessionTool(s *mcp.Server, drop func(id string)) {
	mcp.AddTool(s, &mcp.Tool{Name: ToolDropSession,
		Description: "Answers, then ends the session of the call: its later requests get 404 Not Found (fault mode)."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if drop == nil || req.Session == nil || req.Session.ID() == "" {
				return nil, nil, errors.New("drop_session works only over streamable HTTP (fakemcp -http -fault drop-session)")
			}
			// The answer still goes out: this request was admitted before
			// the session ended.
			drop(req.Session.ID())
			return textResult("the session is ended"), nil, nil
		})
}
