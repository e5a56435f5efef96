package main

import (
	"errors"
	"flag"

	"github.com/agtsdk/agt/resource"
)

// oauthFlags are the flags that say a remote server is reached with OAuth.
// The rest of the oauth field (a private key reference, the registration,
// the grant) is given with --data.
type oauthFlags struct {
	oauth        bool
	clientID     string
	clientSecret string
	authServer   string
	scopes       commaList
}

func defineOAuthFlags(fs *flag.FlagSet) *oauthFlags {
	o := &oauthFlags{}
	fs.BoolVar(&o.oauth, "oauth", false, "remote: reach the server with OAuth (log in with 'agt mcp login REF'); --oauth=false stops")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "remote: the `ID` of a client pre-registered with the authorization server (implies --oauth)")
	fs.StringVar(&o.clientSecret, "oauth-client-secret", "", "remote: the pre-registered client's secret as a `${secret:NAME}` reference, never the secret itself (implies --oauth)")
	fs.StringVar(&o.authServer, "oauth-authorization-server", "", "remote: the `ISSUER` URL of the authorization server that may receive the client secret, when it is not on the server's origin (implies --oauth)")
	fs.Var(&o.scopes, "oauth-scopes", "remote: the comma-separated `SCOPES` to ask for (implies --oauth; default: the ones the server names)")
	return o
}

// oauthFlagNames are the flags of defineOAuthFlags.
var oauthFlagNames = []string{"oauth", "oauth-client-id", "oauth-client-secret", "oauth-authorization-server", "oauth-scopes"}

// apply sets srv's oauth field from the flags that were given, and
// refuses them for a stdio server.
func (o *oauthFlags) apply(fs *flag.FlagSet, srv *resource.MCPServer) error {
	anyGiven := false
	for _, n := range oauthFlagNames {
		anyGiven = anyGiven || given(fs, n)
	}
	if !anyGiven {
		return nil
	}
	if srv.Transport() == resource.TransportStdio {
		return errors.New("--oauth is for remote servers (--url); a stdio server takes its credentials with -e/--env")
	}
	if given(fs, "oauth") && !o.oauth {
		for _, n := range oauthFlagNames[1:] {
			if given(fs, n) {
				return errors.New("--oauth=false removes OAuth; do not combine it with --" + n)
			}
		}
		srv.OAuth = nil
		return nil
	}
	if srv.OAuth == nil {
		srv.OAuth = &resource.MCPOAuth{}
	}
	if given(fs, "oauth-client-id") {
		srv.OAuth.ClientID = o.clientID
	}
	if given(fs, "oauth-client-secret") {
		srv.OAuth.ClientSecret = o.clientSecret
	}
	if given(fs, "oauth-authorization-server") {
		srv.OAuth.AuthorizationServer = o.authServer
	}
	if given(fs, "oauth-scopes") {
		srv.OAuth.Scopes = append([]string(nil), o.scopes.items...)
	}
	return nil
}
