package run

import (
	"github.com/agtsdk/agt/internal/toolalias"
	"github.com/agtsdk/agt/resource"
)

// Alias returns the name the model sees for the tool named tool on the MCP
// resource ref. It is a pure function of the pair, so reordering mounts
// never changes it, at most 64 characters of [A-Za-z0-9_-] (the limit model APIs put on tool
// names), and
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
	return toolalias.Of(string(ref), tool)
}
