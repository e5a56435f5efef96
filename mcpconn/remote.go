package mcpconn

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/agtsdk/agt/resource"
)

// Sentinels of a remote server's refusal, wrapped with ErrHandshake; test
// with errors.Is.
var (
	// ErrUnauthorized: the remote server answered 401 or 403: it wants
	// credentials the registration's headers do not give.
	ErrUnauthorized = errors.New("mcpconn: the server requires authorization")
	// ErrWrongTransport: the url's answers show that it is not the MCP
	// endpoint of the document's type: a server of the other HTTP
	// transport, a web page, or no endpoint at that path.
	ErrWrongTransport = errors.New("mcpconn: the url does not answer as an MCP endpoint of the document's type")
)

// httpAnswers keeps the first answer of a remote server that its
// transport cannot use (an HTTP error, a web page), so that a failed
// handshake can say what to try. Only the status and the media type are
// kept: never a body, a header value or the URL.
type httpAnswers struct {
	mu    sync.Mutex
	first *httpAnswer
}

type httpAnswer struct {
	method    string
	status    int
	mediaType string
}

func (a *httpAnswers) note(method string, status int, mediaType string) {
	if status < 400 && mediaType != "text/html" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.first == nil {
		a.first = &httpAnswer{method: method, status: status, mediaType: mediaType}
	}
}

func (a *httpAnswers) get() *httpAnswer {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.first
}

// kindError adds a sentinel to an error's chain without its words.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// remoteRefusal explains a failed handshake with a remote server by what
// the server answered, in the words of the document's fields; ok is false
// when nothing it answered explains it.
func remoteRefusal(transport string, a *httpAnswer, err error) (detail string, kind error, ok bool) {
	const authFix = "set headers (e.g. an Authorization header with a ${secret:...} reference)"
	if a == nil {
		// An SSE server's stream starts with its endpoint event; the go-sdk
		// reports a stream without one in these words.
		if transport == resource.TransportSSE && err != nil && strings.Contains(err.Error(), "missing endpoint") {
			return `the url's event stream does not start with the endpoint event of an SSE-transport server: if the server speaks streamable HTTP, set "type": "http"`,
				ErrWrongTransport, true
		}
		return "", nil, false
	}
	status := fmt.Sprintf("HTTP %d %s", a.status, http.StatusText(a.status))
	switch {
	case a.status == http.StatusUnauthorized:
		return "the server requires authorization (" + status + "): " + authFix, ErrUnauthorized, true
	case a.status == http.StatusForbidden:
		return "the server refused access (" + status + "); the headers sent do not authorize this client: " + authFix, ErrUnauthorized, true
	case a.mediaType == "text/html":
		return fmt.Sprintf(`the url answered with a web page (%s, text/html), not an MCP endpoint: check the url's path (often /mcp for "type": "http", /sse for "type": "sse")`, status),
			ErrWrongTransport, true
	case a.mediaType == "application/json":
		// A JSON answer speaks JSON-RPC: the endpoint is right, whatever
		// it said.
		return "", nil, false
	case transport == resource.TransportHTTP && a.method == http.MethodPost && (a.status == http.StatusNotFound || a.status == http.StatusMethodNotAllowed || a.status == http.StatusBadRequest):
		return fmt.Sprintf(`the url does not accept the initialize request of streamable HTTP (%s): if the server speaks the older SSE transport, set "type": "sse"; otherwise check the url's path (often /mcp)`, status),
			ErrWrongTransport, true
	case transport == resource.TransportSSE && a.method == http.MethodGet && (a.status == http.StatusNotFound || a.status == http.StatusMethodNotAllowed || a.status == http.StatusBadRequest):
		return fmt.Sprintf(`the url does not open the event stream of the SSE transport (%s): if the server speaks streamable HTTP, set "type": "http"; otherwise check the url's path (often /sse)`, status),
			ErrWrongTransport, true
	}
	return "", nil, false
}

// remoteRefused fills e from what the remote server answered, if that
// explains the failed handshake.
func remoteRefused(s *Session, err error, e *Error) bool {
	detail, kind, ok := remoteRefusal(s.transport, s.answers.get(), err)
	if !ok {
		return false
	}
	e.Kind, e.Detail, e.Err = ErrHandshake, detail, &kindError{kind: kind, err: err}
	return true
}
