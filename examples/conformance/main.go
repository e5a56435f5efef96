package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	agtrun "github.com/agtsdk/agt/run"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

// The environment the conformance suite sets for its client.
const scenarioEnv = "MCP_CONFORMANCE_SCENARIO"

// The names the client registers the suite's server under.
const (
	serverRef = resource.Ref("server")
	agentRef  = resource.Ref("conformance-client")
)

// scenarioTimeout bounds one scenario; the suite kills its client after 30 s
// by default, and a client that ends first says why.
const scenarioTimeout = 25 * time.Second

// A scenarioCall is the one tool call a scenario needs after the Run has
// connected and listed the tools.
type scenarioCall struct {
	tool      string
	arguments json.RawMessage
	// elicit makes the Run offer elicitation, accepting every request
	// with no content of its own: agt fills in the requested schema's
	// defaults.
	elicit bool
	// also names more tools of the server to call in the same batch
	// (at once), each with {}.
	also []string
}

// scenarios names what each client scenario of the suite checks beyond the
// handshake and tools/list. A scenario not named here (initialize, and any
// the suite adds later) only connects and lists, so that it passes or fails
// on what agt does by default.
var scenarios = map[string]scenarioCall{
	// The server checks the arguments it receives and reports the sum.
	"tools_call": {tool: "add_numbers", arguments: json.RawMessage(`{"a": 5, "b": 3}`)},
	// The server asks for a form whose fields all have defaults and
	// checks that the accepted content carries every default (SEP-1034).
	"elicitation-sep1034-client-defaults": {tool: "test_client_elicitation_defaults", arguments: json.RawMessage(`{}`), elicit: true},
	// The server ends the call's event stream before the result; the
	// client must reconnect after the stream's retry time, with
	// Last-Event-ID, and gets the result on the new stream (SEP-1699).
	"sse-retry": {tool: "test_reconnection", arguments: json.RawMessage(`{}`)},
	// Multi round-trip requests (SEP-2322): two tools answer with
	// input_required (an elicitation), one with a requestState the
	// client must send back exactly and one without (none must be
	// sent); the retry must be a new JSON-RPC id; a tool called at the
	// same time must get neither the answers nor the state; a result
	// without resultType is complete.
	"sep-2322-client-request-state": {tool: "test_mrtr_echo_state", arguments: json.RawMessage(`{}`), elicit: true,
		also: []string{"test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"}},
}

// authCall is the call of every auth/* scenario: the server's one tool,
// behind OAuth (a scope step-up scenario asks for more scope on it).
var authCall = scenarioCall{tool: "test-tool", arguments: json.RawMessage(`{}`)}

// run plays one scenario against the server whose URL is the last argument;
// the scenario's name is in MCP_CONFORMANCE_SCENARIO.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: conformance [ARGS...] SERVER_URL, with %s naming the scenario", scenarioEnv)
	}
	name := os.Getenv(scenarioEnv)
	if name == "" {
		return fmt.Errorf("%s is not set: the conformance suite sets it to the scenario's name", scenarioEnv)
	}
	return playScenario(ctx, name, args[len(args)-1], stdout)
}

// playScenario registers url as an MCP server in a throwaway store, mounts
// it on an agent, starts a Run (which connects and lists the tools) and
// makes the scenario's tool call through the Run, as a host would for its
// model.
func playScenario(ctx context.Context, name, url string, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, scenarioTimeout)
	defer cancel()
	sc := scenarios[name]
	entry := map[string]any{"type": "http", "url": url}
	var hostOpts *agt.Options
	if strings.HasPrefix(name, "auth/") {
		sctx, err := readContext()
		if err != nil {
			return err
		}
		sc = authCall
		field := oauthField(name, sctx)
		if sctx.ClientSecret != "" || sctx.PrivateKeyPEM != "" {
			issuer, err := suiteAuthorizationServer(ctx, url)
			if err != nil {
				return err
			}
			field["authorization_server"] = issuer
		}
		entry["oauth"] = field
		hostOpts = &agt.Options{Connector: &mcpconn.ConnectorOptions{
			Secrets: contextSecrets{sctx},
			OAuth: &mcpconn.OAuthOptions{
				Authorize:         authorizeByRedirect,
				RedirectURL:       redirectURL,
				ClientMetadataURL: clientMetadataURL,
				IDToken:           contextSecrets{sctx}.idToken,
			},
		}}
	}

	dir, err := os.MkdirTemp("", "agt-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	host, err := agt.Open(ctx, dir, hostOpts)
	if err != nil {
		return err
	}
	defer host.Close()
	svc := host.Resources()

	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		string(serverRef): entry,
	}})
	if err != nil {
		return err
	}
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Kind: resource.KindMCP, Ref: serverRef, Create: true, Data: doc,
	}); err != nil {
		return fmt.Errorf("registering the server: %w", err)
	}
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Kind: resource.KindAgent, Ref: agentRef, Create: true,
		Add: map[string][]string{"mcps": {string(serverRef)}},
	}); err != nil {
		return fmt.Errorf("mounting the server: %w", err)
	}

	// The client calls only the tool its scenario names, so it allows
	// every call; a host would ask its user or apply its rules.
	opts := &agtrun.Options{Permission: policy.AutoAllow(), FailOnMountError: true}
	if sc.elicit {
		opts.Elicit = acceptElicitation
	}
	r, err := host.NewRun(ctx, agentRef, opts)
	if err != nil {
		return fmt.Errorf("starting the run: %w", err)
	}
	defer r.Close()
	fmt.Fprintf(stdout, "scenario %s: connected, %d tools listed\n", name, len(r.Tools()))
	if sc.tool == "" {
		return nil
	}

	tools := append([]string{sc.tool}, sc.also...)
	var calls []agtrun.Call
	for i, tool := range tools {
		alias, ok := aliasOf(r, tool)
		if !ok {
			return fmt.Errorf("the server lists no tool %q", tool)
		}
		args := sc.arguments
		if i > 0 {
			args = json.RawMessage(`{}`)
		}
		calls = append(calls, agtrun.Call{ID: fmt.Sprintf("call-%d", i+1), Name: alias, Arguments: args})
	}
	out, err := r.Execute(ctx, agtrun.Batch{ID: "conformance", Agent: agentRef, Calls: calls})
	if err != nil {
		return fmt.Errorf("calling %s: %w", sc.tool, err)
	}
	for i, res := range out.Results {
		if res.Failed() {
			return fmt.Errorf("calling %s: %s", tools[i], res.ToolError())
		}
		fmt.Fprintf(stdout, "scenario %s: %s returned %s\n", name, tools[i], res.ForModel())
	}
	return nil
}

// acceptElicitation accepts the server's form without filling in a field
// of its own, as a user who submits the form as shown: the Run fills in the
// defaults of the requested schema. A host would show the form to its user.
// A URL-mode request asks the user to visit a page, which nobody here can
// do: it is declined.
func acceptElicitation(_ context.Context, _ agtrun.Origin, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if params.Mode == "url" {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

// aliasOf returns the name the Run gives the server's tool.
func aliasOf(r *agtrun.Run, tool string) (string, bool) {
	for _, t := range r.Tools() {
		if t.Source.Kind == agtrun.SourceMCP && t.Source.Ref == serverRef && t.Source.Tool == tool {
			return t.Name, true
		}
	}
	return "", false
}
