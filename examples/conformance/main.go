package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
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
	// fromContext: the calls are the ones MCP_CONFORMANCE_CONTEXT lists
	// (toolCalls), in its order, in place of tool and arguments.
	fromContext bool
	// echoSchemaOf names a tool whose inputSchema, as the Run lists it
	// for the model, is the call's "schema" argument.
	echoSchemaOf string
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
	// The tools mark parameters with x-mcp-header; the server checks the
	// Mcp-Param-* headers of each call against its arguments (SEP-2243).
	"http-custom-headers": {fromContext: true},
	// Of the server's tools only valid_tool has valid x-mcp-header
	// annotations: the Run leaves the others out, and the client calls it
	// (SEP-2243).
	"http-invalid-tool-headers": {tool: "valid_tool", arguments: json.RawMessage(`{"region": "us-west1"}`)},
	// The server checks that the inputSchema of its 2020-12 tool, as the
	// client hands it on, keeps every keyword: the client sends it back
	// through the echo tool, as a model would copy what it was shown
	// (SEP-1613, SEP-2106).
	"json-schema-2020-12-preservation": {tool: "json_schema_echo", echoSchemaOf: "json_schema_2020_12_tool"},
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
	entry := &resource.MCPServer{Type: resource.TransportHTTP, URL: url}
	var hostOpts *agt.Options
	var sctx scenarioContext
	if sc.fromContext || strings.HasPrefix(name, "auth/") {
		var err error
		if sctx, err = readContext(); err != nil {
			return err
		}
	}
	if strings.HasPrefix(name, "auth/") {
		sc = authCall
		field := oauthField(name, sctx)
		if sctx.ClientSecret != "" || sctx.PrivateKeyPEM != "" || sctx.WorkloadJWT != "" {
			issuer, err := suiteAuthorizationServer(ctx, url)
			if err != nil {
				return err
			}
			field.AuthorizationServer = issuer
		}
		entry.OAuth = field
		hostOpts = &agt.Options{Connector: &mcpconn.ConnectorOptions{
			OAuth: &mcpconn.OAuthOptions{
				Authorize:         authorizeByRedirect,
				RedirectURL:       redirectURL,
				ClientMetadataURL: clientMetadataURL,
				IDToken:           sctx.idToken,
			},
			LaunchEnv: &resource.LaunchEnv{Secrets: resource.SecretResolverFunc(sctx.secret)},
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

	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Ref: serverRef, Create: true, Server: entry, // {"mcpServers": {"server": entry}}
	}); err != nil {
		return fmt.Errorf("registering the server: %w", err)
	}
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Ref: agentRef, Create: true, Agent: &resource.AgentDocument{MCPs: []resource.Ref{serverRef}},
	}); err != nil {
		return fmt.Errorf("mounting the server: %w", err)
	}

	// The client calls only the tool its scenario names, so it allows
	// every call; a host would ask its user or apply its rules.
	opts := &agtrun.Options{Permission: policy.AutoAllow(), FailOnMountError: true}
	if sc.elicit {
		opts.ClientFeatures = &agtrun.ClientFeatures{Elicit: acceptElicitation}
	}
	r, err := host.NewRun(ctx, agentRef, opts)
	if err != nil {
		return fmt.Errorf("starting the run: %w", err)
	}
	defer r.Close()
	fmt.Fprintf(stdout, "scenario %s: connected, %d tools listed\n", name, len(r.Tools()))
	calls, err := sc.calls(r, sctx)
	if err != nil {
		return err
	}
	// The calls go one batch each, in order; a scenario with more tools
	// (also) sends them all in one batch, at once.
	batches := make([][]toolCall, 0, len(calls))
	for _, c := range calls {
		if len(sc.also) > 0 && len(batches) > 0 {
			batches[0] = append(batches[0], c)
			continue
		}
		batches = append(batches, []toolCall{c})
	}
	n := 0
	for i, batch := range batches {
		var bcalls []agtrun.Call
		for _, c := range batch {
			alias, ok := aliasOf(r, c.Name)
			if !ok {
				return fmt.Errorf("the server lists no tool %q", c.Name)
			}
			schema, _ := inputSchemaOf(r, c.Name)
			if c.Arguments, err = omitNullOptionals(schema, c.Arguments); err != nil {
				return fmt.Errorf("calling %s: %w", c.Name, err)
			}
			n++
			bcalls = append(bcalls, agtrun.Call{ID: fmt.Sprintf("call-%d", n), Name: alias, Arguments: c.Arguments})
		}
		out, err := r.Execute(ctx, agtrun.Batch{ID: fmt.Sprintf("conformance-%d", i+1), Agent: agentRef, Calls: bcalls})
		if err != nil {
			return fmt.Errorf("calling %s: %w", batch[0].Name, err)
		}
		for j, res := range out.Results {
			if res.Failed() {
				return fmt.Errorf("calling %s: %s", batch[j].Name, res.ToolError())
			}
			fmt.Fprintf(stdout, "scenario %s: %s returned %s\n", name, batch[j].Name, res.ForModel())
		}
	}
	return nil
}

// calls returns the tool calls of a scenario, in order: the server's tool
// names and their arguments.
func (sc scenarioCall) calls(r *agtrun.Run, sctx scenarioContext) ([]toolCall, error) {
	switch {
	case sc.fromContext:
		if len(sctx.ToolCalls) == 0 {
			return nil, fmt.Errorf("%s lists no toolCalls for this scenario", contextEnv)
		}
		return sctx.ToolCalls, nil
	case sc.echoSchemaOf != "":
		schema, ok := inputSchemaOf(r, sc.echoSchemaOf)
		if !ok {
			return nil, fmt.Errorf("the server lists no tool %q", sc.echoSchemaOf)
		}
		args, err := json.Marshal(map[string]json.RawMessage{"schema": schema})
		if err != nil {
			return nil, err
		}
		return []toolCall{{Name: sc.tool, Arguments: args}}, nil
	case sc.tool != "":
		calls := []toolCall{{Name: sc.tool, Arguments: sc.arguments}}
		for _, tool := range sc.also {
			calls = append(calls, toolCall{Name: tool, Arguments: json.RawMessage(`{}`)})
		}
		return calls, nil
	}
	return nil, nil
}

// inputSchemaOf returns the inputSchema the Run gives the model for the
// server's tool: the server's exact bytes.
func inputSchemaOf(r *agtrun.Run, tool string) (json.RawMessage, bool) {
	for _, t := range r.Tools() {
		if t.Source.Kind == agtrun.SourceMCP && t.Source.Ref == serverRef && t.Source.Tool == tool {
			return t.InputSchema, true
		}
	}
	return nil, false
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

// omitNullOptionals drops the top-level arguments that are null where the
// schema neither requires them nor allows null, as a host does for a model
// that writes null for a parameter it leaves out: agt validates arguments
// as they come, and null is not a boolean. The spec treats a null and an
// absent x-mcp-header parameter alike (no header).
func omitNullOptionals(schema, args json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return args, nil // not an object: the Run says what is wrong with it
	}
	var s struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	dropped := false
	for k, v := range obj {
		if string(v) != "null" || slices.Contains(s.Required, k) || allowsNull(s.Properties[k]) {
			continue
		}
		delete(obj, k)
		dropped = true
	}
	if !dropped {
		return args, nil
	}
	return json.Marshal(obj)
}

// allowsNull reports whether a property's schema names the type null.
func allowsNull(prop json.RawMessage) bool {
	var p struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(prop, &p) != nil {
		return false
	}
	var one string
	var many []string
	return (json.Unmarshal(p.Type, &one) == nil && one == "null") ||
		(json.Unmarshal(p.Type, &many) == nil && slices.Contains(many, "null"))
}
