package resource_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/internal/glob"
	"github.com/agtsdk/agt/resource"
)

func TestMatchToolPattern(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", glob.MaxMatchBytes)
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"search", "search", true},
		{"search", "Search", false},
		{"search", "search2", false},
		{"search", "re_search", false},
		{"*", "", true},
		{"*", "anything/with.slash", true},
		{"note_*", "note_create", true},
		{"note_*", "note_", true},
		{"note_*", "notes", false},
		{"*_list", "note_list", true},
		{"*_list", "note_list_all", false},
		{"n*e*e", "note_delete", true},
		{"n*e*x", "note_delete", false},
		{"?", "a", true},
		{"?", "", false},
		{"?", "ab", false},
		{"?", "é", true}, // one character, two bytes
		{"t??e", "tree", true},
		{"t??e", "trèèe", false},
		{"a*b?c", "axxbyc", true},
		{"a*b?c", "abc", false},
		{"**", "x", true},
		{"é*", "éclair", true},
		{"*", long, true},
		{"*", long + "a", false}, // past glob.MaxMatchBytes: matches nothing
		{"a.b", "a.b", true},
		{"a.b", "axb", false}, // '.' is literal
	} {
		if got := glob.Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("MatchToolPattern(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// The matcher agrees with a regular expression built from the same
// pattern: * is .*, ? is one character, the rest literal.
func FuzzMatchToolPattern(f *testing.F) {
	for _, s := range [][2]string{{"note_*", "note_create"}, {"a*b?c", "axxbyc"}, {"?", "é"}, {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaa"}, {"x", "\xff"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if glob.Check(pattern) != "" || !utf8.ValidString(name) {
			return
		}
		var re strings.Builder
		re.WriteString(`^(?s:`)
		for _, r := range pattern {
			switch r {
			case '*':
				re.WriteString(`.*`)
			case '?':
				re.WriteString(`.`)
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re.WriteString(`)$`)
		want := len(name) <= glob.MaxMatchBytes && regexp.MustCompile(re.String()).MatchString(name)
		if got := glob.Match(pattern, name); got != want {
			t.Fatalf("MatchToolPattern(%q, %q) = %v, the regexp %s says %v", pattern, name, got, re.String(), want)
		}
	})
}

func TestToolEnabled(t *testing.T) {
	t.Parallel()
	names := []string{"note_create", "note_delete", "note_list", "search"}
	for _, tc := range []struct {
		name              string
		enabled, disabled []string
		want              []string
	}{
		{name: "nil means all", want: names},
		{name: "empty enabled means none", enabled: []string{}, want: nil},
		{name: "enabled by name", enabled: []string{"search"}, want: []string{"search"}},
		{name: "enabled by glob", enabled: []string{"note_*"}, want: []string{"note_create", "note_delete", "note_list"}},
		{name: "disabled by name", disabled: []string{"note_delete"}, want: []string{"note_create", "note_list", "search"}},
		{name: "disabled after enabled", enabled: []string{"note_*"}, disabled: []string{"*_delete"}, want: []string{"note_create", "note_list"}},
		{name: "disabled wins over the same name", enabled: []string{"search"}, disabled: []string{"search"}, want: nil},
		{name: "empty disabled takes out none", disabled: []string{}, want: names},
		{name: "unknown names are fine", enabled: []string{"gone", "search"}, want: []string{"search"}},
	} {
		srv := resource.MCPServer{EnabledTools: tc.enabled, DisabledTools: tc.disabled}
		var got []string
		for _, n := range names {
			if srv.ToolEnabled(n) {
				got = append(got, n)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: offered tools (-want +got):\n%s", tc.name, diff)
		}
	}
}

// enabled_tools and disabled_tools: the write rules, the decoding, and
// nil (absent) versus [] surviving a round trip through MCPServer.
func TestToolListFields(t *testing.T) {
	t.Parallel()
	doc := func(fields string) json.RawMessage {
		return json.RawMessage(`{"mcpServers": {"s": {"command": "x", "cwd": "/srv/s"` + fields + `}}}`)
	}
	for _, tc := range []struct {
		name   string
		fields string
		field  string // of the first finding; "" when accepted
		code   string
	}{
		{name: "absent", fields: ``},
		{name: "names and globs", fields: `, "enabled_tools": ["search", "note_*", "t??e"], "disabled_tools": ["*_delete"]`},
		{name: "empty enabled", fields: `, "enabled_tools": []`},
		{name: "remote too", fields: `, "enabled_tools": ["a"]`},
		{name: "null enabled", fields: `, "enabled_tools": null`, field: "/mcpServers/s/enabled_tools", code: findcode.WrongType},
		{name: "null disabled", fields: `, "disabled_tools": null`, field: "/mcpServers/s/disabled_tools", code: findcode.WrongType},
		{name: "a string", fields: `, "enabled_tools": "search"`, field: "/mcpServers/s/enabled_tools", code: findcode.WrongType},
		{name: "a number item", fields: `, "disabled_tools": [1]`, field: "/mcpServers/s/disabled_tools", code: findcode.WrongType},
		{name: "empty item", fields: `, "enabled_tools": ["a", ""]`, field: "/mcpServers/s/enabled_tools/1", code: findcode.ToolPattern},
		{name: "character class", fields: `, "enabled_tools": ["note_[cd]*"]`, field: "/mcpServers/s/enabled_tools/0", code: findcode.ToolPattern},
		{name: "escape", fields: `, "disabled_tools": ["a\\*"]`, field: "/mcpServers/s/disabled_tools/0", code: findcode.ToolPattern},
		{name: "control character", fields: `, "disabled_tools": ["a\nb"]`, field: "/mcpServers/s/disabled_tools/0", code: findcode.ToolPattern},
		{name: "too long", fields: `, "enabled_tools": ["` + strings.Repeat("a", 257) + `"]`, field: "/mcpServers/s/enabled_tools/0", code: findcode.ToolPattern},
		{name: "repeated", fields: `, "enabled_tools": ["a", "a"]`, field: "/mcpServers/s/enabled_tools/1", code: findcode.Request},
		{name: "too many", fields: `, "enabled_tools": [` + strings.Repeat(`"a",`, 1024) + `"b"]`, field: "/mcpServers/s/enabled_tools", code: findcode.Limit},
		{name: "case variant is unknown", fields: `, "Enabled_Tools": []`, field: "/mcpServers/s/Enabled_Tools", code: findcode.UnknownField},
	} {
		data := doc(tc.fields)
		if tc.name == "remote too" {
			data = json.RawMessage(`{"mcpServers": {"s": {"url": "https://x.example/mcp"` + tc.fields + `}}}`)
		}
		_, srv, err := resource.ValidateMCP(data)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: ValidateMCP = %v, want accepted", tc.name, err)
			}
			_, dsrv, derr := resource.DecodeMCP(data)
			if derr != nil || !cmp.Equal(srv, dsrv) {
				t.Errorf("%s: DecodeMCP = %+v, %v; ValidateMCP read %+v", tc.name, dsrv, derr, srv)
			}
			continue
		}
		var de *resource.DocumentError
		if !errors.As(err, &de) || de.Field != tc.field || de.Code != tc.code {
			t.Errorf("%s: ValidateMCP = %v, want a %s finding at %s", tc.name, err, tc.code, tc.field)
			continue
		}
		if strings.Contains(de.Message, "note_[cd]") || strings.Contains(de.Message, "aaaa") {
			t.Errorf("%s: the message repeats the value: %s", tc.name, de.Message)
		}
	}

	// nil (all tools) and [] (none) stay apart through an encode and a
	// decode, as the CLI writes documents.
	for _, enabled := range [][]string{nil, {}, {"a*"}} {
		in := resource.MCPServer{Command: "x", Cwd: "/srv/s", EnabledTools: enabled}
		data, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{"s": in}})
		if err != nil {
			t.Fatal(err)
		}
		_, out, err := resource.ValidateMCP(data)
		if err != nil {
			t.Fatalf("ValidateMCP(%s) = %v", data, err)
		}
		if (out.EnabledTools == nil) != (enabled == nil) || len(out.EnabledTools) != len(enabled) {
			t.Errorf("enabled_tools %#v came back as %#v (%s)", enabled, out.EnabledTools, data)
		}
	}
}

// The worst case of one match: a star and a 128-byte near-miss against a
// 256-byte name that almost matches: about 0.16 ms on a 2-core machine.
func BenchmarkMatchToolPatternWorst(b *testing.B) {
	pattern := "*" + strings.Repeat("a", 127) + "b"
	name := strings.Repeat("a", glob.MaxNameBytes)
	for b.Loop() {
		if glob.Match(pattern, name) {
			b.Fatal("matched")
		}
	}
}
