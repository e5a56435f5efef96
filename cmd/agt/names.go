package main

import (
	"fmt"
	"strings"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// The naming rule of new registrations, one for mcp add, add-json, create
// and import: a server name is written in lowercase, and every run of
// characters other than letters and digits becomes one '-' ("My_Server"
// -> "my-server", "GitHub" -> "github"); a category/name keeps its '/'.
// References of [a-z0-9-] give tool aliases without a hash
// (mcp__my-server__echo), where "my_server" would get
// mcp_ddc1744aa2__echo. A name that changed is told in a note.

// normalRef applies the naming rule to s, a name or category/name, and
// reports whether it changed anything. The error says why no reference
// can be made of s (nothing left, too many segments, too long).
func normalRef(s string) (resource.Ref, bool, error) {
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		segs[i] = normalSegment(seg)
	}
	ref, err := resource.ParseRef(strings.Join(segs, "/"))
	if err != nil {
		return "", false, err
	}
	return ref, string(ref) != s, nil
}

// normalSegment lowercases seg and turns every run of other characters
// than [a-z0-9] into one '-', trimmed at both ends and cut at 64 bytes.
func normalSegment(seg string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(seg) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	out := b.String()
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], "-")
	}
	return out
}

// renameNote is the note on a name the rule changed: what the name
// became, and why.
func renameNote(typed string, ref resource.Ref) string {
	named := aliasPrefix(ref) + "TOOL"
	if a := run.Alias(ref, "tool"); a != aliasPrefix(ref)+"tool" {
		// A long reference is hashed in its aliases (run.Alias, the one
		// alias rule): show a real one.
		named = "like " + a
	}
	return fmt.Sprintf("%s is registered as %s: agt writes server names in lowercase with '-' for other characters, so that its tools are named %s", clip(typed), ref, named)
}

// aliasPrefix is the start of the tool aliases a person predicts for a
// reference of the naming rule: mcp__notes__ for notes, mcp__team_notes__
// for team/notes (run.Alias hashes long ones instead).
func aliasPrefix(ref resource.Ref) string {
	return "mcp__" + strings.ReplaceAll(string(ref), "/", "_") + "__"
}

// refArgForNew parses the reference of a new registration typed on the
// command line by the naming rule, with the note when it changed.
func refArgForNew(cmd, s string) (resource.Ref, string, error) {
	ref, changed, err := normalRef(s)
	if err != nil {
		return "", "", usagef(cmd, "%s", strings.TrimPrefix(err.Error(), "resource: "))
	}
	if changed {
		return ref, "note: " + renameNote(s, ref), nil
	}
	return ref, "", nil
}
