package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/resource"
)

func oauthDoc(typ, oauth string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"mcpServers": {"s": {"type": %q, "url": "https://mcp.example.com/mcp", "oauth": %s}}}`, typ, oauth))
}

// findingFields returns the fields of every error finding of a refused
// document, and whether any message or fix quotes needle.
func findingFields(t *testing.T, err error, needle string) []string {
	t.Helper()
	var de *resource.DocumentError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a *DocumentError", err)
	}
	all := append([]resource.Finding{{Field: de.Field, Message: de.Message, Fix: de.Fix}}, de.More...)
	var fields []string
	for _, f := range all {
		if needle != "" && (strings.Contains(f.Message, needle) || strings.Contains(f.Fix, needle)) {
			t.Errorf("finding %s quotes the value: %s (%s)", f.Field, f.Message, f.Fix)
		}
		fields = append(fields, f.Field)
	}
	return fields
}

func TestOAuthFieldAccepted(t *testing.T) {
	t.Parallel()
	for _, oauth := range []string{
		`{}`,
		`{"client_id": "agt", "client_secret": "${secret:mcp/client}", "scopes": ["read", "write"], "registration": "preregistered"}`,
		`{"registration": "metadata_document", "client_metadata_url": "https://host.example.com/oauth/client.json"}`,
		`{"registration": "dynamic", "scopes": ["offline_access"]}`,
		`{"grant": "client_credentials", "client_id": "m2m", "client_secret": "${secret:m2m}", "token_endpoint_auth": "client_secret_basic"}`,
		`{"grant": "client_credentials", "client_id": "m2m", "private_key": "${secret:m2m.key}", "token_endpoint_auth": "private_key_jwt"}`,
		`{"grant": "enterprise", "client_id": "mcp", "client_secret": "${secret:mcp}", "idp_issuer": "https://idp.example.com", "idp_client_id": "agt", "idp_client_secret": "${secret:idp}"}`,
		`{"grant": "enterprise", "client_id": "mcp", "idp_issuer": "http://127.0.0.1:8080/tenant", "idp_client_id": "agt"}`,
		// Issue 26 item 6: workload identity, with or without a client.
		`{"grant": "workload_identity", "assertion": "${secret:k8s-token}"}`,
		`{"grant": "workload_identity", "assertion": "${secret:k8s-token}", "client_id": "wl", "authorization_server": "https://auth.example.com"}`,
		`{"client_id": "agt", "client_secret": "${secret:c}", "authorization_server": "https://auth.example.com"}`,
		`{"client_id": "agt", "client_secret": "${secret:c}", "authorization_server": "https://auth.example.com/tenant/a"}`,
		`{"authorization_server": "http://127.0.0.1:8080"}`,
		`{"authorization_server": "http://[::1]:8080"}`,
		`{"authorization_server": "http://localhost:8080"}`,
	} {
		for _, typ := range []string{"http", "sse"} {
			_, srv, err := resource.ValidateMCP(oauthDoc(typ, oauth))
			if err != nil {
				t.Errorf("%s %s: %v", typ, oauth, err)
				continue
			}
			if srv.OAuth == nil {
				t.Errorf("%s %s: OAuth not decoded", typ, oauth)
			}
			_, dsrv, err := resource.DecodeMCP(oauthDoc(typ, oauth))
			if err != nil || !cmp.Equal(dsrv.OAuth, srv.OAuth) {
				t.Errorf("DecodeMCP %s = %+v, %v; ValidateMCP gave %+v", oauth, dsrv.OAuth, err, srv.OAuth)
			}
		}
	}
}

func TestOAuthFieldRefused(t *testing.T) {
	t.Parallel()
	const base = "/mcpServers/s/oauth"
	for _, tc := range []struct {
		oauth string
		want  []string
	}{
		{`null`, []string{base}},
		{`"yes"`, []string{base}},
		{`{"client_id": "a", "client_secret": "hunter2-plain-secret"}`, []string{base + "/client_secret"}},
		{`{"client_id": "a", "client_secret": "Bearer ${secret:x}"}`, []string{base + "/client_secret"}},
		{`{"client_id": "a", "client_secret": "${env:SECRET}"}`, []string{base + "/client_secret"}},
		{`{"client_id": "a", "private_key": "-----BEGIN PRIVATE KEY-----hunter2-plain-secret", "token_endpoint_auth": "private_key_jwt", "grant": "client_credentials"}`, []string{base + "/private_key"}},
		{`{"client_secret": "${secret:x}"}`, []string{base + "/client_id"}},
		{`{"scopes": ["a b"]}`, []string{base + "/scopes/0"}},
		{`{"scopes": "a"}`, []string{base + "/scopes"}},
		{`{"registration": "magic"}`, []string{base + "/registration"}},
		{`{"registration": "preregistered"}`, []string{base + "/client_id"}},
		{`{"grant": "password"}`, []string{base + "/grant"}},
		{`{"grant": "client_credentials"}`, []string{base + "/client_id"}},
		{`{"grant": "client_credentials", "client_id": "a"}`, []string{base + "/client_secret"}},
		{`{"grant": "client_credentials", "client_id": "a", "client_secret": "${secret:x}", "registration": "dynamic"}`, []string{base + "/registration"}},
		{`{"token_endpoint_auth": "client_secret_jwt"}`, []string{base + "/token_endpoint_auth"}},
		{`{"token_endpoint_auth": "client_secret_basic", "client_id": "a"}`, []string{base + "/client_secret"}},
		{`{"token_endpoint_auth": "private_key_jwt", "client_id": "a", "private_key": "${secret:k}"}`, []string{base + "/token_endpoint_auth"}},
		{`{"client_id": "a", "private_key": "${secret:k}"}`, []string{base + "/private_key"}},
		{`{"client_metadata_url": "http://host.example.com/client.json"}`, []string{base + "/client_metadata_url"}},
		{`{"client_metadata_url": "https://host.example.com/"}`, []string{base + "/client_metadata_url"}},
		{`{"client_id": "${secret:x}"}`, []string{base + "/client_id"}},
		{`{"clientId": "a"}`, []string{base + "/clientId"}},
		// Issue 26 item 6: the workload token is a reference, needed by
		// its grant and refused by the others.
		{`{"grant": "workload_identity"}`, []string{base + "/assertion"}},
		{`{"grant": "workload_identity", "assertion": "eyJhbGciOiJSUzI1NiJ9.plain.token"}`, []string{base + "/assertion"}},
		{`{"grant": "workload_identity", "assertion": "${env:TOKEN}"}`, []string{base + "/assertion"}},
		{`{"assertion": "${secret:k8s-token}"}`, []string{base + "/assertion"}},
		{`{"grant": "workload_identity", "assertion": "${secret:t}", "registration": "dynamic"}`, []string{base + "/registration"}},
		{`{"grant": "enterprise"}`, []string{base + "/client_id", base + "/idp_client_id", base + "/idp_issuer"}},
		{`{"grant": "enterprise", "client_id": "a", "idp_client_id": "b", "idp_issuer": "http://idp.example.com"}`, []string{base + "/idp_issuer"}},
		{`{"grant": "enterprise", "client_id": "a", "idp_client_id": "b", "idp_issuer": "https://idp.example.com?x=hunter2"}`, []string{base + "/idp_issuer"}},
		{`{"grant": "enterprise", "client_id": "a", "idp_client_id": "b", "idp_issuer": "https://idp.example.com", "idp_client_secret": "hunter2-plain-secret"}`, []string{base + "/idp_client_secret"}},
		{`{"grant": "enterprise", "client_id": "a", "idp_client_id": "b", "idp_issuer": "https://idp.example.com", "registration": "dynamic"}`, []string{base + "/registration"}},
		{`{"idp_issuer": "https://idp.example.com", "idp_client_id": "b", "idp_client_secret": "${secret:x}"}`, []string{base + "/idp_client_id", base + "/idp_client_secret", base + "/idp_issuer"}},
		{`{"authorization_server": "http://auth.example.com"}`, []string{base + "/authorization_server"}},
		{`{"authorization_server": "http://10.0.0.1"}`, []string{base + "/authorization_server"}},
		{`{"authorization_server": "https://auth.example.com?tenant=a"}`, []string{base + "/authorization_server"}},
		{`{"authorization_server": "https://auth.example.com#x"}`, []string{base + "/authorization_server"}},
		{`{"authorization_server": "https://"}`, []string{base + "/authorization_server"}},
		{`{"authorization_server": "auth.example.com"}`, []string{base + "/authorization_server"}},
		{`{"authorization_server": "https://user@auth.example.com"}`, []string{base + "/authorization_server"}},
		{`{"authorization_server": 1}`, []string{base + "/authorization_server"}},
	} {
		_, _, err := resource.ValidateMCP(oauthDoc("http", tc.oauth))
		if err == nil {
			t.Errorf("%s accepted", tc.oauth)
			continue
		}
		if diff := cmp.Diff(tc.want, findingFields(t, err, "hunter2")); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", tc.oauth, diff)
		}
	}
}

func TestOAuthFieldStdioRefused(t *testing.T) {
	t.Parallel()
	doc := json.RawMessage(`{"mcpServers": {"s": {"command": "srv", "cwd": "/srv", "oauth": {}}}}`)
	_, _, err := resource.ValidateMCP(doc)
	if diff := cmp.Diff([]string{"/mcpServers/s/oauth"}, findingFields(t, err, "")); diff != "" {
		t.Fatalf("fields (-want +got):\n%s", diff)
	}
}

func TestOAuthScopesBounded(t *testing.T) {
	t.Parallel()
	scopes, _ := json.Marshal(make([]string, 65))
	_, _, err := resource.ValidateMCP(oauthDoc("http", `{"scopes": `+string(scopes)+`}`))
	var de *resource.DocumentError
	if !errors.As(err, &de) || de.Code != findcode.Limit || len(de.More) != 0 {
		t.Fatalf("65 scopes: err = %v, want one limit finding", err)
	}
}

// The redacted document (what resource_read shows) keeps the oauth field:
// it is configuration and holds references only.
func TestOAuthFieldRedactKeeps(t *testing.T) {
	t.Parallel()
	doc := oauthDoc("http", `{"client_id": "agt", "client_secret": "${secret:c}", "scopes": ["read"]}`)
	_, srv, err := resource.DecodeMCP(resource.RedactMCP(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := &resource.MCPOAuth{ClientID: "agt", ClientSecret: "${secret:c}", Scopes: []string{"read"}}
	if diff := cmp.Diff(want, srv.OAuth); diff != "" {
		t.Fatalf("redacted oauth (-want +got):\n%s", diff)
	}
}

func TestMemoryTokenStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := resource.NewMemoryTokenStore()
	if _, err := s.Load(ctx, "a"); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Load of nothing: %v, want ErrNotFound", err)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Update(ctx, "a", func(old []byte) ([]byte, error) { return append(old, 'x'), nil })
		}()
	}
	wg.Wait()
	b, err := s.Load(ctx, "a")
	if err != nil || len(b) != 20 {
		t.Fatalf("after 20 concurrent appends: %q, %v", b, err)
	}
	if err := s.Update(ctx, "a", func([]byte) ([]byte, error) { return nil, errors.New("no") }); err == nil {
		t.Fatal("a failing update succeeded")
	}
	if err := s.Update(ctx, "a", func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "a"); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Load after delete: %v, want ErrNotFound", err)
	}
}
