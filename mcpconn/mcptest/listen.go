package mcptest

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolListens (FaultClientFeatures) returns, as JSON (ListensOut), the
// subscriptions/listen requests the server has received (issue 25 item
// 5): in the modern era a client that wants change notifications opens
// one, in the legacy era none.
const ToolListens = "listens"

// ListensOut is the answer of ToolListens.
type ListensOut struct {
	// Received counts the subscriptions/listen requests received.
	Received int `json:"received"`
	// Open counts those acknowledged with toolsListChanged whose stream
	// has not ended yet: a tools change now reaches them.
	Open int `json:"open"`
}

// listenCount follows the subscriptions/listen requests of a server.
type listenCount struct {
	mu       sync.Mutex
	received int
	open     map[mcp.Session]bool // acknowledged with toolsListChanged
}

func (l *listenCount) state() ListensOut {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ListensOut{Received: l.received, Open: len(l.open)}
}

// addListens adds ToolListens to s and the middlewares that count.
func addListens(s *mcp.Server) *listenCount {
	l := &listenCount{open: map[mcp.Session]bool{}}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "subscriptions/listen" {
				return next(ctx, method, req)
			}
			l.mu.Lock()
			l.received++
			l.mu.Unlock()
			defer func() {
				l.mu.Lock()
				delete(l.open, req.GetSession())
				l.mu.Unlock()
			}()
			return next(ctx, method, req)
		}
	})
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && err == nil &&
				method == "notifications/subscriptions/acknowledged" && p.Notifications.ToolsListChanged {
				l.mu.Lock()
				l.open[req.GetSession()] = true
				l.mu.Unlock()
			}
			return res, err
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: ToolListens, Description: "Returns how many subscriptions/listen requests the server received, and how many are open for tools changes, as JSON.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}, InputSchema: schemaFor[struct{}](nil)},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(l.state())
			return textResult("%s", b), nil, nil
		})
	return l
}

// notifiesToolsChange reports whether the server sends
// notifications/tools/list_changed for a change made during req: a
// legacy session always gets it, a modern one only on an open listen.
func (l *listenCount) notifiesToolsChange(req mcp.Request) bool {
	return !isModern(requestedVersion(req)) || l.state().Open > 0
}
