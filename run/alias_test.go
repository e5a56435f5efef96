package run_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/agtsdk/agt/internal/toolalias"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

var aliasShape = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// SPEC R7.3 and the DESIGN.md alias contract.
func TestAlias(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ref    resource.Ref
		tool   string
		want   string // exact, or "" to check only the hashed shape
		prefix string // for hashed aliases
	}{
		{ref: "notes", tool: "search", want: "mcp__notes__search"},
		{ref: "notes", tool: "note-list", want: "mcp__notes__note-list"},
		{ref: "team/notes", tool: "search", want: "mcp__team_notes__search"},
		{ref: "team/notes", tool: "read_text_file", want: "mcp__team_notes__read_text_file"},
		{ref: "a_b", tool: "x", prefix: "mcp_"},
		{ref: "notes.v2", tool: "search", prefix: "mcp_"},
		{ref: "notes", tool: "get.item", prefix: "mcp__notes__get_item__"},
		{ref: "notes", tool: "über", prefix: "mcp__notes__"},
		{ref: "a__b", tool: "c", prefix: "mcp_"},
		{ref: "a", tool: "b__c", prefix: "mcp__a__b__c__"},
		{ref: "a_", tool: "b", prefix: "mcp_"},
		{ref: "a", tool: "_b", prefix: "mcp__a___b__"},
		{ref: "notes", tool: "", prefix: "mcp__notes____"},
		{ref: resource.Ref(strings.Repeat("r", 64) + "/" + strings.Repeat("s", 63)), tool: strings.Repeat("t", 128), prefix: "mcp_"},
		{ref: "notes", tool: strings.Repeat("t", 59), prefix: "mcp__notes__tttt"},
	}
	for _, tt := range tests {
		got := run.Alias(tt.ref, tt.tool)
		if got != run.Alias(tt.ref, tt.tool) {
			t.Errorf("Alias(%q, %q) is not stable", tt.ref, tt.tool)
		}
		if !aliasShape.MatchString(got) {
			t.Errorf("Alias(%q, %q) = %q: not 1-64 of [A-Za-z0-9_-]", tt.ref, tt.tool, got)
		}
		switch {
		case tt.want != "" && got != tt.want:
			t.Errorf("Alias(%q, %q) = %q, want %q", tt.ref, tt.tool, got, tt.want)
		case tt.want == "" && (!strings.HasPrefix(got, tt.prefix) || got == tt.prefix):
			t.Errorf("Alias(%q, %q) = %q, want prefix %q and a hash", tt.ref, tt.tool, got, tt.prefix)
		}
	}
	// 5 + 5 + 2 + 52 = 64 stays plain; one more character needs the hash.
	if got := run.Alias("notes", strings.Repeat("t", 52)); got != "mcp__notes__"+strings.Repeat("t", 52) {
		t.Errorf("a 64-character alias was changed: %q", got)
	}
	if got := run.Alias("notes", strings.Repeat("t", 53)); len(got) > 64 || strings.Count(got, "__") < 3 {
		t.Errorf("a 65-character alias was not shortened and hashed: %q", got)
	}
}

// Two different pairs never share an alias, including pairs built to
// collide under naive sanitising or truncation.
func TestAliasInjective(t *testing.T) {
	t.Parallel()
	refs := []resource.Ref{"a", "a_b", "a/b", "a.b", "a-b", "a__b", "a_", "ab", "x/a_b", "x_a/b",
		resource.Ref(strings.Repeat("r", 40)), resource.Ref(strings.Repeat("r", 41)), resource.Ref(strings.Repeat("r", 40) + "/s")}
	tools := []string{"", "b", "_b", "b_", "b__c", "c", "b.c", "b/c", "b c", "bé", "b-c", "__",
		strings.Repeat("t", 50), strings.Repeat("t", 51), strings.Repeat("t", 50) + ".", strings.Repeat("t", 50) + "_"}
	for i := range 200 {
		tools = append(tools, fmt.Sprintf("tool_%d", i), fmt.Sprintf("tool.%d", i))
	}
	seen := map[string][2]string{}
	for _, ref := range refs {
		for _, tool := range tools {
			a := run.Alias(ref, tool)
			if prev, ok := seen[a]; ok {
				t.Fatalf("Alias(%q, %q) = Alias(%q, %q) = %q", ref, tool, prev[0], prev[1], a)
			}
			seen[a] = [2]string{string(ref), tool}
			if !aliasShape.MatchString(a) {
				t.Errorf("Alias(%q, %q) = %q: bad shape", ref, tool, a)
			}
		}
	}
}

// Issue 14 §7: aliases are prefix-safe: every alias of one reference starts
// with "mcp__REF__" (readable form) or "mcp_HASH__", and no alias of another
// reference starts with it; readable references keep readable aliases.
func TestAliasPrefixSafe(t *testing.T) {
	t.Parallel()
	refs := []resource.Ref{"notes", "notes-x", "notes/x", "notes__x", "notes_", "notes_x", "notes.x", "team/notes", "team-notes", "team_notes",
		"a", "a/b", "a-b", "ab", "b", resource.Ref(strings.Repeat("r", 44)), resource.Ref(strings.Repeat("r", 45)), resource.Ref(strings.Repeat("r", 20) + "/" + strings.Repeat("s", 23))}
	tools := []string{"search", "delete", "x", "_x", "x__y", "get.item", "", strings.Repeat("t", 60)}
	head := func(ref resource.Ref) string {
		a := run.Alias(ref, "probe")
		if p := toolalias.RefPart(string(ref)); p != "" {
			return "mcp__" + p + "__"
		}
		return a[:len("mcp_")+10+2]
	}
	for _, r := range refs {
		h := head(r)
		for _, tool := range tools {
			if a := run.Alias(r, tool); !strings.HasPrefix(a, h) {
				t.Errorf("Alias(%q, %q) = %q does not start with %q", r, tool, a, h)
			}
		}
		for _, other := range refs {
			if other == r {
				continue
			}
			for _, tool := range tools {
				if a := run.Alias(other, tool); strings.HasPrefix(a, h) {
					t.Errorf("Alias(%q, %q) = %q starts with %q, the head of %q", other, tool, a, h, r)
				}
			}
		}
	}
	for _, r := range []resource.Ref{"notes", "team/notes", "my-server", "fs"} {
		if toolalias.RefPart(string(r)) == "" {
			t.Errorf("%q lost its readable alias", r)
		}
	}
}
