package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	agtrun "github.com/agtsdk/agt/run"
)

const serveFakeMCP = "serve-fake-mcp"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "policy-hooks:", err)
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

// permission is the example's policy: rules first, then a person for what
// the rules leave open. Deny wins over Ask, Ask over Allow.
func permission(approve policy.Approver) agtrun.Permission {
	return policy.First(
		policy.Rules{
			Deny:  []string{"mcp__notes__note_delete"}, // never, whoever asks
			Ask:   []string{"mcp__notes__note_*"},      // writes: a person decides
			Allow: []string{"mcp__notes__*"},           // the rest of notes: fine
		},
		policy.Human(approve),
	)
}

// scriptedPerson stands in for a person at a terminal: it sees the alias,
// the source and the (already schema-valid) arguments.
func scriptedPerson(log *slog.Logger) policy.Approver {
	return func(ctx context.Context, req agtrun.Request) (bool, string, error) {
		var args struct {
			Owner string `json:"owner"`
		}
		_ = json.Unmarshal(req.Arguments, &args)
		ok := args.Owner == "ada"
		log.Info("person asked", "call", req.CallID, "alias", req.Alias, "approved", ok)
		if ok {
			return true, "ada may write notes", nil
		}
		return false, "only ada may write notes today", nil
	}
}

// timing is an interceptor: it wraps the rest of the chain and the tool.
// agtrun.Before and agtrun.After adapt a callback that runs on one side
// of the call; one that wraps it is a type with an Intercept method.
type timing struct{ log *slog.Logger }

func (t timing) Intercept(ctx context.Context, req agtrun.Request, next func(context.Context) agtrun.Result) (agtrun.Result, error) {
	start := time.Now()
	res := next(ctx)
	t.log.Info("timed", "call", req.CallID, "alias", req.Alias, "took", time.Since(start).Round(time.Microsecond))
	return res, nil
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == serveFakeMCP {
		return serveFake(args[1:], stdout)
	}
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments")
	}
	// Logs without timestamps, so that runs compare line by line.
	log := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))

	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "agt-policy-hooks-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	host, err := agt.Open(ctx, dir, nil)
	if err != nil {
		return err
	}
	defer host.Close()
	svc := host.Resources()
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{Ref: "notes", Create: true,
		Server: &resource.MCPServer{Command: self, Args: []string{serveFakeMCP}, Cwd: dir}}); err != nil {
		return err
	}
	if _, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{Ref: "writer", Create: true,
		Agent: &resource.AgentDocument{MCPs: []resource.Ref{"notes"}}}); err != nil {
		return err
	}

	r, err := host.NewRun(ctx, "writer", &agtrun.Options{
		Permission: permission(scriptedPerson(log)),
		// First = outermost: timing wraps the Before/After pair.
		Interceptors: []agtrun.Interceptor{
			timing{log},
			agtrun.Before(func(ctx context.Context, req agtrun.Request) (context.Context, error) {
				log.Info("before", "call", req.CallID, "alias", req.Alias, "source", req.Source.String())
				return ctx, nil
			}),
			agtrun.After(func(ctx context.Context, req agtrun.Request, res agtrun.Result) agtrun.Result {
				code := string(res.Code)
				if code == "" {
					code = "ok" // no Code: the tool ran and succeeded
				}
				log.Info("after", "call", req.CallID, "code", code)
				return res
			}),
		},
		Auditor: agtrun.NewSlogAuditor(log.With("log", "audit")),
		// One call at a time, so that the log reads in call order.
		Limits: &agtrun.Limits{MaxConcurrency: 1},
	})
	if err != nil {
		return err
	}
	defer r.Close()

	calls := []agtrun.Call{
		{ID: "c1", Name: "mcp__notes__search", Arguments: json.RawMessage(`{"query": "alpha", "limit": 2}`)},
		{ID: "c2", Name: "mcp__notes__note_create", Arguments: json.RawMessage(`{"owner": "ada", "title": "plan"}`)},
		{ID: "c3", Name: "mcp__notes__note_create", Arguments: json.RawMessage(`{"owner": "bob", "title": "mine"}`)},
		{ID: "c4", Name: "mcp__notes__note_delete", Arguments: json.RawMessage(`{"id": "n1", "caller": "ada"}`)},
		{ID: "c5", Name: "mcp__notes__note_create", Arguments: json.RawMessage(`{"owner": "Not An Owner!", "title": "x"}`)},
	}
	fmt.Fprintln(stdout, "== one batch of five calls; the log shows each stage they reach")
	out, err := r.Execute(ctx, agtrun.Batch{ID: "b1", Agent: "writer", Calls: calls})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\n== what the model gets back")
	for _, res := range out.Results {
		fmt.Fprintf(stdout, "%s %s: %s\n", res.CallID, res.Name, res.ForModel())
	}
	return nil
}
