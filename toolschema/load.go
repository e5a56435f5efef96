package toolschema

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// baseURL names the schema document inside the compiler. It is absolute and
// hierarchical so that relative references resolve to other mem:// URLs
// (which the deny loader refuses) instead of file:// paths or the root itself.
const baseURL = "mem://toolschema/schema.json"

// The five standard dialects, by their canonical $schema URL.
const (
	dialect4    = "http://json-schema.org/draft-04/schema#"
	dialect6    = "http://json-schema.org/draft-06/schema#"
	dialect7    = "http://json-schema.org/draft-07/schema#"
	dialect2019 = "https://json-schema.org/draft/2019-09/schema"
	dialect2020 = "https://json-schema.org/draft/2020-12/schema"
)

type dialectInfo struct {
	canonical string
	version   int
	draft     *jsonschema.Draft
}

// standardDialect recognises the five standard $schema URLs, with or without
// an empty fragment and with http or https. Anything else, including
// json-schema.org meta-schema vocabularies and the unversioned
// "https://json-schema.org/schema", is not a standard dialect.
func standardDialect(s string) (dialectInfo, bool) {
	s = strings.TrimSuffix(s, "#")
	if rest, ok := strings.CutPrefix(s, "https://"); ok {
		s = rest
	} else if rest, ok := strings.CutPrefix(s, "http://"); ok {
		s = rest
	} else {
		return dialectInfo{}, false
	}
	switch s {
	case "json-schema.org/draft-04/schema":
		return dialectInfo{dialect4, 4, jsonschema.Draft4}, true
	case "json-schema.org/draft-06/schema":
		return dialectInfo{dialect6, 6, jsonschema.Draft6}, true
	case "json-schema.org/draft-07/schema":
		return dialectInfo{dialect7, 7, jsonschema.Draft7}, true
	case "json-schema.org/draft/2019-09/schema":
		return dialectInfo{dialect2019, 2019, jsonschema.Draft2019}, true
	case "json-schema.org/draft/2020-12/schema":
		return dialectInfo{dialect2020, 2020, jsonschema.Draft2020}, true
	}
	return dialectInfo{}, false
}

// denyLoader refuses every URL: compiling never reads a file or the network.
type denyLoader struct{}

func (denyLoader) Load(string) (any, error) { return nil, errExternalLoad }

var errExternalLoad = errors.New("external references are not loaded")

var _ jsonschema.URLLoader = denyLoader{}

// newLibraryCompiler is the validator library's compiler as every copy of a
// schema uses it: offline, our formats, bounded patterns (tracked by work
// when not nil).
func newLibraryCompiler(l limits, work *callWork) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	registerFormats(c)
	c.UseRegexpEngine(boundedRegexpEngine(l, work))
	return c
}

func compile(raw []byte, opts *Options, toolInput bool) (_ *Schema, err error) {
	defer func() {
		// A meta-schema pattern matched against a very long string of the
		// schema itself.
		var bound error
		recoverPatternBound(&bound, opts.limits().patternWork)
		if bound != nil {
			err = schemaErr(ErrInvalidSchema, "", "the schema holds a string too long to check against its meta-schema's patterns in bounded time")
		}
	}()
	l := opts.limits()
	if len(raw) > l.schemaBytes {
		return nil, schemaErr(ErrInvalidSchema, "", fmt.Sprintf("the schema is %d bytes, over the limit of %d", len(raw), l.schemaBytes))
	}
	doc, err := decodeJSON(raw, l.depth)
	if err != nil {
		de, _ := err.(*decodeError)
		switch {
		case de != nil && de.tooDeep:
			return nil, schemaErr(ErrInvalidSchema, "", fmt.Sprintf("the schema nests deeper than %d levels", l.depth))
		case de != nil && de.bigNumber:
			return nil, schemaErr(ErrInvalidSchema, "", "the schema contains a "+de.Error())
		}
		return nil, schemaErr(ErrInvalidSchema, "", "the schema is not valid JSON: "+err.Error())
	}

	root := dialectInfo{dialect2020, 2020, jsonschema.Draft2020}
	if obj, ok := doc.(map[string]any); ok {
		if v, present := obj["$schema"]; present {
			d, err := dialectOf(v, "")
			if err != nil {
				return nil, err
			}
			root = d
		}
	}

	w := &walker{doc: doc}
	base, _ := url.Parse(baseURL)
	if err := w.walk(doc, "", root.version, base); err != nil {
		return nil, err
	}
	if n := len(w.positions); n > l.subschemas {
		return nil, schemaErr(ErrInvalidSchema, "", fmt.Sprintf("the schema has %d subschemas, over the limit of %d (Options.MaxSubschemas)", n, l.subschemas))
	}
	// Objects under unknown keywords count too (a $ref makes the library
	// compile them before checkGraph refuses the reference), with room for
	// the maps that hold subschemas, such as properties.
	if n := countObjects(doc); n > 2*l.subschemas {
		return nil, schemaErr(ErrInvalidSchema, "", fmt.Sprintf("the schema has %d JSON objects, over the limit of %d (twice Options.MaxSubschemas)", n, 2*l.subschemas))
	}

	c := newLibraryCompiler(l, nil)
	if err := c.AddResource(baseURL, doc); err != nil {
		return nil, w.mapCompileError(err)
	}
	compiled, err := c.Compile(baseURL)
	if err != nil {
		return nil, w.mapCompileError(err)
	}
	// Compile every subschema of the document, not only those reachable
	// from the root: an unused $defs entry with an external or dangling
	// reference must fail too, and the locations give each compiled schema
	// its pointer in the document.
	s := &Schema{
		raw:        bytes.Clone(raw),
		dialect:    root.canonical,
		toolInput:  toolInput,
		limits:     l,
		compiled:   compiled,
		schemaPath: map[string]string{compiled.Location: ""},
	}
	starts := []*jsonschema.Schema{compiled}
	for _, ptr := range w.positions {
		if ptr == "" {
			continue
		}
		sub, err := c.Compile(baseURL + "#" + encodeFragment(ptr))
		if err != nil {
			return nil, w.mapCompileError(err)
		}
		if _, seen := s.schemaPath[sub.Location]; !seen {
			s.schemaPath[sub.Location] = ptr
		}
		starts = append(starts, sub)
	}
	reachable, err := s.checkGraph(starts)
	if err != nil {
		return nil, err
	}
	useECMARegexFormat(reachable)
	s.finishPatternCosts()
	s.twins, s.positions = newTwinPool(), w.positions
	if toolInput {
		if err := s.checkObjectRoot(); err != nil {
			return nil, err
		}
	}
	s.digest = canonicalDigest(doc)
	return s, nil
}

// countObjects counts the JSON objects in v (its depth is bounded by the
// decoder).
func countObjects(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n++
		for _, e := range v {
			n += countObjects(e)
		}
	case []any:
		for _, e := range v {
			n += countObjects(e)
		}
	}
	return n
}

func dialectOf(v any, ptr string) (dialectInfo, error) {
	str, ok := v.(string)
	if !ok {
		return dialectInfo{}, schemaErr(ErrUnsupportedDialect, ptr+"/$schema", "$schema must be a string naming a standard dialect")
	}
	d, ok := standardDialect(str)
	if !ok {
		return dialectInfo{}, schemaErr(ErrUnsupportedDialect, ptr+"/$schema", fmt.Sprintf("$schema %q is not a standard dialect; use one of %s, %s, %s, %s or %s (or omit it for 2020-12)", str, dialect2020, dialect2019, dialect7, dialect6, dialect4))
	}
	return d, nil
}

// walker visits every subschema position of a document, keyword by keyword
// as the dialect defines them (the same positions the validator library
// knows), checking nested $schema and remembering references.
type walker struct {
	doc       any      // the document, for repairing meta-schema error locations
	positions []string // JSON pointers of every subschema, the root first
	refs      []refSite
}

type refSite struct {
	pointer  string // of the keyword, such as "/properties/a/$ref"
	value    string // as written
	resolved string // against the base URI in effect, without fragment
}

// Keywords holding one subschema, a map of them, or an array of them, by the
// first dialect version that has them. "definitions" and "$defs" count in
// every dialect: schemas use either name whatever their $schema, and a
// reference may only point at a subschema position (see checkGraph).
var (
	singleSchemaKeywords = []struct {
		name    string
		version int
	}{
		{"not", 4}, {"additionalProperties", 4}, {"items", 4}, {"additionalItems", 4},
		{"propertyNames", 6}, {"contains", 6},
		{"if", 7}, {"then", 7}, {"else", 7},
		{"unevaluatedProperties", 2019}, {"unevaluatedItems", 2019}, {"contentSchema", 2019},
	}
	schemaMapKeywords = []struct {
		name    string
		version int
	}{
		{"definitions", 4}, {"properties", 4}, {"patternProperties", 4}, {"dependencies", 4},
		{"$defs", 4}, {"dependentSchemas", 2019},
	}
	schemaArrayKeywords = []struct {
		name    string
		version int
	}{
		{"allOf", 4}, {"anyOf", 4}, {"oneOf", 4}, {"items", 4},
		{"prefixItems", 2020},
	}
)

func isSchemaValue(v any) bool {
	switch v.(type) {
	case map[string]any, bool:
		return true
	}
	return false
}

func (w *walker) walk(v any, ptr string, version int, base *url.URL) error {
	w.positions = append(w.positions, ptr)
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if ptr != "" {
		if s, present := obj["$schema"]; present {
			d, err := dialectOf(s, ptr)
			if err != nil {
				return err
			}
			version = d.version
		}
	}
	base = withID(obj, version, base)
	for _, kw := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
		s, ok := obj[kw].(string)
		if !ok {
			continue
		}
		site := ptr + "/" + escapeToken(kw)
		resolved := ""
		if u, err := url.Parse(s); err == nil {
			r := base.ResolveReference(u)
			r.Fragment, r.RawFragment = "", ""
			resolved = r.String()
		}
		w.refs = append(w.refs, refSite{pointer: site, value: s, resolved: resolved})
		// Against a non-hierarchical base such as urn:x:y, a relative
		// reference has no meaning (RFC 3986, 5.2); the library would
		// silently resolve it to the base document itself.
		if u, err := url.Parse(s); err == nil && base.Opaque != "" && !u.IsAbs() && (u.Path != "" || u.Host != "") {
			return schemaErr(ErrExternalRef, site, fmt.Sprintf("relative reference %q cannot be resolved against the non-hierarchical base %q; refer to \"#/$defs/NAME\" or use an absolute URI declared by a $id in this schema", s, base.String()))
		}
	}
	for _, kw := range singleSchemaKeywords {
		if version < kw.version {
			continue
		}
		if sub, ok := obj[kw.name]; ok && isSchemaValue(sub) {
			if err := w.walk(sub, ptr+"/"+escapeToken(kw.name), version, base); err != nil {
				return err
			}
		}
	}
	for _, kw := range schemaMapKeywords {
		if version < kw.version {
			continue
		}
		m, ok := obj[kw.name].(map[string]any)
		if !ok {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if sub := m[name]; isSchemaValue(sub) {
				if err := w.walk(sub, ptr+"/"+escapeToken(kw.name)+"/"+escapeToken(name), version, base); err != nil {
					return err
				}
			}
		}
	}
	for _, kw := range schemaArrayKeywords {
		if version < kw.version {
			continue
		}
		arr, ok := obj[kw.name].([]any)
		if !ok {
			continue
		}
		for i, sub := range arr {
			if isSchemaValue(sub) {
				if err := w.walk(sub, ptr+"/"+escapeToken(kw.name)+"/"+strconv.Itoa(i), version, base); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// withID returns the base URI for obj's keywords: base changed by obj's $id
// ("id" in draft-04), which draft-07 and older ignore beside $ref. A
// fragment-only id is an anchor there and does not change the base.
func withID(obj map[string]any, version int, base *url.URL) *url.URL {
	key := "$id"
	if version == 4 {
		key = "id"
	}
	id, ok := obj[key].(string)
	if !ok {
		return base
	}
	if _, hasRef := obj["$ref"]; hasRef && version <= 7 {
		return base
	}
	u, err := url.Parse(id)
	if err != nil {
		return base
	}
	u.Fragment, u.RawFragment = "", ""
	if *u == (url.URL{}) {
		return base
	}
	return base.ResolveReference(u)
}

func escapeToken(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// encodeFragment writes a JSON pointer as a URI fragment, percent-encoding
// each token but keeping the slashes (RFC 6901, section 6).
func encodeFragment(ptr string) string {
	if ptr == "" {
		return ""
	}
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		toks[i] = url.PathEscape(t)
	}
	return strings.Join(toks, "/")
}

// refSiteFor finds the reference in the document most likely to have
// produced target (an absolute URL from the library). It returns the
// keyword's pointer and the reference as written, or target itself (without
// the internal base) when none matches.
func (w *walker) refSiteFor(target string) (pointer, written string) {
	t, tfrag, _ := strings.Cut(target, "#")
	tfrag, _ = url.PathUnescape(tfrag)
	for _, r := range w.refs {
		_, frag, _ := strings.Cut(r.value, "#")
		frag, _ = url.PathUnescape(frag)
		if r.resolved == t && (tfrag == "" || frag == tfrag) {
			return r.pointer, r.value
		}
	}
	// The library names a target inside an embedded resource by its
	// place in the whole document; the reference named it from the resource.
	for _, r := range w.refs {
		u, frag, _ := strings.Cut(r.value, "#")
		frag, _ = url.PathUnescape(frag)
		if u != "" && (strings.HasSuffix(t, u) || (frag != "" && strings.HasSuffix(tfrag, frag))) {
			return r.pointer, r.value
		}
	}
	return "", stripBase(target)
}

// mapCompileError turns an error of the validator library into a
// *SchemaError with the right sentinel and the synthetic base URL removed.
func (w *walker) mapCompileError(err error) error {
	var (
		loadErr    *jsonschema.LoadURLError
		schemeErr  *jsonschema.UnsupportedURLSchemeError
		metaErr    *jsonschema.SchemaValidationError
		regexErr   *jsonschema.InvalidRegexError
		ptrErr     *jsonschema.JSONPointerNotFoundError
		anchorErr  *jsonschema.AnchorNotFoundError
		draftErr   *jsonschema.UnsupportedDraftError
		metaURLErr *jsonschema.InvalidMetaSchemaURLError
	)
	switch {
	case errors.As(err, &loadErr):
		ptr, ref := w.refSiteFor(loadErr.URL)
		return schemaErr(ErrExternalRef, ptr, fmt.Sprintf("reference %s leaves the schema and is never fetched; copy the target under $defs and refer to it as \"#/$defs/NAME\"", strconv.Quote(ref)))
	case errors.As(err, &schemeErr):
		return schemaErr(ErrExternalRef, "", "a reference leaves the schema and is never fetched: "+stripBase(schemeErr.Error()))
	case errors.As(err, &draftErr), errors.As(err, &metaURLErr):
		return schemaErr(ErrUnsupportedDialect, "", stripBase(err.Error()))
	case errors.As(err, &metaErr):
		return metaSchemaError(metaErr, w.doc)
	case errors.As(err, &regexErr):
		// Where the meta-schema does not check patternProperties keys
		// (draft-04), the library names the keyword: point at the key.
		ptr := fragmentPointer(regexErr.URL)
		key := strings.HasSuffix(ptr, "/patternProperties")
		if key {
			ptr += "/" + escapeToken(regexErr.Regex)
		}
		return schemaErr(ErrInvalidSchema, ptr, invalidPatternMessage(key, regexErr.Regex, regexErr.Err))
	case errors.As(err, &ptrErr):
		ptr, ref := w.refSiteFor(ptrErr.URL)
		return schemaErr(ErrInvalidSchema, ptr, fmt.Sprintf("reference %s points at nothing in the schema", strconv.Quote(ref)))
	case errors.As(err, &anchorErr):
		ptr, ref := w.refSiteFor(anchorErr.Reference)
		return schemaErr(ErrInvalidSchema, ptr, fmt.Sprintf("reference %s points at nothing in the schema", strconv.Quote(ref)))
	}
	return schemaErr(ErrInvalidSchema, "", stripBase(err.Error()))
}

func metaSchemaError(e *jsonschema.SchemaValidationError, doc any) error {
	verr, ok := e.Err.(*jsonschema.ValidationError)
	if !ok {
		return schemaErr(ErrInvalidSchema, fragmentPointer(e.URL), "the schema does not conform to its dialect: "+stripBase(e.Err.Error()))
	}
	leaves := collectLeaves(verr, nil)
	if len(leaves) == 0 {
		return schemaErr(ErrInvalidSchema, fragmentPointer(e.URL), "the schema does not conform to its dialect")
	}
	base := fragmentPointer(e.URL)
	sub := lookup(doc, splitPointer(base))
	pointers := make([]string, len(leaves))
	for i, leaf := range leaves {
		if k, ok := leaf.ErrorKind.(*kind.PropertyNames); ok {
			loc := propertyNamesLocation(sub, leaf.InstanceLocation, k.Property)
			leaf.InstanceLocation = append(slices.Clone(loc), k.Property)
		}
		pointers[i] = joinPointer(leaf.InstanceLocation)
	}
	first := 0
	for i := range leaves {
		if pointers[i] < pointers[first] {
			first = i
		}
	}
	leaf := leaves[first]
	ptr := base + pointers[first]
	// The meta-schemas' "format": "regex" checks pattern values and
	// patternProperties keys with our regexp engine: a pattern no engine
	// takes is reported as what it is.
	if f, ok := leaf.ErrorKind.(*kind.Format); ok && f.Want == "regex" {
		s, _ := f.Got.(string)
		return schemaErr(ErrInvalidSchema, ptr, invalidPatternMessage(false, s, f.Err))
	}
	msg := kindText(leaf.ErrorKind)
	if k, ok := leaf.ErrorKind.(*kind.PropertyNames); ok {
		for _, c := range collectLeaves(&jsonschema.ValidationError{ErrorKind: &kind.Group{}, Causes: leaf.Causes}, nil) {
			if f, ok := c.ErrorKind.(*kind.Format); ok && f.Want == "regex" {
				return schemaErr(ErrInvalidSchema, ptr, invalidPatternMessage(true, k.Property, f.Err))
			}
		}
		msg = "this key is not allowed here"
	}
	return schemaErr(ErrInvalidSchema, ptr, "the schema does not conform to its dialect's meta-schema: "+msg)
}

// splitPointer splits a JSON pointer into unescaped tokens.
func splitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

// fragmentPointer returns the JSON pointer in the fragment of a location
// inside our document, or "".
func fragmentPointer(loc string) string {
	_, frag, ok := strings.Cut(loc, "#")
	if !ok {
		return ""
	}
	if p, err := url.PathUnescape(frag); err == nil {
		return p
	}
	return frag
}

func stripBase(s string) string {
	s = strings.ReplaceAll(s, baseURL+"#", "#")
	return strings.ReplaceAll(s, baseURL, "#")
}

func joinPointer(toks []string) string {
	if len(toks) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}
