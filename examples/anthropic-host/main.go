package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/adapter/agtanthropic"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	agtrun "github.com/agtsdk/agt/run"
)

// serveFakeMCP is the first argument that turns this program into the
// bundled fake MCP server.
const serveFakeMCP = "serve-fake-mcp"

// The names used in the example.
const (
	agentRef   = resource.Ref("assistant")
	notesRef   = resource.Ref("notes")   // mounted: the fake server
	mediaRef   = resource.Ref("media")   // mounted: the fake server with its content tool (images)
	archiveRef = resource.Ref("archive") // registered only; the model mounts it
	brokenRef  = resource.Ref("broken")  // registered only; a server that exits at start
	model      = anthropic.Model("scripted-model")
	// maxTurns bounds the model loop: a model that never stops must not
	// keep the host busy forever.
	maxTurns = 10
	// maxSampleTokens caps what one sampling request of a server may
	// generate: the server's maxTokens is only a request.
	maxSampleTokens = 64
)

// permission is the example's policy: the agent may use every tool of its
// servers and manage its own mounts, but never delete a note.
var permission = policy.Rules{
	Deny:  []string{"mcp__notes__note_delete"},
	Allow: []string{"mcp__*", "framework:*"},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "anthropic-host:", err)
		os.Exit(1)
	}
}

// serveFake runs this program as the bundled fake MCP server: the example
// starts itself again with serveFakeMCP as its first argument, so nothing is
// built by hand. The default signal behaviour comes back first, so that a
// Run's Close stops it with SIGTERM as it stops any server.
func serveFake(args []string, stdout io.Writer) error {
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	if code := mcptest.Main(args, os.Stdin, stdout, os.Stderr); code != 0 {
		return fmt.Errorf("the fake MCP server exited with status %d", code)
	}
	return nil
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == serveFakeMCP {
		return serveFake(args[1:], stdout)
	}
	if len(args) > 0 {
		return errors.New("takes no arguments")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program to start it as the fake server: %w", err)
	}
	dir, err := os.MkdirTemp("", "agt-anthropic-host-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	host, err := agt.Open(ctx, dir, nil)
	if err != nil {
		return err
	}
	defer host.Close()
	if err := register(ctx, host.Resources(), self, dir); err != nil {
		return err
	}

	// The "model": a scripted stand-in for the Messages API on 127.0.0.1,
	// reached through the real SDK client. No key and no network: the
	// environment's key, profile and base URL are not read.
	scripted := newScriptedModel()
	api := httptest.NewServer(scripted)
	defer api.Close()
	client := anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(api.URL),
		option.WithAPIKey("not-a-key"),
		option.WithHTTPClient(api.Client()),
		option.WithMaxRetries(0),
	)
	r, err := host.NewRun(ctx, agentRef, runOptions(client))
	if err != nil {
		return err
	}
	defer r.Close()

	t := &transcript{w: stdout}
	t.line("== agent %q mounts [%s %s] (%s, %s registered, not mounted); the model is scripted, on %s",
		agentRef, notesRef, mediaRef, archiveRef, brokenRef, api.Listener.Addr())
	err = converse(ctx, client, r, t)
	if failed := scripted.failure(); failed != nil {
		return fmt.Errorf("the scripted model refused a request: %w", failed)
	}
	if err != nil {
		return err
	}
	if !scripted.finished() {
		return errors.New("the model stopped before the end of its script")
	}
	t.line("== done: the model ended its turn after %d requests, and answered %d sampling request", scripted.turns(), scripted.samplings())
	return nil
}

// register stores four registrations of the fake server (this program)
// and the agent, which may manage resources and mounts notes and media.
// notes has the tools that use what a client offers (sample among them).
func register(ctx context.Context, svc *resource.Service, self, dir string) error {
	for _, reg := range []struct {
		ref   resource.Ref
		fault mcptest.Fault
	}{
		{notesRef, mcptest.FaultClientFeatures},
		{mediaRef, mcptest.FaultContentKinds},
		{archiveRef, ""},
		{brokenRef, mcptest.FaultExitAtStart},
	} {
		fake := &resource.MCPServer{Command: self, Args: []string{serveFakeMCP}, Cwd: dir}
		if reg.fault != "" {
			fake.Args = append(fake.Args, "-fault", string(reg.fault))
		}
		if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{Ref: reg.ref, Create: true, Server: fake}); err != nil {
			return err
		}
	}
	_, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
		Ref: agentRef, Create: true,
		Agent: &resource.AgentDocument{Capabilities: []string{resource.CapabilityResourceManagement}},
		Add:   map[string][]string{"mcps": {string(notesRef), string(mediaRef)}},
	})
	return err
}

// glue:begin

// runOptions are the Run's options: the host's policy, and its model
// answers the mounted servers' sampling requests, each capped at
// maxSampleTokens whatever a server asks.
func runOptions(client anthropic.Client) *agtrun.Options {
	return &agtrun.Options{
		Permission:     permission,
		ClientFeatures: &agtrun.ClientFeatures{Sample: agtanthropic.Sampler(client, model, maxSampleTokens)},
	}
}

// converse is the host's model loop: the Run's tools go with every
// request (they change when the agent changes its mounts), and Execute
// runs the tool_use blocks of a response as one batch and gives the user
// message that answers each of them (with a refresh notice, if any).
func converse(ctx context.Context, client anthropic.Client, r *agtrun.Run, t *transcript) error {
	history := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Gather the notes and the chart, then tidy up."))}
	for range maxTurns {
		tools := agtanthropic.Tools(r.Tools())
		msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model: model, MaxTokens: 1024, Messages: history, Tools: tools,
		})
		if err != nil {
			return err
		}
		t.response(len(tools), msg)
		history = append(history, msg.ToParam())
		out, reply, err := agtanthropic.Execute(ctx, r, msg)
		if err != nil {
			return err // the Run closed or ctx ended (a rejected batch is answered in reply)
		}
		if len(out.Results) == 0 {
			return nil // no tool_use: the model ended its turn
		}
		t.results(out)
		history = append(history, reply)
	}
	return fmt.Errorf("the model did not end its turn in %d requests", maxTurns)
}

// glue:end

// transcript prints what the model sent and what it got back: tool names,
// call IDs and codes, never argument values.
type transcript struct{ w io.Writer }

func (t *transcript) line(format string, args ...any) { fmt.Fprintf(t.w, format+"\n", args...) }

func (t *transcript) response(tools int, msg *anthropic.Message) {
	t.line("model     %s (sent %d tools), stop_reason %s", msg.ID, tools, msg.StopReason)
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			t.line("  says      %s", b.Text)
		case "tool_use":
			t.line("  tool_use  %s %s", b.ID, b.Name)
		}
	}
}

func (t *transcript) results(out agtrun.Outcome) {
	for _, res := range out.Results {
		tr := agtanthropic.ToolResult(res)
		var kinds []string
		for _, c := range tr.Content {
			switch {
			case c.OfText != nil:
				kinds = append(kinds, "text")
			case c.OfImage != nil:
				kinds = append(kinds, "image "+string(c.OfImage.Source.OfBase64.MediaType))
			}
		}
		status := "ok"
		if res.Failed() {
			status = "is_error " + string(res.Code)
		} else if res.Notice != "" {
			kinds[len(kinds)-1] = "notice" // the adapter ends the result with it
		}
		t.line("  result    %s %s [%s]", res.CallID, status, strings.Join(kinds, ", "))
	}
	if rep := out.Refresh; rep != nil && rep.OK {
		t.line("  refresh   ok: added %v, removed %v", rep.Added, rep.Removed)
	} else if rep != nil {
		t.line("  refresh   failed: %s", rep.Notice)
	}
}
