package resource_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/resource"
)

// Issue 25 item 3: a registration's headers are set over the MCP
// client's own, so one named like a header the client sets itself (the
// modern era's request headers, the legacy session and stream headers,
// those of the HTTP body, hop-by-hop ones, Host) would replace the
// client's value: it is refused, in any case, naming the header and what
// to do, without its value. Mcp-Param-* names stay allowed: the spec
// does not forbid them, and a tool annotating one is left out (mcpconn).
func TestRegistrationHeaderNames(t *testing.T) {
	t.Parallel()
	const value = "v4lue-never-echoed"
	for _, tc := range []struct {
		header string
		want   string // in the message; "" means accepted
	}{
		{"Mcp-Method", "the header Mcp-Method is an MCP request header"},
		{"mcp-method", "the header Mcp-Method is an MCP request header"},
		{"Mcp-Name", "the header Mcp-Name is an MCP request header"},
		{"MCP-Protocol-Version", "the header MCP-Protocol-Version is an MCP request header"},
		{"Mcp-Protocol-Version", "the header MCP-Protocol-Version is an MCP request header"},
		{"Mcp-Session-Id", "the header Mcp-Session-Id is an MCP session or stream header"},
		{"MCP-SESSION-ID", "the header Mcp-Session-Id is an MCP session or stream header"},
		{"Last-Event-ID", "the header Last-Event-ID is an MCP session or stream header"},
		{"last-event-id", "the header Last-Event-ID is an MCP session or stream header"},
		{"Accept", "the header Accept describes the HTTP body"},
		{"Content-Type", "the header Content-Type describes the HTTP body"},
		{"content-length", "the header Content-Length describes the HTTP body"},
		{"Content-Encoding", "the header Content-Encoding describes the HTTP body"},
		{"Transfer-Encoding", "the header Transfer-Encoding describes the HTTP body"},
		{"Connection", "the header Connection is a hop-by-hop HTTP header"},
		{"Keep-Alive", "the header Keep-Alive is a hop-by-hop HTTP header"},
		{"Proxy-Connection", "the header Proxy-Connection is a hop-by-hop HTTP header"},
		{"TE", "the header TE is a hop-by-hop HTTP header"},
		{"Trailer", "the header Trailer is a hop-by-hop HTTP header"},
		{"Upgrade", "the header Upgrade is a hop-by-hop HTTP header"},
		{"Host", "the header Host is taken from the url"},
		{"Authorization", ""},
		{"X-Api-Key", ""},
		{"Mcp-Param-Region", ""},
		{"Mcp-Methods", ""},
		{"Accept-Language", ""},
		{"User-Agent", ""},
	} {
		t.Run(tc.header, func(t *testing.T) {
			t.Parallel()
			for _, typ := range []string{resource.TransportHTTP, resource.TransportSSE} {
				doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{
					"type": typ, "url": "https://x.example/mcp", "headers": map[string]string{tc.header: value}}}})
				if err != nil {
					t.Fatal(err)
				}
				_, srv, err := resource.ValidateMCP(doc)
				if tc.want == "" {
					if err != nil {
						t.Fatalf("%s: a registration's %s header refused: %v", typ, tc.header, err)
					}
					if srv.Headers[tc.header] != value {
						t.Errorf("%s: headers = %v, want %s kept", typ, srv.Headers, tc.header)
					}
					continue
				}
				de := docError(t, err)
				if want := "/mcpServers/s/headers/" + tc.header; de.Field != want || de.Code != findcode.WrongType {
					t.Errorf("%s: field %q code %q, want %q %q", typ, de.Field, de.Code, want, findcode.WrongType)
				}
				if !strings.Contains(de.Message, tc.want) || !strings.HasPrefix(de.Fix, "remove it") {
					t.Errorf("%s: message %q fix %q, want %q and a fix that says to remove it", typ, de.Message, de.Fix, tc.want)
				}
				if strings.Contains(de.Error(), value) {
					t.Errorf("%s: the error repeats the value: %v", typ, de)
				}
			}
		})
	}
}
