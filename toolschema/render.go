package toolschema

import (
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/agtsdk/agt/internal/text"
)

// MaxViolations is the most violations one ArgumentError lists; the first
// ones in sorted order are kept.
const MaxViolations = 100

// render turns the library's error tree into sorted violations. Every
// message is built from the error kind's schema-side fields only (Want,
// Missing, keyword names): the library's own messages quote argument values.
func (s *Schema) render(verr *jsonschema.ValidationError, instance any) *ArgumentError {
	leaves := collectLeaves(verr, make([]*jsonschema.ValidationError, 0, 4))
	out := make([]Violation, 0, len(leaves))
	for _, leaf := range leaves {
		if k, ok := leaf.ErrorKind.(*kind.PropertyNames); ok {
			leaf.InstanceLocation = propertyNamesLocation(instance, leaf.InstanceLocation, k.Property)
		}
		out = s.appendViolations(out, leaf)
	}
	if len(out) == 0 {
		out = append(out, Violation{Path: "", SchemaPath: "#", Message: "does not match the schema"})
	}
	if len(out) > 1 {
		slices.SortFunc(out, compareViolations)
		out = slices.Compact(out)
	}
	if len(out) > MaxViolations {
		out = out[:MaxViolations:MaxViolations]
	}
	return &ArgumentError{Violations: out}
}

func compareViolations(a, b Violation) int {
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	if c := strings.Compare(a.SchemaPath, b.SchemaPath); c != 0 {
		return c
	}
	return strings.Compare(a.Message, b.Message)
}

// collectLeaves gathers the errors that say what is wrong, descending
// through grouping kinds. Kinds whose causes describe the same fact from
// another angle (propertyNames, contains, minContains, maxContains,
// contentSchema) are leaves: the items that fail contains are not wrong
// themselves.
func collectLeaves(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	switch e.ErrorKind.(type) {
	case *kind.PropertyNames, *kind.Contains, *kind.MinContains, *kind.MaxContains, *kind.ContentSchema:
		return append(out, e)
	}
	for _, c := range e.Causes {
		if _, ok := c.ErrorKind.(*kind.PropertyNames); ok && len(c.InstanceLocation) == len(e.InstanceLocation) {
			// The library (v6.0.3) gives a propertyNames error its working
			// location slice, which later siblings overwrite; the error
			// that groups it was made for the same object with a copy.
			c.InstanceLocation = e.InstanceLocation
		}
		out = collectLeaves(c, out)
	}
	return out
}

func (s *Schema) schemaPathOf(e *jsonschema.ValidationError, keywordPath []string) string {
	ptr := s.pointerOf(e.SchemaURL) + joinPointer(keywordPath)
	return "#" + encodeFragment(ptr)
}

func (s *Schema) appendViolations(out []Violation, e *jsonschema.ValidationError) []Violation {
	path := joinPointer(e.InstanceLocation)
	var kp []string
	switch k := e.ErrorKind.(type) {
	case *kind.Reference:
		kp = []string{k.Keyword}
	case *kind.Not:
		kp = []string{"not"}
	case *kind.PropertyNames:
		// SchemaURL is already the propertyNames subschema.
	default:
		kp = k.KeywordPath()
	}
	schemaPath := s.schemaPathOf(e, kp)
	add := func(p, msg string) {
		out = append(out, Violation{Path: p, SchemaPath: schemaPath, Message: msg})
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		add(path, "must be "+strings.Join(k.Want, " or "))
	case *kind.Enum:
		add(path, "must be one of "+listValues(k.Want))
	case *kind.Const:
		add(path, "must be "+jsonText(k.Want))
	case *kind.Format:
		add(path, "must be a valid "+strconv.Quote(k.Want)+" (format)")
	case *kind.Required:
		for _, m := range k.Missing {
			add(path, "missing required property "+strconv.Quote(m))
		}
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			add(path, "property "+strconv.Quote(k.Prop)+" requires property "+strconv.Quote(m))
		}
	case *kind.Dependency:
		for _, m := range k.Missing {
			add(path, "property "+strconv.Quote(k.Prop)+" requires property "+strconv.Quote(m))
		}
		if len(k.Missing) == 0 {
			add(path, "property "+strconv.Quote(k.Prop)+" requires the object to match its dependency schema")
		}
	case *kind.AdditionalProperties:
		// The offending names go in the path, where field names belong.
		for _, p := range k.Properties {
			add(path+"/"+escapeToken(p), "property is not allowed")
		}
	case *kind.PropertyNames:
		add(path+"/"+escapeToken(k.Property), "property name is not allowed by propertyNames")
	case *kind.MinProperties:
		add(path, "must have at least "+strconv.Itoa(k.Want)+" properties")
	case *kind.MaxProperties:
		add(path, "must have at most "+strconv.Itoa(k.Want)+" properties")
	case *kind.MinItems:
		add(path, "must have at least "+strconv.Itoa(k.Want)+" items")
	case *kind.MaxItems:
		add(path, "must have at most "+strconv.Itoa(k.Want)+" items")
	case *kind.AdditionalItems:
		add(path, "has more items than the schema allows")
	case *kind.UniqueItems:
		add(path+"/"+strconv.Itoa(k.Duplicates[1]), "equals an earlier item; items must be unique")
	case *kind.Contains:
		add(path, "must contain an item that matches contains")
	case *kind.MinContains:
		add(path, "must contain at least "+strconv.Itoa(k.Want)+" items that match contains")
	case *kind.MaxContains:
		add(path, "must contain at most "+strconv.Itoa(k.Want)+" items that match contains")
	case *kind.MinLength:
		add(path, "must be at least "+strconv.Itoa(k.Want)+" characters long")
	case *kind.MaxLength:
		add(path, "must be at most "+strconv.Itoa(k.Want)+" characters long")
	case *kind.Pattern:
		add(path, "must match pattern "+strconv.Quote(k.Want))
	case *kind.ContentEncoding:
		add(path, "must be "+k.Want+"-encoded")
	case *kind.ContentMediaType:
		add(path, "must be valid "+k.Want)
	case *kind.ContentSchema:
		add(path, "decoded content must match contentSchema")
	case *kind.Minimum:
		add(path, "must be >= "+ratText(k.Want))
	case *kind.Maximum:
		add(path, "must be <= "+ratText(k.Want))
	case *kind.ExclusiveMinimum:
		add(path, "must be > "+ratText(k.Want))
	case *kind.ExclusiveMaximum:
		add(path, "must be < "+ratText(k.Want))
	case *kind.MultipleOf:
		add(path, "must be a multiple of "+ratText(k.Want))
	case *kind.Not:
		add(path, "must not match the schema in not")
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			add(path, "must match exactly one schema in oneOf, but matches more than one")
		} else {
			add(path, "must match exactly one schema in oneOf")
		}
	case *kind.AnyOf:
		add(path, "must match at least one schema in anyOf")
	case *kind.AllOf:
		add(path, "must match every schema in allOf")
	case *kind.FalseSchema:
		add(path, "is not allowed by the schema")
	default:
		add(path, "does not match the schema")
	}
	return out
}

// kindText describes a meta-schema failure (the instance is then the
// schema itself, so values may be shown).
func kindText(k jsonschema.ErrorKind) string {
	s := &Schema{schemaPath: map[string]string{}}
	e := &jsonschema.ValidationError{ErrorKind: k}
	v := s.appendViolations(nil, e)
	if len(v) == 0 {
		return "does not match"
	}
	return v[0].Message
}

const maxListedValues = 20

func listValues(vals []any) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vals {
		if i == maxListedValues {
			b.WriteString(", ... (" + strconv.Itoa(len(vals)) + " values)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(jsonText(v))
	}
	b.WriteByte(']')
	return b.String()
}

const maxValueText = 200

func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "(value)"
	}
	return text.Bound(string(data), maxValueText)
}

// ratText writes a schema bound as a short exact decimal when there is
// one, else in scientific notation to 17 significant digits.
func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	const maxDigits = 30
	if r.IsInt() {
		if s := r.Num().String(); len(s) <= maxDigits {
			return s
		}
	} else {
		for prec := 1; prec <= maxDigits; prec++ {
			s := r.FloatString(prec)
			if back, ok := new(big.Rat).SetString(s); ok && back.Cmp(r) == 0 {
				return s
			}
		}
	}
	return new(big.Float).SetPrec(128).SetRat(r).Text('g', 17)
}

// propertyNamesLocation repairs the instance location of a propertyNames
// error. The library (v6.0.3) stores its working location slice there
// without copying it, so later siblings overwrite its elements; its length,
// the depth of the object, stays right. The object is the one at that
// depth that has the offending key: the recorded path when it still names
// such an object, else the first such path in sorted order.
func propertyNamesLocation(instance any, recorded []string, key string) []string {
	depth := len(recorded)
	if obj, ok := lookup(instance, recorded).(map[string]any); ok {
		if _, has := obj[key]; has {
			return recorded
		}
	}
	var best []string
	found := false
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		if len(path) == depth {
			if obj, ok := v.(map[string]any); ok {
				if _, has := obj[key]; has && (!found || slices.Compare(path, best) < 0) {
					best, found = slices.Clone(path), true
				}
			}
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(e, append(path, k))
			}
		case []any:
			for i, e := range v {
				walk(e, append(path, strconv.Itoa(i)))
			}
		}
	}
	walk(instance, make([]string, 0, depth))
	if !found {
		return recorded
	}
	return best
}

// lookup returns the value at path in v, or nil.
func lookup(v any, path []string) any {
	for _, tok := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}
