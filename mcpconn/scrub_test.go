//lint:file-ignore SA1019 sampling and logging are current in protocol 2025-11-25

package mcpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/content"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// echoToken is the secret the echo-secret server is given: 40 bytes, as
// an API token.
const echoToken = "sk-live_4f9Qz7Lm2Xp8Rt6Vw1Yb3Nc5Hd0Jg9Ke"

// echoSecretServer registers the echo-secret server over transport, its
// secret given by the reference ${secret:tok}: in its env on stdio, in
// its Authorization header over HTTP; of era e. faults are more fault
// modes.
func echoSecretServer(t *testing.T, transport string, e mcptest.Era, faults ...mcptest.Fault) resource.MCPServer {
	t.Helper()
	list := string(mcptest.FaultEchoSecret)
	for _, f := range faults {
		list += "," + string(f)
	}
	flags := []string{"-fault", list, "-era", string(e)}
	if transport == resource.TransportHTTP {
		return resource.MCPServer{Type: resource.TransportHTTP, URL: mcptest.StartHTTP(t, flags...),
			Headers: map[string]string{"Authorization": "Bearer ${secret:tok}"}}
	}
	srv, _ := fakeStdio(t, flags...)
	srv.Env = map[string]string{mcptest.EchoSecretEnv: "${secret:tok}"}
	return srv
}

// channels collects what each channel of a server delivered to the host.
type channels struct {
	mu   sync.Mutex
	got  map[string]any
	seen chan string
}

func newChannels() *channels { return &channels{got: map[string]any{}, seen: make(chan string, 64)} }

func (c *channels) put(name string, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.got[name]; !ok {
		c.seen <- name
	}
	c.got[name] = v
}

// await waits for the channels names to have delivered something.
func (c *channels) await(t *testing.T, names ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	c.mu.Lock()
	for n := range c.got {
		delete(want, n)
	}
	c.mu.Unlock()
	deadline := time.After(30 * time.Second)
	for len(want) > 0 {
		select {
		case n := <-c.seen:
			delete(want, n)
		case <-deadline:
			t.Fatalf("no delivery on %v", want)
		}
	}
}

func (c *channels) handlers() *mcpconn.Handlers {
	return &mcpconn.Handlers{
		Elicit: func(_ context.Context, _ mcpconn.Incoming, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			c.put("elicitation params", p)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		CreateMessage: func(_ context.Context, _ mcpconn.Incoming, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			c.put("sampling params", p)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "no"}}, nil
		},
		Log: func(_ context.Context, _ mcpconn.Incoming, p *mcp.LoggingMessageParams) { c.put("log notification", p) },
		Progress: func(_ context.Context, _ mcpconn.Incoming, p *mcp.ProgressNotificationParams) {
			c.put("progress notification", p)
		},
	}
}

// Issue 23 item 4: a server that echoes its token (a resolved
// ${secret:...}) returns it in no channel, in none of its forms: not in
// the handshake (serverInfo, instructions), the listing (title,
// description, annotations, inputSchema, _meta), a result (text split
// across two blocks, upper case, base64, JSON escapes, hex, image data,
// resource link, embedded resource, structuredContent, _meta), a failed
// result, a JSON-RPC error, log and progress notifications, elicitation
// and sampling requests, the probe report, the stderr tail, or the
// stdout it printed before the handshake; every byte that is not the
// secret stays as sent. Over stdio and streamable HTTP (JSON and event
// stream bodies). Before the fix every channel below held it.
func TestServerTextIsScrubbedOfSecrets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		era       mcptest.Era
	}{
		{resource.TransportStdio, mcptest.EraLegacy}, {resource.TransportHTTP, mcptest.EraLegacy},
		// Issue 25: the modern era's serverInfo and instructions come from
		// server/discover.
		{resource.TransportStdio, mcptest.EraModern}, {resource.TransportHTTP, mcptest.EraModern},
	} {
		transport := tc.transport
		t.Run(transport+"/"+string(tc.era), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := quickConnector(&mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "echo", secrets: map[string]string{"tok": echoToken}}}})
			defer c.Close()
			srv := echoSecretServer(t, transport, tc.era)
			ch := newChannels()
			s, err := c.Connect(ctx, "echo", srv, &mcpconn.ConnectOptions{Handlers: ch.handlers()})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ch.put("serverInfo", s.ServerInfo())
			ch.put("instructions", s.Instructions())
			tools, err := s.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ch.put("tool listing", tools)

			res, err := s.CallTool(ctx, mcptest.ToolEchoSecret, nil)
			if err != nil {
				t.Fatal(err)
			}
			ch.put("tool result", res)
			for _, b := range res.Content {
				ch.put("result block "+b.Type(), b)
			}
			failed, err := s.CallTool(ctx, mcptest.ToolFailSecret, nil)
			if err != nil || !failed.IsError {
				t.Fatalf("fail_secret: %v, %v", failed, err)
			}
			ch.put("isError text", failed.Text())
			_, err = s.CallTool(ctx, mcptest.ToolErrorSecret, nil)
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) {
				t.Fatalf("error_secret: %v, want a *jsonrpc.Error", err)
			}
			ch.put("JSON-RPC error", map[string]any{"error": err.Error(), "message": wire.Message, "data": wire.Data})
			ch.await(t, "elicitation params", "sampling params", "log notification", "progress notification")

			// Every byte that is not the secret is as sent.
			wantStructured := fmt.Sprintf(mcptest.EchoSecretStructured, `"`+resource.Mask+`"`)
			if string(res.Structured) != wantStructured {
				t.Errorf("structuredContent = %s, want %s", res.Structured, wantStructured)
			}
			var texts []string
			for _, b := range res.Content {
				if tc, ok := b.(*content.Text); ok {
					texts = append(texts, tc.Text)
				}
			}
			var want []string
			for _, text := range mcptest.EchoSecretTexts(echoToken) {
				word, _, _ := strings.Cut(text, " ")
				if word == "A" || strings.HasSuffix(text, " B") {
					want = append(want, strings.Replace(strings.Replace(text, echoToken[:len(echoToken)/2], resource.Mask, 1), echoToken[len(echoToken)/2:], resource.Mask, 1))
					continue
				}
				want = append(want, word+" "+resource.Mask)
			}
			if diff := cmp.Diff(want, texts); diff != "" {
				t.Errorf("text blocks (-want +got):\n%s", diff)
			}

			// The probe report of the same registration.
			repo := newMemRepo()
			repo.store(t, "echo", srv)
			rep, err := mcpconn.NewProber(repo, c, nil).Probe(ctx, "echo")
			if err != nil || !rep.OK {
				t.Fatalf("probe: %+v, %v", rep, err)
			}
			ch.put("probe report", rep)
			if transport == resource.TransportStdio {
				ch.put("stderr tail", s.StderrTail())
				// A banner on stdout fails the handshake, which quotes it.
				banner := echoSecretServer(t, transport, tc.era, mcptest.FaultBanner)
				_, err := c.Connect(ctx, "echo", banner, nil)
				if !errors.Is(err, mcpconn.ErrHandshake) {
					t.Fatalf("banner: %v, want ErrHandshake", err)
				}
				ch.put("handshake error (stdout prefix, stderr tail)", err.Error())
				repo := newMemRepo()
				repo.store(t, "echo", banner)
				rep, _ := mcpconn.NewProber(repo, c, nil).Probe(ctx, "echo")
				ch.put("failed probe report", rep)
			}

			for name, v := range ch.got {
				if leaks := mcptest.SecretLeaks(v, echoToken); len(leaks) > 0 {
					t.Errorf("%s holds the secret (%s)", name, strings.Join(leaks, ", "))
				}
				if b, _ := json.Marshal(v); !strings.Contains(string(b), resource.Mask) {
					t.Errorf("%s holds no mask: the server's secret did not reach it: %s", name, b)
				}
			}
			t.Logf("%d channels, none with the secret", len(ch.got))
		})
	}
}

// A value shorter than MinScrubbedBytes is not scrubbed: it comes back as
// the server wrote it, and nothing is masked.
func TestShortValuesAreNotScrubbed(t *testing.T) {
	t.Parallel()
	const short = "s3cr3t!" // 7 bytes
	if len(short) >= mcpconn.MinScrubbedBytes {
		t.Fatal("the value must be below the minimum")
	}
	c := quickConnector(&mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Secrets: &mapResolver{for_: "echo", secrets: map[string]string{"tok": short}}}})
	defer c.Close()
	s, err := c.Connect(context.Background(), "echo", echoSecretServer(t, resource.TransportStdio, mcptest.EraLegacy), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(context.Background(), mcptest.ToolEchoSecret, nil)
	if err != nil {
		t.Fatal(err)
	}
	if raw := string(res.Raw); strings.Contains(raw, resource.Mask) || !strings.Contains(raw, "upper "+strings.ToUpper(short)) {
		t.Errorf("a short value was scrubbed: %s", raw)
	}
}

// A Dial transport hands messages, not bytes: they are scrubbed as they
// are read, of the document's literal credentials (its references are not
// resolved for Dial).
func TestDialMessagesAreScrubbed(t *testing.T) {
	t.Parallel()
	c := mcpconn.NewConnector(&mcpconn.ConnectorOptions{Dial: mcptest.Dial(nil)})
	defer c.Close()
	srv := resource.MCPServer{Type: resource.TransportStdio, Command: "fakemcp", Cwd: t.TempDir(), Env: map[string]string{"API_TOKEN": echoToken}}
	s, err := c.Connect(context.Background(), "dial", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(context.Background(), mcptest.ToolEcho, json.RawMessage(`{"text":"token `+strings.ToUpper(echoToken)+` end"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(); !strings.Contains(got, "token "+resource.Mask+" end") || len(mcptest.SecretLeaks(res, echoToken)) > 0 {
		t.Errorf("echo = %q, want the literal credential masked", got)
	}
}
