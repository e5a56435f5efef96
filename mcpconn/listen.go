package mcpconn

import (
	"context"
	"net/http"
	"sync"
	"time"

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
	return req.Method == http.MethodPost && req.Header.Get(methodHeader) == methodListen
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
	resp := newDeferredResponse(req, func(ctx context.Context) (*http.Response, error) {
		return h.send(req.WithContext(ctx), nil)
	})
	// A listen that fails, opens nothing or ends will not be
	// acknowledged: the first listing waits no more (listenAck).
	resp.Body.(*deferredStream).ended = h.listen.end
	return resp
}

// notificationListenAck is the first message a modern server sends on a
// subscriptions/listen stream: from then on it notifies the listen.
const notificationListenAck = "notifications/subscriptions/acknowledged"

// listenAck is the wait of a session's first tools listing for the
// server to acknowledge its listen: a server tells only a listen it has
// acknowledged, so a listing sent before that could miss a change made
// between the two for good (neither listed nor reported). It ends at the
// first of: the acknowledgement read (readServerMessage), the listen
// over HTTP failed, refused or ended (deferredStream), its request
// answered on stdio (an error: captureConn), no listen expected
// (Connect: a legacy session, or a server that does not declare
// tools.listChanged), or the first listing's wait ran out (bound). A nil
// *listenAck never waits.
type listenAck struct {
	done  chan struct{}
	once  sync.Once
	bound time.Duration // ConnectorOptions.Limits.EraProbeTimeout
	// id is the JSON-RPC id of the listen request on a connection that
	// carries it (stdio, Dial): its answer, an error or a result, means
	// no acknowledgement is coming on it.
	mu sync.Mutex
	id string
}

func newListenAck(bound time.Duration) *listenAck {
	return &listenAck{done: make(chan struct{}), bound: bound}
}

// end ends the wait, for good: later listings never wait.
func (a *listenAck) end() {
	if a != nil {
		a.once.Do(func() { close(a.done) })
	}
}

// written notes the id of the listen request (captureConn.Write).
func (a *listenAck) written(id string) {
	if a != nil {
		a.mu.Lock()
		a.id = id
		a.mu.Unlock()
	}
}

// answered ends the wait when id is the listen's: the go-sdk drops
// that answer (it never awaits the listen).
func (a *listenAck) answered(id string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	mine := a.id != "" && a.id == id
	a.mu.Unlock()
	if mine {
		a.end()
	}
}

// awaitListen is Tools' wait, before its first tools/list, for the
// server to acknowledge the session's listen (listenAck), at most the
// bound once per session. It fails only when ctx ends first; a session
// that closes meanwhile lists (and fails) as it would have.
func (s *Session) awaitListen(ctx context.Context) error {
	a := s.listen
	if a == nil {
		return nil
	}
	select {
	case <-a.done:
		return nil
	default:
	}
	t := time.NewTimer(a.bound)
	defer t.Stop()
	select {
	case <-a.done:
	case <-t.C:
		a.end() // a server that never acknowledges costs the bound once
	case <-s.closing.Done():
	case <-ctx.Done():
		return &Error{Ref: s.ref, Op: "list tools", Detail: "cancelled by the caller while waiting for the server to acknowledge the change listen", Err: context.Cause(ctx)}
	}
	return nil
}

// listensForTools reports whether the go-sdk opened a listen with
// toolsListChanged for a session whose host wants tool changes: exactly
// its condition, a modern session whose server declared
// tools.listChanged.
func listensForTools(version string, caps *mcp.ServerCapabilities) bool {
	return modernVersion(version) && caps != nil && caps.Tools != nil && caps.Tools.ListChanged
}
