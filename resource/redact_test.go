package resource_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/resource"
)

func TestMaskArgs(t *testing.T) {
	t.Parallel()
	const m = resource.Mask
	tests := []struct {
		in, want []string
	}{
		{[]string{"--token", "abc", "--verbose"}, []string{"--token", m, "--verbose"}},
		{[]string{"--api-key=abc", "-x"}, []string{"--api-key=" + m, "-x"}},
		{[]string{"--password", "${secret:pw}"}, []string{"--password", "${secret:pw}"}},
		{[]string{"--key=pre${env:K}"}, []string{"--key=" + m + "${env:K}"}},
		{[]string{"https://u:p@h.example/x?k=v"}, []string{"https://" + m + "@h.example/x?" + m}},
		{[]string{"https://h.example/hooks/ghp_abcdefgh1234"}, []string{"https://h.example/" + m}},
		{[]string{"sk-live-0123456789"}, []string{m}},
		{[]string{"-y", "@modelcontextprotocol/server-filesystem", "${cwd}"}, []string{"-y", "@modelcontextprotocol/server-filesystem", "${cwd}"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, resourcefn.MaskArgs(tt.in)); diff != "" {
			t.Errorf("MaskArgs(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// A redacted document sent back with one field changed keeps every
// stored secret; a mask that matches no stored value is reported.
func TestRedactAndUnmask(t *testing.T) {
	t.Parallel()
	const secret = "pl4nted-S3CRET"
	stored := json.RawMessage(`{"mcpServers":{"s":{"command":"npx","cwd":"/x","args":["--token","` + secret + `","--plain"],"env":{"K":"` + secret + `","R":"${secret:r}"},"description":"old"}}}`)
	red := resource.RedactMCP(stored)
	if strings.Contains(string(red), secret) {
		t.Fatalf("redacted document shows the secret: %s", red)
	}
	if !strings.Contains(string(red), "${secret:r}") {
		t.Errorf("redacted document hides a reference: %s", red)
	}
	var doc map[string]map[string]map[string]any
	if err := json.Unmarshal(red, &doc); err != nil {
		t.Fatal(err)
	}
	doc["mcpServers"]["s"]["description"] = "new"
	back, _ := json.Marshal(doc)
	got, err := resource.UnmaskMCP(stored, back)
	if err != nil {
		t.Errorf("unmask: %v", err)
	}
	want := strings.Replace(string(stored), "old", "new", 1)
	var g, w any
	_ = json.Unmarshal(got, &g)
	_ = json.Unmarshal([]byte(want), &w)
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("unmasked write (-want +got):\n%s", diff)
	}

	doc["mcpServers"]["s"]["env"] = map[string]any{"NEW": resource.Mask}
	back, _ = json.Marshal(doc)
	var de *resource.DocumentError
	if _, err := resource.UnmaskMCP(stored, back); !errors.As(err, &de) || de.Field != "/mcpServers/s/env/NEW" {
		t.Errorf("a mask under a new env name: %v, want a DocumentError at /mcpServers/s/env/NEW", err)
	}
}

// issue 23 item 2: a mask sent back restores the stored value only for the
// destination it was written for: the url's origin for headers and url,
// the command, the PATH in env and cwd for env values and args. Else the
// write is refused at the first restored field.
func TestUnmaskOnlyForTheSameDestination(t *testing.T) {
	t.Parallel()
	const secret = "pl4nted-S3CRET"
	remote := `{"url":"https://a.example/mcp?k=` + secret + `","headers":{"Authorization":"Bearer ` + secret + `"}}`
	stdio := `{"command":"npx","cwd":"/x","args":["--token","` + secret + `","--plain"],"env":{"K":"` + secret + `"}}`
	// issue 23 item 6: the forms MaskArgs learnt are restored by the same rule.
	docker := `{"command":"docker","cwd":"/x","args":["run","-e","DB_PASSWORD=` + secret + `","-H","Authorization: Bearer ` + secret + `"]}`
	tests := []struct {
		name   string
		stored string
		patch  map[string]any // fields set in the redacted entry
		field  string         // the field refused; "" for a restored write
	}{
		{"remote, description", remote, map[string]any{"description": "d"}, ""},
		{"remote, another path", remote, map[string]any{"url": "https://a.example/other"}, ""},
		{"remote, the default port written", remote, map[string]any{"url": "https://A.example:443/mcp"}, ""},
		{"remote, another host", remote, map[string]any{"url": "https://b.example/mcp"}, "/mcpServers/s/headers/Authorization"},
		{"remote, another scheme", remote, map[string]any{"url": "http://a.example/mcp"}, "/mcpServers/s/headers/Authorization"},
		{"remote, another port", remote, map[string]any{"url": "https://a.example:8443/mcp"}, "/mcpServers/s/headers/Authorization"},
		{"remote to stdio", remote, map[string]any{"url": nil, "command": "npx", "cwd": "/x"}, "/mcpServers/s/headers/Authorization"},
		{"stdio, description", stdio, map[string]any{"description": "d"}, ""},
		{"stdio, the same args sent back", stdio, map[string]any{"args": []string{"--token", resource.Mask, "--plain"}}, ""},
		{"stdio, a new value for the masked arg", stdio, map[string]any{"args": []string{"--token", "n3w-S3CRET-value", "--plain"}, "env": map[string]string{"K": resource.Mask}}, ""},
		// What a launcher runs is in its args: npx -y pkg.
		{"stdio, another plain arg", stdio, map[string]any{"args": []string{"--token", resource.Mask, "--other"}}, "/mcpServers/s/env/K"},
		{"stdio, an arg added", stdio, map[string]any{"args": []string{"--token", resource.Mask, "--plain", "x"}}, "/mcpServers/s/env/K"},
		{"stdio, an env name added", stdio, map[string]any{"env": map[string]string{"K": resource.Mask, "OTHER": "x"}}, ""},
		{"stdio, another command", stdio, map[string]any{"command": "/tmp/evil"}, "/mcpServers/s/env/K"},
		{"stdio, another cwd", stdio, map[string]any{"cwd": "/y"}, "/mcpServers/s/env/K"},
		{"stdio, PATH set in env", stdio, map[string]any{"env": map[string]string{"K": resource.Mask, "PATH": "/tmp/evil"}}, "/mcpServers/s/env/K"},
		{"stdio, arg to another command", stdio, map[string]any{"command": "docker", "env": nil}, "/mcpServers/s/args/1"},
		{"docker-style args, description", docker, map[string]any{"description": "d"}, ""},
		{"docker-style args, another command", docker, map[string]any{"command": "podman"}, "/mcpServers/s/args/2"},
		{"stdio to remote", stdio, map[string]any{"command": nil, "args": nil, "url": "https://a.example/mcp"}, "/mcpServers/s/env/K"},
	}
	for _, tt := range tests {
		stored := json.RawMessage(`{"mcpServers":{"s":` + tt.stored + `}}`)
		var doc map[string]map[string]map[string]any
		if err := json.Unmarshal(resource.RedactMCP(stored), &doc); err != nil {
			t.Fatal(err)
		}
		for k, v := range tt.patch {
			if v == nil {
				delete(doc["mcpServers"]["s"], k)
			} else {
				doc["mcpServers"]["s"][k] = v
			}
		}
		back, _ := json.Marshal(doc)
		got, err := resource.UnmaskMCP(stored, back)
		if tt.field == "" {
			if err != nil || strings.Contains(string(got), resource.Mask) || !strings.Contains(string(got), secret) {
				t.Errorf("%s: unmask = %s, %v; want the stored values back", tt.name, got, err)
			}
			continue
		}
		var de *resource.DocumentError
		if !errors.As(err, &de) || de.Field != tt.field {
			t.Errorf("%s: unmask error %v, want a DocumentError at %s", tt.name, err, tt.field)
		} else if strings.Contains(de.Error(), secret) {
			t.Errorf("%s: the error shows the value: %v", tt.name, de)
		}
	}
}

// Any accepted document: its redacted form holds only masks and
// references in env and header values, and a write that sends the
// redacted form back restores the stored document exactly, with no mask
// left.
func FuzzRedactRoundTrip(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers":{"s":{"command":"npx","cwd":"/a","args":["--token","t0k","--api-key=k${env:K}x","sk-abcdef0123456789","https://u:p@h/x?q=1"],"env":{"A":"v${secret:s}w","B":"$${x}","C":""}}}}`,
		`{"mcpServers":{"s":{"url":"https://u:p@h.example/p/ghp_abcdefghijk123?k=v#f","headers":{"Authorization":"Bearer ${secret:x}","X":"[redacted]"}}}}`,
		`{"mcpServers":{"s":{"url":"http://h","headers":{"A":"a"}}}}`,
		`{"mcpServers":{"s":{"command":"docker","cwd":"/a","args":["-e","DB_PASSWORD=pw","--env=API_TOKEN=t${env:T}","-H","Authorization: Bearer x","--header=Cookie:c","https://h/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX"]}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		name, srv, err := resource.ValidateMCP(data)
		if err != nil {
			return
		}
		red := resource.RedactMCP(data)
		var doc resource.MCPDocument
		if err := json.Unmarshal(red, &doc); err != nil {
			t.Fatalf("redacted document does not decode: %v", err)
		}
		shown := doc.MCPServers[name]
		for _, m := range []map[string]string{shown.Env, shown.Headers} {
			for k, v := range m {
				if resource.RedactServer(resource.MCPServer{Env: map[string]string{k: v}}).Env[k] != v {
					t.Fatalf("redacted value %q of %s holds literal text", v, k)
				}
			}
		}
		back, err := resource.UnmaskMCP(data, red)
		if err != nil {
			t.Fatalf("the round trip is refused: %v", err)
		}
		_, got, err := resource.ValidateMCP(back)
		if err != nil {
			t.Fatalf("round trip is not a valid document: %v", err)
		}
		if diff := cmp.Diff(srv, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-stored +restored):\n%s", diff)
		}
	})
}

// issue 23 item 6: credentials written in forms MaskArgs, MaskURL and so
// RedactMCP (resource_read) must hide (docker-style NAME=VALUE, a header as one argument or after its
// flag, an opaque token as a URL path segment), and ordinary arguments
// they must leave alone.
func TestMaskCredentialForms(t *testing.T) {
	t.Parallel()
	const m = resource.Mask
	tests := []struct {
		name    string
		args    []string
		url     string
		want    []string // MaskArgs(args); nil: args unchanged
		wantURL string
		secret  string // must not show; "" for a case that hides nothing
	}{
		{name: "docker -e", args: []string{"run", "-e", "DB_PASSWORD=hunter2hunter2"}, want: []string{"run", "-e", "DB_PASSWORD=" + m}, secret: "hunter2"},
		{name: "--env NAME=VALUE", args: []string{"--env", "API_TOKEN=tok3n-value"}, want: []string{"--env", "API_TOKEN=" + m}, secret: "tok3n"},
		{name: "--env=NAME=VALUE", args: []string{"--env=GITHUB_TOKEN=tok3n-value"}, want: []string{"--env=GITHUB_TOKEN=" + m}, secret: "tok3n"},
		{name: "header after its flag", args: []string{"--header", "Authorization: Bearer hdr-value"}, want: []string{"--header", "Authorization: " + m}, secret: "hdr-value"},
		{name: "header after -H", args: []string{"-H", "X-API-Key: hdr-value"}, want: []string{"-H", "X-API-Key: " + m}, secret: "hdr-value"},
		{name: "header as one argument", args: []string{"--header=Authorization: Bearer hdr-value"}, want: []string{"--header=Authorization: " + m}, secret: "hdr-value"},
		{name: "header and flag in one argument", args: []string{"--header Authorization:Basic hdr-value"}, want: []string{"--header Authorization:" + m}, secret: "hdr-value"},
		{name: "cookie header", args: []string{"-H", "Cookie: sid=hdr-value"}, want: []string{"-H", "Cookie: " + m}, secret: "hdr-value"},
		{name: "opaque path segment", url: "https://hooks.example.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX", wantURL: "https://hooks.example.com/" + m, secret: "XXXXXXXXXXXXXXXXXXXXXXXX"},
		{name: "token prefix in the path", url: "https://mcp.example.com/ghp_abcdefghijklmnopqrstuvwxyz/mcp", wantURL: "https://mcp.example.com/" + m, secret: "ghp_abc"},

		{name: "reference kept", args: []string{"-e", "DB_PASSWORD=${secret:db}", "--header", "Authorization: Bearer ${env:TOK}"}, want: []string{"-e", "DB_PASSWORD=${secret:db}", "--header", "Authorization: " + m + "${env:TOK}"}},
		{name: "plain flags", args: []string{"--port", "8080", "--log-level=debug", "-y", "@modelcontextprotocol/server-filesystem", "/usr/local/bin/x"}},
		{name: "docker -e with a plain name", args: []string{"-e", "NODE_ENV=production", "-e", "DB_PASSWORD", "-v", "/data:/data"}},
		{name: "plain header", args: []string{"--header", "Accept: application/json", "localhost:8080"}},
		{name: "plain path", url: "https://mcp.example.com/v1/modelcontextprotocol/getting-started-with-servers/mcp"},
	}
	shown, forms := 0, 0
	for _, tt := range tests {
		if tt.secret != "" {
			forms++
		}
		want, wantURL := tt.want, tt.wantURL
		if want == nil {
			want = tt.args
		}
		if wantURL == "" {
			wantURL = tt.url
		}
		got := resourcefn.MaskArgs(tt.args)
		gotURL := resourcefn.MaskURL(tt.url)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: MaskArgs(%q) (-want +got):\n%s", tt.name, tt.args, diff)
		}
		if gotURL != wantURL {
			t.Errorf("%s: MaskURL = %q, want %q", tt.name, gotURL, wantURL)
		}
		// What resource_read shows: the document redacted.
		entry := map[string]any{"command": "docker", "cwd": "/x", "args": tt.args}
		if tt.url != "" {
			entry = map[string]any{"url": tt.url}
		}
		doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": entry}})
		read := string(resource.RedactMCP(doc))
		if tt.secret != "" && strings.Contains(strings.Join(got, " ")+gotURL+read, tt.secret) {
			shown++
		}
	}
	if shown > 0 {
		t.Errorf("%d of %d credential forms shown in clear", shown, forms)
	}
}

// Issue 23 item 4: CredentialValues lists what a connection scrubs from
// its server's answers besides the values of references: the literal
// credentials of the document, by the rules that redact it.
func TestCredentialValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		srv  resource.MCPServer
		want []string
	}{
		{"env literals, references left out", resource.MCPServer{Env: map[string]string{"A": "plain-value", "B": "pre-${secret:s}-post", "C": "${env:X}"}},
			[]string{"plain-value", "pre-", "-post"}},
		{"credential headers and bearer tokens", resource.MCPServer{Headers: map[string]string{
			"Authorization": "Bearer tok-123456", "X-Format": "application/json", "X-Trace": "sk-live-0123456789", "Cookie": "${secret:c}"}},
			[]string{"Bearer tok-123456", "tok-123456", "sk-live-0123456789"}},
		{"basic credentials, encoded and decoded", resource.MCPServer{Headers: map[string]string{"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}},
			[]string{"Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "user:password"}},
		{"args as MaskArgs hides them", resource.MCPServer{Args: []string{"--token", "abc-secret", "-e", "DB_PASSWORD=pw-123", "--verbose", "plain"}},
			[]string{"abc-secret", "pw-123"}},
		{"url user info, credential query values and token segments", resource.MCPServer{
			URL: "https://me:pa%2Fss@h.example/hooks/T0123456789ABCDEFGHIJKLMNO?api_key=k-1&format=json"},
			[]string{"me", "pa/ss", "me:pa/ss", "T0123456789ABCDEFGHIJKLMNO", "k-1"}},
	}
	for _, tt := range tests {
		got := credentialValues(tt.srv)
		if diff := cmp.Diff(tt.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// credentialValues asks the one implementation the way package mcpconn
// does, through internal/resourcefn.
func credentialValues(srv resource.MCPServer) []string {
	return resourcefn.CredentialValues(srv.Args, srv.Env, srv.Headers, srv.URL)
}
