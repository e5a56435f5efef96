package mcpconn

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodListen opens a stream of change notifications in the modern era
// (SEP-2575): it replaces the legacy standalone GET stream of streamable
// HTTP, and the notifications a legacy server sends on stdio on its own.
const methodListen = "subscriptions/listen"

// listenForToolsChanges is the go-sdk's ToolListChangedHandler of a
// session whose Handlers.ToolsChanged is set. Setting it is what makes
// the go-sdk open subscriptions/listen with toolsListChanged, in the
// modern era only, right after server/discover, when the server declares
// tools.listChanged; ClientSession.Close cancels the listen. It does
// nothing itself: the session's readers count and queue each
// notifications/tools/list_changed as they read it
// (readServerMessage), in both eras, under the session's bounds.
func listenForToolsChanges(context.Context, *mcp.ToolListChangedRequest) {}

// isListen reports a streamable HTTP request that opens
// subscriptions/listen (the go-sdk names the method in Mcp-Method on
// every modern POST).
func isListen(req *http.Request) bool {
	return req.Method == http.MethodPost && req.Header.Get("Mcp-Method") == methodListen
}

// deferListen answers the POST of subscriptions/listen at once with an
// empty event stream and sends it on the go-sdk's first read, as the
// legacy standalone stream is (deferredStream): the go-sdk sends it
// inside Connect, without a deadline, and waits for the response
// headers, so a server (or a proxy) that holds them would hold the
// handshake for ever. The real stream is bounded and screened as every
// other (send): the message bound, the message rate, the notification
// queue. A server that opens nothing (an error status, a JSON answer,
// no event stream) leaves the listen silent until the session closes;
// a stream that ends is not opened again: the session then learns of no
// more changes (Protocol eras in the package doc).
func deferListen(h *headerRoundTripper, req *http.Request) *http.Response {
	return newDeferredResponse(req, func(ctx context.Context) (*http.Response, error) {
		return h.send(req.WithContext(ctx), nil)
	})
}
