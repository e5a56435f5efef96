package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/google/go-cmp/cmp"
)

// startReceiver starts a receiver expecting state, closed with the test.
func startReceiver(t *testing.T, readTimeout time.Duration, state string) *redirectReceiver {
	t.Helper()
	r, err := listenRedirect(readTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if !strings.HasPrefix(r.URL(), "http://127.0.0.1:") || !strings.HasSuffix(r.URL(), redirectPath) {
		t.Fatalf("URL = %q, want http://127.0.0.1:PORT%s", r.URL(), redirectPath)
	}
	if err := r.expect("https://auth.example/authorize?client_id=c&state=" + url.QueryEscape(state)); err != nil {
		t.Fatal(err)
	}
	return r
}

// redirect sends the browser's request to the receiver.
func redirect(t *testing.T, r *redirectReceiver, query string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(r.URL() + "?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(body)
}

func waitShort(t *testing.T, r *redirectReceiver) (mcpconn.AuthorizationResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.wait(ctx)
}

func TestRedirectReceiverCode(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, 0, "s-1")
	status, body := redirect(t, r, "code=the-code&state=s-1&iss="+url.QueryEscape("https://auth.example"))
	if status != http.StatusOK || !strings.Contains(body, "You may close this tab") {
		t.Errorf("redirect answered %d %q, want 200 and the page", status, body)
	}
	if strings.Contains(body, "the-code") {
		t.Errorf("the page shows the code: %q", body)
	}
	res, err := waitShort(t, r)
	want := mcpconn.AuthorizationResponse{Code: "the-code", State: "s-1", Issuer: "https://auth.example"}
	if diff := cmp.Diff(want, res); err != nil || diff != "" {
		t.Errorf("wait: %v (-want +got):\n%s", err, diff)
	}
}

// Only a GET with the login's state ends the login (issue 23 item 11): a
// forged state, a POST or another method from any local process gets an
// error page, its code is not taken, and the receiver keeps waiting for
// the real redirect. Before: the first of them ended the login.
func TestRedirectReceiverIgnoresForeignRequests(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, 0, "s-1")
	client := &http.Client{Timeout: 10 * time.Second}
	send := func(method, query string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, r.URL()+"?"+query, strings.NewReader("code=forged-code&state=s-1"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return resp.StatusCode, string(body)
	}
	tests := []struct {
		name, method, query string
		status              int
	}{
		{"forged state", http.MethodGet, "code=forged-code&state=forged-state", http.StatusBadRequest},
		{"no state", http.MethodGet, "code=forged-code", http.StatusBadRequest},
		{"forged error", http.MethodGet, "error=access_denied&state=forged-state", http.StatusBadRequest},
		{"POST with the right state", http.MethodPost, "code=forged-code&state=s-1", http.StatusMethodNotAllowed},
		{"PUT", http.MethodPut, "code=forged-code&state=s-1", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		status, body := send(tt.method, tt.query)
		if status != tt.status || !strings.Contains(body, "keeps waiting") {
			t.Errorf("%s: answered %d %q, want %d and a page saying agt keeps waiting", tt.name, status, body, tt.status)
		}
		if strings.Contains(body, "forged-") {
			t.Errorf("%s: the page repeats the request's values: %q", tt.name, body)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if res, err := r.wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the foreign requests wait = %+v, %v; want it still waiting", res, err)
	}
	if status, _ := redirect(t, r, "code=the-code&state=s-1"); status != http.StatusOK {
		t.Errorf("the real redirect answered %d, want 200", status)
	}
	res, err := waitShort(t, r)
	if err != nil || res.Code != "the-code" {
		t.Errorf("wait = %+v, %v; want the real redirect's code", res, err)
	}
	if status, _ := redirect(t, r, "code=c&state=s-1"); status != http.StatusGone {
		t.Errorf("a request after the real redirect answered %d, want 410", status)
	}
}

// Slow clients cannot hold the redirect back (issue 23 item 11): 200
// connections that send part of a request line and stop are each closed
// after the header read timeout, and meanwhile the others are served, so
// the real redirect is answered at once. Before: connections were served
// 8 at a time with 10 s each, and the redirect waited behind all of them.
func TestRedirectReceiverSlowClients(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, 0, "s-1") // the receiver's own timeouts
	const slowConns = 200
	for range slowConns {
		c, err := net.Dial("tcp", r.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /callback?code=slow&state=s-1 HTT"); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	// The client's own bound is long so that a receiver that serves the
	// slow connections first is measured (250 s before the fix, with 5
	// minutes here), yet cut within a minute.
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(r.URL() + "?code=the-code&state=s-1")
	elapsed := time.Since(start)
	t.Logf("with %d slow connections the redirect was served after %v", slowConns, elapsed)
	if err != nil {
		t.Fatalf("the redirect: %v", err)
	}
	resp.Body.Close()
	// Generous: served at once, the header read timeout (redirectReadTimeout)
	// plays no part.
	const bound = 5 * time.Second
	if resp.StatusCode != http.StatusOK || elapsed > bound {
		t.Errorf("the redirect answered %d after %v; want 200 within %v", resp.StatusCode, elapsed, bound)
	}
	res, err := waitShort(t, r)
	if err != nil || res.Code != "the-code" {
		t.Errorf("wait = %+v, %v; want the real redirect's code", res, err)
	}
}

func TestRedirectReceiverSecondRequest(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, 0, "s-1")
	redirect(t, r, "code=first&state=s-1")
	if status, _ := redirect(t, r, "code=second&state=s-1"); status != http.StatusGone {
		t.Errorf("second request answered %d, want 410", status)
	}
	res, err := waitShort(t, r)
	code := res.Code
	if err != nil || code != "first" {
		t.Errorf("wait = %q, %v; want the first code", code, err)
	}
}

// A request over the header bound is refused before the handler: it
// neither fails nor completes the login, and the real redirect still
// counts.
func TestRedirectReceiverOversized(t *testing.T) {
	t.Parallel()
	r := startReceiver(t, 0, "s-1")
	status, _ := redirect(t, r, "code=big&state=s-1&pad="+strings.Repeat("x", 8*maxRedirectHeader))
	if status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("oversized request answered %d, want 431", status)
	}
	redirect(t, r, "code=good&state=s-1")
	res, err := waitShort(t, r)
	code := res.Code
	if err != nil || code != "good" {
		t.Errorf("wait = %q, %v; want the code of the request within the bound", code, err)
	}
}

// A connection that trickles its request is closed after the read
// timeout; waiting without a redirect ends with the context.
func TestRedirectReceiverTimeout(t *testing.T) {
	t.Parallel()
	const readTimeout = 200 * time.Millisecond
	r := startReceiver(t, readTimeout, "s-1")
	// The server's read deadline starts when it accepts, which may come
	// before Dial returns here: timing from before the Dial keeps the
	// lower bound true.
	start := time.Now()
	conn, err := net.Dial("tcp", r.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /callback?code=slow&state=s-1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, _ = io.Copy(io.Discard, conn) // returns when the server closes the connection
	elapsed := time.Since(start)
	t.Logf("a trickling connection was closed after %v (read timeout %v)", elapsed, readTimeout)
	if elapsed < readTimeout || elapsed > 10*time.Second {
		t.Errorf("closed after %v, want between %v and 10s", elapsed, readTimeout)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := r.wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait = %v, want the context's deadline", err)
	}
}

// The authorization server's error code is shown only when it has the
// form of one; anything else in it could drive the terminal.
func TestRedirectReceiverServerError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, errParam, want string
	}{
		{"code", "access_denied", "refused the login: access_denied"},
		{"hostile text", "\x1b[2Jgotcha", "refused the login: an error code of unexpected form"},
	}
	for _, tt := range tests {
		r := startReceiver(t, 0, "s-1")
		redirect(t, r, "state=s-1&error="+url.QueryEscape(tt.errParam))
		_, err := waitShort(t, r)
		if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("%s: wait = %v, want it to end in %q", tt.name, err, tt.want)
		}
	}
}

func TestRedirectReceiverNeedsState(t *testing.T) {
	t.Parallel()
	r, err := listenRedirect(0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.expect("https://auth.example/authorize?client_id=c"); err == nil {
		t.Error("an authorization URL without state was accepted")
	}
}

// Connections past maxRedirectConns wait until one ends: idle connections
// holding every slot delay the redirect until their read timeout closes
// them, and it is then served.
func TestRedirectReceiverConnectionLimit(t *testing.T) {
	t.Parallel()
	const readTimeout = 300 * time.Millisecond
	r := startReceiver(t, readTimeout, "s-1")
	// The kernel hands connections to Accept in the order they were
	// dialed, so the redirect's waits behind the idle ones, and each idle
	// one's read deadline starts after it was dialed: timing from before
	// the dials makes the redirect's wait at least readTimeout, however
	// late the server accepts (no sleep needed to let it).
	start := time.Now()
	for range maxRedirectConns {
		c, err := net.Dial("tcp", r.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	status, _ := redirect(t, r, "code=late&state=s-1")
	elapsed := time.Since(start)
	t.Logf("with %d idle connections the redirect was served after %v (read timeout %v)", maxRedirectConns, elapsed, readTimeout)
	if status != http.StatusOK || elapsed < readTimeout {
		t.Errorf("redirect answered %d after %v; want 200 after the idle connections' read timeout", status, elapsed)
	}
}
