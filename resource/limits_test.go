package resource_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/resource"
)

// Every write is bounded by MaxDocumentBytes, including the document it
// leaves behind: patches of new fields and adds to lists cannot grow a
// stored document past the limit one write at a time.
func TestStoredDocumentBounded(t *testing.T) {
	t.Parallel()
	svc, repo := newService(t)
	small := resource.NewService(repo, &resource.ServiceOptions{MaxDocumentBytes: 512})
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true})
	chunk := strings.Repeat("x", 200)
	var lastErr error
	for i := 0; i < 5 && lastErr == nil; i++ {
		_, lastErr = small.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot",
			Data: json.RawMessage(`{"note` + strconv.Itoa(i) + `": "` + chunk + `"}`)})
	}
	if de := docError(t, lastErr); de.Code != findcode.Limit || de.Fix == "" {
		t.Fatalf("growing patches: %v, want a limit error with a fix", de)
	}
	lastErr = nil
	for i := 0; i < 5 && lastErr == nil; i++ {
		_, lastErr = small.Write(bg, resource.Direct(), resource.WriteRequest{Kind: resource.KindAgent, Ref: "grow",
			Create: i == 0, Add: map[string][]string{"notes": {strconv.Itoa(i) + chunk}}})
	}
	if de := docError(t, lastErr); de.Code != findcode.Limit {
		t.Fatalf("growing adds: %v, want a limit error", de)
	}
	for _, kind := range []resource.Kind{resource.KindAgent} {
		list, err := repo.List(bg, kind, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			if len(r.Data) > 512 {
				t.Fatalf("%s was stored with %d bytes, over the 512 limit", r.Ref, len(r.Data))
			}
		}
	}
}

// add and remove are bounded too: the number of fields and the bytes of
// their items.
func TestAddRemoveBounded(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true})
	many := map[string][]string{}
	for i := 0; i < 100; i++ {
		many["list"+strconv.Itoa(i)] = []string{"x"}
	}
	small := resource.NewService(svc.Repository(), &resource.ServiceOptions{MaxDocumentBytes: 1024})
	for name, req := range map[string]resource.WriteRequest{
		"many fields": {Add: many},
		"big items":   {Remove: map[string][]string{"notes": {strings.Repeat("y", 600), strings.Repeat("z", 600)}}},
	} {
		req.Kind, req.Ref = resource.KindAgent, "bot"
		_, err := small.Write(bg, resource.Direct(), req)
		if de := docError(t, err); de.Code != findcode.Limit {
			t.Errorf("%s: %v, want a limit error", name, de)
		}
	}
}

// A write of the data already stored writes no new revision, also when the
// document holds characters encoding/json would HTML-escape.
func TestSameDataIsNoop(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	doc := json.RawMessage(`{"mcpServers": {"s": {"url": "https://x.example/mcp?a=1&b=<2>"}}}`)
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "s", Create: true, Data: doc})
	res := mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindMCP, Ref: "s", Data: doc})
	if res.Changed || res.Resource.Revision != 1 {
		t.Fatalf("rewrite of the same data: changed=%v revision=%d, want unchanged at 1", res.Changed, res.Resource.Revision)
	}
	if !strings.Contains(string(res.Resource.Data), "a=1&b=<2>") {
		t.Fatalf("stored data %s was re-escaped", res.Resource.Data)
	}
	mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Create: true, Data: json.RawMessage(`{"note": "a&b"}`)})
	res = mustWrite(t, svc, resource.WriteRequest{Kind: resource.KindAgent, Ref: "bot", Data: json.RawMessage(`{"note": "a&b"}`)})
	if res.Changed || res.Resource.Revision != 1 {
		t.Fatalf("agent rewrite of the same data: changed=%v revision=%d, want unchanged at 1", res.Changed, res.Resource.Revision)
	}
}
