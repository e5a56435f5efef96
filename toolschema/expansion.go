package toolschema

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// runtimeTargets knows where $dynamicRef and $recursiveRef may lead at
// validation time: besides the static target, any schema of the document
// with the same $dynamicAnchor (or any $recursiveAnchor: true), depending on
// the dynamic scope. A cycle or a fan-out through them is as real as one
// through $ref.
type runtimeTargets struct {
	byDynamicAnchor map[string][]*jsonschema.Schema
	recursive       []*jsonschema.Schema
}

func newRuntimeTargets(all []*jsonschema.Schema) *runtimeTargets {
	rt := &runtimeTargets{byDynamicAnchor: map[string][]*jsonschema.Schema{}}
	for _, sch := range all {
		if sch.DynamicAnchor != "" {
			rt.byDynamicAnchor[sch.DynamicAnchor] = append(rt.byDynamicAnchor[sch.DynamicAnchor], sch)
		}
		if sch.RecursiveAnchor {
			rt.recursive = append(rt.recursive, sch)
		}
	}
	return rt
}

// inPlace returns the subschemas applied to the same instance as sch,
// including every schema a dynamic reference of sch may resolve to.
func (rt *runtimeTargets) inPlace(sch *jsonschema.Schema) []*jsonschema.Schema {
	var subs []*jsonschema.Schema
	children(sch, func(sub *jsonschema.Schema, inPlace bool) {
		if inPlace {
			subs = append(subs, sub)
		}
	})
	if sch.DynamicRef != nil && sch.DynamicRef.Anchor != "" {
		for _, t := range rt.byDynamicAnchor[sch.DynamicRef.Anchor] {
			if t != sch.DynamicRef.Ref {
				subs = append(subs, t)
			}
		}
	}
	if sch.RecursiveRef != nil {
		for _, t := range rt.recursive {
			if t != sch.RecursiveRef {
				subs = append(subs, t)
			}
		}
	}
	return subs
}

// checkNestedExpansion bounds the evaluations along one path of nested
// arguments. checkExpansion counts a recursive reference once, but a
// recursive schema that applies itself twice to the same child value (an
// allOf or anyOf of two references to a schema whose properties refer back
// to the root) doubles its work with every level of nesting: 60 levels of
// {"a":{"a":...}} would never finish. Starting at the root, this follows
// the arguments down one level at a time, as deep as Options.MaxDepth
// allows, counting how often each subschema is applied to the value at
// that level. Where the level below depends on the key or index (a
// property name, a prefixItems position, any other key or item), the most
// applications any one choice gives is kept for each subschema: a bound on
// every path the arguments can take, without counting two different
// properties that each recurse as a fan-out.
func (s *Schema) checkNestedExpansion(rt *runtimeTargets) error {
	// A dynamic reference resolves to one of its candidates at a time:
	// count once per choice of candidate for each anchor (for a few
	// choices), else as if it resolved to all of them at once.
	type group struct {
		name       string
		candidates []*jsonschema.Schema
	}
	var groups []group
	for _, name := range slices.Sorted(maps.Keys(rt.byDynamicAnchor)) {
		groups = append(groups, group{name, rt.byDynamicAnchor[name]})
	}
	if len(rt.recursive) > 0 {
		groups = append(groups, group{recursiveGroup, rt.recursive})
	}
	const maxChoices = 64
	choices := 1
	for _, g := range groups {
		choices *= len(g.candidates)
		if choices > maxChoices {
			return s.checkNestedExpansionWith(rt.inPlace)
		}
	}
	pick := make([]int, len(groups))
	for {
		chosen := map[string]*jsonschema.Schema{}
		for i, g := range groups {
			chosen[g.name] = g.candidates[pick[i]]
		}
		err := s.checkNestedExpansionWith(func(sch *jsonschema.Schema) []*jsonschema.Schema {
			return rt.inPlaceChosen(sch, chosen)
		})
		if err != nil {
			return err
		}
		// Next choice, like an odometer.
		i := 0
		for ; i < len(groups); i++ {
			pick[i]++
			if pick[i] < len(groups[i].candidates) {
				break
			}
			pick[i] = 0
		}
		if i == len(groups) {
			return nil
		}
	}
}

const recursiveGroup = "$recursiveAnchor"

// maxExpansionWork bounds the steps of checkNestedExpansion, so that the
// analysis of a hostile schema cannot itself take long; a schema over it
// fails to load.
const maxExpansionWork = 5_000_000

func (s *Schema) compareLocation(a, b *jsonschema.Schema) int {
	return strings.Compare(s.pointerOf(a.Location), s.pointerOf(b.Location))
}

// inPlaceChosen is inPlace with each dynamic reference resolved to the
// chosen candidate for its anchor.
func (rt *runtimeTargets) inPlaceChosen(sch *jsonschema.Schema, chosen map[string]*jsonschema.Schema) []*jsonschema.Schema {
	var subs []*jsonschema.Schema
	children(sch, func(sub *jsonschema.Schema, inPlace bool) {
		if inPlace && sub != sch.RecursiveRef && (sch.DynamicRef == nil || sub != sch.DynamicRef.Ref) {
			subs = append(subs, sub)
		}
	})
	if d := sch.DynamicRef; d != nil && d.Ref != nil {
		if t := chosen[d.Anchor]; d.Anchor != "" && t != nil {
			subs = append(subs, t)
		} else {
			subs = append(subs, d.Ref)
		}
	}
	if r := sch.RecursiveRef; r != nil {
		if t := chosen[recursiveGroup]; t != nil {
			subs = append(subs, t)
		} else {
			subs = append(subs, r)
		}
	}
	return subs
}

func (s *Schema) checkNestedExpansionWith(inPlaceOf func(*jsonschema.Schema) []*jsonschema.Schema) error {
	limit := s.limits.expansion
	sat := func(a, b int) int { return min(a+b, limit+1) }
	work := 0 // steps of this analysis, bounded by maxExpansionWork
	edges := map[*jsonschema.Schema][]*jsonschema.Schema{}
	inPlace := func(sch *jsonschema.Schema) []*jsonschema.Schema {
		e, ok := edges[sch]
		if !ok {
			e = inPlaceOf(sch)
			edges[sch] = e
		}
		return e
	}
	// closure applies every in-place subschema: counts flow along in-place
	// edges (acyclic, checked before) in topological order.
	closure := func(seed map[*jsonschema.Schema]int) map[*jsonschema.Schema]int {
		var order []*jsonschema.Schema
		state := map[*jsonschema.Schema]uint8{} // 1 entered, 2 done
		type frame struct {
			sch  *jsonschema.Schema
			next int
		}
		for start := range seed {
			if state[start] != 0 {
				continue
			}
			state[start] = 1
			stack := []frame{{sch: start}}
			for len(stack) > 0 {
				work++
				top := &stack[len(stack)-1]
				subs := inPlace(top.sch)
				if top.next == len(subs) {
					state[top.sch] = 2
					order = append(order, top.sch)
					stack = stack[:len(stack)-1]
					continue
				}
				sub := subs[top.next]
				top.next++
				if state[sub] == 0 {
					state[sub] = 1
					stack = append(stack, frame{sch: sub})
				}
			}
		}
		out := make(map[*jsonschema.Schema]int, len(order))
		for k, v := range seed {
			out[k] = v
		}
		for i := len(order) - 1; i >= 0; i-- { // reverse post-order: topological
			sch := order[i]
			n := out[sch]
			if n == 0 {
				continue
			}
			for _, sub := range inPlace(sch) {
				out[sub] = sat(out[sub], n)
			}
			work++
		}
		return out
	}

	level := closure(map[*jsonschema.Schema]int{s.compiled: 1})
	for depth := 0; depth <= s.limits.depth+1 && len(level) > 0; depth++ {
		total := 0
		for _, n := range level {
			total = sat(total, n)
		}
		s.recordLevelCost(depth, total, false)
		values, keys := patternCosts(level)
		recordCost(&s.valuePatternCost, s.limits.depth, depth, values, false)
		recordCost(&s.keyPatternCost, s.limits.depth, depth+1, keys, false)
		if total > limit {
			return schemaErr(ErrInvalidSchema, "", fmt.Sprintf("recursive subschemas apply themselves more than once to the same nested value, so the work grows with each level of nesting (more than %d evaluations of one value %d levels deep); refer to each recursive subschema once per level or raise Options.MaxSchemaExpansion", limit, depth))
		}
		// The key and index choices the level below can make. A choice
		// changes the targets only of the schemas that name that key or
		// index (or have patternProperties); every other schema applies
		// its "any other key/item" subschemas, summed once per level.
		named := map[string][]*jsonschema.Schema{}
		indexed := map[int][]*jsonschema.Schema{}
		var withPatterns []*jsonschema.Schema
		for _, sch := range slices.SortedFunc(maps.Keys(level), s.compareLocation) {
			for name := range sch.Properties {
				named[name] = append(named[name], sch)
			}
			if len(sch.PatternProperties) > 0 {
				withPatterns = append(withPatterns, sch)
			}
			n := len(sch.PrefixItems)
			if items, ok := sch.Items.([]*jsonschema.Schema); ok {
				n = max(n, len(items))
			}
			for i := range n {
				indexed[i] = append(indexed[i], sch)
			}
		}
		otherProperty, otherItem := childChoice{otherProperty: true}, childChoice{otherItem: true}
		seedOf := func(c, other childChoice, differing []*jsonschema.Schema, base map[*jsonschema.Schema]int) map[*jsonschema.Schema]int {
			seed := maps.Clone(base)
			for _, sch := range differing {
				n := level[sch]
				other.targets(sch, func(sub *jsonschema.Schema) { seed[sub] -= n })
				c.targets(sch, func(sub *jsonschema.Schema) { seed[sub] += n })
			}
			return seed
		}
		sumOf := func(c childChoice) map[*jsonschema.Schema]int {
			seed := map[*jsonschema.Schema]int{}
			for sch, n := range level {
				c.targets(sch, func(sub *jsonschema.Schema) { seed[sub] += n })
			}
			return seed
		}
		baseProperty, baseItem := sumOf(otherProperty), sumOf(otherItem)
		seeds := []map[*jsonschema.Schema]int{baseProperty, baseItem, sumOf(childChoice{propertyName: true}), sumOf(childChoice{content: true})}
		for _, name := range slices.Sorted(maps.Keys(named)) {
			differing := append(slices.Clip(named[name]), withPatterns...)
			seeds = append(seeds, seedOf(childChoice{property: name, named: true}, otherProperty, differing, baseProperty))
		}
		for _, i := range slices.Sorted(maps.Keys(indexed)) {
			seeds = append(seeds, seedOf(childChoice{index: i, indexed: true}, otherItem, indexed[i], baseItem))
		}

		next := map[*jsonschema.Schema]int{}
		for _, seed := range seeds {
			maps.DeleteFunc(seed, func(_ *jsonschema.Schema, n int) bool { return n <= 0 })
			for sch, n := range seed {
				seed[sch] = min(n, limit+1)
			}
			work += len(seed)
			if len(seed) == 0 {
				continue
			}
			for sch, n := range closure(seed) {
				next[sch] = max(next[sch], n)
			}
		}
		if work > maxExpansionWork {
			return schemaErr(ErrInvalidSchema, "", fmt.Sprintf("the schema is too complex to bound its validation work (over %d steps of analysis); use fewer properties, items or references per level", maxExpansionWork))
		}
		if maps.Equal(next, level) {
			// Every level below looks the same: no growth.
			s.recordLevelCost(depth+1, total, true)
			recordCost(&s.valuePatternCost, s.limits.depth, depth+1, values, true)
			recordCost(&s.keyPatternCost, s.limits.depth, depth+2, keys, true)
			return nil
		}
		level = next
	}
	return nil
}

// recordLevelCost keeps, for the arguments' nesting depth, the most
// subschema evaluations one value at that depth can cause (the largest over
// the dynamic reference choices); with below, every deeper level too.
// Validate multiplies it by the number of values at each depth.
func (s *Schema) recordLevelCost(depth, cost int, below bool) {
	recordCost(&s.levelCost, s.limits.depth, depth, cost, below)
}

// recordCost raises (*costs)[depth] to cost, and with below every deeper
// level too; *costs covers depths 0 to maxDepth+1.
func recordCost(costs *[]int, maxDepth, depth, cost int, below bool) {
	if *costs == nil {
		*costs = make([]int, maxDepth+2)
	}
	c := *costs
	end := depth + 1
	if below {
		end = len(c)
	}
	for d := depth; d < end && d < len(c); d++ {
		c[d] = max(c[d], cost)
	}
}

// patternCosts returns the pattern instructions the schemas of one level
// (each applied n times) apply to a string value at that level, and to a
// property name one level below (patternProperties keys).
func patternCosts(level map[*jsonschema.Schema]int) (values, keys int) {
	for sch, n := range level {
		values = satAdd(values, satMul(n, programOf(sch.Pattern)))
		for re := range sch.PatternProperties {
			keys = satAdd(keys, satMul(n, programOf(re)))
		}
	}
	return values, keys
}

// finishPatternCosts sums the costs recorded for values and property names
// into patternCost, without the zero tail, so that patternWorkOf looks only
// at the depths that have patterns.
func (s *Schema) finishPatternCosts() {
	var sum []int
	for d := range max(len(s.valuePatternCost), len(s.keyPatternCost)) {
		c := 0
		if d < len(s.valuePatternCost) {
			c = s.valuePatternCost[d]
		}
		if d < len(s.keyPatternCost) {
			c = satAdd(c, s.keyPatternCost[d])
		}
		sum = append(sum, c)
	}
	for len(sum) > 0 && sum[len(sum)-1] == 0 {
		sum = sum[:len(sum)-1]
	}
	if len(sum) > 0 {
		s.patternCost = slices.Clip(sum)
	}
	s.valuePatternCost, s.keyPatternCost = nil, nil
}

// patternWorkOf bounds the pattern work of validating a value with
// strBytes[d] bytes of strings at nesting depth d (property names count at
// their members' depth): each byte times the most pattern instructions a
// string at that depth can meet.
func (s *Schema) patternWorkOf(strBytes []int) int {
	total := 0
	for d, c := range s.patternCost {
		if d < len(strBytes) {
			total = satAdd(total, satMul(strBytes[d], c))
		}
	}
	return total
}

const satMax = math.MaxInt / 4

func satAdd(a, b int) int { return min(a+b, satMax) }

func satMul(a, b int) int {
	if a != 0 && b > satMax/a {
		return satMax
	}
	return min(a*b, satMax)
}

// evaluationsOf bounds the subschema evaluations validating a value with
// perDepth[d] values at nesting depth d takes (property names count as
// values of their members' depth).
func (s *Schema) evaluationsOf(perDepth []int) int {
	total := 0
	for d, n := range perDepth {
		if d < len(s.levelCost) && n > 0 {
			c := s.levelCost[d]
			if c > 0 && n > math.MaxInt/2/c {
				return math.MaxInt / 2
			}
			total += n * c
			if total > math.MaxInt/2 {
				return math.MaxInt / 2
			}
		}
	}
	return total
}

// childChoice is one kind of value one level down: the value of a named
// property, of any other property, a property name itself, decoded
// content, the item at a position, or any other item.
type childChoice struct {
	property                                    string
	index                                       int
	named, otherProperty, propertyName, content bool
	indexed, otherItem                          bool
}

// targets calls f for every subschema of sch that may apply to the child.
// Where it cannot be known statically (a pattern against an unnamed key),
// it assumes the subschema applies.
func (c childChoice) targets(sch *jsonschema.Schema, f func(*jsonschema.Schema)) {
	one := func(sub *jsonschema.Schema) {
		if sub != nil {
			f(sub)
		}
	}
	switch {
	case c.named:
		sub, inProps := sch.Properties[c.property]
		one(sub)
		matched := false
		for re, sub := range sch.PatternProperties {
			if re.MatchString(c.property) {
				matched = true
				one(sub)
			}
		}
		if ap, ok := sch.AdditionalProperties.(*jsonschema.Schema); ok && !inProps && !matched {
			one(ap)
		}
		one(sch.UnevaluatedProperties)
	case c.otherProperty:
		for _, sub := range sch.PatternProperties {
			one(sub)
		}
		if ap, ok := sch.AdditionalProperties.(*jsonschema.Schema); ok {
			one(ap)
		}
		one(sch.UnevaluatedProperties)
	case c.propertyName:
		one(sch.PropertyNames)
	case c.content:
		one(sch.ContentSchema)
	case c.indexed, c.otherItem:
		switch items := sch.Items.(type) {
		case *jsonschema.Schema:
			one(items)
		case []*jsonschema.Schema:
			if c.indexed && c.index < len(items) {
				one(items[c.index])
			} else if ai, ok := sch.AdditionalItems.(*jsonschema.Schema); ok {
				one(ai)
			}
		}
		if c.indexed && c.index < len(sch.PrefixItems) {
			one(sch.PrefixItems[c.index])
		} else {
			one(sch.Items2020)
		}
		one(sch.Contains)
		one(sch.UnevaluatedItems)
	}
}
