package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agtsdk/agt/internal/findcode"
)

// TestReport is the result of a static test of one stored resource.
// Nothing was started or contacted to produce it.
type TestReport struct {
	Key      Key   `json:"-"`
	Revision int64 `json:"revision"`
	// OK is true when no finding is an error.
	OK bool `json:"ok"`
	// Findings lists every problem found, each with a fix.
	Findings []Finding `json:"findings"`
}

// MarshalJSON writes kind and reference beside the report.
func (r TestReport) MarshalJSON() ([]byte, error) {
	type plain TestReport
	return json.Marshal(struct {
		Kind Kind `json:"kind"`
		Ref  Ref  `json:"reference"`
		plain
	}{r.Key.Kind, r.Key.Ref, plain(r)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *TestReport) UnmarshalJSON(b []byte) error {
	type plain TestReport
	var v struct {
		Kind Kind `json:"kind"`
		Ref  Ref  `json:"reference"`
		plain
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = TestReport(v.plain)
	r.Key = Key{Kind: v.Kind, Ref: v.Ref}
	return nil
}

func report(key Key, rev int64, fs []Finding) TestReport {
	r := TestReport{Key: key, Revision: rev, OK: true, Findings: fs}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for _, f := range fs {
		if f.Severity == findcode.Error {
			r.OK = false
		}
	}
	return r
}

// Test checks a stored resource statically and never starts or contacts
// anything. For an MCP resource: the write rules, that cwd exists
// and is a directory, that the command resolves (a PATH lookup for a bare
// name as starting it would do: the server's own env PATH if it sets one,
// placeholders expanded, relative entries against cwd; an existing
// executable file for an absolute path) and that the URL is well formed. A
// legacy record without an absolute cwd is an error finding that
// says how to fix it. For an agent: its document and that every mount
// resolves. Errors are for the call itself (ErrPermission, ErrNotFound, store
// failures); problems of the document are findings.
func (s *Service) Test(ctx context.Context, caller Caller, key Key) (TestReport, error) {
	if err := s.authorize(ctx, caller, "test"); err != nil {
		return TestReport{}, err
	}
	if _, err := checkKey(key.Kind, key.Ref); err != nil {
		return TestReport{}, err
	}
	res, err := s.repo.Get(ctx, key)
	if err != nil {
		return TestReport{}, err
	}
	if key.Kind == KindMCP {
		return report(key, res.Revision, s.testMCPData(res.Data)), nil
	}
	fs, err := s.testAgentData(ctx, res.Data)
	if err != nil {
		return TestReport{}, err
	}
	return report(key, res.Revision, fs), nil
}

// testMCPData runs the write rules on a stored MCP document, then, for a
// stdio server whose cwd and command pass them, the launch rules
// (ResolveLaunch) with the environment the server would get.
func (s *Service) testMCPData(data []byte) []Finding {
	_, srv, fs := checkMCP(data)
	for i, f := range fs {
		if f.Code == findcode.NoAbsoluteCwd {
			fs[i].Message = "this server was saved without an absolute cwd, before cwd was required: " + f.Message + "; it can be read and modified, but starting or probing it fails"
			fs[i].Fix = `set cwd to the absolute directory the server runs in: update the resource with data {"mcpServers": {NAME: {..., "cwd": "/abs/dir"}}}`
		}
	}
	base := "/mcpServers"
	if name, _, err := DecodeMCP(data); err == nil && checkServerName(name) == "" {
		base = pointer("mcpServers", name)
	}
	fields := []string{"/cwd", "/command", "/env"}
	if srv.Transport() != TransportStdio {
		fields = []string{"/url", "/type"}
	}
	for _, field := range fields {
		if hasField(fs, base+field) {
			return fs // already judged by the write rules
		}
	}
	// Nothing is started or contacted: ResolveRemote parses the URL only.
	if err := s.resolve(srv); err != nil {
		var le *LaunchError
		var se *SecretError
		if errors.As(err, &se) {
			// A malformed placeholder, already reported by the write rules.
			return fs
		}
		if !errors.As(err, &le) {
			return append(fs, errf(base, findcode.CommandMissing, "the server cannot be launched", "check cwd and command"))
		}
		fs = append(fs, errf(base+le.Field, le.Code, le.Message, le.Fix))
	}
	return fs
}

// resolve applies the launch rules of srv's transport (ResolveLaunch or
// ResolveRemote, with the launch allowlist) and starts nothing.
func (s *Service) resolve(srv MCPServer) error {
	if srv.Transport() == TransportStdio {
		_, err := ResolveLaunch(srv, &s.launchEnv, nil)
		return err
	}
	_, err := ResolveRemote(srv, &s.launchEnv)
	return err
}

func hasError(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == findcode.Error {
			return true
		}
	}
	return false
}

func hasCode(fs []Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}

func hasField(fs []Finding, field string) bool {
	for _, f := range fs {
		if f.Field == field {
			return true
		}
	}
	return false
}

// testAgentData checks an agent document and that each mount resolves.
func (s *Service) testAgentData(ctx context.Context, data []byte) ([]Finding, error) {
	doc, ok := decodeObject(data)
	if !ok {
		return []Finding{errf("", findcode.NotObject, "the agent document is not a JSON object", "delete the agent and create it again")}, nil
	}
	fs := append(checkAgentFields(doc), agentWarnings("", doc)...)
	if hasError(fs) {
		return fs, nil
	}
	agent, err := DecodeAgent(data)
	if err != nil {
		return append(fs, errf("", findcode.WrongType, "the agent document does not decode", "delete the agent and create it again")), nil
	}
	for i, ref := range agent.MCPs {
		_, err := s.repo.Get(ctx, Key{Kind: KindMCP, Ref: ref})
		if errors.Is(err, ErrNotFound) {
			fs = append(fs, errf(pointer("mcps", fmt.Sprint(i)), findcode.MountMissing, "the mounted MCP resource is not registered", "register it, or remove the mount (remove={\"mcps\":[REF]})"))
			continue
		}
		if err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// Mount is one entry of an agent's MCP assembly.
type Mount struct {
	Ref Ref `json:"reference"`
	// Resolves is true when Ref names a registered MCP resource.
	Resolves bool `json:"resolves"`
	// Revision is the MCP resource's revision; 0 when it does not resolve.
	Revision int64 `json:"revision,omitempty"`
	// Problem says why it does not resolve; empty when it does.
	Problem string `json:"problem,omitempty"`
}

// AgentMCPList returns the agent's mounted references in order, each with
// whether it resolves and its revision. ErrNotFound when the
// agent is not registered.
func (s *Service) AgentMCPList(ctx context.Context, caller Caller, agent Ref) ([]Mount, error) {
	if err := s.authorize(ctx, caller, "agent_mcp_list"); err != nil {
		return nil, err
	}
	_, doc, err := s.readAgent(ctx, agent)
	if err != nil {
		return nil, err
	}
	return s.resolveMounts(ctx, doc.MCPs)
}

func (s *Service) readAgent(ctx context.Context, agent Ref) (Resource, AgentDocument, error) {
	key, err := checkKey(KindAgent, agent)
	if err != nil {
		return Resource{}, AgentDocument{}, err
	}
	res, err := s.repo.Get(ctx, key)
	if err != nil {
		return Resource{}, AgentDocument{}, err
	}
	doc, err := DecodeAgent(res.Data)
	if err != nil {
		return res, AgentDocument{}, invalid("", findcode.WrongType, "the stored agent document does not decode", "rewrite it: resource_write(kind=\"agent\") with the fields to fix")
	}
	return res, doc, nil
}

func (s *Service) resolveMounts(ctx context.Context, refs []Ref) ([]Mount, error) {
	mounts := make([]Mount, 0, len(refs))
	for _, ref := range refs {
		m := Mount{Ref: ref}
		if !validRef(string(ref)) {
			m.Problem = "not a valid reference"
			mounts = append(mounts, m)
			continue
		}
		res, err := s.repo.Get(ctx, Key{Kind: KindMCP, Ref: ref})
		switch {
		case errors.Is(err, ErrNotFound):
			m.Problem = "no MCP resource is registered under this reference"
		case err != nil:
			return nil, err
		default:
			m.Resolves, m.Revision = true, res.Revision
		}
		mounts = append(mounts, m)
	}
	return mounts, nil
}

// AgentReport is what a host checks before dispatching work to an agent:
// identity, binding, and MCP assembly, in one report.
type AgentReport struct {
	Agent Ref `json:"agent"`
	// Exists is true when the agent is registered.
	Exists   bool  `json:"exists"`
	Revision int64 `json:"revision,omitempty"`
	// Enabled is the agent's binding switch (absent means enabled).
	Enabled bool `json:"enabled"`
	// CanManage is true for a manager or an agent with resource_management.
	CanManage bool `json:"can_manage"`
	// Mounts is the assembly, each mount with its static test.
	Mounts []MountReport `json:"mounts"`
	// Problems are the agent-level findings: errors (not registered,
	// disabled, unreadable document) and warnings (a field agt does not
	// read, an unknown capability), which leave OK as it is.
	Problems []Finding `json:"problems"`
	// OK is true when the agent exists, is enabled, and every mount resolves
	// and passes Test.
	OK bool `json:"ok"`
}

// MountReport is one mount with the static test of the MCP resource.
type MountReport struct {
	Mount
	// Findings of Test on the mounted MCP resource; empty when it does not
	// resolve (Problem says why).
	Findings []Finding `json:"findings"`
	OK       bool      `json:"ok"`
}

// CheckAgent reports the agent's identity, whether its binding is enabled,
// and its MCP assembly: every mount resolves and passes Test.
// Nothing is started; a probe is the next step (package mcpconn). An agent
// that is not registered is a report with Exists false, not an error.
func (s *Service) CheckAgent(ctx context.Context, caller Caller, agent Ref) (AgentReport, error) {
	if err := s.authorize(ctx, caller, "check_agent"); err != nil {
		return AgentReport{}, err
	}
	rep := AgentReport{Agent: agent, Mounts: []MountReport{}, Problems: []Finding{}}
	res, doc, err := s.readAgent(ctx, agent)
	switch {
	case errors.Is(err, ErrNotFound):
		rep.Problems = append(rep.Problems, errf("", findcode.AgentMissing, "the agent is not registered", "create it: a write of kind \"agent\" with create=true"))
		return rep, nil
	case errors.Is(err, ErrInvalid) && res.Revision != 0:
		rep.Exists, rep.Revision = true, res.Revision
		rep.Problems = append(rep.Problems, errf("", findcode.WrongType, "the stored agent document does not decode", "rewrite the agent's fields with resource_write"))
		return rep, nil
	case err != nil:
		return AgentReport{}, err
	}
	rep.Exists, rep.Revision = true, res.Revision
	rep.Enabled, rep.CanManage = doc.IsEnabled(), doc.CanManage()
	if m, ok := decodeObject(res.Data); ok {
		rep.Problems = append(rep.Problems, agentWarnings("", m)...)
	}
	if !rep.Enabled {
		rep.Problems = append(rep.Problems, errf("/enabled", findcode.AgentDisabled, "the agent's binding is disabled", `enable it: resource_write(kind="agent", data={"enabled": true})`))
	}
	mounts, err := s.resolveMounts(ctx, doc.MCPs)
	if err != nil {
		return AgentReport{}, err
	}
	rep.OK = rep.Enabled
	for _, m := range mounts {
		mr := MountReport{Mount: m, Findings: []Finding{}}
		if m.Resolves {
			mcp, err := s.repo.Get(ctx, Key{Kind: KindMCP, Ref: m.Ref})
			switch {
			case errors.Is(err, ErrNotFound): // deleted in between
				mr.Resolves, mr.Revision, mr.Problem = false, 0, "no MCP resource is registered under this reference"
			case err != nil:
				return AgentReport{}, err
			default:
				mr.Revision = mcp.Revision
				mr.Findings = s.testMCPData(mcp.Data)
			}
		}
		mr.OK = mr.Resolves && !hasError(mr.Findings)
		rep.OK = rep.OK && mr.OK
		rep.Mounts = append(rep.Mounts, mr)
	}
	return rep, nil
}
