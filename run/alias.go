package run

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/agtsdk/agt/resource"
)

// MaxAliasLen is the longest alias Alias returns: the limit model APIs put
// on tool names.
const MaxAliasLen = 64

const (
	aliasPrefix = "mcp__"
	aliasSep    = "__"
	// aliasHashLen hex digits of SHA-256 end a hashed alias.
	aliasHashLen = 10
)

// Alias returns the name the model sees for the tool named tool on the MCP
// resource ref. It is a pure function of the pair, so reordering mounts
// never changes it, at most MaxAliasLen characters of [A-Za-z0-9_-], and
// injective. Two forms:
//
//	mcp__<ref, "/" as "_">__<tool>   a ref whose segments are [a-z0-9-]
//	mcp_<hash of ref>__<tool>        any other ref ("my_server", "v1.2")
//
// The tool part is the tool's name when it is 1 to 64 of [A-Za-z0-9_-],
// holds no "__" and does not start with "_"; else the name with other
// bytes as "_", shortened to fit, then "__" and a hash of the exact pair.
//
// Why this is injective and prefix-safe: in the first form the reference
// part holds no "__" and does not end with "_" (a segment is [a-z0-9-], "/"
// becomes a single "_"), so the first "__" after "mcp__" always ends it and
// "/" is the only byte written as "_": two references never give the same
// text, and no reference's aliases start with another's "mcp__REF__". The
// second form starts with "mcp_" and a hex digit, which no alias of the
// first form does, and carries the reference as a 10-hex hash of fixed
// length. A plain tool part holds no "__", a hashed one ends with "__" and
// the hash, so the two never read alike (barring a collision of the 40-bit
// hashes). A ref too long for the first form (its part over 44 characters)
// takes the second.
func Alias(ref resource.Ref, tool string) string {
	head, ok := readableRefPart(ref)
	if ok {
		head = aliasPrefix + head + aliasSep
	} else {
		head = hashedRefPrefix + shortHash(string(ref)) + aliasSep
	}
	t, changed := sanitizeAliasPart(tool)
	if !changed && t != "" && len(head)+len(t) <= MaxAliasLen &&
		!strings.Contains(t, aliasSep) && !strings.HasPrefix(t, "_") {
		return head + t
	}
	room := MaxAliasLen - len(head) - len(aliasSep) - aliasHashLen
	if len(t) > room {
		t = t[:room]
	}
	return head + t + aliasSep + shortHash(string(ref)+"\x00"+tool)
}

// hashedRefPrefix starts the aliases of references that cannot be read
// back from their text; a hex digit follows, never "_".
const hashedRefPrefix = "mcp_"

// maxReadableRefPart leaves a hashed tool part room beside the reference:
// 64 = len("mcp__") + 44 + len("__") + 1 + len("__") + 10.
const maxReadableRefPart = 44

// readableRefPart returns ref with "/" as "_" when its segments are all
// [a-z0-9-] and the result fits the first alias form.
func readableRefPart(ref resource.Ref) (string, bool) {
	s := string(ref)
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
	return hex.EncodeToString(sum[:])[:aliasHashLen]
}

// AliasRefPart returns the reference part of ref's aliases in their
// readable form ("team/notes" reads "team_notes"), or "" for a reference
// whose aliases carry it as a hash. Permission rules written with alias
// patterns ("mcp__notes__*") compare it exactly, so that a pattern for one
// server never reaches another's tools.
func AliasRefPart(ref resource.Ref) string {
	s, _ := readableRefPart(ref)
	return s
}

// AliasToolPart returns tool as it reads in its alias, before any
// shortening: every byte outside [A-Za-z0-9_-] as "_".
func AliasToolPart(tool string) string {
	s, _ := sanitizeAliasPart(tool)
	return s
}

// sanitizeAliasPart writes "/" as "_" and replaces every byte outside
// [A-Za-z0-9_-] by "_"; changed reports whether anything was replaced.
func sanitizeAliasPart(s string) (string, bool) {
	clean := true
	for i := 0; i < len(s); i++ {
		if !aliasByte(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s, false
	}
	b := []byte(s)
	for i, c := range b {
		if !aliasByte(c) {
			b[i] = '_'
		}
	}
	return string(b), true
}

func aliasByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
