package toolschema

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Default limits, used where an Options field is zero (each field's
// doc gives its value).
const (
	// defaultMaxSchemaBytes bounds the size of a schema document.
	defaultMaxSchemaBytes = 1 << 20
	// defaultMaxDepth bounds the nesting of arrays and objects, in a schema
	// document and in arguments alike.
	defaultMaxDepth = 64
	// defaultMaxArgumentBytes bounds the size of the arguments of one call.
	defaultMaxArgumentBytes = 1 << 20
	// defaultMaxSchemaExpansion bounds the subschema evaluations one value
	// can cause.
	defaultMaxSchemaExpansion = 100_000
	// defaultMaxPatternWork bounds one regular expression match: the
	// string's length in bytes times the size of the pattern's program
	// (about 10 ns per unit on a slow machine in the worst case), or 10 ns
	// per unit of time for a pattern that needs the backtracking engine
	// (about 0.67 s).
	defaultMaxPatternWork = 1 << 26
	// defaultMaxSubschemas bounds the subschemas of one schema document.
	defaultMaxSubschemas = 10_000
	// defaultMaxEvaluations bounds the subschema evaluations of one
	// Validate call.
	defaultMaxEvaluations = 2_000_000
	// defaultMaxValidationWork bounds the pattern matching of one Validate
	// call, summed over its matches, in the unit of defaultMaxPatternWork:
	// two of the longest single matches, about two seconds.
	defaultMaxValidationWork = 2 * defaultMaxPatternWork
)

// Options bound what Compile and CompileSchema accept and what the compiled
// Schema validates. A nil *Options means all defaults.
//
// Independently of Options, one number literal (in a schema or in
// arguments) may have at most 1000 characters and an exponent of at most
// 1000 in magnitude: exact arithmetic on larger ones could take minutes.
type Options struct {
	// MaxSchemaBytes is the largest schema document accepted, in bytes.
	// Zero or negative means 1 MiB.
	MaxSchemaBytes int
	// MaxDepth is the deepest nesting of arrays and objects accepted, both in
	// the schema document and in arguments. Zero or negative means
	// 64.
	MaxDepth int
	// MaxArgumentBytes is the largest arguments document Validate accepts,
	// in bytes. Zero or negative means 1 MiB.
	MaxArgumentBytes int
	// MaxSchemaExpansion is the most subschema evaluations the schema may
	// cause for one value, counting a subschema shared through $ref once
	// per path to it; a schema over it fails to compile, because validating
	// with it could take exponential time. Zero or negative means
	// 100,000.
	MaxSchemaExpansion int
	// MaxPatternWork bounds one match of a pattern or patternProperties
	// key: the string's length in bytes times the number of instructions
	// of the compiled pattern (a simple pattern has tens, "[a-z]{1,255}"
	// hundreds). Matching time grows with that product, so a longer string
	// is not matched: Validate reports it with a root violation instead.
	// A pattern that needs the backtracking engine (lookaround,
	// backreferences: see the package documentation) may match for
	// MaxPatternWork × 10 ns of time; a match that takes longer, or more
	// than 100,000 entries of backtracking stack, gets the same root
	// violation. Zero or negative means 1 << 26 (about 0.67 s of backtracking).
	MaxPatternWork int
	// MaxSubschemas is the most subschemas (the root, each property,
	// each $defs entry, each allOf branch, ...) a schema document may
	// have; it may hold twice as many JSON objects of any kind. The validator library's compile time grows with the square of
	// this count: 40,000 take about ten seconds. Zero or negative means
	// 10,000.
	MaxSubschemas int
	// MaxEvaluations bounds the work of one Validate or ValidateValue
	// call: the number of values at each nesting depth times the most
	// subschema evaluations the schema applies to one value at that depth
	// (known at load). A wide array against an item schema that is
	// expensive but within MaxSchemaExpansion would otherwise take
	// minutes. Over it, the arguments get a root violation without being
	// validated. Zero or negative means 2,000,000.
	MaxEvaluations int
	// MaxValidationWork bounds the pattern matching of one Validate or
	// ValidateValue call: the sum over every match of a pattern or
	// patternProperties key of (the string's length in bytes + 1) times the
	// number of instructions of the pattern, the unit of MaxPatternWork
	// (a match of the backtracking engine counts its time, 10 ns a unit).
	// MaxPatternWork bounds one match; many matches each within it (31
	// strings of 32 KB against one large unanchored pattern) would
	// otherwise take most of a minute. Over it, Validate stops and reports
	// a root violation saying that the arguments are too expensive to
	// check. Zero or negative means twice the default MaxPatternWork.
	MaxValidationWork int
}

func (o *Options) limits() limits {
	l := limits{schemaBytes: defaultMaxSchemaBytes, depth: defaultMaxDepth, argumentBytes: defaultMaxArgumentBytes, expansion: defaultMaxSchemaExpansion, patternWork: defaultMaxPatternWork, subschemas: defaultMaxSubschemas, evaluations: defaultMaxEvaluations, validationWork: defaultMaxValidationWork}
	if o == nil {
		return l
	}
	if o.MaxSchemaBytes > 0 {
		l.schemaBytes = o.MaxSchemaBytes
	}
	if o.MaxDepth > 0 {
		l.depth = o.MaxDepth
	}
	if o.MaxArgumentBytes > 0 {
		l.argumentBytes = o.MaxArgumentBytes
	}
	if o.MaxSchemaExpansion > 0 {
		l.expansion = o.MaxSchemaExpansion
	}
	if o.MaxPatternWork > 0 {
		l.patternWork = o.MaxPatternWork
	}
	if o.MaxSubschemas > 0 {
		l.subschemas = o.MaxSubschemas
	}
	if o.MaxEvaluations > 0 {
		l.evaluations = o.MaxEvaluations
	}
	if o.MaxValidationWork > 0 {
		l.validationWork = o.MaxValidationWork
	}
	return l
}

type limits struct {
	schemaBytes, depth, argumentBytes, expansion, patternWork, subschemas, evaluations, validationWork int
}

// Schema is a compiled schema. It is safe for concurrent use, and
// immutable but for the tracked copies it keeps for costly calls.
type Schema struct {
	raw        []byte
	dialect    string
	digest     string
	toolInput  bool // arguments must be a JSON object (Compile, not CompileSchema)
	limits     limits
	compiled   *jsonschema.Schema
	schemaPath map[string]string // compiled schema location -> JSON pointer in raw
	levelCost  []int             // most evaluations of one value, by nesting depth

	// Patterns: the most pattern instructions applied to one string (a
	// value or a property name) by nesting depth, recorded apart while
	// loading, then summed (nil without patterns).
	valuePatternCost, keyPatternCost []int
	patternCost                      []int
	// Tracked copies for costly calls, and what compiling one needs: the
	// subschema positions.
	twins     *twinPool
	positions []string
}

// Compile compiles a tool input schema: everything CompileSchema does, and
// the root must accept objects: a root that explicitly declares another type,
// directly or through $ref chains and allOf, or the schema false, fails with
// ErrNotObject. Validate then also requires the arguments to be
// a JSON object.
func Compile(raw []byte, opts *Options) (*Schema, error) {
	return compile(raw, opts, true)
}

// CompileSchema compiles a schema of any root type under the same offline,
// dialect and safety rules as Compile: the default dialect is 2020-12, only
// the five standard dialects are accepted, and every reference must resolve
// inside raw. Nothing is ever fetched or read.
func CompileSchema(raw []byte, opts *Options) (*Schema, error) {
	return compile(raw, opts, false)
}

// Validate is ValidateContext with a context that never ends.
func (s *Schema) Validate(args json.RawMessage) error {
	return s.ValidateContext(context.Background(), args)
}

// ValidateContext decodes args (keeping every number exact) and validates
// them. It returns nil or an *ArgumentError. Arguments that are too large,
// too deep, not JSON, or (for a schema from Compile) not a JSON object are
// also reported as an *ArgumentError with a violation at the root, and so
// are arguments that name an object key twice (a server's parser may take
// another value than the one validated) and arguments whose pattern matching
// would exceed Options.MaxValidationWork. A string that is not valid Unicode
// text (invalid UTF-8, such as an overlong form or an encoded surrogate, or
// a \u escape of a lone surrogate) is reported at its path, a property name
// at its object's path: encoding/json reads such text as U+FFFD, other
// parsers keep it, so the server could see another string than the one
// validated. Nothing is coerced and no default is inserted.
//
// When ctx ends first, ValidateContext stops and returns ctx.Err(), unwrapped.
func (s *Schema) ValidateContext(ctx context.Context, args json.RawMessage) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(args) > s.limits.argumentBytes {
		return rootViolation("", "arguments exceed "+strconv.Itoa(s.limits.argumentBytes)+" bytes")
	}
	// Cheap object check first: a tool's arguments are always an object.
	if s.toolInput && firstByte(args) != '{' {
		return rootViolation("", "arguments must be a JSON object")
	}
	d := decoder{data: args, maxDepth: s.limits.depth, maxNumberLength: maxNumberLength, maxExponent: maxExponent, uniqueKeys: true, validText: true}
	// One array for both counts: it escapes, so one allocation. String
	// bytes matter only to a schema with patterns.
	var array [2 * (defaultMaxDepth + 1)]int
	n, counts := s.limits.depth+1, array[:]
	if 2*n > len(counts) {
		counts = make([]int, 2*n)
	}
	d.perDepth = counts[:n:n]
	if len(s.patternCost) > 0 {
		d.strBytes = counts[n : 2*n]
	}
	v, err := d.document()
	if err != nil {
		return argumentDecodeError(err, s.limits.depth)
	}
	evaluations, err := s.checkEvaluations(d.perDepth)
	if err != nil {
		return err
	}
	return s.validateDecoded(ctx, v, evaluations, d.strBytes)
}

// ValidateValue is ValidateValueContext with a context that never ends.
func (s *Schema) ValidateValue(v any) error {
	return s.ValidateValueContext(context.Background(), v)
}

// ValidateValueContext validates an already decoded value. Values made of
// nil, bool, string, json.Number, float64 and the other Go numbers, []any
// and map[string]any are validated as they are; anything else is first
// turned into JSON with encoding/json. The same limits, the object rule,
// the text rule (strings and property names must be valid UTF-8) and the
// context rule of ValidateContext apply.
func (s *Schema) ValidateValueContext(ctx context.Context, v any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := normalizeValue(v, s.limits)
	if err != nil {
		return err
	}
	if s.toolInput {
		if _, ok := v.(map[string]any); !ok {
			return rootViolation("", "arguments must be a JSON object")
		}
	}
	if err := textError(v); err != nil {
		return err
	}
	perDepth, strBytes := make([]int, s.limits.depth+1), make([]int, s.limits.depth+1)
	countValues(v, 0, perDepth, strBytes)
	evaluations, err := s.checkEvaluations(perDepth)
	if err != nil {
		return err
	}
	return s.validateDecoded(ctx, v, evaluations, strBytes)
}

// checkEvaluations bounds the subschema evaluations of validating a value
// with perDepth[d] values at depth d, and refuses it over MaxEvaluations.
func (s *Schema) checkEvaluations(perDepth []int) (int, error) {
	n := s.evaluationsOf(perDepth)
	if n > s.limits.evaluations {
		return n, rootViolation("", "the arguments have too many values for this schema: validating them could take more than "+strconv.Itoa(s.limits.evaluations)+" subschema evaluations (Options.MaxEvaluations)")
	}
	return n, nil
}

// countValues adds the values of v (property names included) to perDepth
// and the bytes of its strings (property names included, plus two each, as
// the decoder counts their quotes) to strBytes, by nesting depth; v nests
// no deeper than len(perDepth)-1 (checked).
func countValues(v any, depth int, perDepth, strBytes []int) {
	if depth >= len(perDepth) {
		return
	}
	perDepth[depth]++
	switch v := v.(type) {
	case string:
		strBytes[depth] += len(v) + 2
	case map[string]any:
		if depth+1 < len(perDepth) {
			perDepth[depth+1] += len(v)
			for k := range v {
				strBytes[depth+1] += len(k) + 2
			}
		}
		for _, e := range v {
			countValues(e, depth+1, perDepth, strBytes)
		}
	case []any:
		for _, e := range v {
			countValues(e, depth+1, perDepth, strBytes)
		}
	}
}

// validateDecoded validates v, whose validation takes at most evaluations
// subschema evaluations and whose strings have strBytes bytes at each
// nesting depth: on the shared compiled schema when that bounds its work to
// a few milliseconds, else on a tracked twin.
func (s *Schema) validateDecoded(ctx context.Context, v any, evaluations int, strBytes []int) error {
	if evaluations > untrackedEvaluations || s.patternWorkOf(strBytes) > min(untrackedPatternWork, s.limits.validationWork) {
		return s.validateTracked(ctx, v)
	}
	return s.validateShared(v)
}

func (s *Schema) validateShared(v any) (verdict error) {
	defer recoverPatternBound(&verdict, s.limits.patternWork)
	return s.validateWith(s.compiled, v)
}

func (s *Schema) validateWith(compiled *jsonschema.Schema, v any) error {
	err := compiled.Validate(v)
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return rootViolation("", "arguments could not be validated")
	}
	return s.render(verr, v)
}

// Raw returns a copy of the schema document as it was compiled.
func (s *Schema) Raw() json.RawMessage { return bytes.Clone(s.raw) }

// Dialect returns the URL of the schema's dialect, such as
// "https://json-schema.org/draft/2020-12/schema" (also when $schema is
// absent) or "http://json-schema.org/draft-07/schema#".
func (s *Schema) Dialect() string { return s.dialect }

// Digest returns a stable hex SHA-256 of the schema's canonical form: the
// document re-encoded with sorted keys, no insignificant space, and numbers
// kept as written. Documents that differ only in key order or whitespace
// have the same digest.
func (s *Schema) Digest() string { return s.digest }

func canonicalDigest(doc any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// doc came from our own decoder: only JSON types, so Encode cannot fail.
	_ = enc.Encode(doc)
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
	return hex.EncodeToString(sum[:])
}
