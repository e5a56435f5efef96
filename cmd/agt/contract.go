package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agtsdk/agt/contract"
	"github.com/agtsdk/agt/internal/contractdefault"
	"github.com/agtsdk/agt/resource"
)

// contractLeaf is 'agt mcp contract'.
func contractLeaf() *leaf {
	return &leaf{
		name: "contract", min: 1, max: 1,
		args:    "REF [--tool NAME]... [--include-writes] [--cases FILE] [--seed N] [--max-cases N] [--case-timeout D] [--timeout D] [--json] [--junit FILE]",
		summary: "check that a server does what its tools' input schemas declare: calls it with cases derived from them",
		help: `Starts (or contacts) the server the way a Run does (same launch, secrets,
allowlist, bounds, protocol era), derives cases from each tool's input
schema, calls the tool with each one, bypassing only agt's own argument
validation, and compares the answers with the schema:

  valid arguments (each optional field, enum value, anyOf/oneOf branch),
  each required field missing, each property of a wrong type, each bound
  at and just past its limit (lengths in code points), an unknown
  property, and bytes agt never sends (a duplicate key, invalid UTF-8).

Each case's expected verdict is agt's validator's. Classes: accepted,
refused (agree); laxer (the schema refuses, the server ran it), stricter
(the schema accepts, the server refused it as invalid arguments), crashed,
timed-out, leaked (an error echoes a generated value), unexpected (a
business case answered otherwise), protocol-error (fail); business (a
valid call refused by the server's own rules) and tolerated (bytes agt
never sends, read by the server) are information.

The cases call the tools for real. Only tools whose annotations say
readOnlyHint are called unless named with --tool or --include-writes is
given; what will be called is printed before anything runs.

Business cases come from --cases FILE, or from mcp-contract.json in the
server's cwd when there is one:
  {"cases": [{"tool": "reserve", "name": "unknown article",
    "arguments": {"sku": "QQQ-0000", "quantity": 1, "customer": "ada"},
    "expect": "error", "text": "unknown article"}]}

Output: a table (one line per finding: tool, case, class, path, schema
path; never an argument value), or --json; --junit FILE also writes JUnit
XML for CI. --seed makes other cases (the same seed, the same cases).
--case-timeout bounds one call (a call over it is timed-out and the
server is started again), --timeout the whole command.

Exit status 0 when nothing is laxer, stricter, crashed, timed out, leaked,
unexpected or a protocol error; 1 otherwise; 2 for a usage error.`,
		define: func(fs *flag.FlagSet) action {
			var f contractFlags
			fs.Var(&f.tools, "tool", "check the tool `NAME` (repeatable); a named tool is called even when not read-only")
			fs.BoolVar(&f.includeWrites, "include-writes", false, "also call the tools not marked read-only")
			fs.StringVar(&f.cases, "cases", "", "business cases from `FILE` (default: mcp-contract.json in the server's cwd, if any)")
			fs.Uint64Var(&f.seed, "seed", 0, "seed of the generated cases")
			fs.IntVar(&f.maxCases, "max-cases", contractdefault.MaxCases, "at most `N` cases per tool")
			fs.DurationVar(&f.caseTimeout, "case-timeout", contractdefault.CaseTimeout, "bound of one call")
			fs.DurationVar(&f.timeout, "timeout", contractdefault.Timeout, "give up after this `DURATION`, the server's shutdown included")
			fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON (the plan goes to stderr)")
			fs.StringVar(&f.junit, "junit", "", "also write the report as JUnit XML to `FILE`")
			return func(ctx context.Context, e *env, args []string) error {
				return mcpContract(ctx, e, args[0], &f)
			}
		},
	}
}

type contractFlags struct {
	tools         stringList
	includeWrites bool
	cases         string
	seed          uint64
	maxCases      int
	caseTimeout   time.Duration
	timeout       time.Duration
	asJSON        bool
	junit         string
}

func mcpContract(ctx context.Context, e *env, refArg string, f *contractFlags) (err error) {
	if f.maxCases <= 0 || f.caseTimeout <= 0 {
		return usagef("mcp contract", "--max-cases and --case-timeout must be positive")
	}
	ref, h, work, err := e.hostForTimed(ctx, "mcp contract", refArg, f.timeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, work)
	defer cancel()
	defer func() { err = withTimeoutHint(ctx, e, err, f.timeout) }()
	res, err := h.Repository().Get(ctx, resource.Key{Kind: resource.KindMCP, Ref: ref})
	if err != nil {
		return e.withRefSuggestion(ctx, resource.KindMCP, ref, err)
	}
	_, srv, err := resource.DecodeMCP(res.Data)
	if err != nil {
		return fmt.Errorf("mcp contract %s: the registration cannot be decoded (agt mcp test %s says why): %w", ref, ref, err)
	}
	business, casesFrom, err := contractCases(f.cases, srv)
	if err != nil {
		return err
	}
	planOut := e.out
	if f.asJSON {
		planOut = e.err
	}
	opts := &contract.Options{
		Tools: f.tools, IncludeWrites: f.includeWrites, Seed: f.seed, MaxCases: f.maxCases,
		CaseTimeout: f.caseTimeout, Timeout: work, Business: business,
		Plan: func(p contract.Plan) {
			if casesFrom != "" {
				fmt.Fprintf(planOut, "business cases: %d from %s\n", len(business), casesFrom)
			}
			_ = contract.WritePlan(planOut, p)
			fmt.Fprintln(planOut)
		},
	}
	e.progress("contract %s: starting or contacting the server, listing its tools...", ref)
	rep, runErr := contract.Run(ctx, h.Connector(), ref, srv, opts)
	if f.asJSON {
		err = writeJSON(e.out, rep)
	} else {
		err = contract.WriteTable(e.out, rep)
	}
	if err != nil {
		return err
	}
	if f.junit != "" {
		if err := writeJUnitFile(f.junit, rep); err != nil {
			return err
		}
	}
	if runErr == nil && rep.Error == "" && casesRun(rep) == 0 {
		fmt.Fprintln(e.err, "agt: no case ran, so nothing is proved: name the tools to check with --tool NAME, or pass --include-writes to call the tools not marked read-only")
	}
	if runErr != nil || !rep.Passed() {
		return errReported
	}
	return nil
}

// casesRun is how many cases the check ran, all tools together.
func casesRun(rep *contract.Report) int {
	n := 0
	for _, t := range rep.Tools {
		n += t.Cases
	}
	return n
}

// contractCases reads the business cases: from file when given, else from
// mcp-contract.json in the cwd of a stdio server when there is one. It
// returns where they came from ("" for none).
func contractCases(file string, srv resource.MCPServer) ([]contract.Case, string, error) {
	if file == "" {
		if srv.Command == "" || srv.Cwd == "" || !filepath.IsAbs(srv.Cwd) {
			return nil, "", nil
		}
		file = filepath.Join(srv.Cwd, contract.CasesFile)
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			return nil, "", nil
		}
	}
	cases, err := contract.ReadCasesFile(file)
	if err != nil {
		return nil, "", fmt.Errorf("mcp contract: business cases %s: %w", file, err)
	}
	return cases, file, nil
}

func writeJUnitFile(path string, rep *contract.Report) error {
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("mcp contract: --junit: %w", err)
	}
	werr := contract.WriteJUnit(out, rep)
	if cerr := out.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("mcp contract: --junit %s: %w", path, werr)
	}
	return nil
}
