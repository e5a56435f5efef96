package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"time"

	"github.com/agtsdk/agt/mcpconn"
)

// The loopback redirect receiver of agt mcp login (RFC 8252, section 7.3):
// the authorization server sends the browser back to
// http://127.0.0.1:PORT/callback with the code, state and (RFC 9207) iss.
// Anything on this machine can reach the port, so every request is
// hostile: its size and time are bounded, many are served at once so that
// slow ones cannot hold the browser's back, and only a GET carrying the
// state of the authorization URL ends the login; any other request gets an
// error page and the receiver keeps waiting.
const (
	redirectPath = "/callback"
	// maxRedirectHeader bounds the request line and headers (the code,
	// state and iss travel in the query); net/http answers a larger request with
	// 431 and never reaches the handler.
	maxRedirectHeader = 8 << 10
	// redirectReadTimeout bounds the reading of one request, headers
	// included, and a connection's idle time: a connection that trickles
	// bytes or sends nothing is closed. A browser sends its request at
	// once over loopback.
	redirectReadTimeout = 2 * time.Second
	// maxRedirectConns bounds the connections served at once (each holds
	// a descriptor and a goroutine); more wait in the kernel's backlog.
	// Hundreds of slow connections are each closed after
	// redirectReadTimeout while the others are served.
	maxRedirectConns = 512
)

// redirectReceiver listens on a random port of 127.0.0.1 for one OAuth
// redirect.
type redirectReceiver struct {
	ln     net.Listener
	srv    *http.Server
	result chan redirectResult
	once   sync.Once // the first GET with the login's state
	state  string    // the state the redirect must carry; set by expect
	mu     sync.Mutex
	served chan struct{} // closed when Serve has returned; Close waits for it
}

type redirectResult struct {
	resp mcpconn.AuthorizationResponse
	err  error
}

// listenRedirect starts a receiver; readTimeout 0 means redirectReadTimeout.
func listenRedirect(readTimeout time.Duration) (*redirectReceiver, error) {
	if readTimeout <= 0 {
		readTimeout = redirectReadTimeout
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1 for the login's redirect: %w", err)
	}
	r := &redirectReceiver{ln: &limitListener{Listener: ln, sem: make(chan struct{}, maxRedirectConns)}, result: make(chan redirectResult, 1), served: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc(redirectPath, r.serve)
	r.srv = &http.Server{
		Handler:           mux,
		MaxHeaderBytes:    maxRedirectHeader,
		ReadHeaderTimeout: readTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      readTimeout,
		IdleTimeout:       readTimeout,
		// net/http logs malformed requests with their text; the query
		// holds the code, so nothing of a request is ever logged.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(r.served)
		_ = r.srv.Serve(r.ln)
	}()
	return r, nil
}

// URL is the redirect URI to register and send: http://127.0.0.1:PORT/callback.
func (r *redirectReceiver) URL() string {
	return "http://" + r.ln.Addr().String() + redirectPath
}

// expect sets the state the redirect must carry: the state parameter of
// the authorization URL. It must be called before the browser is sent
// there.
func (r *redirectReceiver) expect(authorizationURL string) error {
	u, err := url.Parse(authorizationURL)
	if err != nil {
		return errors.New("the authorization URL does not parse")
	}
	state := u.Query().Get("state")
	if state == "" {
		return errors.New("the authorization URL carries no state parameter")
	}
	r.mu.Lock()
	r.state = state
	r.mu.Unlock()
	return nil
}

// wait returns the code, state and iss of the login's redirect (the first
// GET with its state), or ctx's error.
func (r *redirectReceiver) wait(ctx context.Context) (mcpconn.AuthorizationResponse, error) {
	select {
	case res := <-r.result:
		return res.resp, res.err
	case <-ctx.Done():
		return mcpconn.AuthorizationResponse{}, fmt.Errorf("no redirect from the authorization server arrived: %w", context.Cause(ctx))
	}
}

// closeGrace bounds how long Close lets a redirect in flight finish its
// page: the login may end (a refusal fails it at once) before the
// browser has read it.
const closeGrace = 2 * time.Second

// Close stops listening; a request in flight gets closeGrace to finish,
// then is cut. It returns once the serving goroutine has ended.
func (r *redirectReceiver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if err != nil {
		err = r.srv.Close()
	}
	<-r.served
	return err
}

// oauthErrorCode is the shape of an RFC 6749 error code: the only part of
// an error redirect that is shown, so that a hostile server cannot write
// to the terminal.
var oauthErrorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

func (r *redirectReceiver) serve(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	// A request that is not the redirect (another method, another state:
	// any local process can send one) must not end the login, or it
	// could stop every login before the browser arrives.
	if req.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = io.WriteString(w, page("agt expects the authorization server to send the browser here with a GET; this request is ignored and agt keeps waiting."))
		return
	}
	if !r.hasState(req) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, page("This redirect does not carry the state of agt's login (it comes from another login, or is forged): it is ignored and agt keeps waiting. Open the URL the terminal shows."))
		return
	}
	first := false
	r.once.Do(func() { first = true })
	if !first {
		http.Error(w, "agt has already received a redirect; this one is ignored.", http.StatusGone)
		return
	}
	res := r.check(req)
	r.result <- res
	if res.err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, page("The login failed. The terminal says why; you may close this tab."))
		return
	}
	_, _ = io.WriteString(w, page("agt received the authorization. You may close this tab."))
}

// hasState reports whether req carries the state the authorization URL
// sent (compared in constant time: it is the login's secret).
func (r *redirectReceiver) hasState(req *http.Request) bool {
	r.mu.Lock()
	want := r.state
	r.mu.Unlock()
	got := req.URL.Query().Get("state")
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// check reads the redirect of the login (a GET with its state): the
// authorization server's error, or the code and iss.
func (r *redirectReceiver) check(req *http.Request) redirectResult {
	q := req.URL.Query()
	if e := q.Get("error"); e != "" {
		if !oauthErrorCode.MatchString(e) {
			e = "an error code of unexpected form"
		}
		return redirectResult{err: fmt.Errorf("the authorization server refused the login: %s", e)}
	}
	code := q.Get("code")
	if code == "" {
		return redirectResult{err: errors.New("the redirect carries no code")}
	}
	// The iss is passed on as sent (bounded with the query by
	// maxRedirectHeader); mcpconn compares it with the issuer.
	return redirectResult{resp: mcpconn.AuthorizationResponse{Code: code, State: q.Get("state"), Issuer: q.Get("iss")}}
}

func page(msg string) string {
	return "<!doctype html><meta charset=utf-8><title>agt login</title><p>" + msg + "</p>\n"
}

// limitListener serves at most cap(sem) connections at once; more wait in
// the kernel's backlog.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
