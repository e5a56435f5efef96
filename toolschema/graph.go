package toolschema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// children calls f for every subschema sch refers to. inPlace is true for
// those applied to the same instance (references, combinators, conditionals,
// dependent schemas): a cycle made only of these never consumes input.
func children(sch *jsonschema.Schema, f func(sub *jsonschema.Schema, inPlace bool)) {
	one := func(sub *jsonschema.Schema, inPlace bool) {
		if sub != nil {
			f(sub, inPlace)
		}
	}
	one(sch.Ref, true)
	one(sch.RecursiveRef, true)
	if sch.DynamicRef != nil {
		one(sch.DynamicRef.Ref, true)
	}
	one(sch.Not, true)
	for _, s := range sch.AllOf {
		one(s, true)
	}
	for _, s := range sch.AnyOf {
		one(s, true)
	}
	for _, s := range sch.OneOf {
		one(s, true)
	}
	one(sch.If, true)
	one(sch.Then, true)
	one(sch.Else, true)
	for _, s := range sch.DependentSchemas {
		one(s, true)
	}
	for _, d := range sch.Dependencies {
		if s, ok := d.(*jsonschema.Schema); ok {
			one(s, true)
		}
	}
	// Unevaluated* apply to children of the instance, but the library
	// evaluates them beside the in-place keywords; they consume input.
	for _, s := range sch.Properties {
		one(s, false)
	}
	for _, s := range sch.PatternProperties {
		one(s, false)
	}
	if s, ok := sch.AdditionalProperties.(*jsonschema.Schema); ok {
		one(s, false)
	}
	one(sch.PropertyNames, false)
	one(sch.UnevaluatedProperties, false)
	switch items := sch.Items.(type) {
	case *jsonschema.Schema:
		one(items, false)
	case []*jsonschema.Schema:
		for _, s := range items {
			one(s, false)
		}
	}
	if s, ok := sch.AdditionalItems.(*jsonschema.Schema); ok {
		one(s, false)
	}
	for _, s := range sch.PrefixItems {
		one(s, false)
	}
	one(sch.Items2020, false)
	one(sch.Contains, false)
	one(sch.UnevaluatedItems, false)
	one(sch.ContentSchema, false)
}

// checkGraph walks every schema reachable from starts. Each must live in
// the document (a json-schema.org meta-schema is served by the library from
// an embedded copy without asking the loader: it is still an external
// reference), and the in-place edges must have no cycle.
//
// It returns every reachable schema.
func (s *Schema) checkGraph(starts []*jsonschema.Schema) ([]*jsonschema.Schema, error) {
	own := map[string]bool{baseURL: true}
	for loc := range s.schemaPath {
		u, _, _ := strings.Cut(loc, "#")
		own[u] = true
	}
	// Reachability and ownership, iteratively (no recursion on hostile depth).
	position := make(map[*jsonschema.Schema]bool, len(starts))
	for _, sch := range starts {
		position[sch] = true
	}
	seen := map[*jsonschema.Schema]bool{}
	stack := append([]*jsonschema.Schema(nil), starts...)
	var all []*jsonschema.Schema
	for len(stack) > 0 {
		sch := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[sch] {
			continue
		}
		seen[sch] = true
		all = append(all, sch)
		u, _, _ := strings.Cut(sch.Location, "#")
		if !own[u] || isMetaSchemaURL(u) {
			return nil, schemaErr(ErrExternalRef, s.referrerOf(sch, starts), fmt.Sprintf("reference to %q leaves the schema (the json-schema.org meta-schemas too) and is never fetched; copy the target under $defs and refer to it as \"#/$defs/NAME\"", stripBase(sch.Location)))
		}
		if !position[sch] {
			// The library compiles whatever a $ref points at, such as an
			// object under an unknown keyword. Nothing there was checked
			// (a $schema naming a meta vocabulary, references against a
			// non-hierarchical $id), so such targets are refused.
			return nil, schemaErr(ErrInvalidSchema, s.referrerOf(sch, all), fmt.Sprintf("a reference points at %q, which is not a subschema position in its dialect (such as under an unknown keyword); move the target under $defs and refer to it as \"#/$defs/NAME\"", "#"+encodeFragment(s.pointerOf(sch.Location))))
		}
		children(sch, func(sub *jsonschema.Schema, _ bool) { stack = append(stack, sub) })
	}
	// Cycles over in-place edges: iterative depth-first search with colours.
	const (
		white = iota
		grey
		black
	)
	colour := make(map[*jsonschema.Schema]int, len(all))
	type frame struct {
		sch  *jsonschema.Schema
		subs []*jsonschema.Schema
		next int
	}
	// Deterministic order, so the same schema always reports the same cycle.
	byPointer := func(a, b *jsonschema.Schema) int {
		return strings.Compare(s.pointerOf(a.Location), s.pointerOf(b.Location))
	}
	slices.SortStableFunc(all, byPointer)
	dyn := newRuntimeTargets(all)
	inPlaceOf := func(sch *jsonschema.Schema) []*jsonschema.Schema {
		subs := dyn.inPlace(sch)
		slices.SortStableFunc(subs, byPointer)
		return subs
	}
	for _, start := range all {
		if colour[start] != white {
			continue
		}
		colour[start] = grey
		frames := []frame{{sch: start, subs: inPlaceOf(start)}}
		for len(frames) > 0 {
			top := &frames[len(frames)-1]
			if top.next == len(top.subs) {
				colour[top.sch] = black
				frames = frames[:len(frames)-1]
				continue
			}
			sub := top.subs[top.next]
			top.next++
			switch colour[sub] {
			case grey:
				return nil, schemaErr(ErrInvalidSchema, s.pointerOf(top.sch.Location), fmt.Sprintf("references loop back to %q without consuming any input; validation would never end", "#"+encodeFragment(s.pointerOf(sub.Location))))
			case white:
				colour[sub] = grey
				frames = append(frames, frame{sch: sub, subs: inPlaceOf(sub)})
			}
		}
	}
	if err := s.checkExpansion(all); err != nil {
		return nil, err
	}
	if err := s.checkNestedExpansion(dyn); err != nil {
		return nil, err
	}
	return all, nil
}

// checkExpansion bounds how many subschema evaluations one value can cause.
// A subschema shared through $ref is evaluated once per path to it, so a
// chain of anyOf/allOf (or properties) that each refer twice to the next
// link doubles the work per link: 60 links would never finish validating.
// The count follows every edge; an edge back into the current path (a
// recursive schema, which consumes input) counts as one.
func (s *Schema) checkExpansion(all []*jsonschema.Schema) error {
	limit := s.limits.expansion
	const onPath = -1
	size := make(map[*jsonschema.Schema]int, len(all))
	type frame struct {
		sch   *jsonschema.Schema
		subs  []*jsonschema.Schema
		next  int
		total int
	}
	// Sorted children: where recursion is cut depends on the order, and
	// the same schema must always get the same verdict.
	allOf := func(sch *jsonschema.Schema) []*jsonschema.Schema {
		var subs []*jsonschema.Schema
		children(sch, func(sub *jsonschema.Schema, _ bool) { subs = append(subs, sub) })
		slices.SortStableFunc(subs, func(a, b *jsonschema.Schema) int {
			return strings.Compare(s.pointerOf(a.Location), s.pointerOf(b.Location))
		})
		return subs
	}
	for _, start := range all {
		if _, done := size[start]; done {
			continue
		}
		size[start] = onPath
		frames := []frame{{sch: start, subs: allOf(start), total: 1}}
		for len(frames) > 0 {
			top := &frames[len(frames)-1]
			if top.next == len(top.subs) || top.total > limit {
				size[top.sch] = min(top.total, limit+1)
				done := top.total
				frames = frames[:len(frames)-1]
				if len(frames) > 0 {
					frames[len(frames)-1].total += min(done, limit+1)
				}
				continue
			}
			sub := top.subs[top.next]
			top.next++
			switch n, seen := size[sub]; {
			case !seen:
				size[sub] = onPath
				frames = append(frames, frame{sch: sub, subs: allOf(sub), total: 1})
			case n == onPath:
				top.total++
			default:
				top.total += n
			}
		}
		if size[start] > limit {
			return schemaErr(ErrInvalidSchema, s.pointerOf(start.Location), fmt.Sprintf("its subschemas expand to more than %d evaluations of one value (each path through $ref to a shared subschema counts); refer to shared subschemas fewer times or raise Options.MaxSchemaExpansion", limit))
		}
	}
	return nil
}

func isMetaSchemaURL(u string) bool {
	return strings.HasPrefix(u, "http://json-schema.org/") || strings.HasPrefix(u, "https://json-schema.org/")
}

// referrerOf finds the document pointer of the reference keyword that leads
// to target, for error messages.
func (s *Schema) referrerOf(target *jsonschema.Schema, starts []*jsonschema.Schema) string {
	for _, sch := range starts {
		ptr := s.pointerOf(sch.Location)
		switch {
		case sch.Ref == target:
			return ptr + "/$ref"
		case sch.RecursiveRef == target:
			return ptr + "/$recursiveRef"
		case sch.DynamicRef != nil && sch.DynamicRef.Ref == target:
			return ptr + "/$dynamicRef"
		}
	}
	return ""
}

// pointerOf maps a compiled schema location to a JSON pointer in the
// document: through the positions compiled at load, else through the
// fragment of a location in the base document.
func (s *Schema) pointerOf(loc string) string {
	if p, ok := s.schemaPath[loc]; ok {
		return p
	}
	u, _, _ := strings.Cut(loc, "#")
	if u == baseURL {
		return fragmentPointer(loc)
	}
	// A location inside an embedded resource ($id): find the resource's
	// own pointer and append the rest of the fragment.
	frag := fragmentPointer(loc)
	for i := len(frag); i >= 0; i-- {
		if i < len(frag) && frag[i] != '/' {
			continue
		}
		if p, ok := s.schemaPath[u+"#"+encodeFragment(frag[:i])]; ok {
			return p + frag[i:]
		}
	}
	return frag
}

// checkObjectRoot refuses a tool input schema whose root cannot accept an
// object: the schema false, or an explicit type without "object", at the
// root or anywhere along $ref chains and allOf from it.
func (s *Schema) checkObjectRoot() error {
	seen := map[*jsonschema.Schema]bool{}
	stack := []*jsonschema.Schema{s.compiled}
	for len(stack) > 0 {
		sch := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[sch] {
			continue
		}
		seen[sch] = true
		ptr := s.pointerOf(sch.Location)
		if sch.Bool != nil && !*sch.Bool {
			return schemaErr(ErrNotObject, ptr, "the schema false accepts no arguments; a tool input schema must accept a JSON object, such as {\"type\":\"object\"}")
		}
		if sch.Types != nil && !sch.Types.IsEmpty() {
			accepts := false
			for _, t := range sch.Types.ToStrings() {
				if t == "object" {
					accepts = true
				}
			}
			if !accepts {
				return schemaErr(ErrNotObject, ptr+"/type", fmt.Sprintf("type %s does not include \"object\"; tool arguments are always a JSON object", sch.Types.String()))
			}
		}
		for _, sub := range []*jsonschema.Schema{sch.Ref, sch.RecursiveRef} {
			if sub != nil {
				stack = append(stack, sub)
			}
		}
		if sch.DynamicRef != nil && sch.DynamicRef.Ref != nil {
			stack = append(stack, sch.DynamicRef.Ref)
		}
		stack = append(stack, sch.AllOf...)
	}
	return nil
}
