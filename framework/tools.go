package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/agtsdk/agt/toolschema"
)

// The framework tools' names, as the model sees them.
const (
	ToolResourceWrite = "resource_write"
	ToolResourceRead  = "resource_read"
	ToolResourceTest  = "resource_test"
	ToolMCPProbe      = "mcp_probe"
	ToolAgentMCPList  = "agent_mcp_list"
)

// refPattern is resource.ParseRef's grammar as a regular expression, so the
// schema already refuses a malformed reference with its path.
const refPattern = `^[a-z0-9][a-z0-9._-]{0,63}(/[a-z0-9][a-z0-9._-]{0,63})?$`

var (
	writeSchema = json.RawMessage(`{
  "type": "object",
  "description": "Create or update a resource. Agents: data is a top-level patch (a field present replaces, absent keeps; mcps:[] clears the mounts); add/remove change single items of list fields atomically.",
  "properties": {
    "kind": {"enum": ["mcp", "agent"], "description": "mcp: one MCP server registration; agent: an agent and its mcps mounts."},
    "reference": {"type": "string", "pattern": "` + refPattern + `", "description": "name or category/name"},
    "create": {"type": "boolean", "description": "true to create a new resource; false (default) to update an existing one."},
    "data": {"type": "object", "description": "mcp: {\"mcpServers\": {\"NAME\": {\"command\", \"args\", \"env\", \"cwd\"} or {\"type\": \"http\"|\"sse\", \"url\", \"headers\"}}}. agent: {\"mcps\": [REF, ...], ...}."},
    "add": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}, "maxItems": 256}, "description": "list field -> items to add, e.g. {\"mcps\": [\"notes\"]}"},
    "remove": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}, "maxItems": 256}, "description": "list field -> items to remove"},
    "expected_revision": {"type": "integer", "minimum": 0, "description": "the revision from resource_read: the write is refused if the stored revision differs; 0 (the default) means no check"}
  },
  "required": ["kind", "reference"],
  "additionalProperties": false
}`)

	readSchema = json.RawMessage(`{
  "type": "object",
  "description": "Read a resource with its revision.",
  "properties": {
    "kind": {"enum": ["mcp", "agent"]},
    "reference": {"type": "string", "pattern": "` + refPattern + `"}
  },
  "required": ["kind", "reference"],
  "additionalProperties": false
}`)

	testSchema = json.RawMessage(`{
  "type": "object",
  "description": "Check a resource statically: never starts or contacts a server.",
  "properties": {
    "kind": {"enum": ["mcp", "agent"], "description": "mcp: the write rules, that cwd exists, that the command resolves, that the URL is well formed. agent: its document and that every mount resolves."},
    "reference": {"type": "string", "pattern": "` + refPattern + `"}
  },
  "required": ["kind", "reference"],
  "additionalProperties": false
}`)

	probeSchema = json.RawMessage(`{
  "type": "object",
  "description": "Start or connect a registered MCP server exactly as a Run does, list its tools, compile their schemas, and close. Calls no tool. Not a sandbox: it runs the configured command.",
  "properties": {
    "reference": {"type": "string", "pattern": "` + refPattern + `"}
  },
  "required": ["reference"],
  "additionalProperties": false
}`)

	mcpListSchema = json.RawMessage(`{
  "type": "object",
  "description": "Show an agent's MCP assembly: each mounted reference, whether it resolves, and its revision.",
  "properties": {
    "agent": {"type": "string", "pattern": "` + refPattern + `", "description": "the agent; omitted means the calling agent"}
  },
  "additionalProperties": false
}`)
)

// Options configure the framework tools. A nil *Options means the
// defaults described on each field.
type Options struct {
	// ServerStderrToModel lets the answers the model reads include what a
	// stdio server wrote: the end of its stderr and the non-JSON first
	// line of its stdout (mcp_probe's stderr_tail and stdout_head, and the
	// message of a failure that carries them). false (the zero value)
	// leaves them out: a server may print its environment on stderr, echo
	// an argument of an earlier call, or print a token in a banner. Set it
	// together with run.Options.ServerStderrToModel.
	ServerStderrToModel bool
	// Tools names the framework tools to return, from ToolResourceWrite,
	// ToolResourceRead, ToolResourceTest, ToolMCPProbe and
	// ToolAgentMCPList, in any order (Tools returns them in its own). Nil
	// means all of them; an empty non-nil slice means none. A name that is
	// not a framework tool makes Tools panic: it is a mistake in the host
	// program, and leaving the tool out silently would hide it.
	Tools []string
}

// Validate reports the first name in o.Tools that is not a framework tool
// (Tools panics on it; agt.New and agt.Open return it).
func (o *Options) Validate() error {
	for _, name := range o.Tools {
		if !slices.Contains(ToolNames(), name) {
			return fmt.Errorf("framework: Options.Tools names %q, which is not a framework tool; use the names ToolNames returns", name)
		}
	}
	return nil
}

// ToolNames returns the names of all framework tools, in the order Tools
// returns them.
func ToolNames() []string {
	return []string{ToolResourceWrite, ToolResourceRead, ToolResourceTest, ToolAgentMCPList, ToolMCPProbe}
}

// Tools returns the framework tools over svc and prober, for
// run.Options.HostTools: all of them, or those opts.Tools names. prober
// may be nil, which leaves mcp_probe out; opts may be nil.
func Tools(svc *resource.Service, prober *mcpconn.Prober, opts *Options) []run.HostTool {
	t := &tools{svc: svc, prober: prober}
	if opts != nil {
		t.opts = *opts
	}
	out := []run.HostTool{
		{
			Name:           ToolResourceWrite,
			Description:    "Create or update an MCP registration or an agent (its mcps mounts). Changing your own mounts or a mounted server takes effect after this batch.",
			Schema:         writeSchema,
			Handler:        t.write,
			ManagementOnly: true,
		},
		{
			Name:           ToolResourceRead,
			Description:    "Read a resource (mcp or agent) with its revision.",
			Schema:         readSchema,
			Handler:        t.read,
			ManagementOnly: true,
		},
		{
			Name:           ToolResourceTest,
			Description:    "Statically check an MCP registration (cwd, command, URL) or an agent (its fields, and that every mount resolves); never starts anything.",
			Schema:         testSchema,
			Handler:        t.test,
			ManagementOnly: true,
		},
		{
			Name:           ToolAgentMCPList,
			Description:    "List an agent's mounted MCP references, whether each resolves, and its revision.",
			Schema:         mcpListSchema,
			Handler:        t.mcpList,
			ManagementOnly: true,
		},
	}
	if prober != nil {
		out = append(out, run.HostTool{
			Name:           ToolMCPProbe,
			Description:    "Start or connect a registered MCP server as a Run would, list and compile its tools, then close it. Calls no tool.",
			Schema:         probeSchema,
			Handler:        t.probe,
			ManagementOnly: true,
		})
	}
	for i := range out {
		// The schemas no longer list allow_mcp; this refuses it with the
		// reason before the schema would with a bare "additional property".
		out[i].Precheck = refuseAllowMCP
	}
	if t.opts.Tools == nil {
		return out
	}
	if err := t.opts.Validate(); err != nil {
		panic(err.Error())
	}
	return slices.DeleteFunc(out, func(ht run.HostTool) bool { return !slices.Contains(t.opts.Tools, ht.Name) })
}

type tools struct {
	svc    *resource.Service
	prober *mcpconn.Prober
	opts   Options
}

// The typed views of the arguments; the schema has already been checked.
type (
	keyArgs struct {
		Kind      resource.Kind `json:"kind"`
		Reference string        `json:"reference"`
	}
	probeArgs struct {
		Reference string `json:"reference"`
	}
	mcpListArgs struct {
		Agent string `json:"agent"`
	}
)

func (t *tools) write(ctx context.Context, req run.Request) (run.Result, error) {
	if err := refuseAllowMCP(req.Arguments); err != nil {
		return run.Result{}, err
	}
	var wr resource.WriteRequest
	if err := json.Unmarshal(req.Arguments, &wr); err != nil {
		return run.Result{}, t.serviceError(err)
	}
	if err := t.unmask(ctx, req.Agent, &wr); err != nil {
		return run.Result{}, err
	}
	res, err := t.svc.Write(ctx, resource.AgentCaller(req.Agent), wr)
	if err != nil {
		return run.Result{}, t.serviceError(err)
	}
	out := jsonResult(redacted(res))
	out.Written = []resource.Key{res.Resource.Key()}
	if res.Changed {
		out.Changed = out.Written
	}
	return out, nil
}

func (t *tools) read(ctx context.Context, req run.Request) (run.Result, error) {
	key, err := decodeKey(req.Arguments)
	if err != nil {
		return run.Result{}, err
	}
	res, err := t.svc.Read(ctx, resource.AgentCaller(req.Agent), key)
	if err != nil {
		return run.Result{}, t.serviceError(err)
	}
	return jsonResult(redactResource(res)), nil
}

// unmask puts the stored values back where an MCP write sends the mask
// that resource_read showed, so a model can patch one field of a
// document it only saw redacted. The write is then tied to the revision
// the values came from: if the document changed in between, it fails with
// a conflict rather than mixing revisions. A mask that matches no stored
// value is refused: storing it would lose the secret.
func (t *tools) unmask(ctx context.Context, agent resource.Ref, wr *resource.WriteRequest) error {
	if wr.Kind != resource.KindMCP || len(wr.Data) == 0 {
		return nil
	}
	var stored resource.Resource
	if !wr.Create {
		cur, err := t.svc.Read(ctx, resource.AgentCaller(agent), resource.Key{Kind: wr.Kind, Ref: wr.Ref})
		if err != nil && !errors.Is(err, resource.ErrNotFound) {
			return t.serviceError(err)
		}
		stored = cur
	}
	data, err := resource.UnmaskMCP(stored.Data, wr.Data)
	var de *resource.DocumentError
	if errors.As(err, &de) {
		// Its fields are inside the document, which the request sends as data.
		e := *de
		e.Field = "/data" + e.Field
		e.More = slices.Clone(e.More)
		for i := range e.More {
			e.More[i].Field = "/data" + e.More[i].Field
		}
		return t.serviceError(&e)
	}
	if err != nil {
		return t.serviceError(err)
	}
	if !bytes.Equal(data, wr.Data) {
		wr.Data = data
		if wr.ExpectedRevision == resource.AnyRevision {
			wr.ExpectedRevision = stored.Revision
		}
	}
	return nil
}

// redacted masks the document of a write's result.
func redacted(res resource.WriteResult) resource.WriteResult {
	res.Resource = redactResource(res.Resource)
	return res
}

// redactResource masks the credentials of an MCP document before a model
// sees it (resource.RedactMCP); agent documents hold none.
func redactResource(r resource.Resource) resource.Resource {
	if r.Kind == resource.KindMCP && len(r.Data) > 0 {
		r.Data = resource.RedactMCP(r.Data)
	}
	return r
}

func (t *tools) test(ctx context.Context, req run.Request) (run.Result, error) {
	key, err := decodeKey(req.Arguments)
	if err != nil {
		return run.Result{}, err
	}
	rep, err := t.svc.Test(ctx, resource.AgentCaller(req.Agent), key)
	if err != nil {
		return run.Result{}, t.serviceError(err)
	}
	return jsonResult(rep), nil
}

// decodeKey reads the {kind, reference} arguments of resource_read and
// resource_test.
func decodeKey(args json.RawMessage) (resource.Key, error) {
	var a keyArgs
	if err := decodeArgs(args, &a); err != nil {
		return resource.Key{}, err
	}
	ref, err := resource.ParseRef(a.Reference)
	if err != nil {
		return resource.Key{}, refError("/reference", err)
	}
	return resource.Key{Kind: a.Kind, Ref: ref}, nil
}

func (t *tools) mcpList(ctx context.Context, req run.Request) (run.Result, error) {
	var a mcpListArgs
	if err := decodeArgs(req.Arguments, &a); err != nil {
		return run.Result{}, err
	}
	agent := req.Agent
	if a.Agent != "" {
		ref, err := resource.ParseRef(a.Agent)
		if err != nil {
			return run.Result{}, refError("/agent", err)
		}
		agent = ref
	}
	mounts, err := t.svc.AgentMCPList(ctx, resource.AgentCaller(req.Agent), agent)
	if err != nil {
		return run.Result{}, t.serviceError(err)
	}
	if mounts == nil {
		mounts = []resource.Mount{}
	}
	return jsonResult(struct {
		Agent  resource.Ref     `json:"agent"`
		Mounts []resource.Mount `json:"mounts"`
	}{agent, mounts}), nil
}

func (t *tools) probe(ctx context.Context, req run.Request) (run.Result, error) {
	var a probeArgs
	if err := decodeArgs(req.Arguments, &a); err != nil {
		return run.Result{}, err
	}
	ref, err := resource.ParseRef(a.Reference)
	if err != nil {
		return run.Result{}, refError("/reference", err)
	}
	// The prober reads the repository itself; the service's read is the
	// caller check and a clear not_found before anything starts.
	if _, err := t.svc.Read(ctx, resource.AgentCaller(req.Agent), resource.Key{Kind: resource.KindMCP, Ref: ref}); err != nil {
		return run.Result{}, t.serviceError(err)
	}
	rep, err := t.prober.Probe(ctx, ref)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// The call itself was cancelled or ran out of time.
			return run.Result{}, cerr
		}
		if rep == nil {
			// The document could not be read: nothing was started.
			return run.Result{}, t.serviceError(err)
		}
	}
	// A server that cannot start, connect or list is an answer, not a
	// pipeline failure: the model reads the report (ok=false, error) and
	// decides what to fix. The report's error never holds the server's
	// output; its own fields go to the model only if the host opts in.
	if !t.opts.ServerStderrToModel {
		shown := *rep
		shown.StdoutHead, shown.StderrTail = "", ""
		rep = &shown
	}
	return jsonResult(rep), nil
}

// jsonResult renders v as the tool's structured content and as one text
// content block, the way an MCP server answers.
func jsonResult(v any) run.Result {
	b, err := json.Marshal(v)
	if err != nil {
		// Our own report types always marshal; keep the failure visible.
		return run.Result{Code: run.CodeInternal, Message: "rendering the result failed"}
	}
	block, _ := json.Marshal([]map[string]string{{"type": "text", "text": string(b)}})
	return run.Result{Content: block, Structured: b}
}

const allowMCPMessage = "allow_mcp was removed: the MCP master switch no longer exists; mounts decide which MCP servers an agent uses (resource_write with add: {mcps: [REF]})"

// refuseAllowMCP refuses the removed switch at the top level, as every
// framework tool's Precheck and again in its handler; the service refuses
// it inside data, add and remove.
func refuseAllowMCP(args json.RawMessage) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(args, &top) != nil {
		return nil // the schema stage has checked the shape already
	}
	if _, ok := top["allow_mcp"]; !ok {
		return nil
	}
	return &run.Error{
		Code:    run.CodeInvalidArguments,
		Message: allowMCPMessage,
		Violations: []toolschema.Violation{{
			Path: "/allow_mcp", Message: "removed; leave it out",
		}},
	}
}

// decodeArgs refuses allow_mcp, then decodes the validated arguments.
func decodeArgs(args json.RawMessage, v any) error {
	if err := refuseAllowMCP(args); err != nil {
		return err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return &run.Error{Code: run.CodeInvalidArguments, Message: "the arguments do not fit the tool's fields"}
	}
	return nil
}

func refError(path string, err error) error {
	return &run.Error{
		Code:       run.CodeInvalidArguments,
		Message:    "the reference is not valid: write name or category/name in lowercase letters, digits, '.', '_' and '-'",
		Violations: []toolschema.Violation{{Path: path, SchemaPath: "#/properties" + path + "/pattern", Message: "must be name or category/name"}},
	}
}

// serviceError maps a resource or prober error to the one ToolError format.
// Document rule failures become invalid_arguments with the field as the
// violation path; the sentinels keep their codes (run.CodeOf); the message
// is the service's, which names fields and never argument values, without
// a server's output unless Options.ServerStderrToModel.
func (t *tools) serviceError(err error) error {
	var de *resource.DocumentError
	if errors.As(err, &de) {
		msg := de.Message
		if de.Fix != "" {
			msg += "; " + de.Fix
		}
		e := &run.Error{Code: run.CodeInvalidArguments, Message: msg}
		if de.Field != "" {
			e.Violations = []toolschema.Violation{{Path: de.Field, Message: de.Message}}
		}
		for _, f := range de.More {
			if f.Field != "" {
				e.Violations = append(e.Violations, toolschema.Violation{Path: f.Field, Message: f.Message})
			}
		}
		// A document of many broken items (a 1 MiB data of bad args) has
		// as many findings: keep the answer as small as a schema failure's.
		if n := len(e.Violations); n > toolschema.MaxViolations {
			e.Violations = e.Violations[:toolschema.MaxViolations:toolschema.MaxViolations]
			e.Message += fmt.Sprintf(" (%d problems in all; the first %d are listed)", n, toolschema.MaxViolations)
		}
		return e
	}
	code := run.CodeOf(err)
	switch code {
	case run.CodeDeadlineExceeded, run.CodeCanceled:
		return err
	}
	return &run.Error{Code: code, Message: mcpconn.ErrorText(err, t.opts.ServerStderrToModel)}
}
