package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/big"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agtsdk/agt/toolschema"
)

// Bounds of generation, besides Options.MaxCases and MaxCaseBytes.
const (
	// maxGenDepth bounds the nesting a valid value is generated to, and
	// the nesting of objects whose properties get cases of their own.
	maxGenDepth = 6
	// maxRefHops bounds a chain of $ref followed at one position.
	maxRefHops = 16
	// maxBranches bounds the enum values and anyOf/oneOf branches that
	// get a case each, per position.
	maxBranches = 8
	// maxItemsGenerated bounds the items of a generated array (minItems
	// above it makes the case be dropped by MaxCaseBytes or the validator).
	maxItemsGenerated = 64
	// maxLengthGenerated bounds a generated string's code points.
	maxLengthGenerated = 4096
	// maxPatternRepeat bounds what a pattern's repeat adds.
	maxPatternRepeat = 64
)

// canaryPrefix starts every generated free-form string, so that an error
// that echoes it is recognised and the value is never confused with
// server text.
const canaryPrefix = "zq"

// gen generates the cases of one tool.
type gen struct {
	root   map[string]any
	schema *toolschema.Schema
	o      *Options
	rng    *rand.Rand
	// canaries are every generated free-form string of the tool.
	canaries []string
	cases    []genCase
	names    map[string]bool
	// baseInvalid is set when the generator could not build arguments
	// the schema accepts: a derived case then carries the base's
	// violations too, and is kept only when every violation is its own.
	baseInvalid bool
}

// generate derives the cases of a tool from its raw input schema; s is
// the compiled schema that judges each case. Every case is kept only when
// the validator's verdict matches what it was made for: a valid case the
// validator accepts, an invalid one it refuses at the intended keyword.
// note is not "" when generation was cut short and says why.
func generate(tool string, raw []byte, s *toolschema.Schema, o *Options) (cases []genCase, note string) {
	root, err := decodeObject(raw)
	if err != nil {
		return nil, ""
	}
	h := fnv.New64a()
	h.Write([]byte(tool))
	g := &gen{root: root, schema: s, o: o, rng: rand.New(rand.NewPCG(o.Seed, h.Sum64())), names: map[string]bool{}}
	base, _ := g.valid(root, 0)
	obj, ok := base.(map[string]any)
	if !ok {
		obj = map[string]any{}
	}
	if b, err := encode(obj); err != nil || s.Validate(b) != nil {
		g.baseInvalid = true
		note = "the generator could not build arguments the schema accepts (a pattern or keyword it cannot satisfy): no valid case is run, and an invalid case only when every violation is at its own keyword and path"
	}
	g.add(intent{name: "valid: required fields only", valid: true}, obj)
	g.rawCases(obj)
	g.objectCases(obj, nil, root, "#", 0)
	return g.cases, note
}

// intent is what a case is made for.
type intent struct {
	name       string
	path       string
	schemaPath string
	valid      bool
	// keyword is the schema keyword an invalid case must be refused at
	// ("" for any).
	keyword string
	raw     bool
	// either keeps the case whatever the validator says (the schema
	// decides whether it is valid).
	either bool
}

// full reports whether the tool has all the cases it may have: the walk
// of the schema stops there.
func (g *gen) full() bool { return len(g.cases) >= g.o.MaxCases }

// add keeps a case when the validator agrees with its intent and it is
// within the bounds; args is encoded as JSON unless rawArgs is given.
func (g *gen) add(in intent, args any, rawArgs ...[]byte) {
	if g.full() || g.names[in.name] {
		return
	}
	var b []byte
	if len(rawArgs) > 0 {
		b = rawArgs[0]
	} else {
		var err error
		if b, err = encode(args); err != nil {
			return
		}
	}
	if len(b) > g.o.MaxCaseBytes {
		return
	}
	err := g.schema.Validate(b)
	gc := genCase{name: in.name, args: b, path: in.path, schemaPath: in.schemaPath, raw: in.raw, valid: err == nil}
	if !in.either && in.valid != gc.valid {
		return
	}
	if err != nil {
		keyword := in.keyword
		if in.either {
			keyword = ""
		}
		v, ok := violationAt(err, keyword)
		if !ok || (g.baseInvalid && !onlyAt(err, in)) {
			return
		}
		gc.violation = v
		if gc.schemaPath == "" {
			gc.schemaPath = v.SchemaPath
		}
	}
	for _, c := range g.canaries {
		if bytes.Contains(b, []byte(c)) {
			gc.canaries = append(gc.canaries, c)
		}
	}
	g.names[in.name] = true
	g.cases = append(g.cases, gc)
}

// violationAt returns the violation of err at keyword (any when "").
func violationAt(err error, keyword string) (toolschema.Violation, bool) {
	aerr, ok := err.(*toolschema.ArgumentError)
	if !ok || len(aerr.Violations) == 0 {
		return toolschema.Violation{}, false
	}
	if keyword == "" {
		return aerr.Violations[0], true
	}
	for _, v := range aerr.Violations {
		if strings.HasSuffix(v.SchemaPath, "/"+keyword) {
			return v, true
		}
	}
	return toolschema.Violation{}, false
}

// onlyAt reports whether every violation of err is the one in is made
// for: at its schema path (its keyword), or at its path when in names no
// schema path. A case derived from arguments the schema refuses carries
// the base's violations too; those would be reported at the wrong path.
func onlyAt(err error, in intent) bool {
	aerr, ok := err.(*toolschema.ArgumentError)
	if !ok || len(aerr.Violations) == 0 || in.either {
		return false
	}
	for _, v := range aerr.Violations {
		switch {
		case in.schemaPath != "":
			if v.SchemaPath != in.schemaPath {
				return false
			}
		case v.Path != in.path:
			return false
		}
	}
	return true
}

// encode writes v as JSON with sorted keys and exact numbers, without
// HTML escaping.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// resolve follows $ref (inside the document only) and turns a boolean
// schema into an object one: true is {}, false is nil. sp is the schema
// path of s; the result's is returned.
func (g *gen) resolve(s any, sp string) (map[string]any, string) {
	for range maxRefHops {
		switch v := s.(type) {
		case bool:
			if v {
				return map[string]any{}, sp
			}
			return nil, sp
		case map[string]any:
			ref, ok := v["$ref"].(string)
			if !ok || !strings.HasPrefix(ref, "#") {
				return v, sp
			}
			target, ok := pointer(g.root, ref[1:])
			if !ok {
				return v, sp
			}
			if len(v) > 1 {
				// Siblings of $ref apply too (2019-09 and later).
				merged := map[string]any{}
				if tm, ok := target.(map[string]any); ok {
					for k, x := range tm {
						merged[k] = x
					}
				}
				for k, x := range v {
					if k != "$ref" {
						merged[k] = x
					}
				}
				target = merged
			}
			s, sp = target, ref
		default:
			return nil, sp
		}
	}
	return nil, sp
}

// pointer resolves a JSON pointer in doc.
func pointer(doc any, p string) (any, bool) {
	if p == "" {
		return doc, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// flatten merges allOf into s, shallowly: properties and required are
// united, other keywords kept where s has none.
func (g *gen) flatten(s map[string]any, sp string) map[string]any {
	return g.flattenDepth(s, sp, 0)
}

// maxAllOfDepth bounds allOf nested in allOf (through $ref too, which
// could loop).
const maxAllOfDepth = 16

func (g *gen) flattenDepth(s map[string]any, sp string, depth int) map[string]any {
	all, ok := s["allOf"].([]any)
	if !ok || depth > maxAllOfDepth {
		return s
	}
	out := map[string]any{}
	for k, v := range s {
		if k != "allOf" {
			out[k] = v
		}
	}
	for i, sub := range all {
		m, _ := g.resolve(sub, fmt.Sprintf("%s/allOf/%d", sp, i))
		if m == nil {
			continue
		}
		m = g.flattenDepth(m, sp, depth+1)
		for k, v := range m {
			switch k {
			case "properties":
				props, _ := out["properties"].(map[string]any)
				merged := map[string]any{}
				for pk, pv := range props {
					merged[pk] = pv
				}
				if mp, ok := v.(map[string]any); ok {
					for pk, pv := range mp {
						if _, have := merged[pk]; !have {
							merged[pk] = pv
						}
					}
				}
				out["properties"] = merged
			case "required":
				req, _ := out["required"].([]any)
				if mr, ok := v.([]any); ok {
					for _, r := range mr {
						if !slices.Contains(req, r) {
							req = append(req, r)
						}
					}
				}
				out["required"] = req
			default:
				if _, have := out[k]; !have {
					out[k] = v
				}
			}
		}
	}
	return out
}

// branches are the anyOf or oneOf branches of s, each merged with the
// rest of s, and the keyword.
func (g *gen) branches(s map[string]any, sp string) ([]map[string]any, string) {
	for _, kw := range []string{"oneOf", "anyOf"} {
		list, ok := s[kw].([]any)
		if !ok || len(list) == 0 {
			continue
		}
		var out []map[string]any
		for i, b := range list {
			m, _ := g.resolve(b, fmt.Sprintf("%s/%s/%d", sp, kw, i))
			if m == nil {
				out = append(out, nil)
				continue
			}
			merged := map[string]any{}
			for k, v := range s {
				if k != kw {
					merged[k] = v
				}
			}
			for k, v := range g.flatten(m, sp) {
				merged[k] = v
			}
			out = append(out, merged)
		}
		return out, kw
	}
	return nil, ""
}

// types are the JSON types s allows, guessed from its keywords when it
// names none.
func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	switch {
	case s["properties"] != nil || s["required"] != nil || s["additionalProperties"] != nil:
		return []string{"object"}
	case s["items"] != nil || s["prefixItems"] != nil || s["minItems"] != nil || s["maxItems"] != nil:
		return []string{"array"}
	case s["minLength"] != nil || s["maxLength"] != nil || s["pattern"] != nil || s["format"] != nil:
		return []string{"string"}
	case s["minimum"] != nil || s["maximum"] != nil || s["exclusiveMinimum"] != nil || s["exclusiveMaximum"] != nil || s["multipleOf"] != nil:
		return []string{"number"}
	}
	return nil
}

// mainType is the first type of s other than null, or null.
func mainType(s map[string]any) string {
	ts := types(s)
	for _, t := range ts {
		if t != "null" {
			return t
		}
	}
	if len(ts) > 0 {
		return "null"
	}
	return ""
}

// canary returns a new free-form string, remembered for leak checks.
func (g *gen) canary() string {
	c := fmt.Sprintf("%s%08x", canaryPrefix, g.rng.Uint32())
	g.canaries = append(g.canaries, c)
	return c
}

// valid generates one value the schema s allows, or false.
func (g *gen) valid(s any, depth int) (any, bool) {
	m, _ := g.resolve(s, "")
	if m == nil || depth > maxGenDepth {
		return nil, false
	}
	m = g.flatten(m, "")
	if c, ok := m["const"]; ok {
		return c, true
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	if bs, _ := g.branches(m, ""); len(bs) > 0 {
		for _, b := range bs {
			if b != nil {
				return g.valid(b, depth+1)
			}
		}
		return nil, false
	}
	switch mainType(m) {
	case "object":
		obj := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		req, _ := m["required"].([]any)
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				continue
			}
			if ps, ok := props[name]; ok {
				if v, ok := g.valid(ps, depth+1); ok {
					obj[name] = v
					continue
				}
			}
			obj[name] = g.canary()
		}
		if n, ok := intOf(m["minProperties"]); ok {
			for _, name := range slices.Sorted(maps.Keys(props)) {
				if len(obj) >= n {
					break
				}
				if _, have := obj[name]; !have {
					if v, ok := g.valid(props[name], depth+1); ok {
						obj[name] = v
					}
				}
			}
		}
		return obj, true
	case "array":
		n, _ := intOf(m["minItems"])
		if mx, ok := intOf(m["maxItems"]); n == 0 && (!ok || mx > 0) {
			n = 1
		}
		if n > maxItemsGenerated {
			return nil, false
		}
		arr := []any{}
		prefix, _ := m["prefixItems"].([]any)
		for i := range n {
			var item any = true
			if i < len(prefix) {
				item = prefix[i]
			} else if it, ok := m["items"]; ok {
				if _, isList := it.([]any); !isList {
					item = it
				}
			}
			v, ok := g.valid(item, depth+1)
			if !ok {
				return nil, false
			}
			arr = append(arr, v)
		}
		return arr, true
	case "string":
		return g.stringValue(m), true
	case "integer", "number":
		return g.numberValue(m, mainType(m) == "integer"), true
	case "boolean":
		return true, true
	case "null":
		return nil, true
	}
	return g.canary(), true // any type: a string
}

// stringValue generates a string for s: a sample of its format, a match
// of its pattern, or a canary padded or cut to its lengths.
func (g *gen) stringValue(s map[string]any) string {
	if f, ok := s["format"].(string); ok {
		if v, ok := g.formatSample(f); ok {
			return v
		}
	}
	if p, ok := s["pattern"].(string); ok {
		if v, ok := patternString(p); ok {
			return v
		}
	}
	v := g.canary()
	if n, ok := intOf(s["minLength"]); ok && n > utf8.RuneCountInString(v) && n <= maxLengthGenerated {
		v += strings.Repeat("x", n-utf8.RuneCountInString(v))
	}
	if n, ok := intOf(s["maxLength"]); ok && n < utf8.RuneCountInString(v) {
		v = string([]rune(v)[:n])
	}
	return v
}

// formatSample is a valid value of a format, with a canary where the
// format has room for one.
func (g *gen) formatSample(f string) (string, bool) {
	switch f {
	case "date-time":
		return "2026-01-02T03:04:05Z", true
	case "date":
		return "2026-01-02", true
	case "time":
		return "03:04:05Z", true
	case "duration":
		return "P1D", true
	case "email", "idn-email":
		return g.canary() + "@example.com", true
	case "hostname", "idn-hostname":
		return g.canary() + ".example.com", true
	case "ipv4":
		return "192.0.2.1", true
	case "ipv6":
		return "2001:db8::1", true
	case "uri", "iri":
		return "https://example.com/" + g.canary(), true
	case "uri-reference", "iri-reference":
		return "/" + g.canary(), true
	case "uri-template":
		return "https://example.com/{id}", true
	case "uuid":
		return "123e4567-e89b-42d3-a456-426614174000", true
	case "json-pointer":
		return "/a/b", true
	case "relative-json-pointer":
		return "0/a", true
	case "regex":
		return "^a+$", true
	}
	return "", false
}

// patternString generates a string matching an ECMA-262 pattern that Go's
// regexp parses; false when it cannot (lookaround, backreferences).
func patternString(p string) (string, bool) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !writeMatch(&b, re.Simplify(), 0) {
		return "", false
	}
	return b.String(), true
}

func writeMatch(b *strings.Builder, re *syntax.Regexp, depth int) bool {
	if depth > 100 || b.Len() > maxLengthGenerated*4 {
		return false
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		r, ok := classRune(re.Rune)
		if !ok {
			return false
		}
		b.WriteRune(r)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte('a')
	case syntax.OpCapture:
		return writeMatch(b, re.Sub[0], depth+1)
	case syntax.OpStar, syntax.OpQuest:
	case syntax.OpPlus:
		return writeMatch(b, re.Sub[0], depth+1)
	case syntax.OpRepeat:
		for range min(re.Min, maxPatternRepeat) {
			if !writeMatch(b, re.Sub[0], depth+1) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !writeMatch(b, s, depth+1) {
				return false
			}
		}
	case syntax.OpAlternate:
		return writeMatch(b, re.Sub[0], depth+1)
	}
	return true // anchors, word boundaries, empty matches write nothing
}

// classRune picks a printable ASCII rune of a class when it has one.
func classRune(ranges []rune) (rune, bool) {
	if len(ranges) < 2 {
		return 0, false
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for _, want := range []rune{'a', 'A', '0'} {
			if lo <= want && want <= hi {
				return want, true
			}
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := max(ranges[i], 0x21), min(ranges[i+1], 0x7e)
		if lo <= hi {
			return lo, true
		}
	}
	return ranges[0], true
}

// numberValue generates a number for s within its bounds: the middle of
// them, or 1 (1.5 for a number, so that a parser of integers shows).
func (g *gen) numberValue(s map[string]any, integer bool) json.Number {
	lo, hasLo := ratOf(s["minimum"])
	hi, hasHi := ratOf(s["maximum"])
	if x, ok := ratOf(s["exclusiveMinimum"]); ok {
		lo, hasLo = x.Add(x, step(integer)), true
	} else if b, _ := s["exclusiveMinimum"].(bool); b && hasLo {
		lo.Add(lo, step(integer))
	}
	if x, ok := ratOf(s["exclusiveMaximum"]); ok {
		hi, hasHi = x.Sub(x, step(integer)), true
	} else if b, _ := s["exclusiveMaximum"].(bool); b && hasHi {
		hi.Sub(hi, step(integer))
	}
	v := big.NewRat(3, 2)
	if integer {
		v = big.NewRat(1, 1)
	}
	switch {
	case hasLo && hasHi:
		v = new(big.Rat).Add(lo, hi)
		v.Quo(v, big.NewRat(2, 1))
	case hasLo:
		v = lo
	case hasHi:
		v = hi
	}
	if m, ok := ratOf(s["multipleOf"]); ok && m.Sign() > 0 {
		q := new(big.Rat).Quo(v, m)
		n := new(big.Int).Quo(q.Num(), q.Denom())
		v = new(big.Rat).Mul(new(big.Rat).SetInt(n), m)
		if hasLo && v.Cmp(lo) < 0 {
			v.Add(v, m)
		}
	} else if integer && !v.IsInt() {
		n := new(big.Int).Quo(v.Num(), v.Denom())
		v = new(big.Rat).SetInt(n)
		if hasLo && v.Cmp(lo) < 0 {
			v.Add(v, big.NewRat(1, 1))
		}
	}
	return ratNumber(v)
}

// step is the distance "just past" a numeric limit.
func step(integer bool) *big.Rat {
	if integer {
		return big.NewRat(1, 1)
	}
	return big.NewRat(1, 100)
}

func ratOf(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	return r, ok
}

func intOf(v any) (int, bool) {
	r, ok := ratOf(v)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	n := r.Num().Int64()
	if n < 0 || n > 1<<30 {
		return 0, false
	}
	return int(n), true
}

// ratNumber writes r as an exact JSON number.
func ratNumber(r *big.Rat) json.Number {
	if r.IsInt() {
		return json.Number(r.Num().String())
	}
	s := strings.TrimRight(r.FloatString(30), "0")
	return json.Number(strings.TrimSuffix(s, "."))
}

// escapePointer escapes a property name for a JSON pointer.
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
