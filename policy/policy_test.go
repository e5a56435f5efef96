package policy_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
)

func req(alias string, src run.Source) run.Request {
	return run.Request{CallID: "c", Agent: "writer", Alias: alias, Source: src}
}

var (
	notesSearch = req("mcp__notes__search", run.Source{Kind: run.SourceMCP, Ref: "notes", Tool: "search"})
	notesDelete = req("mcp__notes__note_delete", run.Source{Kind: run.SourceMCP, Ref: "notes", Tool: "note_delete"})
	teamSearch  = req("mcp__team_notes__search__0123456789", run.Source{Kind: run.SourceMCP, Ref: "team/notes", Tool: "search"})
	hostDeploy  = req("deploy", run.Source{Kind: run.SourceHost, Tool: "deploy"})
	fwWrite     = req("resource_write", run.Source{Kind: run.SourceFramework, Tool: "resource_write"})
)

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"mcp__notes__*", "mcp__notes__search", true},
		{"mcp__notes__*", "mcp__notesx__search", false},
		{"*", "", true},
		{"", "", true},
		{"", "x", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyyd", false},
		{"*delete*", "mcp__notes__note_delete", true},
		{"mcp:team/notes:*", "mcp:team/notes:search", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
		{"**", "anything", true},
		{"a*", "b", false},
		// Issue 27: one dialect with resource's tool patterns (MCPServer.ToolEnabled): "?" is
		// one character, and there is no escape for a literal one.
		{"note?", "notes", true},
		{"note?", "note", false},
		{"note?", "notes2", false},
		{"?", "é", true},
		{"a?b", "a?b", true},
		{"a?b", "axb", true},
		{`a\?b`, "a?b", false}, // '\' is no escape: it matches itself
		{"*?", "", false},
		{"*?", "x", true},
	}
	for _, tt := range tests {
		if got := policy.Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

// SPEC R4.2: rules by alias or source pattern; deny wins.
func TestRules(t *testing.T) {
	t.Parallel()
	rules := policy.Rules{
		Allow: []string{"mcp__notes__*", "mcp:team/notes:*", "host:*"},
		Deny:  []string{"*delete*"},
		Ask:   []string{"host:deploy"},
	}
	tests := []struct {
		name string
		req  run.Request
		want run.Verdict
	}{
		{"allowed by alias", notesSearch, run.Allow},
		{"deny wins over allow", notesDelete, run.Deny},
		{"allowed by source (hashed alias)", teamSearch, run.Allow},
		{"ask wins over allow", hostDeploy, run.Ask},
		{"no rule: default ask", fwWrite, run.Ask},
	}
	for _, tt := range tests {
		d, err := rules.Check(context.Background(), tt.req)
		if err != nil || d.Verdict != tt.want || d.By != policy.ByRules || d.Reason == "" {
			t.Errorf("%s: got %+v, %v; want verdict %q by rules with a reason", tt.name, d, err, tt.want)
		}
	}
	d, _ := policy.Rules{Default: run.Deny}.Check(context.Background(), notesSearch)
	if d.Verdict != run.Deny {
		t.Errorf("Default deny: got %q", d.Verdict)
	}
}

func TestAutoAllow(t *testing.T) {
	t.Parallel()
	d, err := policy.AutoAllow().Check(context.Background(), notesDelete)
	if err != nil || d.Verdict != run.Allow || d.By != policy.ByAutoAllow {
		t.Errorf("AutoAllow: %+v %v", d, err)
	}
}

// Human asks one question at a time, with the alias, source and arguments.
// In a synctest bubble: the first question is held until every other
// caller is blocked, which shows that none could reach the approver.
func TestHumanAsksOneAtATime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testHumanAsksOneAtATime)
}

func testHumanAsksOneAtATime(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	var mu sync.Mutex
	var asked []string
	var first atomic.Bool
	h := policy.Human(func(ctx context.Context, r run.Request) (bool, string, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		if first.CompareAndSwap(false, true) {
			// Hold the first question until every other caller is blocked:
			// one that was not made to wait is in the approver by then,
			// and caught.
			synctest.Wait()
		}
		mu.Lock()
		asked = append(asked, r.Source.String()+" "+string(r.Arguments))
		mu.Unlock()
		return r.Source.Tool != "note_delete", "checked by a test", nil
	})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := notesSearch
			if i%2 == 1 {
				r = notesDelete
			}
			r.Arguments = []byte(`{"q":1}`)
			d, err := h.Check(context.Background(), r)
			want := run.Allow
			if i%2 == 1 {
				want = run.Deny
			}
			if err != nil || d.Verdict != want || d.By != policy.ByHuman {
				t.Errorf("call %d: %+v %v, want %q by human", i, d, err, want)
			}
		}()
	}
	wg.Wait()
	if maxInFlight.Load() != 1 {
		t.Errorf("the approver was asked %d questions at once, want 1", maxInFlight.Load())
	}
	if len(asked) != 16 || asked[0] == "" {
		t.Errorf("asked %d questions: %q", len(asked), asked)
	}

	// A call whose context ends while it waits for its turn is not asked.
	block, holding := make(chan struct{}), make(chan struct{})
	slow := policy.Human(func(ctx context.Context, r run.Request) (bool, string, error) {
		close(holding)
		<-block
		return true, "", nil
	})
	done := make(chan struct{})
	go func() { defer close(done); _, _ = slow.Check(context.Background(), notesSearch) }()
	<-holding // the first question holds the turn
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := slow.Check(ctx, notesSearch)
	close(block)
	<-done
	if !errors.Is(err, context.Canceled) || d.Verdict == run.Allow {
		t.Errorf("waiting with a cancelled context: %+v %v", d, err)
	}
}

// A call whose context has ended is not put to the person, even when no
// other question is waiting.
func TestHumanDoesNotAskForEndedCalls(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	h := policy.Human(func(context.Context, run.Request) (bool, string, error) {
		asked.Add(1)
		return true, "", nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 32 { // the turn is free: a select between it and ctx.Done would pick either
		d, err := h.Check(ctx, notesSearch)
		if !errors.Is(err, context.Canceled) || d.Verdict != run.Deny {
			t.Fatalf("an ended call: %+v %v, want a deny with context.Canceled", d, err)
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the person was asked %d times about calls whose context had ended", n)
	}
}

func TestReview(t *testing.T) {
	t.Parallel()
	boom := errors.New("model unavailable")
	tests := []struct {
		name     string
		reviewer policy.Reviewer
		want     run.Verdict
		err      error
	}{
		{"allow", func(context.Context, run.Request) (run.Verdict, string, error) { return run.Allow, "fine", nil }, run.Allow, nil},
		{"deny", func(context.Context, run.Request) (run.Verdict, string, error) { return run.Deny, "risky", nil }, run.Deny, nil},
		{"abstain", func(context.Context, run.Request) (run.Verdict, string, error) { return "", "", nil }, run.Ask, nil},
		{"unknown verdict abstains", func(context.Context, run.Request) (run.Verdict, string, error) { return "maybe", "", nil }, run.Ask, nil},
		{"error never allows", func(context.Context, run.Request) (run.Verdict, string, error) { return run.Allow, "", boom }, run.Deny, boom},
		{"nil reviewer abstains", nil, run.Ask, nil},
	}
	for _, tt := range tests {
		d, err := policy.Review(tt.reviewer).Check(context.Background(), notesSearch)
		if d.Verdict != tt.want || !errors.Is(err, tt.err) || d.By != policy.ByReview {
			t.Errorf("%s: %+v %v, want %q %v", tt.name, d, err, tt.want, tt.err)
		}
	}
}

// permissionFunc adapts a function to run.Permission.
type permissionFunc func(ctx context.Context, req run.Request) (run.Decision, error)

func (f permissionFunc) Check(ctx context.Context, req run.Request) (run.Decision, error) {
	return f(ctx, req)
}

func fixed(v run.Verdict, by string) run.Permission {
	return permissionFunc(func(context.Context, run.Request) (run.Decision, error) {
		return run.Decision{Verdict: v, By: by, Reason: by + " says " + string(v)}, nil
	})
}

func TestChainAndFirst(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	failing := permissionFunc(func(context.Context, run.Request) (run.Decision, error) { return run.Decision{}, boom })
	tests := []struct {
		name   string
		p      run.Permission
		want   run.Verdict
		wantBy string
		err    error
	}{
		{"chain: all allow", policy.Chain(fixed(run.Allow, "a"), fixed(run.Allow, "b")), run.Allow, "a+b", nil},
		{"chain: a deny vetoes", policy.Chain(fixed(run.Allow, "a"), fixed(run.Deny, "b")), run.Deny, "b", nil},
		{"chain: ask abstains", policy.Chain(fixed(run.Ask, "a"), fixed(run.Allow, "b")), run.Allow, "b", nil},
		{"chain: all abstain", policy.Chain(fixed(run.Ask, "a")), run.Ask, "chain", nil},
		{"chain: empty", policy.Chain(), run.Ask, "chain", nil},
		{"chain: error stops", policy.Chain(fixed(run.Allow, "a"), failing, fixed(run.Allow, "c")), "", "", boom},
		{"first: first opinion", policy.First(fixed(run.Ask, "a"), fixed(run.Deny, "b"), fixed(run.Allow, "c")), run.Deny, "b", nil},
		{"first: allow", policy.First(fixed(run.Allow, "a"), fixed(run.Deny, "b")), run.Allow, "a", nil},
		{"first: none decides", policy.First(fixed(run.Ask, "a")), run.Ask, "first", nil},
		{"first: error", policy.First(failing, fixed(run.Allow, "b")), "", "", boom},
	}
	for _, tt := range tests {
		d, err := tt.p.Check(context.Background(), notesSearch)
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.err)
			continue
		}
		if err != nil {
			if d.Verdict == run.Allow {
				t.Errorf("%s: an error came with Allow", tt.name)
			}
			continue
		}
		if diff := cmp.Diff(tt.want, d.Verdict); diff != "" || d.By != tt.wantBy {
			t.Errorf("%s: got %+v, want %q by %q", tt.name, d, tt.want, tt.wantBy)
		}
	}
}

// A nil policy in a combinator fails the call instead of panicking or
// allowing it.
func TestNilPolicyNeverAllows(t *testing.T) {
	t.Parallel()
	for _, p := range []run.Permission{policy.Chain(policy.AutoAllow(), nil), policy.First(nil, policy.AutoAllow())} {
		d, err := p.Check(context.Background(), notesSearch)
		if err == nil || d.Verdict == run.Allow {
			t.Errorf("%T with a nil policy: %+v %v", p, d, err)
		}
	}
}

// A failing policy never reads as Allow through a combinator, whatever
// Decision it returned with its error (a wrapper that looks only at the
// verdict must not be fooled).
func TestCombinatorErrorsNeverAllow(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	allowingFailure := permissionFunc(func(context.Context, run.Request) (run.Decision, error) {
		return run.Decision{Verdict: run.Allow, By: "flaky"}, boom
	})
	for _, p := range []run.Permission{policy.Chain(allowingFailure), policy.First(allowingFailure), policy.Chain(policy.AutoAllow(), allowingFailure)} {
		d, err := p.Check(context.Background(), notesSearch)
		if !errors.Is(err, boom) || d.Verdict != run.Deny || d.By != "flaky" {
			t.Errorf("%T: %+v %v, want a deny by flaky with the error", p, d, err)
		}
	}
}

// Issue 14 §6: alias-style patterns match by source. A pattern for one
// server never reaches another whose alias shares its prefix, and a Deny
// written with a long tool's plain alias matches its shortened, hashed
// alias.
func TestAliasPatternsMatchBySource(t *testing.T) {
	t.Parallel()
	mcpReq := func(ref resource.Ref, tool string) run.Request {
		return req(run.Alias(ref, tool), run.Source{Kind: run.SourceMCP, Ref: ref, Tool: tool})
	}
	longTool := "read_text_file_with_a_name_long_enough_to_be_shortened_in_its_alias"
	rules := policy.Rules{
		Allow:   []string{"mcp__notes__*", "mcp__team_notes__search", "mcp__fs__*"},
		Deny:    []string{"mcp__fs__" + longTool},
		Default: run.Deny,
	}
	if a := run.Alias("fs", longTool); strings.HasSuffix(a, longTool) {
		t.Fatalf("the long tool's alias %q was not shortened: the test needs one that is", a)
	}
	for _, tt := range []struct {
		ref  resource.Ref
		tool string
		want run.Verdict
	}{
		{"notes", "search", run.Allow},
		{"notes__x", "search", run.Deny},
		{"notes_", "search", run.Deny},
		{"notes__delete", "anything", run.Deny},
		{"notesx", "search", run.Deny},
		{"team/notes", "search", run.Allow},
		{"team/notes", "delete", run.Deny},
		{"fs", "list", run.Allow},
		{"fs", longTool, run.Deny},
	} {
		r := mcpReq(tt.ref, tt.tool)
		d, err := rules.Check(context.Background(), r)
		if err != nil || d.Verdict != tt.want {
			t.Errorf("%s (%s:%s): %s (%s); want %s", r.Alias, tt.ref, tt.tool, d.Verdict, d.Reason, tt.want)
		}
	}
	// A host tool whose name looks like an alias is not an MCP source.
	if d, _ := rules.Check(context.Background(), req("mcp__notes__x", run.Source{Kind: run.SourceHost, Tool: "mcp__notes__x"})); d.Verdict != run.Deny {
		t.Errorf("a non-MCP source matched an alias-style pattern: %+v", d)
	}
}

// Issue 27: rules about MCP tools match by source whatever the pattern
// looks like. A name pattern written for host tools ("*_search") used to
// match alias text, so a server could name a tool to fit it
// ("mcp__evil__x_search") and be allowed; now an Allow name pattern
// never reaches an MCP tool (only "*" does), while a Deny or Ask one
// still errs towards matching.
func TestNamePatternsDoNotReachServers(t *testing.T) {
	t.Parallel()
	mcpReq := func(ref resource.Ref, tool string) run.Request {
		return req(run.Alias(ref, tool), run.Source{Kind: run.SourceMCP, Ref: ref, Tool: tool})
	}
	host := func(name string) run.Request { return req(name, run.Source{Kind: run.SourceHost, Tool: name}) }
	hostRules := policy.Rules{Allow: []string{"*_search", "*__search", "web?search"}, Default: run.Deny}
	hashed := run.Alias("my.server", "x")
	hashPrefix := hashed[:strings.Index(hashed[len("mcp_"):], "__")+len("mcp_")]
	for _, tt := range []struct {
		name  string
		rules policy.Rules
		req   run.Request
		want  run.Verdict
	}{
		{"the host tool it was written for", hostRules, host("web_search"), run.Allow},
		{"a host tool with __", hostRules, host("db__search"), run.Allow},
		{"a server's tool named to fit", hostRules, mcpReq("evil", "x_search"), run.Deny},
		{"a server's tool named to fit the __ form", hostRules, mcpReq("evil", "search"), run.Deny},
		{"a hashed server's tool named to fit", hostRules, mcpReq("ev.il", "x_search"), run.Deny},
		{"a ? pattern and a server", hostRules, mcpReq("web", "search"), run.Deny},
		{"* allows every call", policy.Rules{Allow: []string{"*"}, Default: run.Deny}, mcpReq("notes", "search"), run.Allow},
		{"** too", policy.Rules{Allow: []string{"**"}, Default: run.Deny}, mcpReq("notes", "search"), run.Allow},
		{"mcp_* is every server", policy.Rules{Allow: []string{"mcp_*"}, Default: run.Deny}, mcpReq("notes", "search"), run.Allow},
		{"mcp_* hashed too", policy.Rules{Allow: []string{"mcp_*"}, Default: run.Deny}, mcpReq("my.server", "search"), run.Allow},
		{"mcp__* no host tool", policy.Rules{Allow: []string{"mcp__*"}, Default: run.Deny}, host("mcp_x"), run.Deny},
		{"a host tool named mcp_x", policy.Rules{Allow: []string{"mcp_x"}, Default: run.Deny}, host("mcp_x"), run.Allow},
		{"the hashed form names its server", policy.Rules{Allow: []string{hashPrefix + "__*"}, Default: run.Deny}, mcpReq("my.server", "y"), run.Allow},
		{"and no other", policy.Rules{Allow: []string{hashPrefix + "__*"}, Default: run.Deny}, mcpReq("my.server2", "y"), run.Deny},
		{"nor a readable one", policy.Rules{Allow: []string{hashPrefix + "__*"}, Default: run.Deny}, mcpReq("notes", "y"), run.Deny},
		{"the hashed form by tool", policy.Rules{Allow: []string{hashPrefix + "__x"}, Default: run.Deny}, mcpReq("my.server", "y"), run.Deny},
		{"a deny name pattern reaches servers", policy.Rules{Deny: []string{"*delete*"}, Allow: []string{"*"}}, mcpReq("notes", "note_delete"), run.Deny},
		{"by the tool's name too", policy.Rules{Deny: []string{"note.delete"}, Allow: []string{"*"}}, mcpReq("notes", "note.delete"), run.Deny},
		{"a deny name pattern with __", policy.Rules{Deny: []string{"*__delete"}, Allow: []string{"*"}}, mcpReq("any", "delete"), run.Deny},
		{"an ask name pattern reaches servers", policy.Rules{Ask: []string{"*_search"}, Allow: []string{"*"}}, mcpReq("evil", "x_search"), run.Ask},
		{"a deny name pattern keeps to its match", policy.Rules{Deny: []string{"*delete*"}, Allow: []string{"*"}}, mcpReq("notes", "search"), run.Allow},
	} {
		d, err := tt.rules.Check(context.Background(), tt.req)
		if err != nil || d.Verdict != tt.want {
			t.Errorf("%s (%s): %s (%s), %v; want %s", tt.name, tt.req.Alias, d.Verdict, d.Reason, err, tt.want)
		}
	}
}

// Issue 23 item 8: Validate names every pattern that can never match as
// written, and the form to write; what it accepts keeps working.
func TestRulesValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern string
		want    string // in the error; "" means valid
	}{
		{"mcp__notes__*", ""},
		{"mcp__team_notes__search", ""},
		{"mcp__my_server__*", ""}, // my/server's aliases; a Deny also reaches my_server
		{"mcp:my.server:*", ""},
		{"mcp:team/notes:search", ""},
		{"mcp:*", ""},
		{"host:deploy", ""},
		{"framework:*", ""},
		{"*delete*", ""},
		{"mcp_ddc1744aa2__*", ""},
		{"mcp__my.server__*", `write the source form "mcp:my.server:*"`},
		{"mcp__team/notes__search", `write "mcp__team_notes__search"`},
		{"mcp__team/notes", `"mcp:team/notes:*"`},
		{"mcp__Notes__*", "lowercase"},
		{"mcp____x", "names no server"},
		{"mcp:notes", `write "mcp:notes:*"`},
		{"tool:deploy", "a source pattern starts with"},
		{"", "matches no call"},
		{"note?", ""},
		{"note_[cd]*", "no character classes, no escapes"},
		{`a\*`, "no character classes, no escapes"},
	} {
		for _, field := range []string{"Deny", "Ask", "Allow"} {
			var r policy.Rules
			switch field {
			case "Deny":
				r.Deny = []string{tt.pattern}
			case "Ask":
				r.Ask = []string{tt.pattern}
			default:
				r.Allow = []string{tt.pattern}
			}
			err := r.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s %q: %v, want valid", field, tt.pattern, err)
			case tt.want != "" && err == nil:
				t.Errorf("%s %q: valid, want an error with %q", field, tt.pattern, tt.want)
			case tt.want != "" && (!strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "Rules."+field+"[0]")):
				t.Errorf("%s %q: %v; want it to name Rules.%s[0] and %q", field, tt.pattern, err, field, tt.want)
			}
			// Chained, the same answer.
			if cerr := policy.Chain(policy.AutoAllow(), policy.First(r)).Validate(); (cerr == nil) != (err == nil) {
				t.Errorf("%s %q: Chain(First(rules)).Validate() = %v, Rules.Validate() = %v", field, tt.pattern, cerr, err)
			}
		}
	}
	if err := (policy.Rules{Default: "maybe"}).Validate(); err == nil {
		t.Error("a Default that is not a verdict validated")
	}
	if err := policy.First(nil).Validate(); err == nil {
		t.Error("First(nil) validated")
	}
}

// Issue 23 item 8: Rules used without Validate fail closed. A Deny or Ask
// pattern that cannot be read matches every call; one written with the
// reference as registered reaches that server (and, at worst, more); an
// Allow pattern stays exact, so it never reaches a second server.
func TestUnvalidatedRulesFailClosed(t *testing.T) {
	t.Parallel()
	mcpReq := func(ref resource.Ref, tool string) run.Request {
		return req(run.Alias(ref, tool), run.Source{Kind: run.SourceMCP, Ref: ref, Tool: tool})
	}
	for _, tt := range []struct {
		name  string
		rules policy.Rules
		req   run.Request
		want  run.Verdict
	}{
		{"unreadable deny", policy.Rules{Deny: []string{"mcp:notes"}, Allow: []string{"*"}}, hostDeploy, run.Deny},
		{"empty deny", policy.Rules{Deny: []string{""}, Allow: []string{"*"}}, notesSearch, run.Deny},
		{"unknown source kind in ask", policy.Rules{Ask: []string{"tool:x"}, Allow: []string{"*"}}, notesSearch, run.Ask},
		{"character class in deny", policy.Rules{Deny: []string{"note_[cd]*"}, Allow: []string{"*"}}, hostDeploy, run.Deny},
		{"character class in allow", policy.Rules{Allow: []string{"de[p]loy"}, Default: run.Deny}, hostDeploy, run.Deny},
		{"unreadable allow", policy.Rules{Allow: []string{"mcp____*"}, Default: run.Deny}, mcpReq("my_server", "x"), run.Deny},
		{"deny by written ref with _", policy.Rules{Deny: []string{"mcp__my_server__*"}, Allow: []string{"*"}}, mcpReq("my_server", "x"), run.Deny},
		{"deny by written ref with .", policy.Rules{Deny: []string{"mcp__my.server__x"}, Allow: []string{"*"}}, mcpReq("my.server", "x"), run.Deny},
		{"deny by written ref with /", policy.Rules{Deny: []string{"mcp__team/notes__*"}, Allow: []string{"*"}}, mcpReq("team/notes", "x"), run.Deny},
		{"deny of a ref holding __", policy.Rules{Deny: []string{"mcp__a__b__*"}, Allow: []string{"*"}}, mcpReq("a__b", "x"), run.Deny},
		{"deny keeps its tool", policy.Rules{Deny: []string{"mcp__my.server__x"}, Allow: []string{"*"}}, mcpReq("my.server", "y"), run.Allow},
		{"deny keeps its server", policy.Rules{Deny: []string{"mcp__my_server__*"}, Allow: []string{"*"}}, mcpReq("my-server", "x"), run.Allow},
		{"allow stays on the alias form", policy.Rules{Allow: []string{"mcp__my_server__*"}, Default: run.Deny}, mcpReq("my_server", "x"), run.Deny},
		{"allow of the alias form", policy.Rules{Allow: []string{"mcp__my_server__*"}, Default: run.Deny}, mcpReq("my/server", "x"), run.Allow},
	} {
		d, err := tt.rules.Check(context.Background(), tt.req)
		if err != nil || d.Verdict != tt.want {
			t.Errorf("%s: %s (%s), %v; want %s", tt.name, d.Verdict, d.Reason, err, tt.want)
		}
	}
}
