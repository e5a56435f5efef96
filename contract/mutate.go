package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"
)

// astral is a code point outside the Basic Multilingual Plane: one code
// point, two UTF-16 code units, four UTF-8 bytes. A string of them at a
// length limit shows a server that counts units or bytes, not code points.
const astral = "\U0001F600"

// with returns a deep copy of base in which f has changed the object at
// path at (created where missing).
func with(base map[string]any, at []string, f func(obj map[string]any)) map[string]any {
	out := clone(base).(map[string]any)
	obj := out
	for _, k := range at {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	f(obj)
	return out
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = clone(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = clone(e)
		}
		return a
	}
	return v
}

func pointerOf(at []string) string {
	var b strings.Builder
	for _, k := range at {
		b.WriteByte('/')
		b.WriteString(escapePointer(k))
	}
	return b.String()
}

// objectCases adds the cases of the object at path at, whose schema is s
// (at schema path sp), in base: each required property missing, each
// optional one present, each property's wrong type, enum values, branches
// and bounds, nested objects, and an unknown property.
func (g *gen) objectCases(base map[string]any, at []string, s any, sp string, depth int) {
	m, sp := g.resolve(s, sp)
	if m == nil || depth > maxGenDepth || g.full() {
		return
	}
	m = g.flatten(m, sp)
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	p := pointerOf(at)
	names := slices.Sorted(maps.Keys(props))

	var optional []string
	for _, name := range names {
		if !required[name] {
			optional = append(optional, name)
		}
	}
	if len(optional) > 1 {
		g.add(intent{name: "valid: every optional field present" + inObject(p), valid: true}, with(base, at, func(obj map[string]any) {
			for _, name := range optional {
				if v, ok := g.valid(props[name], depth+1); ok {
					obj[name] = v
				}
			}
		}))
	}
	for _, name := range names {
		if g.full() {
			return
		}
		pp := p + "/" + escapePointer(name)
		psp := sp + "/properties/" + escapePointer(name)
		ps, rsp := g.resolve(props[name], psp)
		if ps == nil {
			continue
		}
		ps = g.flatten(ps, rsp)
		set := func(v any) map[string]any {
			return with(base, at, func(obj map[string]any) { obj[name] = v })
		}
		if required[name] {
			g.add(intent{name: "missing required " + pp, path: pp, schemaPath: sp + "/required", keyword: "required"},
				with(base, at, func(obj map[string]any) { delete(obj, name) }))
		} else if v, ok := g.valid(ps, depth+1); ok {
			g.add(intent{name: "valid: optional " + pp + " present", path: pp, valid: true}, set(v))
		}
		g.valueCases(set, pp, ps, rsp, depth)
		if mainType(ps) == "object" && depth+1 <= maxGenDepth {
			cur, ok := g.valid(ps, depth+1)
			if obj, isObj := cur.(map[string]any); ok && isObj {
				nested := with(base, at, func(o map[string]any) { o[name] = obj })
				g.objectCases(nested, append(append([]string(nil), at...), name), ps, rsp, depth+1)
			}
		}
	}
	// A property the schema does not name: refused under
	// additionalProperties false (or unevaluatedProperties false),
	// accepted otherwise; either way the server should agree.
	extra := canaryPrefix + "extra"
	g.add(intent{name: "unknown property" + inObject(p), path: p + "/" + extra, either: true},
		with(base, at, func(obj map[string]any) { obj[extra] = json.Number("1") }))
}

func inObject(p string) string {
	if p == "" {
		return ""
	}
	return " in " + p
}

// valueCases adds the cases of one value (at pointer pp, schema s at
// schema path sp) that set will place: wrong type, enum, const,
// branches, and the bounds of its type.
func (g *gen) valueCases(set func(any) map[string]any, pp string, s map[string]any, sp string, depth int) {
	typed := s["type"] != nil
	if wv, tn, ok := g.wrongValue(s); ok {
		kw := "type"
		if !typed {
			kw = ""
		}
		g.add(intent{name: "wrong type " + pp + " (" + tn + ")", path: pp, schemaPath: sp + "/type", keyword: kw}, set(wv))
	}
	if e, ok := s["enum"].([]any); ok {
		for i := 1; i < len(e) && i <= maxBranches; i++ {
			g.add(intent{name: fmt.Sprintf("valid: %s enum value %d", pp, i+1), path: pp, valid: true}, set(e[i]))
		}
		g.add(intent{name: "not in enum " + pp, path: pp, schemaPath: sp + "/enum", keyword: "enum"}, set(g.canary()))
	}
	if _, ok := s["const"]; ok {
		g.add(intent{name: "not the const " + pp, path: pp, schemaPath: sp + "/const", keyword: "const"}, set(g.canary()))
	}
	if bs, kw := g.branches(s, sp); len(bs) > 0 {
		for i, b := range bs {
			if i == 0 || i >= maxBranches || b == nil {
				continue
			}
			if v, ok := g.valid(b, depth+1); ok {
				g.add(intent{name: fmt.Sprintf("valid: %s %s branch %d", pp, kw, i+1), path: pp, valid: true}, set(v))
			}
		}
	}
	switch t := mainType(s); t {
	case "string":
		g.stringCases(set, pp, s, sp)
	case "integer", "number":
		g.numberCases(set, pp, s, sp, t == "integer")
	case "array":
		g.arrayCases(set, pp, s, sp, depth)
	}
}

// wrongValue is a value of another JSON type than s allows: a number for
// a string, a numeric string for a number (a parser that coerces shows),
// a string for a boolean, object or array.
func (g *gen) wrongValue(s map[string]any) (any, string, bool) {
	ts := types(s)
	if len(ts) == 0 {
		return nil, "", false
	}
	has := func(t string) bool {
		for _, x := range ts {
			if x == t || t == "number" && x == "integer" {
				return true
			}
		}
		return false
	}
	switch {
	case !has("string"):
		if has("number") {
			return "1", "string", true
		}
		return g.canary(), "string", true
	case !has("number"):
		return json.Number("12345"), "number", true
	case !has("boolean"):
		return true, "boolean", true
	case !has("object"):
		return map[string]any{}, "object", true
	}
	return nil, "", false
}

// stringCases adds the length bounds (in code points, in ASCII and in
// astral code points), a pattern mismatch and an invalid format.
func (g *gen) stringCases(set func(any) map[string]any, pp string, s map[string]any, sp string) {
	fill := func(n int, unit string) string {
		if unit != "x" {
			return strings.Repeat(unit, n)
		}
		c := g.canary()
		if n <= len(c) {
			return c[:n]
		}
		return c + strings.Repeat("x", n-len(c))
	}
	for _, lim := range []struct {
		kw   string
		past int
	}{{"minLength", -1}, {"maxLength", +1}} {
		n, ok := intOf(s[lim.kw])
		if !ok || n+1 > maxLengthGenerated {
			continue
		}
		for _, u := range []struct{ unit, label string }{{"x", ""}, {astral, ", astral code points"}} {
			g.add(intent{name: fmt.Sprintf("%s at limit %s%s", lim.kw, pp, u.label), path: pp, schemaPath: sp + "/" + lim.kw, valid: true}, set(fill(n, u.unit)))
			if n+lim.past >= 0 {
				g.add(intent{name: fmt.Sprintf("%s past limit %s%s", lim.kw, pp, u.label), path: pp, schemaPath: sp + "/" + lim.kw, keyword: lim.kw}, set(fill(n+lim.past, u.unit)))
			}
		}
	}
	if _, ok := s["pattern"].(string); ok {
		for _, v := range []string{g.canary(), "!", ""} {
			before := len(g.cases)
			g.add(intent{name: "pattern mismatch " + pp, path: pp, schemaPath: sp + "/pattern", keyword: "pattern"}, set(v))
			if len(g.cases) > before {
				break
			}
		}
	}
	if _, ok := s["format"].(string); ok {
		g.add(intent{name: "format mismatch " + pp, path: pp, schemaPath: sp + "/format", keyword: "format"}, set(g.canary()+" %%"))
	}
}

// numberCases adds each numeric bound at and just past its limit, a
// number off multipleOf, and for an integer a fraction and an integral
// number written with a fraction (2.0, an integer to JSON Schema).
func (g *gen) numberCases(set func(any) map[string]any, pp string, s map[string]any, sp string, integer bool) {
	st := step(integer)
	add := func(kw, label string, v *big.Rat, valid bool) {
		in := intent{name: fmt.Sprintf("%s %s %s", kw, label, pp), path: pp, schemaPath: sp + "/" + kw, valid: valid}
		if !valid {
			in.keyword = kw
		}
		g.add(in, set(ratNumber(v)))
	}
	exclMinBool, _ := s["exclusiveMinimum"].(bool)
	exclMaxBool, _ := s["exclusiveMaximum"].(bool)
	if m, ok := ratOf(s["minimum"]); ok {
		if exclMinBool { // draft-04: the minimum itself is refused
			g.add(intent{name: "minimum at limit " + pp + " (exclusive)", path: pp, schemaPath: sp + "/minimum"}, set(ratNumber(m)))
			add("minimum", "just inside", new(big.Rat).Add(m, st), true)
		} else {
			add("minimum", "at limit", m, true)
			add("minimum", "past limit", new(big.Rat).Sub(m, st), false)
		}
	}
	if m, ok := ratOf(s["maximum"]); ok {
		if exclMaxBool {
			g.add(intent{name: "maximum at limit " + pp + " (exclusive)", path: pp, schemaPath: sp + "/maximum"}, set(ratNumber(m)))
			add("maximum", "just inside", new(big.Rat).Sub(m, st), true)
		} else {
			add("maximum", "at limit", m, true)
			add("maximum", "past limit", new(big.Rat).Add(m, st), false)
		}
	}
	if m, ok := ratOf(s["exclusiveMinimum"]); ok {
		add("exclusiveMinimum", "at limit", m, false)
		add("exclusiveMinimum", "just inside", new(big.Rat).Add(m, st), true)
	}
	if m, ok := ratOf(s["exclusiveMaximum"]); ok {
		add("exclusiveMaximum", "at limit", m, false)
		add("exclusiveMaximum", "just inside", new(big.Rat).Sub(m, st), true)
	}
	base := g.numberValue(s, integer)
	b, _ := new(big.Rat).SetString(string(base))
	if m, ok := ratOf(s["multipleOf"]); ok && m.Sign() > 0 {
		add("multipleOf", "missed", new(big.Rat).Add(b, new(big.Rat).Quo(m, big.NewRat(2, 1))), false)
	}
	if integer {
		g.add(intent{name: "integer with a fraction " + pp, path: pp, schemaPath: sp + "/type", keyword: "type"},
			set(ratNumber(new(big.Rat).Add(b, big.NewRat(1, 2)))))
		if b.IsInt() {
			g.add(intent{name: "integer written with .0 " + pp, path: pp, schemaPath: sp + "/type", either: true},
				set(json.Number(b.Num().String()+".0")))
		}
	}
}

// arrayCases adds minItems and maxItems at and past their limits,
// duplicate items under uniqueItems, and an item of a wrong type.
func (g *gen) arrayCases(set func(any) map[string]any, pp string, s map[string]any, sp string, depth int) {
	item := any(true)
	if it, ok := s["items"]; ok {
		if _, isList := it.([]any); !isList {
			item = it
		}
	}
	items := func(n int) ([]any, bool) {
		if n < 0 || n > maxItemsGenerated {
			return nil, false
		}
		out := []any{}
		for i := range n {
			v, ok := g.item(item, i, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	}
	for _, lim := range []struct {
		kw   string
		past int
	}{{"minItems", -1}, {"maxItems", +1}} {
		n, ok := intOf(s[lim.kw])
		if !ok {
			continue
		}
		if v, ok := items(n); ok {
			g.add(intent{name: fmt.Sprintf("%s at limit %s", lim.kw, pp), path: pp, schemaPath: sp + "/" + lim.kw, valid: true}, set(v))
		}
		if v, ok := items(n + lim.past); ok {
			g.add(intent{name: fmt.Sprintf("%s past limit %s", lim.kw, pp), path: pp, schemaPath: sp + "/" + lim.kw, keyword: lim.kw}, set(v))
		}
	}
	if u, _ := s["uniqueItems"].(bool); u {
		if v, ok := g.valid(item, depth+1); ok {
			g.add(intent{name: "duplicate items " + pp, path: pp, schemaPath: sp + "/uniqueItems", keyword: "uniqueItems"}, set([]any{v, clone(v)}))
		}
	}
	if im, isp := g.resolve(item, sp+"/items"); im != nil {
		im = g.flatten(im, isp)
		if wv, tn, ok := g.wrongValue(im); ok {
			g.add(intent{name: "wrong type " + pp + "/0 (" + tn + ")", path: pp + "/0", schemaPath: isp + "/type"}, set([]any{wv}))
		}
	}
}

// rawCases adds arguments agt's validator refuses though no schema can: a
// key named twice, invalid UTF-8, a lone surrogate escape. They travel as
// the bytes written here (Session.CallTool sends the arguments as given).
func (g *gen) rawCases(base map[string]any) {
	enc, err := encode(base)
	if err != nil {
		return
	}
	if len(base) > 0 {
		first := slices.Sorted(maps.Keys(base))[0]
		one, _ := encode(map[string]any{first: base[first]})
		dup := append(append(one[:len(one)-1:len(one)-1], ','), enc[1:]...)
		g.add(intent{name: "duplicate key /" + escapePointer(first), path: "/" + escapePointer(first), raw: true}, nil, dup)
	} else {
		g.add(intent{name: "duplicate key", raw: true}, nil, []byte(`{"`+canaryPrefix+`dup":1,"`+canaryPrefix+`dup":1}`))
	}
	var str string
	for _, k := range slices.Sorted(maps.Keys(base)) {
		if _, ok := base[k].(string); ok {
			str = k
			break
		}
	}
	placeholder := canaryPrefix + "PLACEHOLDER"
	for _, bad := range []struct{ label, text string }{{"invalid UTF-8", "a\xffb"}, {"lone surrogate", `a\ud800b`}} {
		var b []byte
		path := ""
		name := bad.label + " in a property name"
		if str != "" {
			v, _ := encode(with(base, nil, func(obj map[string]any) { obj[str] = placeholder }))
			b = bytes.Replace(v, []byte(`"`+placeholder+`"`), []byte(`"`+bad.text+`"`), 1)
			path = "/" + escapePointer(str)
			name = bad.label + " " + path
		} else {
			// A property name of its own.
			b = append([]byte(`{"`+bad.text+`":1`), enc[1:]...)
			if len(base) > 0 {
				b = append([]byte(`{"`+bad.text+`":1,`), enc[1:]...)
			}
		}
		if utf8.Valid(b) == (bad.label == "invalid UTF-8") {
			continue
		}
		g.add(intent{name: name, path: path, raw: true}, nil, b)
	}
}

// item generates the i-th item of an array, distinct from the others
// where the schema lets it be (another enum value, the number plus i), so
// that arrays under uniqueItems stay valid.
func (g *gen) item(s any, i, depth int) (any, bool) {
	m, _ := g.resolve(s, "")
	if m != nil {
		m = g.flatten(m, "")
		if e, ok := m["enum"].([]any); ok && i < len(e) {
			return e[i], true
		}
		if t := mainType(m); (t == "integer" || t == "number") && m["const"] == nil && m["enum"] == nil {
			v, _ := new(big.Rat).SetString(string(g.numberValue(m, t == "integer")))
			return ratNumber(v.Add(v, big.NewRat(int64(i), 1))), true
		}
	}
	return g.valid(s, depth)
}
