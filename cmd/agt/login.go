package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// mcpLogin runs the OAuth login of the registration refArg: it prints the
// authorization URL, receives the redirect on a loopback listener, and
// lets the Connector exchange the code and keep the token in the token
// store. The token is never printed.
func mcpLogin(ctx context.Context, e *env, refArg string, timeout time.Duration, scopes commaList) error {
	const cmd = "mcp login"
	ref, err := parseRefArg(cmd, refArg)
	if err != nil {
		return err
	}
	if timeout <= 0 {
		return usagef(cmd, "--timeout must be positive")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	srv, err := readServer(ctx, e, ref)
	if err != nil {
		return err
	}
	if srv.OAuth == nil {
		return noOAuth(ref, srv, "log in to")
	}
	if scopes.set {
		o := *srv.OAuth
		o.Scopes = scopes.items
		srv.OAuth = &o
	}

	rcv, err := listenRedirect(0)
	if err != nil {
		return err
	}
	defer rcv.Close()
	// stepErr is why the interactive step failed, in agt's words (mcpconn
	// does not show the host's error: it may hold what a redirect said).
	var stepErr error
	authorize := func(ctx context.Context, _ resource.Ref, authorizationURL string) (mcpconn.AuthorizationResponse, error) {
		if !showableURL(authorizationURL) {
			stepErr = errors.New("the authorization server's URL is not a plain http(s) URL of printable characters; agt does not show it")
			return mcpconn.AuthorizationResponse{}, stepErr
		}
		if stepErr = rcv.expect(authorizationURL); stepErr != nil {
			return mcpconn.AuthorizationResponse{}, stepErr
		}
		fmt.Fprintf(e.out, "To log in to mcp %s, open this URL in a browser:\n\n  %s\n\nWaiting up to %s for the authorization server to send the browser back to %s ...\n",
			ref, authorizationURL, timeout, rcv.URL())
		res, err := rcv.wait(ctx)
		stepErr = err
		return res, err
	}
	// The person in the browser gets the login's whole --timeout, in
	// place of the server's startup timeout.
	err = h.Connector().Login(ctx, ref, srv, &mcpconn.LoginOptions{RedirectURL: rcv.URL(), Authorize: authorize, Timeout: timeout})
	if err != nil {
		if stepErr != nil && ctx.Err() == nil {
			// The library's error wraps ErrUnauthorized, whose hint
			// (register OAuth) does not apply: say what the step met.
			return fmt.Errorf("mcp %s: the login failed: %v", ref, stepErr)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w\nnext: agt gave up after --timeout %s; run 'agt mcp login %s' again, or give a longer --timeout", err, timeout, ref)
		}
		return err
	}
	fmt.Fprintf(e.out, "logged in to mcp %s: the token is kept in %s (never shown); Runs use and refresh it\n", ref, e.tokenPlace())
	return nil
}

// mcpLogout deletes the stored OAuth credential of refArg.
func mcpLogout(ctx context.Context, e *env, refArg string) error {
	ref, err := parseRefArg("mcp logout", refArg)
	if err != nil {
		return err
	}
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	// A credential kept from when it used OAuth, or was registered, is
	// removed all the same.
	srv, err := readServer(ctx, e, ref)
	if err != nil && !errors.Is(err, resource.ErrNotFound) {
		return err
	}
	if _, lerr := h.Tokens().Load(ctx, ref); errors.Is(lerr, resource.ErrNotFound) {
		switch {
		case err != nil:
			return err // not registered, with the nearest reference
		case srv.OAuth == nil:
			return noOAuth(ref, srv, "log out of")
		}
	}
	if err := h.Connector().Logout(ctx, ref); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "logged out of mcp %s: its OAuth credential is removed from %s\n", ref, e.tokenPlace())
	return nil
}

// noOAuth is the error of login and logout on a server that does not use
// OAuth: what it uses instead, and how to turn OAuth on when it should.
func noOAuth(ref resource.Ref, srv resource.MCPServer, verb string) error {
	if srv.Transport() == resource.TransportStdio {
		return fmt.Errorf("mcp %s is a stdio server, which does not use OAuth: there is nothing to %s; it takes its credentials from its env (-e)", ref, verb)
	}
	return fmt.Errorf("mcp %s does not use OAuth: there is nothing to %s; its credentials are its headers (-H)\nnext: if the server asks for an OAuth login: agt mcp update %s --oauth, then agt mcp login %s", ref, verb, ref, ref)
}

// readServer reads the server entry of the MCP registration ref.
func readServer(ctx context.Context, e *env, ref resource.Ref) (resource.MCPServer, error) {
	res, err := e.h.Resources().Read(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: ref})
	if err != nil {
		return resource.MCPServer{}, e.withRefSuggestion(ctx, resource.KindMCP, ref, err)
	}
	_, srv, err := resource.DecodeMCP(res.Data)
	if err != nil {
		return resource.MCPServer{}, about(err, resource.KindMCP, ref)
	}
	return srv, nil
}

// showableURL reports whether an authorization URL, which comes from a
// server, can be printed as is: http or https, and only printable ASCII,
// so that it can neither drive the terminal nor hide where it leads.
func showableURL(s string) bool {
	if len(s) > 8<<10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// tokenPlace says where the Host keeps its OAuth credentials, as its
// token store says: the file of a bbolt one (agt.Open's TokensFile beside
// the store), else the store's table.
func (e *env) tokenPlace() string {
	if ts, ok := e.h.Tokens().(*boltrepo.TokenStore); ok {
		return ts.Path()
	}
	return "the store's own token table"
}

// loginNote is what mcp test says about the OAuth login of ref: a line
// when the server uses OAuth with a person's login and none is stored, ""
// otherwise. A stored credential may still have expired: a probe tells.
func loginNote(ctx context.Context, e *env, ref resource.Ref) string {
	srv, err := readServer(ctx, e, ref)
	if err != nil || srv.OAuth == nil || srv.OAuth.Grant == mcpdoc.GrantClientCredentials {
		return ""
	}
	if _, err := e.h.Tokens().Load(ctx, ref); errors.Is(err, resource.ErrNotFound) {
		return "oauth: no login stored; next: agt mcp login " + string(ref)
	}
	return ""
}
