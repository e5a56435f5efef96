package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitLog records what an Elicit handler and Served were told.
type elicitLog struct {
	mu     sync.Mutex
	asked  []string // "calls mode url id message" per Elicit call
	served []string // "method mode outcome reason" per report
}

func (l *elicitLog) handlers(action string) *mcpconn.Handlers {
	h := &mcpconn.Handlers{Served: func(_ mcpconn.Incoming, rep mcpconn.ServedRequest) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.served = append(l.served, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", rep.Method, rep.Mode, rep.Outcome, rep.Reason)))
	}}
	if action != "" {
		h.Elicit = func(_ context.Context, in mcpconn.Incoming, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.asked = append(l.asked, fmt.Sprintf("%v %s %s %s %s", in.Calls, p.Mode, p.URL, p.ElicitationID, p.Message))
			return &mcp.ElicitResult{Action: action}, nil
		}
	}
	return h
}

// Issue 24 item 3: a call the server answers with URL elicitation
// required (-32042, MCP 2025-11-25) hands each url-mode elicitation to
// Handlers.Elicit with the call, under the bounds and reports of any
// elicitation, and fails with ErrURLElicitationRequired in agt's words
// (never the URL, the id or the server's text), over stdio and
// streamable HTTP. Before, Elicit was never called and the call failed
// with the server's JSON-RPC error.
func TestURLElicitationRequired(t *testing.T) {
	t.Parallel()
	stdio, _ := clientFeatures(t)
	remote := resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, "-fault", string(mcptest.FaultClientFeatures))}
	const ask = "[U] url " + mcptest.AskURL + " need-%d Connect your account"
	const accepted = "elicitation/create url accepted"
	tests := []struct {
		name   string
		action string // the handler's answer; "": no Elicit handler
		noneAt bool   // no Handlers at all
		args   mcptest.URLNeededIn
		asked  []string
		served []string
		detail string
	}{
		{name: "accepted", action: "accept", asked: []string{fmt.Sprintf(ask, 1)}, served: []string{accepted},
			detail: "complete a step in a browser before this call can succeed (URL elicitation required, error -32042); the user was shown it and accepted: the call may succeed if made again once the user has finished"},
		{name: "three, all accepted", action: "accept", args: mcptest.URLNeededIn{Count: 3},
			asked: []string{fmt.Sprintf(ask, 1), fmt.Sprintf(ask, 2), fmt.Sprintf(ask, 3)}, served: []string{accepted, accepted, accepted},
			detail: "complete 3 steps in a browser"},
		{name: "declined stops the asking", action: "decline", args: mcptest.URLNeededIn{Count: 2},
			asked: []string{fmt.Sprintf(ask, 1)}, served: []string{"elicitation/create url declined"}, detail: "the user declined it: the call cannot succeed without it"},
		{name: "dismissed", action: "cancel", asked: []string{fmt.Sprintf(ask, 1)}, served: []string{"elicitation/create url cancelled"},
			detail: "the user dismissed it"},
		{name: "no Elicit handler", served: []string{"elicitation/create url refused the capability was not declared"},
			detail: "the client has no elicitation handler to show it to the user, so the call cannot succeed here"},
		{name: "no handlers at all", noneAt: true, detail: "the client has no elicitation handler"},
		{name: "more than MaxServerRequests", action: "accept", args: mcptest.URLNeededIn{Count: 5},
			served: []string{"elicitation/create url refused the error lists more than 4 elicitations (ConnectorOptions.Limits.MaxServerRequests)"},
			detail: "it could not be shown to the user (the error lists more than 4 elicitations (ConnectorOptions.Limits.MaxServerRequests))"},
		{name: "form mode", action: "accept", args: mcptest.URLNeededIn{Mode: "form"},
			served: []string{"elicitation/create form refused an elicitation a URL elicitation required error lists must be in url mode"},
			detail: "could not be shown to the user"},
		{name: "not http", action: "accept", args: mcptest.URLNeededIn{URL: "javascript:alert(1)"},
			served: []string{"elicitation/create url refused the elicitation's url is not an http or https URL"}, detail: "could not be shown"},
		{name: "url past MaxElicitationBytes", action: "accept", args: mcptest.URLNeededIn{URL: "https://x.example/" + strings.Repeat("a", 70<<10)},
			served: []string{"elicitation/create url refused the elicitation is larger than 65536 bytes (ConnectorOptions.Limits.MaxElicitationBytes)"},
			detail: "could not be shown"},
		{name: "data without a list", action: "accept", args: mcptest.URLNeededIn{Data: `{"elicitations":"https://x.example/"}`},
			served: []string{"elicitation/create url refused the error lists no elicitation the client can read"}, detail: "complete a step"},
		{name: "an entry that is not an object", action: "accept", args: mcptest.URLNeededIn{Data: `{"elicitations":[7]}`},
			served: []string{"elicitation/create url refused the elicitation is malformed"}, detail: "could not be shown"},
		{name: "no elicitationId", action: "accept", args: mcptest.URLNeededIn{Data: `{"elicitations":[{"mode":"url","url":"https://x.example/","message":"m"}]}`},
			served: []string{"elicitation/create url refused the elicitation has no elicitationId"}, detail: "could not be shown"},
	}
	for _, transport := range []struct {
		name string
		srv  resource.MCPServer
	}{{"stdio", stdio}, {"streamable HTTP", remote}} {
		for _, tt := range tests {
			t.Run(transport.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var l elicitLog
				h := l.handlers(tt.action)
				if tt.noneAt {
					h = nil
				}
				s := connectWith(t, quickConnector(nil), transport.srv, h)
				raw, _ := json.Marshal(tt.args)
				res, err := s.CallTool(mcpconn.WithCallTag(context.Background(), "U"), mcptest.ToolURLNeeded, raw)
				if res != nil || !errors.Is(err, mcpconn.ErrURLElicitationRequired) {
					t.Fatalf("CallTool = %v, %v; want ErrURLElicitationRequired", res, err)
				}
				var e *mcpconn.Error
				if !errors.As(err, &e) || !strings.Contains(e.Detail, tt.detail) {
					t.Errorf("detail %q; want it to hold %q", e.Detail, tt.detail)
				}
				for _, secret := range []string{"example.com", "need-1", "Connect your account", "requires more information", "javascript"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("the error quotes the server's %q: %v", secret, err)
					}
				}
				l.mu.Lock()
				defer l.mu.Unlock()
				if diff := cmp.Diff(tt.asked, l.asked); diff != "" {
					t.Errorf("Elicit was asked (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.served, l.served); diff != "" {
					t.Errorf("Served (-want +got):\n%s", diff)
				}
				// The session goes on: the answer was the server's, not a loss.
				if s.Lost() {
					t.Error("the session is lost")
				}
				if got := resultText(call(t, s, context.Background(), mcptest.ToolEcho, mcptest.EchoIn{Text: "after"})); got != "after" {
					t.Errorf("a later call: %q", got)
				}
			})
		}
	}
}

// On a shared connection the elicitations of a URL elicitation required
// answer go to the lease whose call it answers, and to no other lease.
func TestURLElicitationRequiredShared(t *testing.T) {
	t.Parallel()
	srv := resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, "-fault", string(mcptest.FaultClientFeatures)), Shared: true}
	c := quickConnector(nil)
	t.Cleanup(func() { _ = c.Close() })
	var mine, other elicitLog
	lease := func(l *elicitLog) *mcpconn.Session {
		s, err := c.Connect(context.Background(), "tools/fake", srv, &mcpconn.ConnectOptions{Handlers: l.handlers("accept"), Revision: 1, Share: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, _ := lease(&mine), lease(&other)
	if n := c.SharedConnections(); n != 1 {
		t.Fatalf("%d shared connections", n)
	}
	_, err := a.CallTool(mcpconn.WithCallTag(context.Background(), "U"), mcptest.ToolURLNeeded, json.RawMessage(`{}`))
	if !errors.Is(err, mcpconn.ErrURLElicitationRequired) || !strings.Contains(err.Error(), "accepted") {
		t.Fatalf("err = %v", err)
	}
	mine.mu.Lock()
	other.mu.Lock()
	defer mine.mu.Unlock()
	defer other.mu.Unlock()
	if len(mine.asked) != 1 || !strings.HasPrefix(mine.asked[0], "[U] url ") || len(mine.served) != 1 {
		t.Errorf("the calling lease: asked %v, served %v", mine.asked, mine.served)
	}
	if len(other.asked)+len(other.served) != 0 {
		t.Errorf("another lease was told: asked %v, served %v", other.asked, other.served)
	}
}
