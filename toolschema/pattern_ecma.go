package toolschema

import (
	"strconv"
	"strings"
)

// JSON Schema's "pattern" is an ECMA-262 regular expression, and it asks
// for the "u" flag (2020-12 core, 6.4). Most patterns are regular and mean
// the same in Go's regexp, once a few constructs are written out: re2Form
// rewrites a valid ECMA-262 pattern into Go's syntax with the ECMA-262
// meaning, so that RE2 runs it in linear time. Whatever RE2 cannot express
// (lookaround, backreferences, the (?ims-ims:) modifiers, whose "m" and "i"
// differ from Go's) is left to the ECMAScript engine (see pattern.go).
//
// The constructs both grammars have, and what re2Form does with each:
//
//   - \d \D \w \W \b \B: ASCII in both (no "i" flag); kept.
//   - ^ and $: start and end of the input in both (no "m" flag); kept.
//   - \s \S: ECMA-262 WhiteSpace and LineTerminator, which add \v, U+00A0,
//     U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and
//     U+FEFF to Go's [\t\n\f\r ]; written out as classes.
//   - ".": ECMA-262 also excludes \r, U+2028 and U+2029; written out.
//   - "[" inside a class is a character in ECMA-262 but may open a POSIX
//     class ([:alpha:]) in Go; escaped.
//   - [] matches nothing and [^] anything in ECMA-262; Go reads "]" there
//     as a character; written out.
//   - \cX, \0 and \u escapes (surrogate pairs and \u{...} included), which
//     Go lacks, become \x{...}; \b in a class is U+0008.
//   - (?<name>...): names may hold "$" and non-ASCII letters, which Go
//     refuses; a name does not change what matches, so it is dropped.
//   - \p{...}: Go's names for general categories and scripts; what Go does
//     not know (binary properties, Script=...) makes RE2 refuse the
//     pattern, and the ECMAScript engine takes it.
//
// Quantifiers, alternation, groups, the other escapes and literal
// characters mean the same in both and are copied.

// ecmaSpace is ECMA-262's WhiteSpace and LineTerminator (the \s class), as
// ranges of code points: TAB, LF, VT, FF, CR, the Zs category, U+2028,
// U+2029 and U+FEFF.
var ecmaSpace = [][2]rune{
	{0x09, 0x0d}, {0x20, 0x20}, {0xa0, 0xa0}, {0x1680, 0x1680}, {0x2000, 0x200a},
	{0x2028, 0x2029}, {0x202f, 0x202f}, {0x205f, 0x205f}, {0x3000, 0x3000}, {0xfeff, 0xfeff},
}

// spaceItems and nonSpaceItems are the class items, in Go's syntax, of \s
// and \S; dotClass is ".".
var (
	spaceItems    = classItems(ecmaSpace)
	nonSpaceItems = classItems(complementRanges(ecmaSpace))
)

const dotClass = `[^\n\r\x{2028}\x{2029}]`

func classItems(ranges [][2]rune) string {
	var b strings.Builder
	for _, r := range ranges {
		writeCodePoint(&b, r[0])
		if r[1] != r[0] {
			b.WriteByte('-')
			writeCodePoint(&b, r[1])
		}
	}
	return b.String()
}

// complementRanges returns the code points not in ranges (sorted, apart).
func complementRanges(ranges [][2]rune) [][2]rune {
	var out [][2]rune
	next := rune(0)
	for _, r := range ranges {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= 0x10ffff {
		out = append(out, [2]rune{next, 0x10ffff})
	}
	return out
}

func writeCodePoint(b *strings.Builder, r rune) {
	b.WriteString(`\x{`)
	b.WriteString(strconv.FormatInt(int64(r), 16))
	b.WriteByte('}')
}

// re2Form returns the Go regexp syntax for a pattern that isECMARegex
// accepts, with the same meaning, or false when the pattern uses
// lookaround, a backreference or a modifier group. RE2 may still refuse
// the result (a repeat count over 1000, a property name Go does not know).
func re2Form(p string) (string, bool) {
	var b strings.Builder
	b.Grow(len(p) + len(p)/4)
	inClass := false
	var classSpace, classNonSpace bool // \s or \S written in the class being copied
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\':
			// A valid pattern never ends in a lone backslash.
			switch n := p[i+1]; {
			case n == 's' || n == 'S':
				// In a class, each is written once where it first
				// stands: dropping a repeat cannot join two items
				// into a range, as "\s-x" is no valid class.
				switch {
				case inClass && n == 's':
					if !classSpace {
						b.WriteString(spaceItems)
					}
					classSpace = true
				case inClass:
					if !classNonSpace {
						b.WriteString(nonSpaceItems)
					}
					classNonSpace = true
				case n == 's':
					b.WriteString("[" + spaceItems + "]")
				default:
					b.WriteString("[^" + spaceItems + "]")
				}
				i += 2
			case '1' <= n && n <= '9', n == 'k':
				return "", false // a backreference
			case n == 'c':
				writeCodePoint(&b, rune(p[i+2]%32))
				i += 3
			case n == '0':
				writeCodePoint(&b, 0)
				i += 2
			case n == 'b' && inClass:
				writeCodePoint(&b, '\b')
				i += 2
			case n == 'u':
				q := regexParser{src: p, pos: i + 2}
				r, _ := q.unicodeEscapeBody()
				writeCodePoint(&b, r)
				i = q.pos
			case n == 'p' || n == 'P':
				end := i + strings.IndexByte(p[i:], '}') + 1
				b.WriteString(p[i:end])
				i = end
			case n == 'x':
				b.WriteString(p[i : i+4])
				i += 4
			default:
				// \d \D \w \W \b \B \f \n \r \t \v, and a syntax
				// character, "/" or (in a class) "-" escaped: Go reads
				// each the same.
				b.WriteString(p[i : i+2])
				i += 2
			}
			continue
		case inClass && c == ']':
			inClass, classSpace, classNonSpace = false, false, false
			b.WriteByte(']')
		case inClass && c == '[':
			b.WriteString(`\[`)
		case inClass:
			b.WriteByte(c)
		case c == '[':
			switch {
			case strings.HasPrefix(p[i:], "[]"):
				b.WriteString(`[^\x{0}-\x{10ffff}]`)
				i += 2
				continue
			case strings.HasPrefix(p[i:], "[^]"):
				b.WriteString(`[\x{0}-\x{10ffff}]`)
				i += 3
				continue
			}
			inClass = true
			b.WriteByte('[')
			if p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
		case c == '.':
			b.WriteString(dotClass)
		case c == '(' && strings.HasPrefix(p[i:], "(?"):
			switch rest := p[i+2:]; {
			case strings.HasPrefix(rest, ":"):
				b.WriteString("(?:")
				i += 3
			case strings.HasPrefix(rest, "<") && !strings.HasPrefix(rest, "<=") && !strings.HasPrefix(rest, "<!"):
				// A group name ends at the first ">" (it holds
				// identifier characters and \u escapes only).
				b.WriteByte('(')
				i += 2 + strings.IndexByte(rest, '>') + 1
			default:
				return "", false // lookaround or modifiers
			}
			continue
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String(), true
}
