package resource_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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
		if diff := cmp.Diff(tt.want, resource.MaskArgs(tt.in)); diff != "" {
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
	got, leftover := resource.UnmaskMCP(stored, back)
	if leftover {
		t.Errorf("a mask was left in %s", got)
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
	if _, leftover := resource.UnmaskMCP(stored, back); !leftover {
		t.Error("a mask under a new env name was not reported")
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
		back, leftover := resource.UnmaskMCP(data, red)
		if leftover {
			t.Fatalf("masks left after the round trip: %s", back)
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
