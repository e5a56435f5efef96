package mcpconn

import (
	"context"
	"net/http"
	"net/url"

	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// grantWithoutPerson reports whether grant obtains its token with no
// person and no redirect (a login needs no Authorize step).
func grantWithoutPerson(grant string) bool {
	return grant == mcpdoc.GrantClientCredentials || grant == mcpdoc.GrantEnterprise || grant == mcpdoc.GrantWorkloadIdentity
}

// workloadHandler is the OAuth handler of the "workload_identity" grant
// (workload identity federation, SEP-1933): the host's workload identity
// token, resolved from oauth.assertion at each exchange, is traded for the
// access token with the jwt-bearer grant (RFC 7523) at the authorization
// server the server's metadata names (and checkAuthServer allows: the
// token is a credential). Nothing is stored: a new access token is always
// obtained from the workload token, so the token store never holds one.
type workloadHandler struct {
	o *oauthSession
	grantTokens
}

func (h *workloadHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if err := h.o.failedBefore(resp); err != nil {
		return err
	}
	defer resp.Body.Close()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(challenges) {
		return nil // not an authorization matter: the retry reports it
	}
	prm, asm, err := h.o.grantAuthServer(ctx, challenges, req.URL.String())
	if prm == nil {
		return err
	}
	resourceURI := prm.Resource
	if resourceURI == "" {
		resourceURI = h.o.resource
	}
	src := &workloadSource{o: h.o, tokenURL: asm.TokenEndpoint, resource: resourceURI, scopes: h.o.grantScopes(challenges, prm),
		style: clientSecretStyle(h.o.conf.TokenEndpointAuth, asm.TokenEndpointAuthMethodsSupported)}
	return h.start(h.o, src)
}

// workloadSource obtains a token: the workload identity token from the
// host (resolved now, so a rotated one is used), then the access token.
type workloadSource struct {
	o                  *oauthSession
	tokenURL, resource string
	scopes             []string
	style              oauth2.AuthStyle
}

func (s *workloadSource) Token() (*oauth2.Token, error) {
	ctx, cancel := s.o.setup.storeContext()
	defer cancel()
	assertion, err := resourcefn.ResolveOAuthSecret("assertion", s.o.conf.Assertion, resourcefn.BindSecrets(s.o.secrets, ctx, string(s.o.ref)))
	if err != nil || assertion == "" {
		// A SecretError names the reference, never a value.
		msg := "the workload identity token of oauth.assertion could not be resolved"
		if se := secretError(s.o.ref, err); se != nil {
			msg += ": " + se.Detail
		}
		return nil, &flowError{msg: msg}
	}
	return s.o.jwtBearerGrant(ctx, s.tokenURL, s.scopes, s.style, assertion, url.Values{"resource": {s.resource}})
}

var _ auth.OAuthHandler = (*workloadHandler)(nil)
