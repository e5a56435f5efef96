// Package toolalias is the one implementation of the tool aliases the
// model sees, shared by run (run.Alias, which documents the two forms and
// why they are injective) and policy (which matches rules against the
// parts of an alias).
package toolalias

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxLen is the longest alias Of returns: the limit model APIs put on
// tool names (run.Alias documents it).
const MaxLen = 64

const (
	// Prefix starts the aliases of references readable in their text
	// ("mcp__team_notes__search"); no host tool name starts with it.
	Prefix = "mcp__"
	// HashedPrefix starts the aliases of references that cannot be read
	// back from their text; a hex digit follows, never "_".
	HashedPrefix = "mcp_"
	sep          = "__"
	// hashLen hex digits of SHA-256 end a hashed alias.
	hashLen = 10
)

// Of returns the alias of the tool named tool on the MCP resource ref;
// run.Alias documents it.
func Of(ref, tool string) string {
	head, ok := readableRefPart(ref)
	if ok {
		head = Prefix + head + sep
	} else {
		head = HashedPrefix + shortHash(ref) + sep
	}
	t, changed := sanitize(tool)
	if !changed && t != "" && len(head)+len(t) <= MaxLen &&
		!strings.Contains(t, sep) && !strings.HasPrefix(t, "_") {
		return head + t
	}
	room := MaxLen - len(head) - len(sep) - hashLen
	if len(t) > room {
		t = t[:room]
	}
	return head + t + sep + shortHash(ref+"\x00"+tool)
}

// maxReadableRefPart leaves a hashed tool part room beside the reference:
// 64 = len("mcp__") + 44 + len("__") + 1 + len("__") + 10.
const maxReadableRefPart = 44

// readableRefPart returns ref with "/" as "_" when its segments are all
// [a-z0-9-] and the result fits the first alias form.
func readableRefPart(s string) (string, bool) {
	if s == "" || len(s) > maxReadableRefPart {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case c == '/' && i > 0 && i < len(b)-1:
			b[i] = '_'
		default:
			return "", false
		}
	}
	return string(b), true
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// RefPart returns the reference part of ref's aliases in their readable
// form ("team/notes" reads "team_notes"), or "" for a reference whose
// aliases carry it as a hash. Permission rules written with alias
// patterns ("mcp__notes__*") compare it exactly, so that a pattern for one
// server never reaches another's tools.
func RefPart(ref string) string {
	s, _ := readableRefPart(ref)
	return s
}

// ToolPart returns tool as it reads in its alias, before any shortening:
// every byte outside [A-Za-z0-9_-] as "_".
func ToolPart(tool string) string {
	s, _ := sanitize(tool)
	return s
}

// sanitize replaces every byte outside [A-Za-z0-9_-] by "_"; changed
// reports whether anything was replaced.
func sanitize(s string) (string, bool) {
	clean := true
	for i := 0; i < len(s); i++ {
		if !NameByte(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s, false
	}
	b := []byte(s)
	for i, c := range b {
		if !NameByte(c) {
			b[i] = '_'
		}
	}
	return string(b), true
}

// NameByte reports whether c may appear in a tool name a model API
// accepts: [A-Za-z0-9_-].
func NameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
