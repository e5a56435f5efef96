package resource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agtsdk/agt/internal/findcode"
)

// ServiceOptions configure NewService. A nil *ServiceOptions means the
// defaults.
type ServiceOptions struct {
	// MaxDocumentBytes bounds the data of one write request, the bytes of
	// its add and remove items, and the stored document a write leaves
	// behind (a write may not grow a document past it). Zero means 1 MiB.
	MaxDocumentBytes int
	// LaunchEnv is the environment policy Test and CheckAgent resolve a
	// stdio server's command with (ResolveLaunch): it must be the one the
	// servers are started with, so that a static test and a start agree.
	// Nil means the defaults, which are mcpconn.Connector's defaults too;
	// agt.Host sets it from its Connector.
	LaunchEnv *LaunchEnv
	// AgentsMayChangePrivileges lets an agent caller (a manager, or an
	// agent with resource_management) change manager, capabilities and
	// enabled of agents, its own included, delete a disabled agent, and
	// turn shared on for an MCP server. False, the zero value, refuses it
	// with ErrPermission: only a direct caller may, so no agent can raise
	// its own rights or another's, nor make the calls of different users
	// meet in one process. Edits of mcps are not affected.
	AgentsMayChangePrivileges bool
}

// Service is the one resource service behind the framework tools
// (resource_write, resource_read, resource_test, agent_mcp_list) and the agt
// CLI: it checks the caller, applies the write rules of each kind and talks
// to the Repository. It is safe for concurrent use.
type Service struct {
	repo      Repository
	maxBytes  int
	launchEnv LaunchEnv

	agentsMayChangePrivileges bool
}

// NewService returns a Service over repo.
func NewService(repo Repository, opts *ServiceOptions) *Service {
	s := &Service{repo: repo, maxBytes: defaultMaxDocumentBytes}
	if opts != nil && opts.MaxDocumentBytes > 0 {
		s.maxBytes = opts.MaxDocumentBytes
	}
	if opts != nil {
		s.agentsMayChangePrivileges = opts.AgentsMayChangePrivileges
	}
	if opts != nil && opts.LaunchEnv != nil {
		s.launchEnv = opts.LaunchEnv.Clone()
	}
	if s.launchEnv.setBy == "" {
		// Its fix texts name the option that applies here.
		s.launchEnv.setBy = "resource.ServiceOptions.LaunchEnv"
	}
	return s
}

// Repository returns the repository the service writes to.
func (s *Service) Repository() Repository { return s.repo }

// Caller says on whose behalf a service call runs. The zero Caller has no
// rights: every call with it fails with ErrPermission. Make one with
// Direct or AgentCaller.
type Caller struct {
	// Agent is the agent making the call through a framework tool
	// (AgentCaller). It is empty for a direct caller.
	Agent Ref
	// direct marks the caller Direct returns; only this package sets it,
	// so a forgotten Caller{} never grants anything.
	direct bool
}

// Direct returns the caller of the CLI and of a host's own admin code: it
// may manage everything. Pass it explicitly; the zero Caller has no rights.
func Direct() Caller { return Caller{direct: true} }

// AgentCaller returns the caller for a framework tool called by agent ref.
func AgentCaller(ref Ref) Caller { return Caller{Agent: ref} }

// IsDirect reports whether c is the direct caller (Direct).
func (c Caller) IsDirect() bool { return c.direct && c.Agent == "" }

// authorize lets a direct caller through, and an agent caller only if its
// stored document, read now and not at the start of its Run, lets it
// manage resources (callerMayManage). The zero Caller is refused.
func (s *Service) authorize(ctx context.Context, c Caller, action string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.IsDirect() {
		return nil
	}
	if c.Agent == "" {
		return fmt.Errorf("resource: %s refused: no caller given, and the zero Caller has no rights (fix: pass resource.Direct() for the host's own code, or resource.AgentCaller(ref) for an agent): %w", action, ErrPermission)
	}
	if !validRef(string(c.Agent)) {
		return fmt.Errorf("resource: %s refused: the calling agent's reference is invalid (fix: the host must name the caller by its registered agent reference): %w", action, ErrPermission)
	}
	res, err := s.repo.Get(ctx, Key{Kind: KindAgent, Ref: c.Agent})
	return judgeCaller(c, action, res, err)
}

// writer returns the repository an agent caller's writes go through: one
// that judges the caller again inside each write's transaction, when the
// Repository can (GuardedRepository).
func (s *Service) writer(c Caller, action string) Repository {
	g, ok := s.repo.(GuardedRepository)
	if c.IsDirect() || !ok {
		return s.repo
	}
	return g.Guarded(Key{Kind: KindAgent, Ref: c.Agent}, func(res Resource, err error) error {
		return judgeCaller(c, action, res, err)
	})
}

// judgeCaller judges an agent caller by its stored document (res, or the
// error reading it): it must be registered, readable, enabled, and a
// manager or hold resource_management. The host may take any of these
// away while the agent's Run is open, so it is judged on every call, and
// inside the transaction of every write, never from a Run's snapshot.
func judgeCaller(c Caller, action string, res Resource, err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("resource: %s refused: calling agent %s is not registered (fix: a direct caller registers it with \"capabilities\": [%q]): %w",
			action, c.Agent, CapabilityResourceManagement, ErrPermission)
	}
	if err != nil {
		return err
	}
	return callerMayManage(c, action, res.Data)
}

// callerMayManage is judgeCaller's check of the document data.
func callerMayManage(c Caller, action string, data []byte) error {
	doc, err := DecodeAgent(data)
	if err != nil {
		return fmt.Errorf("resource: %s refused: calling agent %s has an unreadable document (fix: a direct caller rewrites the agent's fields): %w", action, c.Agent, ErrPermission)
	}
	if !doc.IsEnabled() {
		return fmt.Errorf("resource: %s refused: calling agent %s is disabled (enabled is false), and a disabled agent may not manage resources (fix: a direct caller sets enabled to true): %w", action, c.Agent, ErrPermission)
	}
	if !doc.CanManage() {
		return fmt.Errorf("resource: %s refused: agent %s is not a manager and lacks the %s capability (fix: a direct caller grants it with add={\"capabilities\":[%q]}): %w",
			action, c.Agent, CapabilityResourceManagement, CapabilityResourceManagement, ErrPermission)
	}
	return nil
}

// checkKey validates the kind and reference of a request; both must be one
// the service knows.
func checkKey(kind Kind, ref Ref) (Key, error) {
	if kind != KindMCP && kind != KindAgent {
		return Key{}, invalid("/kind", findcode.Kind, `unknown kind; the service manages "mcp" and "agent"`, `set kind to "mcp" or "agent"`)
	}
	if !validRef(string(ref)) {
		return Key{}, invalid("/reference", findcode.Reference, refRule, "correct the reference")
	}
	return Key{Kind: kind, Ref: ref}, nil
}

// WriteRequest is one resource_write call (and one CLI create or update).
// Its JSON form is the framework tool's arguments; decoding refuses unknown
// fields and allow_mcp.
//
// The document is given as JSON in Data, or typed, by a host's own code,
// in Server (an MCP server) or Agent (an agent document): at most one of
// the three. A typed document is judged, stored and redacted exactly as
// the Data it stands for, and its errors name fields as in Data
// ("/data/mcpServers/NAME/cwd"); Kind may then be left zero, as it is
// implied.
// Server and Agent have no JSON form, so a model, whose resource_write
// arguments decode into a WriteRequest, can never set them.
type WriteRequest struct {
	// Kind is "mcp" or "agent". It may be left zero when Server or Agent
	// is set (they imply it); another kind than theirs is refused.
	Kind Kind `json:"kind"`
	// Ref is the resource's reference.
	Ref Ref `json:"reference"`
	// Create stores a new resource (ErrExists if taken); false updates an
	// existing one (ErrNotFound if missing).
	Create bool `json:"create,omitempty"`
	// Data is a top-level patch of the document: a field present replaces,
	// a field absent keeps. For a create it is the whole document.
	Data json.RawMessage `json:"data,omitempty"`
	// Server, set instead of Data, is the server of an MCP write: the
	// document {"mcpServers": {NAME: Server}}, where NAME is Ref.Name() on
	// a create and the stored entry's own name on an update, so an update
	// never renames it. It replaces the whole entry, as an mcpServers in
	// Data does. Nil means none. A host's own code only (no JSON form).
	Server *MCPServer `json:"-"`
	// Agent, set instead of Data, is the whole document of an agent write,
	// as AgentDocument.MarshalJSON writes it (Extra included). On an update
	// it replaces the stored document rather than patching it: a field
	// left zero is stored zero, not kept (read the document with
	// DecodeAgent, change it and write it back with ExpectedRevision to
	// keep the rest). Add and Remove apply after it, in the same
	// transaction, as they do after Data. Nil means none. A host's own
	// code only (no JSON form).
	Agent *AgentDocument `json:"-"`
	// Add names list fields and the items to add (agents only); adding a
	// present item is a reported no-op.
	Add map[string][]string `json:"add,omitempty"`
	// Remove names list fields and the items to remove (agents only);
	// removing an absent item is a reported no-op.
	Remove map[string][]string `json:"remove,omitempty"`
	// ExpectedRevision, when not zero, must equal the stored revision or the
	// write fails with *ConflictError and changes nothing.
	ExpectedRevision int64 `json:"expected_revision,omitempty"`
}

var writeRequestFields = []string{"kind", "reference", "create", "data", "add", "remove", "expected_revision"}

// writeRequestTypes says what each request field must be, for messages.
var writeRequestTypes = map[string]string{
	"kind":              `a string, "mcp" or "agent"`,
	"reference":         "a string, name or category/name",
	"create":            "true or false",
	"data":              "a JSON object",
	"add":               `an object of list fields to arrays of strings, like {"mcps": ["REF"]}`,
	"remove":            `an object of list fields to arrays of strings, like {"mcps": ["REF"]}`,
	"expected_revision": "a whole number: the revision you read, or 0 for none",
}

// UnmarshalJSON decodes a request strictly: unknown fields are refused with
// the list of allowed ones, and allow_mcp with the reason it is gone.
func (r *WriteRequest) UnmarshalJSON(b []byte) error {
	m, ok := decodeObject(b)
	if !ok {
		return invalid("", findcode.NotObject, "the write request must be a JSON object", "send {kind, reference, create, data, add, remove, expected_revision}")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "allow_mcp" {
			f := allowMCPFinding(pointer(k))
			return &DocumentError{Field: f.Field, Code: f.Code, Message: f.Message, Fix: f.Fix}
		}
		if !contains(writeRequestFields, k) {
			return invalid(pointer(k), findcode.UnknownField, "unknown field; allowed fields are "+strings.Join(writeRequestFields, ", "), "remove it or correct its spelling")
		}
	}
	type plain WriteRequest
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// te.Value may hold the value itself ("number 1.5"): not echoed.
			field, _, _ := strings.Cut(te.Field, ".")
			if want, ok := writeRequestTypes[field]; ok {
				return invalid(pointer(field), findcode.WrongType, "wrong type for "+field, "write "+field+" as "+want)
			}
			return invalid("", findcode.WrongType, "a field has the wrong type", "send {kind, reference, create, data, add, remove, expected_revision} as the package documentation describes")
		}
		return invalid("", findcode.WrongType, "the write request does not decode", "send {kind, reference, create, data, add, remove, expected_revision}")
	}
	if bytes.Equal(bytes.TrimSpace(p.Data), []byte("null")) {
		p.Data = nil
	}
	*r = WriteRequest(p)
	return nil
}

// WriteResult is what a successful Write did.
type WriteResult struct {
	// Resource is the stored resource after the write, with its revision.
	Resource Resource `json:"resource"`
	// Created is true when the write created the resource.
	Created bool `json:"created,omitempty"`
	// Changed is false when the write left the document as it was (every
	// add and remove was a no-op, or the data equalled the stored one): no
	// new revision was written.
	Changed bool `json:"changed"`
	// Warnings are accepted problems, each "FIELD: message (fix: ...)": a
	// legacy MCP record still without an absolute cwd, an agent field agt
	// does not read (stored as written; a near miss names the field it
	// probably meant, as for "mpcs"), a capability agt does not know.
	Warnings []string `json:"warnings,omitempty"`
	// Noops lists adds of items already present and removes of absent ones.
	Noops []string `json:"noops,omitempty"`
}

// Write creates or updates a resource. Errors:
// ErrPermission, *DocumentError (ErrInvalid), ErrExists, ErrNotFound (the
// resource, or a mounted MCP reference that is not registered), and
// *ConflictError (ErrConflict) when ExpectedRevision is stale; on any
// error nothing changed.
func (s *Service) Write(ctx context.Context, caller Caller, req WriteRequest) (WriteResult, error) {
	if err := s.authorize(ctx, caller, "write"); err != nil {
		return WriteResult{}, err
	}
	if err := typedKind(&req); err != nil {
		return WriteResult{}, err
	}
	key, err := checkKey(req.Kind, req.Ref)
	if err != nil {
		return WriteResult{}, err
	}
	server, replace := req.Server, req.Agent != nil
	if err := typedData(&req); err != nil {
		return WriteResult{}, err
	}
	if err := s.checkRequestShape(&req); err != nil {
		return WriteResult{}, err
	}
	if key.Kind == KindMCP {
		return s.writeMCP(ctx, caller, key, req, server)
	}
	return s.writeAgent(ctx, caller, key, req, replace)
}

// typedKind checks that at most one of Data, Server and Agent is set, and
// sets the kind a typed document implies when Kind is zero.
func typedKind(req *WriteRequest) error {
	var set []string
	if len(req.Data) > 0 {
		set = append(set, "Data")
	}
	if req.Server != nil {
		set = append(set, "Server")
	}
	if req.Agent != nil {
		set = append(set, "Agent")
	}
	if len(set) > 1 {
		return invalid("", findcode.Request, "WriteRequest."+strings.Join(set, " and WriteRequest.")+" are set; a write carries one document",
			"set one of them: Server for an mcp write, Agent for an agent write, or Data for the document as JSON")
	}
	for _, t := range []struct {
		set   bool
		field string
		kind  Kind
	}{{req.Server != nil, "Server", KindMCP}, {req.Agent != nil, "Agent", KindAgent}} {
		switch {
		case !t.set:
		case req.Kind == "":
			req.Kind = t.kind
		case req.Kind != t.kind:
			return invalid("/kind", findcode.Kind, fmt.Sprintf("WriteRequest.%s is the document of kind %q, but Kind names another", t.field, t.kind),
				fmt.Sprintf("set Kind to %q or leave it zero, or give the document in the field of its kind (Server for mcp, Agent for agent)", t.kind))
		}
	}
	return nil
}

// typedData puts a typed document into Data, as the JSON it stands for,
// so that every rule judges it as it judges Data. A Server is keyed by
// Ref.Name(); an update keys it by the stored name instead (writeMCP).
func typedData(req *WriteRequest) error {
	var err error
	switch {
	case req.Server != nil:
		req.Data, err = serverData(req.Ref.Name(), *req.Server)
	case req.Agent != nil:
		req.Data, err = req.Agent.MarshalJSON()
	default:
		return nil
	}
	req.Server, req.Agent = nil, nil
	if err != nil {
		// Only an Extra value of an AgentDocument that is not JSON.
		return invalid("/data", findcode.WrongType, "the typed document does not encode as JSON", "give every AgentDocument.Extra value as valid JSON")
	}
	return nil
}

// serverData is the MCP document of one server named name.
func serverData(name string, srv MCPServer) (json.RawMessage, error) {
	return encodeJSON(MCPDocument{MCPServers: map[string]MCPServer{name: srv}})
}

// encodeJSON encodes v compactly without HTML escaping ('&' stays '&'), so
// rewriting stored data gives the same bytes and an unchanged document is
// recognised as unchanged.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checkRequestShape applies the rules common to every kind: bounded data
// that is a JSON object, no allow_mcp, sane add/remove, and a revision only
// on updates.
func (s *Service) checkRequestShape(req *WriteRequest) error {
	if len(req.Data) > s.maxBytes {
		return invalid("/data", findcode.Limit, fmt.Sprintf("data is %d bytes; the limit is %d", len(req.Data), s.maxBytes), "shorten the document")
	}
	if len(req.Data) > 0 {
		if bytes.Equal(bytes.TrimSpace(req.Data), []byte("null")) {
			req.Data = nil
		} else {
			m, ok := decodeObject(req.Data)
			if !ok {
				return invalid("/data", findcode.NotObject, "data must be a JSON object", "send the document fields as an object")
			}
			if _, ok := m["allow_mcp"]; ok {
				f := allowMCPFinding("/data/allow_mcp")
				return &DocumentError{Field: f.Field, Code: f.Code, Message: f.Message, Fix: f.Fix}
			}
		}
	}
	if n := len(req.Add) + len(req.Remove); n > maxListFields {
		return invalid("", findcode.Limit, fmt.Sprintf("add and remove name %d list fields; the limit is %d", n, maxListFields), "split the change into several writes")
	}
	itemBytes := 0
	for _, lists := range []map[string][]string{req.Add, req.Remove} {
		for _, items := range lists {
			for _, it := range items {
				itemBytes += len(it)
			}
		}
	}
	if itemBytes > s.maxBytes {
		return invalid("", findcode.Limit, fmt.Sprintf("the items of add and remove hold %d bytes; the limit is %d", itemBytes, s.maxBytes), "split the change into several writes")
	}
	for _, op := range []struct {
		name  string
		lists map[string][]string
	}{{"add", req.Add}, {"remove", req.Remove}} {
		if len(op.lists) > 0 && req.Kind != KindAgent {
			return invalid(pointer(op.name), findcode.Request, op.name+" applies to the list fields of agent documents", "send the whole mcpServers entry in data instead")
		}
		for _, field := range slices.Sorted(maps.Keys(op.lists)) {
			if field == "allow_mcp" {
				f := allowMCPFinding(pointer(op.name, field))
				return &DocumentError{Field: f.Field, Code: f.Code, Message: f.Message, Fix: f.Fix}
			}
			if !validListField(field) {
				return invalid(pointer(op.name), findcode.Request, "a list field name must be 1 to 64 of letters, digits and '_'", `name a list field such as "mcps" or "capabilities"`)
			}
			if fs := checkListItems(field, op.lists[field]); len(fs) > 0 {
				return errorOf("/"+op.name, fs)
			}
		}
	}
	for _, field := range slices.Sorted(maps.Keys(req.Add)) {
		for _, it := range req.Add[field] {
			if slices.Contains(req.Remove[field], it) {
				return invalid(pointer("add", field), findcode.Request, "the same item is both added and removed", "send it in add or in remove, not both")
			}
		}
	}
	if req.Create && req.ExpectedRevision != 0 {
		return invalid("/expected_revision", findcode.Request, "expected_revision has no meaning when creating", "drop it, or set create to false to update")
	}
	if req.ExpectedRevision < 0 {
		return invalid("/expected_revision", findcode.Request, "expected_revision must be a revision read before (1 or more), or 0 for none", "read the resource and send its revision")
	}
	if !req.Create && len(req.Data) == 0 && len(req.Add) == 0 && len(req.Remove) == 0 {
		return invalid("", findcode.Request, "nothing to write: no data, add or remove", "send data with the fields to replace, or add/remove items")
	}
	return nil
}

func validListField(f string) bool {
	if f == "" || len(f) > 64 {
		return false
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// writeMCP writes an MCP document; server is the typed server req.Data
// was made of (nil when Data was given), which an update keys by the
// stored entry's name.
func (s *Service) writeMCP(ctx context.Context, caller Caller, key Key, req WriteRequest, server *MCPServer) (WriteResult, error) {
	if len(req.Data) == 0 {
		return WriteResult{}, invalid("/data", findcode.Request, "an MCP write needs data", `send {"mcpServers": {"NAME": {...}}}`)
	}
	if req.Create {
		name, srv, fs := checkMCP(req.Data)
		if e := errorOf("/data", fs); e != nil {
			return WriteResult{}, e
		}
		if err := s.admitLaunch(caller, name, nil, srv); err != nil {
			return WriteResult{}, err
		}
		if err := s.admitEnv(caller, name, nil, srv); err != nil {
			return WriteResult{}, err
		}
		if err := s.checkSharing(caller, name, nil, srv); err != nil {
			return WriteResult{}, err
		}
		data, err := compactJSON(req.Data)
		if err != nil {
			return WriteResult{}, invalid("/data", findcode.NotObject, "data is not valid JSON", "send a JSON object")
		}
		res, err := s.writer(caller, "write").Create(ctx, key, data)
		if err != nil {
			return WriteResult{}, err
		}
		return WriteResult{Resource: res, Created: true, Changed: true}, nil
	}

	var warnings []string
	changed := true
	res, err := s.writer(caller, "write").Modify(ctx, key, req.ExpectedRevision, func(cur Resource) (json.RawMessage, error) {
		warnings, changed = nil, true
		patch := req.Data
		if stored, _, err := DecodeMCP(cur.Data); err == nil && server != nil && stored != key.Ref.Name() {
			if patch, err = serverData(stored, *server); err != nil {
				return nil, err
			}
		}
		merged, err := mergeTop(cur.Data, patch)
		if err != nil {
			return nil, err
		}
		name, srv, fs := checkMCP(merged)
		if e := errorOf("/data", fs); e != nil {
			// A record saved before cwd was required may keep its missing or
			// relative cwd while it is being modified, with a
			// warning; a new relative cwd is refused.
			if !onlyLegacyCwd(fs) || !keepsLegacyCwd(cur.Data, srv.Cwd) {
				return nil, e
			}
			warnings = append(warnings, "saved without an absolute cwd, as before: starting or probing this server fails until cwd is set to the absolute directory it runs in")
		}
		var stored *MCPServer
		if _, prev, err := DecodeMCP(cur.Data); err == nil {
			stored = &prev
		}
		if err := s.admitLaunch(caller, name, stored, srv); err != nil {
			return nil, err
		}
		if err := s.admitEnv(caller, name, stored, srv); err != nil {
			return nil, err
		}
		if err := s.checkSharing(caller, name, stored, srv); err != nil {
			return nil, err
		}
		var next json.RawMessage
		next, changed, err = s.nextData(cur.Data, merged)
		return next, err
	})
	if err != nil {
		return WriteResult{}, err
	}
	var noops []string
	if !changed {
		noops = append(noops, "the data equals the stored document; nothing was written")
	}
	return WriteResult{Resource: res, Changed: changed, Warnings: warnings, Noops: noops}, nil
}

// onlyLegacyCwd reports whether every error finding is a missing absolute cwd.
func onlyLegacyCwd(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == findcode.Error && f.Code != findcode.NoAbsoluteCwd {
			return false
		}
	}
	return true
}

// keepsLegacyCwd reports whether the stored MCP document lacks an absolute
// cwd and cwd is the one it already has.
func keepsLegacyCwd(stored []byte, cwd string) bool {
	_, srv, fs := checkMCP(stored)
	return hasCode(fs, findcode.NoAbsoluteCwd) && srv.Cwd == cwd
}

// mergeTop applies a top-level patch: every field of patch replaces the one
// in cur. The result is compact JSON with sorted keys.
func mergeTop(cur, patch []byte) ([]byte, error) {
	m, ok := decodeObject(cur)
	if !ok {
		return nil, invalid("", findcode.NotObject, "the stored document is not a JSON object, so a patch cannot apply", "replace it: delete the resource and create it again")
	}
	p, _ := decodeObject(patch)
	for k, v := range p {
		m[k] = v
	}
	return marshalObject(m)
}

// marshalObject encodes m compactly with sorted keys (encodeJSON).
func marshalObject(m map[string]json.RawMessage) ([]byte, error) {
	b, err := encodeJSON(m)
	if err != nil {
		return nil, invalid("/data", findcode.WrongType, "the document does not encode as JSON", "send valid JSON")
	}
	return b, nil
}

// nextData is what a Modify callback returns for the new document next:
// nil and changed false when it equals the stored one (no new revision),
// an error when it would grow past the size limit.
func (s *Service) nextData(cur, next []byte) (json.RawMessage, bool, error) {
	if old, err := compactJSON(cur); err == nil && bytes.Equal(old, next) {
		return nil, false, nil
	}
	if err := s.checkGrowth(cur, next); err != nil {
		return nil, true, err
	}
	return next, true, nil
}

// checkGrowth refuses a write that would leave a document larger than
// MaxDocumentBytes and larger than it was: many small patches cannot add
// up to an unbounded document, and one already over a lowered limit can
// still shrink.
func (s *Service) checkGrowth(old, next []byte) error {
	if len(next) <= s.maxBytes || len(next) <= len(old) {
		return nil
	}
	return invalid("/data", findcode.Limit, fmt.Sprintf("the stored document would be %d bytes; the limit is %d", len(next), s.maxBytes),
		"remove fields or list items that are no longer needed, or raise ServiceOptions.MaxDocumentBytes")
}

// writeAgent writes an agent document; replace (a typed Agent) makes
// req.Data the whole document on an update rather than a patch.
func (s *Service) writeAgent(ctx context.Context, caller Caller, key Key, req WriteRequest, replace bool) (WriteResult, error) {
	patch := map[string]json.RawMessage{}
	if len(req.Data) > 0 {
		patch, _ = decodeObject(req.Data)
		if e := errorOf("/data", checkAgentFields(patch)); e != nil {
			return WriteResult{}, e
		}
	}
	// Every mount named by this write must be a registered MCP resource at
	// write time. Look them up before the write transaction: a Repository's
	// Modify callback must not call the Repository.
	if err := s.checkMountsExist(ctx, patch, req.Add); err != nil {
		return WriteResult{}, err
	}
	var warnings []string
	for _, f := range requestWarnings(patch, req.Add, req.Remove) {
		warnings = append(warnings, f.String())
	}

	if req.Create {
		doc := map[string]json.RawMessage{"mcps": json.RawMessage("[]")}
		for k, v := range patch {
			doc[k] = v
		}
		noops, err := applyAddRemove(doc, req.Add, req.Remove)
		if err != nil {
			return WriteResult{}, err
		}
		data, err := marshalObject(doc)
		if err != nil {
			return WriteResult{}, err
		}
		if err := s.checkGrowth(nil, data); err != nil {
			return WriteResult{}, err
		}
		if err := s.checkPrivileges(caller, key, nil, data); err != nil {
			return WriteResult{}, err
		}
		res, err := s.writer(caller, "write").Create(ctx, key, data)
		if err != nil {
			return WriteResult{}, err
		}
		return WriteResult{Resource: res, Created: true, Changed: true, Warnings: warnings, Noops: noops}, nil
	}

	var noops []string
	changed := true
	res, err := s.writer(caller, "write").Modify(ctx, key, req.ExpectedRevision, func(cur Resource) (json.RawMessage, error) {
		noops, changed = nil, true
		doc, ok := decodeObject(cur.Data)
		switch {
		case replace:
			doc = map[string]json.RawMessage{}
		case !ok:
			return nil, invalid("", findcode.NotObject, "the stored agent document is not a JSON object, so a patch cannot apply", "replace it: delete the agent and create it again")
		}
		for k, v := range patch {
			doc[k] = v
		}
		var err error
		if noops, err = applyAddRemove(doc, req.Add, req.Remove); err != nil {
			return nil, err
		}
		data, err := marshalObject(doc)
		if err != nil {
			return nil, err
		}
		if !caller.IsDirect() && key.Ref == caller.Agent {
			// The caller's own document is at hand inside the transaction,
			// whether or not the Repository is a GuardedRepository.
			if err := callerMayManage(caller, "write", cur.Data); err != nil {
				return nil, err
			}
		}
		// Judged inside the transaction, against the document it replaces.
		if err := s.checkPrivileges(caller, key, cur.Data, data); err != nil {
			return nil, err
		}
		var next json.RawMessage
		next, changed, err = s.nextData(cur.Data, data)
		return next, err
	})
	if err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Resource: res, Changed: changed, Warnings: warnings, Noops: noops}, nil
}

func (s *Service) checkMountsExist(ctx context.Context, patch map[string]json.RawMessage, add map[string][]string) error {
	var refs []string
	if raw, ok := patch["mcps"]; ok {
		if err := json.Unmarshal(raw, &refs); err != nil {
			return invalid("/data/mcps", findcode.WrongType, "mcps must be an array of references", "write it as an array of references")
		}
	}
	refs = append(refs, add["mcps"]...)
	for _, r := range refs {
		_, err := s.repo.Get(ctx, Key{Kind: KindMCP, Ref: Ref(r)})
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("resource: mcps: %s is not a registered MCP resource; register it first as a resource of kind \"mcp\": %w", r, ErrNotFound)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// applyAddRemove adds then removes single items of list fields of doc, and
// reports the no-ops. It checks the known agent fields of the result.
func applyAddRemove(doc map[string]json.RawMessage, add, remove map[string][]string) ([]string, error) {
	var noops []string
	fields := slices.Sorted(maps.Keys(add))
	for _, f := range slices.Sorted(maps.Keys(remove)) {
		if _, ok := add[f]; !ok {
			fields = append(fields, f)
		}
	}
	for _, f := range fields {
		var list []string
		if raw, ok := doc[f]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, invalid(pointer("add", f), findcode.WrongType, "add and remove apply only to fields that hold an array of strings", "send the whole field in data instead")
			}
		}
		for _, it := range add[f] {
			if slices.Contains(list, it) {
				noops = append(noops, fmt.Sprintf("add %s: %s is already present", f, it))
				continue
			}
			list = append(list, it)
		}
		for _, it := range remove[f] {
			i := slices.Index(list, it)
			if i < 0 {
				noops = append(noops, fmt.Sprintf("remove %s: %s is not present", f, it))
				continue
			}
			list = slices.Delete(list, i, i+1)
		}
		if list == nil {
			list = []string{}
		}
		b, err := json.Marshal(list)
		if err != nil {
			return nil, err
		}
		doc[f] = b
	}
	if e := errorOf("/data", checkAgentFields(doc)); e != nil {
		return nil, e
	}
	return noops, nil
}

// Read returns a resource with its revision.
func (s *Service) Read(ctx context.Context, caller Caller, key Key) (Resource, error) {
	if err := s.authorize(ctx, caller, "read"); err != nil {
		return Resource{}, err
	}
	if _, err := checkKey(key.Kind, key.Ref); err != nil {
		return Resource{}, err
	}
	return s.repo.Get(ctx, key)
}

// Delete removes a resource; expected, when not AnyRevision, must equal the
// stored revision. Agents that mount a deleted MCP resource keep the
// reference; AgentMCPList and CheckAgent report it as unresolved.
func (s *Service) Delete(ctx context.Context, caller Caller, key Key, expected int64) error {
	if err := s.authorize(ctx, caller, "delete"); err != nil {
		return err
	}
	if _, err := checkKey(key.Kind, key.Ref); err != nil {
		return err
	}
	if expected < 0 {
		return invalid("/expected_revision", findcode.Request, "expected revision must be 1 or more, or 0 for none", "read the resource and send its revision")
	}
	if key.Kind == KindAgent && !caller.IsDirect() && !s.agentsMayChangePrivileges {
		res, err := s.repo.Get(ctx, key)
		if err != nil {
			return err
		}
		if err := s.checkAgentDelete(caller, res); err != nil {
			return err
		}
		if expected == AnyRevision {
			// Delete what was judged: a concurrent change is a conflict.
			expected = res.Revision
		}
	}
	return s.writer(caller, "delete").Delete(ctx, key, expected)
}

// List returns the resources of one kind sorted by reference; a non-empty
// category keeps only category/name references.
func (s *Service) List(ctx context.Context, caller Caller, kind Kind, category string) ([]Resource, error) {
	if err := s.authorize(ctx, caller, "list"); err != nil {
		return nil, err
	}
	if _, err := checkKey(kind, "x"); err != nil {
		return nil, err
	}
	if category != "" && (!validRef(category) || strings.Contains(category, "/")) {
		return nil, invalid("/category", findcode.Reference, "a category is one reference segment: 1 to 64 of lowercase letters, digits, '.', '_' and '-'", "correct the category")
	}
	return s.repo.List(ctx, kind, category)
}
