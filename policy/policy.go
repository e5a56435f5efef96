package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agtsdk/agt/internal/glob"
	"github.com/agtsdk/agt/internal/toolalias"
	"github.com/agtsdk/agt/run"
)

// Names recorded in Decision.By.
const (
	ByAutoAllow = "auto_allow"
	ByRules     = "rules"
	ByHuman     = "human"
	ByReview    = "review"
)

// Auto allows every call. Using it is an explicit choice: a Run without a
// Permission is refused.
type Auto struct{}

var _ run.Permission = Auto{}

// AutoAllow returns the policy that allows every validated call.
func AutoAllow() Auto { return Auto{} }

// Check implements run.Permission.
func (Auto) Check(context.Context, run.Request) (run.Decision, error) {
	return run.Decision{Verdict: run.Allow, By: ByAutoAllow, Reason: "explicit auto-allow"}, nil
}

// Rules decides by patterns over a call's source (its kind, server
// reference and tool name), never over alias text that two servers, or a
// server and a host tool, could share. A pattern is read in one of three
// forms:
//
//   - A pattern holding ':' matches the source ("mcp:notes:*",
//     "mcp:team/notes:search", "mcp:my.server:*", "host:deploy",
//     "framework:*"; see run.Source.String). It names any reference as
//     written.
//   - A pattern starting with "mcp_" names MCP tools by the parts of their
//     alias. "mcp__REF__TOOL" means the tools TOOL of the server whose
//     reference reads REF in aliases (see run.Alias: "/" as "_"): REF
//     is everything up to the first "__" after "mcp__" and is matched
//     against that whole reference part, TOOL against the tool's name (as
//     is, or as it reads in aliases). So "mcp__notes__*" is the tools of
//     server notes and of no other (not of "notes__x" or "notes_"), and
//     "mcp__notes__note_delete" matches that tool even when its alias was
//     shortened and hashed. "mcp__REF" alone means every tool of the
//     servers REF matches. "mcp_HASH__TOOL" is the same for a server whose
//     aliases carry its reference as a hash ("mcp_ddc1744aa2__*"): HASH is
//     matched against that hash ("mcp_*" is every server). An "mcp__"
//     pattern never reaches a host or framework tool; an "mcp_HASH" one
//     also matches a host or framework tool by its name, as below (a host
//     tool's name may start with "mcp_", never with "mcp__").
//   - Any other pattern is a name: it matches host and framework tools by
//     their name (which is their alias). It reaches an MCP tool only when
//     it is all '*' (every call), or as a Deny or Ask pattern (below).
//
// So an Allow pattern never reaches a second server, and no server can
// name a tool to fit one: Allow "*_search", written for host tools, does
// not allow an MCP tool "x_search" whatever its server.
//
// Deny and Ask err towards matching: their "mcp__" patterns also match
// REF against the reference as written, and at every "__", so
// "mcp__my_server__*" denies server my_server (whose aliases carry a hash)
// as well as my/server; their name patterns also match an MCP tool's alias
// and its tool name, so Deny "*delete*" denies every tool whose alias or
// name holds "delete", of every server.
//
// A pattern is matched whole, in the one wildcard dialect of agt (the
// same as an MCP server's enabled_tools, resource.MCPServer.EnabledTools): "*"
// matches any run of characters, "?" exactly one, every other character
// itself; there are no escapes. Deny wins over Ask, Ask over Allow; a call
// no pattern matches gets Default. The zero Rules asks about everything.
// Rules is a value: safe for concurrent use as long as its slices are not
// changed.
//
// A pattern that could never match as written is a mistake: Validate
// names it and the form to write, and run.New calls it (through First and
// Chain too), so such Rules never start a Run. Used without validation,
// a Deny or Ask pattern that cannot be read at all (empty, "mcp__" with
// no reference, a source pattern of no known form, '[', ']' or '\')
// matches every call: a misspelled deny denies, it never allows; such an
// Allow pattern matches nothing.
type Rules struct {
	// Allow lists patterns of calls to allow; nil means none.
	Allow []string
	// Deny lists patterns of calls to deny; nil means none.
	Deny []string
	// Ask lists patterns of calls to leave to the next policy (run.Ask);
	// nil means none.
	Ask []string
	// Default is the verdict for calls no pattern matches; the zero value
	// means run.Ask.
	Default run.Verdict
}

var _ run.Permission = Rules{}

// Check implements run.Permission.
func (r Rules) Check(_ context.Context, req run.Request) (run.Decision, error) {
	src := "" // built on first use: most rules name aliases
	for _, set := range [...]struct {
		verdict  run.Verdict
		patterns []string
	}{{run.Deny, r.Deny}, {run.Ask, r.Ask}, {run.Allow, r.Allow}} {
		closed := set.verdict != run.Allow // a Deny or Ask errs towards matching
		for _, p := range set.patterns {
			var hit bool
			switch {
			case unreadable(p):
				hit = closed
			case strings.IndexByte(p, ':') >= 0:
				if src == "" {
					src = req.Source.String()
				}
				hit = Match(p, src)
			case req.Source.Kind == run.SourceMCP:
				hit = matchMCP(p, req, closed)
			default: // a host or framework tool: its alias is its name
				hit = !strings.HasPrefix(p, mcpAliasPrefix) && Match(p, req.Alias)
			}
			if hit {
				return run.Decision{Verdict: set.verdict, By: ByRules, Reason: string(set.verdict) + " rule " + p}, nil
			}
		}
	}
	v := r.Default
	if v == "" {
		v = run.Ask
	}
	return run.Decision{Verdict: v, By: ByRules, Reason: "no rule matched"}, nil
}

// Validate reports every pattern of r that can never match a call as it
// is written, with the form to write instead: an empty pattern, a source
// pattern of no known kind or an MCP one without its tool part, and an
// alias-style pattern whose reference part no alias can hold (a '.' or
// '/', which aliases never show, or a character no reference has), and a
// pattern holding '[', ']' or '\' (no name does: they are neither
// wildcards nor escapes). It
// also refuses a Default other than Allow, Deny, Ask or empty. run.New
// calls it before a Run starts.
func (r Rules) Validate() error {
	var errs []error
	for _, set := range [...]struct {
		field    string
		patterns []string
	}{{"Deny", r.Deny}, {"Ask", r.Ask}, {"Allow", r.Allow}} {
		for i, p := range set.patterns {
			if err := patternError(p); err != nil {
				errs = append(errs, fmt.Errorf("policy: Rules.%s[%d] %q %w", set.field, i, p, err))
			}
		}
	}
	switch r.Default {
	case "", run.Allow, run.Deny, run.Ask:
	default:
		errs = append(errs, errors.New("policy: Rules.Default is not a verdict: set run.Allow, run.Deny, run.Ask, or leave it empty for run.Ask"))
	}
	return errors.Join(errs...)
}

// unreadable reports a pattern Check cannot interpret at all (Validate
// says why); it allocates nothing, since Check asks it of every pattern.
func unreadable(p string) bool {
	if p == "" || strings.ContainsAny(p, `[]\`) {
		return true
	}
	if kind, rest, ok := strings.Cut(p, ":"); ok {
		if strings.IndexByte(kind, '*') >= 0 {
			return false
		}
		switch run.SourceKind(kind) {
		case run.SourceMCP:
			return strings.IndexByte(rest, ':') < 0 && strings.IndexByte(rest, '*') < 0
		case run.SourceHost, run.SourceFramework:
			return false
		}
		return true
	}
	if !strings.HasPrefix(p, mcpAliasPrefix) {
		return false
	}
	refPat, _, _ := strings.Cut(p[len(mcpAliasPrefix):], "__")
	if refPat == "" {
		return true
	}
	for i := 0; i < len(refPat); i++ {
		if c := refPat[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/' || c == '*') {
			return true
		}
	}
	return false
}

// patternError says why p can never match as written, and what to write.
func patternError(p string) error {
	if p == "" {
		return errors.New(`matches no call: remove it, or write "*" for every call`)
	}
	if strings.ContainsAny(p, `[]\`) {
		return errors.New(`can never match: only * and ? are wildcards (no character classes, no escapes), and no name holds [, ] or \`)
	}
	if kind, rest, ok := strings.Cut(p, ":"); ok {
		if unreadable(p) {
			if run.SourceKind(kind) == run.SourceMCP {
				return fmt.Errorf(`can never match: an MCP source reads mcp:REFERENCE:TOOL; write "mcp:%s:*" for every tool of the server`, rest)
			}
			return fmt.Errorf(`can never match: a source pattern starts with %q, %q or %q`, run.SourceMCP+":", run.SourceHost+":", run.SourceFramework+":")
		}
		return nil
	}
	if !strings.HasPrefix(p, mcpAliasPrefix) {
		return nil
	}
	refPat, toolPat, found := strings.Cut(p[len(mcpAliasPrefix):], "__")
	if !found {
		toolPat = "*"
	}
	if refPat == "" {
		return errors.New(`names no server: write "mcp__REFERENCE__TOOL", or "mcp:REFERENCE:TOOL" with the reference as registered`)
	}
	if unreadable(p) {
		return errors.New(`can never match: references are lowercase letters, digits, '.', '_', '-' and one '/'; correct the reference`)
	}
	if strings.ContainsAny(refPat, "./") {
		fix := fmt.Sprintf(`write the source form "mcp:%s:%s"`, refPat, toolPat)
		if !strings.Contains(refPat, ".") {
			fix = fmt.Sprintf(`write "mcp__%s__%s" (aliases write '/' as '_'), or %s`, strings.ReplaceAll(refPat, "/", "_"), toolPat, fix[len("write "):])
		}
		return fmt.Errorf(`can never match an alias: aliases never show '.' or '/' (a reference with '.' or '_' in a name is carried as a hash); %s`, fix)
	}
	return nil
}

const mcpAliasPrefix = toolalias.Prefix

// hashedAliasPrefix starts the aliases of a server whose reference they
// carry as a hash (run.Alias); a hex digit follows, never "_".
const hashedAliasPrefix = toolalias.HashedPrefix

// matchMCP matches a pattern without ':' against a call of an MCP tool
// (see Rules): an alias-style pattern by the parts of the source, a name
// pattern only when it is all '*' or, for Deny and Ask (closed), against
// the alias and the tool's name.
func matchMCP(pattern string, req run.Request, closed bool) bool {
	src := req.Source
	var refPart, rest string
	switch {
	case strings.HasPrefix(pattern, mcpAliasPrefix):
		refPart, rest = toolalias.RefPart(string(src.Ref)), pattern[len(mcpAliasPrefix):]
	case strings.HasPrefix(pattern, hashedAliasPrefix):
		// What the alias holds between "mcp_" and the first "__": the
		// hash of the reference, or "_" and its readable part.
		after, _ := strings.CutPrefix(req.Alias, hashedAliasPrefix)
		refPart, _, _ = strings.Cut(after, "__")
		rest = pattern[len(hashedAliasPrefix):]
	case strings.Trim(pattern, "*") == "":
		return true
	default:
		return closed && (Match(pattern, req.Alias) || Match(pattern, src.Tool))
	}
	try := func(refPat, toolPat string) bool {
		if !Match(refPat, refPart) && !(closed && Match(refPat, string(src.Ref))) {
			return false
		}
		return Match(toolPat, src.Tool) || Match(toolPat, toolalias.ToolPart(src.Tool))
	}
	if !closed {
		refPat, toolPat, found := strings.Cut(rest, "__")
		if !found {
			toolPat = "*"
		}
		return try(refPat, toolPat)
	}
	// A Deny or Ask also tries every "__" as the end of the reference
	// part, so a rule meant for a server whose reference holds "__" still
	// reaches it.
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == '_' && rest[i+1] == '_' && try(rest[:i], rest[i+2:]) {
			return true
		}
	}
	return try(rest, "*")
}

// Match reports whether name matches pattern in agt's one wildcard
// dialect, the one of resource.MCPServer.EnabledTools: "*" matches any run of
// characters (including none), "?" exactly one character, every other
// character itself; there are no escapes. A name longer than 1 KiB
// matches no pattern, not even "*" (agt's own names are shorter: a source
// "mcp:REF:TOOL" is at most 390 bytes): a host that matches names of its
// own for a deny rule refuses a longer name first.
func Match(pattern, name string) bool { return glob.Match(pattern, name) }

// Approver asks a person whether a call may run, showing the alias, the
// source and the arguments (req.Arguments; valid for the tool's schema). It
// returns the answer and, optionally, why. An error fails the call.
type Approver func(ctx context.Context, req run.Request) (approved bool, reason string, err error)

// HumanPolicy asks an Approver, one question at a time.
type HumanPolicy struct {
	approve Approver
	turn    chan struct{} // one question at a time
}

var _ run.Permission = (*HumanPolicy)(nil)

// Human returns a policy that asks approver about every call. A batch's
// calls run concurrently, but the questions are put one at a time, in the
// order the calls reach the policy; a call whose context ends while it waits
// fails with the context's error. A nil approver denies everything.
func Human(approver Approver) *HumanPolicy {
	return &HumanPolicy{approve: approver, turn: make(chan struct{}, 1)}
}

// Check implements run.Permission.
func (h *HumanPolicy) Check(ctx context.Context, req run.Request) (run.Decision, error) {
	if h.approve == nil {
		return run.Decision{Verdict: run.Deny, By: ByHuman, Reason: "no approver configured"}, nil
	}
	notAsked := func() (run.Decision, error) {
		return run.Decision{Verdict: run.Deny, By: ByHuman, Reason: "not asked: " + ctx.Err().Error()}, ctx.Err()
	}
	if ctx.Err() != nil {
		return notAsked() // a select below could still pick the free turn
	}
	select {
	case h.turn <- struct{}{}:
	case <-ctx.Done():
		return notAsked()
	}
	defer func() { <-h.turn }()
	if ctx.Err() != nil { // ended while it waited: the turn and ctx.Done were both ready
		return notAsked()
	}
	ok, reason, err := h.approve(ctx, req)
	if err != nil {
		return run.Decision{Verdict: run.Deny, By: ByHuman, Reason: "approval failed"}, err
	}
	if ok {
		return run.Decision{Verdict: run.Allow, By: ByHuman, Reason: reason}, nil
	}
	return run.Decision{Verdict: run.Deny, By: ByHuman, Reason: reason}, nil
}

// Reviewer judges a call: a model, a rules engine, anything. It returns
// run.Allow, run.Deny, or run.Ask to abstain, and optionally why. An error
// fails the call.
type Reviewer func(ctx context.Context, req run.Request) (verdict run.Verdict, reason string, err error)

// ReviewPolicy asks a Reviewer about every call, concurrently.
type ReviewPolicy struct {
	review Reviewer
}

var _ run.Permission = (*ReviewPolicy)(nil)

// Review returns a policy that asks reviewer about every call. The reviewer
// is called concurrently for the calls of a batch. A nil reviewer abstains.
func Review(reviewer Reviewer) *ReviewPolicy { return &ReviewPolicy{review: reviewer} }

// Check implements run.Permission.
func (p *ReviewPolicy) Check(ctx context.Context, req run.Request) (run.Decision, error) {
	if p.review == nil {
		return run.Decision{Verdict: run.Ask, By: ByReview, Reason: "no reviewer configured"}, nil
	}
	v, reason, err := p.review(ctx, req)
	if err != nil {
		return run.Decision{Verdict: run.Deny, By: ByReview, Reason: "review failed"}, err
	}
	switch v {
	case run.Allow, run.Deny:
	default:
		v = run.Ask
	}
	return run.Decision{Verdict: v, By: ByReview, Reason: reason}, nil
}

// errNilPolicy fails the calls of a Chain or First given a nil policy.
var errNilPolicy = errors.New("policy: a nil run.Permission was given to Chain or First")

// ChainPolicy requires every policy's consent; see Chain.
type ChainPolicy struct{ policies []run.Permission }

var _ run.Permission = (*ChainPolicy)(nil)

// Chain returns a policy that asks each policy in order: the first Deny (or
// error, which reads as Deny) stops the chain and decides; Ask abstains; the result is Allow when
// at least one policy allowed and none denied, else Ask. Chain(Rules{...},
// Human(f)) makes the rules able to veto and the person confirm the rest.
func Chain(policies ...run.Permission) *ChainPolicy {
	return &ChainPolicy{policies: append([]run.Permission(nil), policies...)}
}

// Check implements run.Permission.
func (c *ChainPolicy) Check(ctx context.Context, req run.Request) (run.Decision, error) {
	var allowed []run.Decision
	for _, p := range c.policies {
		if p == nil {
			return run.Decision{Verdict: run.Deny, By: "chain"}, errNilPolicy
		}
		d, err := p.Check(ctx, req)
		if err != nil || d.Verdict == run.Deny {
			d.Verdict = run.Deny // an error never allows
			return d, err
		}
		if d.Verdict == run.Allow {
			allowed = append(allowed, d)
		}
	}
	switch len(allowed) {
	case 0:
		return run.Decision{Verdict: run.Ask, By: "chain", Reason: "no policy allowed the call"}, nil
	case 1:
		return allowed[0], nil
	}
	by := make([]string, len(allowed))
	reasons := make([]string, 0, len(allowed))
	for i, d := range allowed {
		by[i] = d.By
		if d.Reason != "" {
			reasons = append(reasons, d.Reason)
		}
	}
	return run.Decision{Verdict: run.Allow, By: strings.Join(by, "+"), Reason: strings.Join(reasons, "; ")}, nil
}

// Validate validates every policy of the chain that has a Validate method
// (Rules, First, Chain), and refuses a nil one; run.New calls it.
func (c *ChainPolicy) Validate() error { return validateAll("Chain", c.policies) }

// validateAll validates each policy that can say it is misconfigured.
func validateAll(name string, policies []run.Permission) error {
	var errs []error
	for i, p := range policies {
		if p == nil {
			errs = append(errs, fmt.Errorf("policy: %s policy %d is nil: pass a run.Permission, such as policy.AutoAllow()", name, i))
			continue
		}
		if v, ok := p.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// FirstPolicy lets the first policy with an opinion decide; see First.
type FirstPolicy struct{ policies []run.Permission }

var _ run.Permission = (*FirstPolicy)(nil)

// First returns a policy that asks each policy in order until one returns
// Allow or Deny (or an error, which reads as Deny), which decides; when all abstain the result is
// Ask (which a Run treats as denied). First(Rules{...}, Human(f)) lets the
// rules settle what they know and asks a person about the rest.
func First(policies ...run.Permission) *FirstPolicy {
	return &FirstPolicy{policies: append([]run.Permission(nil), policies...)}
}

// Check implements run.Permission.
func (f *FirstPolicy) Check(ctx context.Context, req run.Request) (run.Decision, error) {
	for _, p := range f.policies {
		if p == nil {
			return run.Decision{Verdict: run.Deny, By: "first"}, errNilPolicy
		}
		d, err := p.Check(ctx, req)
		if err != nil {
			d.Verdict = run.Deny // an error never allows
			return d, err
		}
		if d.Verdict == run.Allow || d.Verdict == run.Deny {
			return d, nil
		}
	}
	return run.Decision{Verdict: run.Ask, By: "first", Reason: "no policy decided"}, nil
}

// Validate validates every policy of First that has a Validate method
// (Rules, First, Chain), and refuses a nil one; run.New calls it.
func (f *FirstPolicy) Validate() error { return validateAll("First", f.policies) }
