package toolschema

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// format "regex": the string must be an ECMA-262 regular expression. JSON
// Schema asks for the "u" flag (2020-12 core, 6.4), so this is the Pattern
// grammar of ECMA-262 (2025), 22.2.1, in Unicode mode, with its early
// errors: no Annex B leniency (lone "]", "{", identity escapes of letters),
// backreferences and \k<name> must name a group, no duplicate group names
// that could both participate, ranges in order and not made of class
// escapes, {n,m} with n <= m. Lookbehind, named groups and the (?ims-ims:)
// modifiers of ES2025 are accepted. Unicode property escapes are checked for
// their shape only (\p{Name} or \p{Name=Value} of word characters), not
// against Unicode's property tables. Nothing is compiled or run: the value
// is argument text, and this check is one linear pass. The same grammar
// decides which patterns of the schema are ECMA-262 (compilePattern).
//
// The library's RegisterFormat refuses to replace "regex" (it checks it
// with the compiler's regexp engine, which compiles the schema's own
// patterns, and would compile argument values), so useECMARegexFormat
// swaps the checker into the compiled schemas; the library calls
// Format.Validate when Schema.Validate runs.
var ecmaRegexFormat = &jsonschema.Format{
	Name:     "regex",
	Validate: stringFormat(isECMARegex, "not a valid ECMA-262 regular expression"),
}

// maxRegexNesting bounds group nesting in a format "regex" value, so that
// hostile input cannot recurse deeply; a value nested deeper is refused.
const maxRegexNesting = 256

// useECMARegexFormat replaces the library's RE2 check of format "regex" in
// the given schemas (every schema reachable in the document).
func useECMARegexFormat(reachable []*jsonschema.Schema) {
	for _, sch := range reachable {
		if sch.Format != nil && sch.Format.Name == "regex" {
			sch.Format = ecmaRegexFormat
		}
	}
}

func isECMARegex(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	p := regexParser{src: s}
	if strings.Contains(s, "(?<") {
		p.alt = &regexAlternative{}
		p.lastDef = map[string]*regexAlternative{}
		p.allNames = map[string]bool{}
	}
	if !p.disjunction(0) || p.pos != len(s) {
		return false
	}
	for _, n := range p.backrefs {
		if n > p.groups {
			return false
		}
	}
	for _, name := range p.namedRefs {
		if !p.allNames[name] {
			return false
		}
	}
	return true
}

type regexParser struct {
	src       string
	pos       int
	groups    int             // capturing groups seen
	backrefs  []int           // \N, checked against groups at the end
	namedRefs []string        // \k<name>, checked against allNames at the end
	allNames  map[string]bool // every group name in the pattern
	// For duplicate group names: the alternative being parsed (nil unless
	// the pattern may have named groups) and, per name, the alternative of
	// its last definition.
	alt      *regexAlternative
	disjunct int // disjunctions started, to tell them apart
	lastDef  map[string]*regexAlternative
}

// regexAlternative is one Alternative of one Disjunction, in the tree of
// nested groups.
type regexAlternative struct {
	parent      *regexAlternative
	disjunction int
	depth       int
}

// bothParticipate reports whether groups defined in alternatives a and b
// might both participate in a match (ECMA-262 MightBothParticipate): unless
// they lie in different alternatives of one disjunction. Only the previous
// definition of a name needs checking: an earlier one that the previous
// one excludes, the new one excludes too. The walk up costs no more than
// the group syntax between the two definitions.
func bothParticipate(a, b *regexAlternative) bool {
	for a.depth > b.depth {
		a = a.parent
	}
	for b.depth > a.depth {
		b = b.parent
	}
	for a != b && a.parent != b.parent {
		a, b = a.parent, b.parent
	}
	return a == b || a.disjunction != b.disjunction
}

func (p *regexParser) peek() (rune, int) {
	if p.pos >= len(p.src) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(p.src[p.pos:])
}

func (p *regexParser) eat(prefix string) bool {
	if strings.HasPrefix(p.src[p.pos:], prefix) {
		p.pos += len(prefix)
		return true
	}
	return false
}

// disjunction: Alternative ( "|" Alternative )*.
func (p *regexParser) disjunction(depth int) bool {
	if depth > maxRegexNesting {
		return false
	}
	outer := p.alt
	p.disjunct++
	id := p.disjunct
	for {
		if outer != nil {
			p.alt = &regexAlternative{parent: outer, disjunction: id, depth: outer.depth + 1}
		}
		if !p.alternative(depth) {
			return false
		}
		if !p.eat("|") {
			break
		}
	}
	p.alt = outer
	return true
}

func (p *regexParser) alternative(depth int) bool {
	for {
		r, _ := p.peek()
		if r == -1 || r == '|' || r == ')' {
			return true
		}
		quantifiable, ok := p.term(depth)
		if !ok {
			return false
		}
		if p.quantifier() {
			if !quantifiable {
				return false
			}
		} else if p.pos < len(p.src) && strings.IndexByte("*+?{", p.src[p.pos]) >= 0 {
			return false // a malformed quantifier, or one after an assertion
		}
	}
}

// quantifier consumes one quantifier if there is one: * + ? {n} {n,} {n,m},
// each optionally followed by "?". It reports false without consuming
// anything if there is none; a malformed "{" is left for the caller.
func (p *regexParser) quantifier() bool {
	start := p.pos
	switch {
	case p.eat("*"), p.eat("+"), p.eat("?"):
	case p.eat("{"):
		lo := p.digits()
		if lo == "" {
			p.pos = start
			return false
		}
		if p.eat(",") {
			if hi := p.digits(); hi != "" && compareDecimal(lo, hi) > 0 {
				p.pos = start
				return false
			}
		}
		if !p.eat("}") {
			p.pos = start
			return false
		}
	default:
		return false
	}
	p.eat("?")
	return true
}

func (p *regexParser) digits() string {
	start := p.pos
	for p.pos < len(p.src) && '0' <= p.src[p.pos] && p.src[p.pos] <= '9' {
		p.pos++
	}
	return p.src[start:p.pos]
}

// compareDecimal compares two non-empty decimal digit strings by value.
func compareDecimal(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// term parses an Assertion or an Atom, reporting whether a quantifier may
// follow (Unicode mode: never after an assertion).
func (p *regexParser) term(depth int) (quantifiable, ok bool) {
	r, size := p.peek()
	switch r {
	case '^', '$':
		p.pos += size
		return false, true
	case '.':
		p.pos += size
		return true, true
	case '[':
		return true, p.class()
	case '\\':
		if p.eat(`\b`) || p.eat(`\B`) {
			return false, true
		}
		p.pos++
		return true, p.atomEscape()
	case '(':
		return p.group(depth)
	case '*', '+', '?', '{', '}', ']', ')', '|':
		return false, false // SyntaxCharacters that cannot start a term
	}
	p.pos += size
	return true, true
}

func (p *regexParser) group(depth int) (quantifiable, ok bool) {
	p.pos++ // "("
	switch {
	case p.eat("?="), p.eat("?!"), p.eat("?<="), p.eat("?<!"):
		return false, p.disjunction(depth+1) && p.eat(")")
	case p.eat("?:"):
	case p.eat("?<"):
		name, ok := p.groupName()
		if !ok {
			return false, false
		}
		if prev, ok := p.lastDef[name]; ok && bothParticipate(prev, p.alt) {
			return false, false // a duplicate name
		}
		p.lastDef[name] = p.alt
		p.allNames[name] = true
		p.groups++
		return true, p.disjunction(depth+1) && p.eat(")")
	case p.eat("?"):
		if !p.modifiers() {
			return false, false
		}
	default:
		p.groups++
	}
	return true, p.disjunction(depth+1) && p.eat(")")
}

// modifiers: (?ims-ims:...) of ES2025, after "(?": flags from i, m and s,
// none repeated on either side, not both sides empty, then ":".
func (p *regexParser) modifiers() bool {
	seen := map[byte]bool{}
	flags := func() int {
		n := 0
		for p.pos < len(p.src) && strings.IndexByte("ims", p.src[p.pos]) >= 0 {
			if seen[p.src[p.pos]] {
				return -1
			}
			seen[p.src[p.pos]] = true
			p.pos++
			n++
		}
		return n
	}
	add := flags()
	if add < 0 {
		return false
	}
	if p.eat("-") {
		remove := flags()
		if remove < 0 || add+remove == 0 {
			return false
		}
	}
	return p.eat(":")
}

// groupName: "<" RegExpIdentifierName ">", with \u escapes decoded.
func (p *regexParser) groupName() (string, bool) {
	var b strings.Builder
	for first := true; ; first = false {
		r, size := p.peek()
		switch {
		case r == '>':
			p.pos += size
			return b.String(), !first
		case r == '\\':
			p.pos += size
			if !p.eat("u") {
				return "", false
			}
			cp, ok := p.unicodeEscapeBody()
			if !ok {
				return "", false
			}
			r = cp
		case r < 0:
			return "", false
		default:
			p.pos += size
		}
		if !(r == '$' || r == '_' || isIDStart(r) || !first && (r == 0x200C || r == 0x200D || isIDContinue(r))) {
			return "", false
		}
		b.WriteRune(r)
	}
}

func isIDStart(r rune) bool {
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_ID_Start) && !unicode.In(r, unicode.Pattern_Syntax, unicode.Pattern_White_Space)
}

func isIDContinue(r rune) bool {
	return isIDStart(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue) && !unicode.In(r, unicode.Pattern_Syntax, unicode.Pattern_White_Space)
}

// atomEscape, after "\": DecimalEscape, CharacterClassEscape,
// CharacterEscape or k GroupName.
func (p *regexParser) atomEscape() bool {
	r, _ := p.peek()
	switch {
	case '1' <= r && r <= '9':
		d := p.digits()
		n := 0
		for i := 0; i < len(d) && n <= 1<<20; i++ {
			n = n*10 + int(d[i]-'0')
		}
		p.backrefs = append(p.backrefs, n)
		return true
	case r == 'k':
		p.pos++
		if !p.eat("<") {
			return false
		}
		name, ok := p.groupName()
		if ok {
			p.namedRefs = append(p.namedRefs, name)
		}
		return ok
	}
	_, ok := p.classOrCharacterEscape(false)
	return ok
}

// classOrCharacterEscape, after "\": a CharacterClassEscape (reported as
// isClass) or a CharacterEscape; inClass adds \b (backspace) and \-.
func (p *regexParser) classOrCharacterEscape(inClass bool) (isClass, ok bool) {
	r, size := p.peek()
	if r < 0 {
		return false, false
	}
	p.pos += size
	switch r {
	case 'd', 'D', 's', 'S', 'w', 'W':
		return true, true
	case 'p', 'P':
		return true, p.propertyEscape()
	case 'f', 'n', 'r', 't', 'v':
		return false, true
	case 'c':
		c, _ := p.peek()
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false, false
		}
		p.pos++
		return false, true
	case '0':
		c, _ := p.peek()
		return false, !('0' <= c && c <= '9')
	case 'x':
		if p.pos+2 > len(p.src) || !isHex(p.src[p.pos]) || !isHex(p.src[p.pos+1]) {
			return false, false
		}
		p.pos += 2
		return false, true
	case 'u':
		_, ok := p.unicodeEscapeBody()
		return false, ok
	case '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/':
		return false, true
	case 'b', '-':
		return false, inClass
	}
	return false, false
}

// unicodeEscapeBody, after "\u": HHHH (a surrogate pair \uHHHH\uHHHH
// counts as one code point) or {H...} up to 10FFFF.
func (p *regexParser) unicodeEscapeBody() (rune, bool) {
	if p.eat("{") {
		start := p.pos
		for p.pos < len(p.src) && isHex(p.src[p.pos]) {
			p.pos++
		}
		hex := strings.TrimLeft(p.src[start:p.pos], "0")
		if p.pos == start || len(hex) > 6 || !p.eat("}") {
			return 0, false
		}
		v := hexValue(hex)
		return rune(v), v <= unicode.MaxRune
	}
	v, ok := p.hex4()
	if !ok {
		return 0, false
	}
	if 0xD800 <= v && v <= 0xDBFF && strings.HasPrefix(p.src[p.pos:], `\u`) {
		save := p.pos
		p.pos += 2
		if lo, ok := p.hex4(); ok && 0xDC00 <= lo && lo <= 0xDFFF {
			return rune(0x10000 + (v-0xD800)<<10 + (lo - 0xDC00)), true
		}
		p.pos = save
	}
	return rune(v), true
}

func (p *regexParser) hex4() (int, bool) {
	if p.pos+4 > len(p.src) {
		return 0, false
	}
	for i := 0; i < 4; i++ {
		if !isHex(p.src[p.pos+i]) {
			return 0, false
		}
	}
	v := hexValue(p.src[p.pos : p.pos+4])
	p.pos += 4
	return v, true
}

func hexValue(h string) int {
	v := 0
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a':
			v = v<<4 | int(c-'a'+10)
		default:
			v = v<<4 | int(c-'A'+10)
		}
	}
	return v
}

// propertyEscape, after \p or \P: "{" Name [ "=" Value ] "}", each made of
// ASCII letters, digits and "_".
func (p *regexParser) propertyEscape() bool {
	if !p.eat("{") {
		return false
	}
	word := func() bool {
		start := p.pos
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if !(isAlpha(c) || '0' <= c && c <= '9' || c == '_') {
				break
			}
			p.pos++
		}
		return p.pos > start
	}
	if !word() {
		return false
	}
	if p.eat("=") && !word() {
		return false
	}
	return p.eat("}")
}

// class: "[" [ "^" ] ClassContents "]".
func (p *regexParser) class() bool {
	p.pos++ // "["
	p.eat("^")
	for {
		if p.eat("]") {
			return true
		}
		lo, loClass, ok := p.classAtom()
		if !ok {
			return false
		}
		if strings.HasPrefix(p.src[p.pos:], "-") && !strings.HasPrefix(p.src[p.pos:], "-]") {
			p.pos++
			hi, hiClass, ok := p.classAtom()
			if !ok || loClass || hiClass || lo > hi {
				return false
			}
		}
	}
}

// classAtom returns the code point of one class atom, or isClass for a
// class escape such as \d.
func (p *regexParser) classAtom() (cp rune, isClass, ok bool) {
	r, size := p.peek()
	switch r {
	case -1:
		return 0, false, false
	case '\\':
		p.pos += size
		start := p.pos
		isClass, ok := p.classOrCharacterEscape(true)
		if !ok || isClass {
			return 0, isClass, ok
		}
		return escapedCodePoint(p.src[start:p.pos]), false, true
	}
	p.pos += size
	return r, false, true
}

// escapedCodePoint is the code point a valid CharacterEscape or ClassEscape
// body (after the backslash) stands for.
func escapedCodePoint(e string) rune {
	switch e[0] {
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'v':
		return '\v'
	case 'b':
		return '\b'
	case 'c':
		return rune(e[1] % 32)
	case '0':
		return 0
	case 'x':
		return rune(hexValue(e[1:]))
	case 'u':
		p := regexParser{src: e[1:]}
		r, _ := p.unicodeEscapeBody()
		return r
	}
	return rune(e[0])
}
