// Package toolschema compiles JSON Schemas offline and validates tool
// arguments against them, with errors that name fields and schema keywords
// but never echo argument values.
//
//	s, err := toolschema.Compile(inputSchema, nil) // nil: default limits
//	if err != nil {
//		// *SchemaError; errors.Is(err, toolschema.ErrExternalRef), ...
//	}
//	if err := s.Validate(json.RawMessage(`{"limit": 0}`)); err != nil {
//		var aerr *toolschema.ArgumentError
//		if errors.As(err, &aerr) {
//			fmt.Println(aerr.Violations[0]) // {/limit #/properties/limit/minimum must be >= 1}
//		}
//	}
//
// Compile is for tool input schemas: the root must accept a JSON object and
// Validate refuses any other arguments. CompileSchema accepts any root type.
// Both use github.com/santhosh-tekuri/jsonschema/v6 underneath, with
// 2020-12 as the default dialect and draft-04, -06, -07 and 2019-09
// recognised from $schema. Numbers are decoded exactly (no float64 round
// trip); nothing is coerced and no default is inserted. Arguments that a
// server's parser could read differently from the validator are refused:
// an object key named twice (at the root), and a string or property name
// that is not valid Unicode text, that is invalid UTF-8 (overlong forms,
// encoded surrogates, stray bytes) or a \u escape of a lone surrogate (at
// the string's path, or the object's for a property name). format follows each
// dialect's standard: asserted in draft-04/06/07, an annotation only in
// 2019-09 and 2020-12.
//
// # Formats
//
// Where format is asserted, hostname and idn-hostname follow RFC 1123 and
// IDNA2008 (RFC 5890-5893: the derived property of every code point, the
// CONTEXTJ and CONTEXTO rules, the Bidi rule, Punycode that re-encodes to
// itself; golang.org/x/net/idna supplies Punycode, joining types and the
// DNS lengths); email and idn-email follow RFC 5321 and RFC 6531; ipv4 is
// dotted decimal without signs or leading zeros; uri, uri-reference, iri
// and iri-reference follow the RFC 3986 and RFC 3987 grammar; uri-template
// follows RFC 6570; regex is the ECMA-262 pattern grammar in Unicode mode
// (the syntax only, Unicode property names by their shape). Each check is
// one linear pass and its error never contains the value. The other
// formats use the library's checkers.
//
// # Patterns
//
// "pattern" and the keys of "patternProperties" are ECMA-262 regular
// expressions in Unicode mode, as JSON Schema asks. Go's regexp (RE2) runs
// every one it can express, in time linear in the string, with its
// ECMA-262 meaning: where the two read a construct differently, RE2 gets it
// written out. \s and \S follow ECMA-262's whitespace (RE2's lacks \v,
// U+00A0, U+FEFF, the Unicode space separators, U+2028 and U+2029), "."
// also refuses \r, U+2028 and U+2029, [] matches nothing and [^] anything,
// and \cX, \0 and the \u escapes are code points; \d, \w and \b (ASCII),
// and ^ and $ (the ends of the string), mean the same in both. Patterns
// with what RE2 lacks (lookahead and lookbehind, backreferences, the
// (?ims-ims:) modifiers, Unicode properties such as Extended_Pictographic
// or Script=Greek), as zod writes for hostnames, emails, emoji and
// durations, run on github.com/dlclark/regexp2/v2 in ECMAScript mode, a
// backtracking engine (see Limits). A pattern outside ECMA-262 that Go's
// regexp accepts (\pL, (?i), \z, [[:alpha:]], as servers written in Go
// emit) runs with Go's meaning. A pattern neither takes fails Compile with
// ErrInvalidSchema at its pointer, saying that it is not a valid ECMA-262
// regular expression and, where the engine can tell, why.
//
// # Offline
//
// Compiling never fetches a URL or opens a file, and every reference must
// resolve inside the document, including references to the json-schema.org
// meta-schemas. Unused $defs are checked too.
//
// # Errors
//
// Compile and CompileSchema return a *SchemaError: a JSON pointer into the
// schema, a message that says what to fix, and one of the sentinels
// ErrUnsupportedDialect, ErrExternalRef, ErrNotObject or ErrInvalidSchema for
// errors.Is. Validate and ValidateValue return nil or an *ArgumentError whose
// Violations are sorted and deterministic; their Context forms also return
// the context's error when it ends first.
//
// # Limits
//
// Schemas and arguments are hostile input. Options bound schema size,
// nesting depth (schema and arguments), argument size, and how far shared
// subschemas may multiply the work of validating one value (a chain of
// anyOf that each refer twice to the next link would otherwise take
// exponential time, and so would a recursive schema that applies itself
// twice to the same nested value, also through $dynamicRef or
// $recursiveRef), how many subschemas a document may have (the library's
// compile time is quadratic in them), how much work one call may cause (the
// values at each depth times what one value there costs), and how long a
// string one pattern may be matched against (Go's regexp is linear, with
// the pattern's size as the factor; the backtracking engine is bounded by
// time, see below). A $ref may only point at a subschema
// position ($defs and definitions count in every dialect). A number literal
// may have at most 1000 characters and an exponent of at most 1000. Over a
// limit, Compile fails with
// ErrInvalidSchema and Validate returns a violation at the root; neither
// hangs nor overflows the stack.
//
// The pattern matching of one call is bounded as a whole, besides each
// match: Options.MaxValidationWork (by default twice
// the default MaxPatternWork, about two seconds) bounds the sum over its
// matches of (string length + 1) × pattern program size. A call over it
// gets a root violation saying that the arguments are too expensive to
// check. ValidateContext and ValidateValueContext also stop when their
// context ends, within about a millisecond of matching or evaluating, and
// return the context's error; Validate and ValidateValue never stop early.
// The validator library cannot pass a call to a pattern or a keyword, so a
// call that could take more than about ten milliseconds (bounds computed
// before validating: the string bytes and the values at each nesting depth
// against the patterns and subschemas one value there can meet) is
// validated on a second compiled copy of the schema that counts its work
// and looks at its context; such copies are made when first needed, at
// most two per Schema, and a call that finds both busy waits for one or
// for its context. Decoding the arguments (a few milliseconds for the
// largest) does not look at the context.
//
// The backtracking engine's time may grow exponentially with the string
// ("^(?=a)(a+)+$" against "aaaa...!"), so its work is counted in time, one
// unit per 10 ns: a match may run for MaxPatternWork units (about 0.67 s
// by default), the matches of a call for MaxValidationWork together with
// RE2's work (about 1.3 s), and a match's backtracking stack holds at most
// 100,000 entries; over a bound is the same root violation as for RE2. A
// call whose strings may meet such a pattern is always validated on a
// tracked copy, which stops waiting for a match as soon as the call's
// context ends or its budget is spent; the match then ends by itself in
// the background at its own bound, up to 0.2 s later (the engine looks at
// a clock that ticks every 100 ms). Unlike RE2's, such a bound depends on
// the machine's speed, and only decides for matches that come near it. The
// engine's clock goroutine (github.com/dlclark/regexp2/v2.runClock) stops
// about a second after the last bounded match; a goroutine leak check
// should ignore it.
//
// # Concurrency
//
// A *Schema is immutable after Compile returns, but for the tracked copies
// of the compiled schema it makes for costly calls (see Limits); any number
// of goroutines may call its methods at once.
package toolschema
