package contract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/agtsdk/agt/internal/contractdefault"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/toolschema"
)

// Options configures a contract check. A nil *Options means all defaults;
// every zero field means its default.
type Options struct {
	// Tools names the tools to check. A named tool is checked even when
	// its annotations do not say readOnlyHint; a name the server does not
	// list is a Report.Error. Nil means every tool whose annotations say
	// readOnlyHint: true (and, with IncludeWrites, every tool).
	Tools []string
	// IncludeWrites also checks the tools whose annotations do not say
	// readOnlyHint: true. The cases call them for real: a tool that writes,
	// deletes or sends does so once per case. False means they are skipped
	// unless named in Tools, and the Plan says so before anything runs.
	IncludeWrites bool
	// Seed makes the generated cases reproducible: the same seed and the
	// same schema give the same cases, byte for byte. Zero is a seed like
	// any other.
	Seed uint64
	// MaxCases bounds the cases generated per tool, the business cases of
	// the tool included. Zero means 120.
	MaxCases int
	// MaxCaseBytes bounds the arguments of one generated case; a case over
	// it is not run. Zero means 64 KiB.
	MaxCaseBytes int
	// CaseTimeout bounds one call. A call over it is classed TimedOut and
	// the server is started again for the next case. Zero means 10 s.
	CaseTimeout time.Duration
	// Timeout bounds the whole check, connection included; the cases
	// not run by then are counted in ToolReport.NotRun. Zero means 5
	// minutes.
	Timeout time.Duration
	// Business are the cases the schema cannot know (see Cases, and
	// ReadCases for the file beside the server). Each names its tool; a
	// tool that is not checked skips its business cases. Nil means none.
	Business []Case
	// Schema bounds the compilation of each input schema and the
	// validation of each case, as ConnectorOptions.Schema does for a Run:
	// give the same value to judge by the same rules. Nil means
	// toolschema's defaults.
	Schema *toolschema.Options
	// Plan, when set, is called once the tools are listed and before any
	// case runs, with the tools that will be called and those skipped.
	// Nil means no call.
	Plan func(Plan)
}

// Plan is what a check is about to call, given before any case runs.
type Plan struct {
	// Tools are the tools that will be called, in the server's order.
	Tools []PlannedTool `json:"tools"`
	// Skipped are the listed tools that will not be called, and why.
	Skipped []SkippedTool `json:"skipped,omitempty"`
}

// PlannedTool is a tool a check calls.
type PlannedTool struct {
	Name string `json:"name"`
	// ReadOnly says the tool's annotations say readOnlyHint: true. A tool
	// without it is called because it was named or IncludeWrites is set.
	ReadOnly bool `json:"read_only"`
	// Cases is how many cases were generated for it (business cases
	// included).
	Cases int `json:"cases"`
}

// SkippedTool is a listed tool a check does not call.
type SkippedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Class is how the server's answer to a case compares with the schema.
type Class string

// The classes of a case. Accepted, Refused, Business and Tolerated are
// agreement or information; Laxer, Stricter, Crashed, TimedOut, Leaked and
// Unexpected fail the Report (Report.Passed).
const (
	// Accepted: the schema accepts the case and the server ran it.
	Accepted Class = "accepted"
	// Refused: the schema refuses the case and the server refused it (a
	// tool error, or JSON-RPC -32602 invalid params).
	Refused Class = "refused"
	// Business: the schema accepts the case and the server refused it
	// with a tool error that is not about the arguments' shape (not found,
	// permission denied, ...): the server's own rules, reported, never
	// failing.
	Business Class = "business"
	// Tolerated: bytes that agt's validator refuses though no schema can
	// (a duplicate key, invalid UTF-8, a lone surrogate escape) and that
	// the server read anyway. agt never sends such a call, so it is
	// information about the server's parser, not a failure.
	Tolerated Class = "tolerated"
	// Laxer: the schema refuses the case and the server ran it: a call
	// agt would block that the server would have run.
	Laxer Class = "laxer"
	// Stricter: the schema accepts the case and the server refused it as
	// invalid arguments (JSON-RPC -32602, or a tool error whose text is an
	// argument-validation message: see docs/contract.md).
	Stricter Class = "stricter"
	// Crashed: the connection was lost during the call (the process
	// exited or the session ended).
	Crashed Class = "crashed"
	// TimedOut: no answer within Options.CaseTimeout.
	TimedOut Class = "timed-out"
	// Leaked: the server's error echoes a value of the case's arguments
	// (a generated canary string).
	Leaked Class = "leaked"
	// Unexpected: a business case whose answer is not the one its file
	// expects (an error where a result was expected, or the expected text
	// missing).
	Unexpected Class = "unexpected"
	// ProtocolError: the server answered with a JSON-RPC error other than
	// -32602 for a schema-valid case, or the result could not be read.
	ProtocolError Class = "protocol-error"
)

// defaultMaxCaseBytes is the default of Options.MaxCaseBytes.
const defaultMaxCaseBytes = 64 << 10

// classOrder lists every Class in report order.
var classOrder = []Class{Accepted, Refused, Business, Tolerated, Laxer, Stricter, Crashed, TimedOut, Leaked, Unexpected, ProtocolError}

// Fails reports whether a finding of class c fails the report.
func (c Class) Fails() bool {
	switch c {
	case Laxer, Stricter, Crashed, TimedOut, Leaked, Unexpected, ProtocolError:
		return true
	}
	return false
}

// Report is the result of a contract check. It never holds an argument
// value: findings name the case, the JSON pointer of the field and the
// schema's keyword.
type Report struct {
	// Reference is the server's registration.
	Reference resource.Ref `json:"reference"`
	// ProtocolVersion is the protocol version the session spoke.
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Seed is the seed the cases were generated from.
	Seed uint64 `json:"seed"`
	// Plan is what the check called and skipped.
	Plan Plan `json:"plan"`
	// Tools are the checked tools, in the server's order.
	Tools []ToolReport `json:"tools"`
	// Findings are the cases of a class other than Accepted and Refused,
	// tool by tool in case order.
	Findings []Finding `json:"findings"`
	// Notes say what the check could not do (cases it could not send,
	// schemas it could not compile), in words.
	Notes []string `json:"notes,omitempty"`
	// Error is why the check could not run, or stopped early ("" when it
	// ran to the end).
	Error string `json:"error,omitempty"`
	// DurationMS is the whole check's time, connection included.
	DurationMS int64 `json:"duration_ms"`
}

// ToolReport is what the check found for one tool.
type ToolReport struct {
	Name string `json:"name"`
	// Cases is how many cases were run.
	Cases int `json:"cases"`
	// NotRun counts the cases generated but not run: the check's Timeout
	// ended first, or the server could not be started again.
	NotRun int `json:"not_run,omitempty"`
	// Classes counts the cases run by class; a class with none is absent.
	Classes map[Class]int `json:"classes"`
	// Outcomes are the cases run, in order, each with its class.
	Outcomes []Outcome `json:"outcomes"`
	// Error is why the tool could not be checked (its schema does not
	// compile), or "".
	Error string `json:"error,omitempty"`
	// DurationMS is the time of its cases, restarts included.
	DurationMS int64 `json:"duration_ms"`
}

// Outcome is one case run and its class. Like a Finding it names the
// case, never its arguments.
type Outcome struct {
	Case  string `json:"case"`
	Class Class  `json:"class"`
	// Path and SchemaPath are as in Finding.
	Path       string `json:"path,omitempty"`
	SchemaPath string `json:"schema_path,omitempty"`
}

// Finding is one case whose class is not Accepted or Refused.
type Finding struct {
	Tool  string `json:"tool"`
	Case  string `json:"case"`
	Class Class  `json:"class"`
	// Path is the JSON pointer, in the arguments, of the field the case
	// is about ("" for the whole arguments).
	Path string `json:"path"`
	// SchemaPath is the schema keyword the case is about, as a URI
	// fragment ("#/properties/limit/maximum"), or "".
	SchemaPath string `json:"schema_path,omitempty"`
	// Message says what happened, in agt's words (and the validator's,
	// for a case it refuses); never the server's text.
	Message string `json:"message"`
}

// Passed reports whether no finding fails the report, the check ran to
// the end, and it ran at least one case: a check that called nothing (no
// tool planned, every one skipped) does not pass.
func (r *Report) Passed() bool {
	if r == nil || r.Error != "" || r.ran() == 0 {
		return false
	}
	for _, f := range r.Findings {
		if f.Class.Fails() {
			return false
		}
	}
	for _, t := range r.Tools {
		if t.Error != "" || t.NotRun > 0 {
			return false
		}
	}
	return true
}

// ran is how many cases were run, all tools together: a check that ran
// none proves nothing and does not pass.
func (r *Report) ran() int {
	n := 0
	for _, t := range r.Tools {
		n += t.Cases
	}
	return n
}

// Run checks the contract of the server srv, registered as ref: it
// connects through c (the same launch, secrets, allowlist, bounds and
// protocol eras as a Run), lists the tools, generates the cases of each
// tool to check, calls the tool with each (with agt's argument validation
// bypassed, and only that), and classifies the answers. It connects again
// after a case that crashed or timed out.
//
// The error is non-nil only when the check could not start: the first
// connection or listing failed, or opts is invalid; the Report then says
// so too. A report is returned in every case.
func Run(ctx context.Context, c *mcpconn.Connector, ref resource.Ref, srv resource.MCPServer, opts *Options) (*Report, error) {
	start := time.Now()
	o := opts.withDefaults()
	rep := &Report{Reference: ref, Seed: o.Seed, Plan: Plan{Tools: []PlannedTool{}}, Tools: []ToolReport{}, Findings: []Finding{}}
	defer func() { rep.DurationMS = time.Since(start).Milliseconds() }()
	fail := func(err error) (*Report, error) {
		// The report is an artifact (--json, JUnit): the server's own
		// output (stdout head, stderr tail) stays in the Go error only.
		rep.Error = mcpconn.ErrorText(err, false)
		return rep, err
	}
	if c == nil {
		return fail(errors.New("contract: Run needs a Connector: pass mcpconn.NewConnector(nil) or the host's"))
	}
	if err := o.check(); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	r := &runner{c: c, ref: ref, srv: srv, o: o, rep: rep}
	defer r.close()
	if err := r.connect(ctx); err != nil {
		return fail(fmt.Errorf("contract: connecting to %s: %w", ref, err))
	}
	rep.ProtocolVersion = r.s.ProtocolVersion()
	tools, err := r.s.Tools(ctx)
	if err != nil {
		return fail(fmt.Errorf("contract: listing the tools of %s: %w", ref, err))
	}
	work, err := r.plan(tools)
	if err != nil {
		return fail(err)
	}
	if o.Plan != nil {
		o.Plan(rep.Plan)
	}
	for _, w := range work {
		r.runTool(ctx, w)
	}
	if ctx.Err() != nil && rep.Error == "" {
		for _, t := range rep.Tools {
			if t.NotRun > 0 {
				rep.Error = fmt.Sprintf("the check's timeout (%s) ended before every case ran", o.Timeout)
				break
			}
		}
	}
	return rep, nil
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.MaxCases <= 0 {
		v.MaxCases = contractdefault.MaxCases
	}
	if v.MaxCaseBytes <= 0 {
		v.MaxCaseBytes = defaultMaxCaseBytes
	}
	if v.CaseTimeout <= 0 {
		v.CaseTimeout = contractdefault.CaseTimeout
	}
	if v.Timeout <= 0 {
		v.Timeout = contractdefault.Timeout
	}
	return v
}

func (o *Options) check() error {
	for i, bc := range o.Business {
		if err := bc.check(); err != nil {
			return fmt.Errorf("contract: Options.Business[%d]: %w", i, err)
		}
	}
	return nil
}

// toolWork is one tool to check and its cases.
type toolWork struct {
	tool   mcpconn.Tool
	schema *toolschema.Schema
	cases  []genCase
	err    error // the schema did not compile
}

// plan chooses the tools to check, generates their cases and fills
// rep.Plan.
func (r *runner) plan(tools []mcpconn.Tool) ([]toolWork, error) {
	listed := map[string]bool{}
	for _, t := range tools {
		listed[t.Name] = true
	}
	var missing []string
	for _, n := range r.o.Tools {
		if !listed[n] {
			missing = append(missing, n)
		}
	}
	for _, bc := range r.o.Business {
		if !listed[bc.Tool] && !slices.Contains(missing, bc.Tool) {
			r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("business case %q: the server lists no tool %q; not run", bc.Name, bc.Tool))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("contract: Options.Tools names tools the server does not list: %q", missing)
	}
	var work []toolWork
	for _, t := range tools {
		readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
		named := slices.Contains(r.o.Tools, t.Name)
		switch {
		case !r.srv.ToolEnabled(t.Name):
			r.rep.Plan.Skipped = append(r.rep.Plan.Skipped, SkippedTool{Name: t.Name, Reason: "the registration leaves it out (enabled_tools, disabled_tools)"})
			continue
		case len(r.o.Tools) > 0 && !named:
			r.rep.Plan.Skipped = append(r.rep.Plan.Skipped, SkippedTool{Name: t.Name, Reason: "not named"})
			continue
		case !readOnly && !named && !r.o.IncludeWrites:
			r.rep.Plan.Skipped = append(r.rep.Plan.Skipped, SkippedTool{Name: t.Name, Reason: "not marked read-only (readOnlyHint): name it or include writes to call it"})
			continue
		}
		w := toolWork{tool: t}
		w.schema, w.err = toolschema.Compile(t.InputSchema, r.o.Schema)
		if w.err == nil {
			// Business cases first: the generated ones may change the
			// server's state (a tool that writes).
			generated, note := generate(t.Name, t.InputSchema, w.schema, &r.o)
			if note != "" {
				r.rep.Notes = append(r.rep.Notes, t.Name+": "+note)
			}
			w.cases = append(r.businessCases(t.Name, w.schema), generated...)
			if len(w.cases) > r.o.MaxCases {
				w.cases = w.cases[:r.o.MaxCases]
			}
		}
		work = append(work, w)
		r.rep.Plan.Tools = append(r.rep.Plan.Tools, PlannedTool{Name: t.Name, ReadOnly: readOnly, Cases: len(w.cases)})
	}
	return work, nil
}

// decodeObject decodes a JSON object keeping numbers exact.
func decodeObject(raw []byte) (map[string]any, error) {
	var v any
	d := json.NewDecoder(bytesReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}
