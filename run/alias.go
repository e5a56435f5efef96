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
// resource ref. It is a pure function of the pair, so reordering
// mounts never changes it:
//
//	mcp__<ref with "/" as "_">__<tool>
//
// Characters outside [A-Za-z0-9_-] become "_". When anything was replaced,
// when the plain form could be read back in two ways (an "__" inside a part,
// a ref ending or a tool starting with "_"), or when it would pass
// MaxAliasLen, the parts are shortened and "__" plus a hash of the exact pair
// is appended. A plain alias holds exactly one "__" after the prefix and a
// hashed one at least two, so two different pairs never share an alias
// (barring a collision of the 40-bit hash between two hashed aliases).
func Alias(ref resource.Ref, tool string) string {
	r, rChanged := sanitizeAliasPart(string(ref))
	t, tChanged := sanitizeAliasPart(tool)
	plain := len(aliasPrefix)+len(r)+len(aliasSep)+len(t) <= MaxAliasLen &&
		!rChanged && !tChanged && r != "" && t != "" &&
		!strings.Contains(r, aliasSep) && !strings.Contains(t, aliasSep) &&
		!strings.HasSuffix(r, "_") && !strings.HasPrefix(t, "_")
	if plain {
		return aliasPrefix + r + aliasSep + t
	}
	sum := sha256.Sum256([]byte(string(ref) + "\x00" + tool))
	hash := hex.EncodeToString(sum[:])[:aliasHashLen]
	// Room for both parts: the limit minus the prefix, two separators and
	// the hash. The ref keeps up to half; the tool gets the rest.
	room := MaxAliasLen - len(aliasPrefix) - 2*len(aliasSep) - aliasHashLen
	if len(r)+len(t) > room {
		rMax := room / 2
		if len(t) < room-rMax {
			rMax = room - len(t)
		}
		if len(r) > rMax {
			r = r[:rMax]
		}
		if len(t) > room-len(r) {
			t = t[:room-len(r)]
		}
	}
	return aliasPrefix + r + aliasSep + t + aliasSep + hash
}

// AliasRefPart returns ref as it reads in its tools' aliases, before any
// shortening: "/" as "_" and every byte outside [A-Za-z0-9_-] as "_".
// Permission rules written with alias patterns ("mcp__notes__*") compare
// it exactly, so that a pattern for one server never reaches another's
// tools.
func AliasRefPart(ref resource.Ref) string {
	s, _ := sanitizeAliasPart(string(ref))
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
