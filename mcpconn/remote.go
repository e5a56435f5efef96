package mcpconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
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

// httpAnswers keeps what a remote server answered during the handshake,
// so that a failed handshake can say what the server said and what to
// try: the status and media type of its latest answer, whether it
// answered as an MCP endpoint before, and, for a failed answer, the start
// of its body as far as the client read it (the server's message). Never
// a header or the URL.
type httpAnswers struct {
	mu     sync.Mutex
	latest *httpAnswer
	// spoke: an answer before the latest was an MCP endpoint's (a 2xx
	// with a JSON or event-stream body, or 202): the url is right, the
	// latest answer is a refusal of that endpoint.
	spoke bool
}

type httpAnswer struct {
	method    string
	status    int
	mediaType string
	// body is the start of a failed answer's body, as far as the client
	// read it (maxAnswerExcerpt); secrets are the values of the request
	// the body must not show (see answerSecrets).
	body    []byte
	secrets []string
}

// maxAnswerExcerpt bounds the start of a failed answer's body that is
// kept to find the server's message in (which boundServerText then cuts).
const maxAnswerExcerpt = 64 << 10

// failed reports whether the answer is one the transport cannot use.
func (a *httpAnswer) failed() bool { return a.status >= 400 || a.mediaType == "text/html" }

// note records the answer to req (a DELETE, which only ends a session,
// is not the handshake's); for a failed answer it returns the body that
// keeps its start, to read in place of body.
func (a *httpAnswers) note(req *http.Request, status int, mediaType string, body io.ReadCloser, registered map[string]string) io.ReadCloser {
	if req.Method == http.MethodDelete {
		return body
	}
	n := &httpAnswer{method: req.Method, status: status, mediaType: mediaType}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.latest != nil && !a.latest.failed() && a.latest.status/100 == 2 &&
		(a.latest.status == http.StatusAccepted || a.latest.mediaType == "application/json" || a.latest.mediaType == "text/event-stream") {
		a.spoke = true
	}
	a.latest = n
	if !n.failed() || n.mediaType == "text/html" {
		return body
	}
	n.secrets = answerSecrets(req, registered)
	return &excerptBody{ReadCloser: body, a: a, to: n}
}

// excerptBody keeps the first maxAnswerExcerpt bytes read of a failed
// answer's body.
type excerptBody struct {
	io.ReadCloser
	a  *httpAnswers
	to *httpAnswer
}

func (b *excerptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.a.mu.Lock()
		if room := maxAnswerExcerpt - len(b.to.body); room > 0 {
			b.to.body = append(b.to.body, p[:min(n, room)]...)
		}
		b.a.mu.Unlock()
	}
	return n, err
}

// answerSecrets are the values of req a server's answer must not show
// when it echoes them: the credentials it carried (Authorization, Cookie,
// the registration's headers, whole and each word of 8 bytes or more),
// the url's query values and its path segments of 16 bytes or more (a
// token often hides there).
func answerSecrets(req *http.Request, registered map[string]string) []string {
	var out []string
	add := func(v string, least int) {
		if len(v) >= least {
			out = append(out, v)
		}
	}
	names := []string{"Authorization", "Proxy-Authorization", "Cookie"}
	for k := range registered {
		names = append(names, k)
	}
	for _, k := range names {
		for _, v := range req.Header.Values(k) {
			add(v, 1)
			for _, w := range strings.Fields(v) {
				add(w, 8)
			}
		}
	}
	add(req.URL.RawQuery, 1)
	for _, vs := range req.URL.Query() {
		for _, v := range vs {
			add(v, 4)
		}
	}
	for _, seg := range strings.Split(req.URL.Path, "/") {
		add(seg, 16)
	}
	// The longest first, so that a value is replaced before a part of it.
	slices.SortFunc(out, func(x, y string) int { return len(y) - len(x) })
	return out
}

// get returns the latest answer, if it failed (nil otherwise), and
// whether the server answered as an MCP endpoint before it.
func (a *httpAnswers) get() (latest *httpAnswer, spoke bool) {
	if a == nil {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.latest == nil || !a.latest.failed() {
		return nil, a.spoke
	}
	c := *a.latest
	c.body = bytes.Clone(c.body)
	return &c, a.spoke
}

// message is the server's message in a failed answer, as it wrote it
// (bounded, control characters replaced, the request's secrets
// redacted): the message of a JSON-RPC error (or an "error" string, or a
// "message" string) in a JSON body, the first line of a text/plain body;
// "" for anything else. Never a header.
func (a *httpAnswer) message() string {
	var msg string
	switch a.mediaType {
	case "application/json":
		var v struct {
			Error   json.RawMessage `json:"error"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(a.body, &v) != nil {
			return ""
		}
		var e struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(v.Error, &msg) == nil:
		case json.Unmarshal(v.Error, &e) == nil && e.Message != "":
			msg = e.Message
		default:
			msg = v.Message
		}
	case "text/plain":
		msg, _, _ = strings.Cut(string(a.body), "\n")
	}
	msg = strings.TrimSpace(msg)
	for _, secret := range a.secrets {
		msg = strings.ReplaceAll(msg, secret, resource.Mask)
	}
	return boundServerText(msg)
}

// kindError adds a sentinel to an error's chain without its words.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// remoteRefusal explains a failed handshake with a remote server by what
// the server answered last (a, nil when that answer did not fail), in the
// words of the document's fields, with the server's message; spoke says
// the server answered as an MCP endpoint before. ok is false when nothing
// it answered explains the failure. kind is nil for a refusal that is
// neither about credentials nor the transport.
func remoteRefusal(transport string, a *httpAnswer, spoke bool, err error) (detail string, kind error, ok bool) {
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
	if msg := a.message(); msg != "" {
		status += `: "` + msg + `"`
	}
	switch {
	case a.status == http.StatusUnauthorized:
		return "the server requires authorization (" + status + "): " + authFix, ErrUnauthorized, true
	case a.status == http.StatusForbidden:
		return "the server refused access (" + status + "); the headers sent do not authorize this client: " + authFix, ErrUnauthorized, true
	case a.mediaType == "text/html":
		return fmt.Sprintf(`the url answered with a web page (%s, text/html), not an MCP endpoint: check the url's path (often /mcp for "type": "http", /sse for "type": "sse")`, status),
			ErrWrongTransport, true
	case spoke || a.mediaType == "application/json":
		// The endpoint is right (it answered as one before, or it speaks
		// JSON): this is its refusal.
		return "the server refused the handshake (" + status + ")", nil, true
	case transport == resource.TransportHTTP && a.method == http.MethodPost && (a.status == http.StatusNotFound || a.status == http.StatusMethodNotAllowed || a.status == http.StatusBadRequest):
		return fmt.Sprintf(`the url does not accept the initialize request of streamable HTTP (%s): if the server speaks the older SSE transport, set "type": "sse"; otherwise check the url's path (often /mcp)`, status),
			ErrWrongTransport, true
	case transport == resource.TransportSSE && a.method == http.MethodGet && (a.status == http.StatusNotFound || a.status == http.StatusMethodNotAllowed || a.status == http.StatusBadRequest):
		return fmt.Sprintf(`the url does not open the event stream of the SSE transport (%s): if the server speaks streamable HTTP, set "type": "http"; otherwise check the url's path (often /sse)`, status),
			ErrWrongTransport, true
	}
	return "the server refused the handshake (" + status + ")", nil, true
}

// remoteRefused fills e from what the remote server answered, if that
// explains the failed handshake.
func remoteRefused(s *Session, err error, e *Error) bool {
	a, spoke := s.answers.get()
	detail, kind, ok := remoteRefusal(s.transport, a, spoke, err)
	if !ok {
		return false
	}
	e.Kind, e.Detail, e.Err = ErrHandshake, detail, &kindError{kind: kind, err: err}
	if kind == nil {
		// The detail says it all: the server's message is quoted there.
		e.Err = nil
	}
	return true
}
