package toolschema

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeJSON decodes exactly one JSON document into the types the validator
// understands: nil, bool, string, json.Number (the literal as written, so no
// precision is lost), []any and map[string]any. It gives the same result as
// encoding/json with UseNumber (invalid UTF-8 and lone surrogates become
// U+FFFD, a duplicate key keeps its last value) but in one pass that also
// bounds nesting, and without the reflection of encoding/json: it is the hot
// path of every tool call. For arguments, Validate's decoder refuses
// duplicate keys and text that is not valid Unicode instead
// (decoder.uniqueKeys, decoder.validText).
//
// Numbers are bounded too (maxNumberLength, maxExponent): the validator
// turns numbers into big.Rat, whose cost grows quadratically with the
// digits and exponentially with the exponent, so "1e99999999" alone would
// stall it for minutes.
func decodeJSON(data []byte, maxDepth int) (any, error) {
	d := decoder{data: data, maxDepth: maxDepth, maxNumberLength: maxNumberLength, maxExponent: maxExponent}
	return d.document()
}

// Bounds on one number literal, in arguments and schemas alike.
const (
	maxNumberLength = 1000 // characters of the literal
	maxExponent     = 1000 // magnitude of the exponent after e or E
)

func (d *decoder) document() (any, error) {
	// One copy of the input as a string: plain strings and numbers are then
	// substrings of it, not one allocation each.
	d.src = string(d.data)
	d.skipSpace()
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, d.syntaxError("after the top-level value")
	}
	return v, nil
}

// decodeError says where decoding stopped; it never quotes the input.
type decodeError struct {
	offset    int
	tooDeep   bool
	bigNumber bool
	duplicate bool
	msg       string

	// badText: a string (or, with inKey, a property name) is not valid
	// Unicode text; path is the JSON pointer of the string (of the object
	// for a property name), filled in while the error returns.
	badText, inKey bool
	path           string
}

// within prefixes the path of a badText error with one token (a property
// name or an array index) as it returns through its parent.
func within(err error, token string) error {
	if de, ok := err.(*decodeError); ok && de.badText {
		de.path = "/" + escapeToken(token) + de.path
	}
	return err
}

func (e *decodeError) Error() string {
	return e.msg + " at offset " + strconv.Itoa(e.offset)
}

type decoder struct {
	data     []byte
	src      string // data as a string, shared by the decoded strings
	pos      int
	depth    int
	maxDepth int
	buf      []byte // scratch for strings with escapes
	elems    []any  // scratch stack for array elements
	perDepth []int  // if not nil: values (and property names) per depth
	strBytes []int  // if not nil: bytes of strings (and property names) per depth

	// uniqueKeys refuses an object that names a key twice. Arguments need
	// it: the validator keeps the last value, but a server's parser may keep
	// the first, and then validation would have checked the wrong value.
	uniqueKeys bool
	// validText refuses strings that are not valid Unicode text: invalid
	// UTF-8 (overlong forms, encoded surrogates, stray bytes) and \u
	// escapes of lone surrogates. Arguments need it for the same reason:
	// encoding/json reads them as U+FFFD, other parsers keep the bytes or
	// the code unit, so the server could see another string than the one
	// validated.
	validText bool

	maxNumberLength, maxExponent int
}

func (d *decoder) syntaxError(where string) error {
	if d.pos >= len(d.data) {
		return &decodeError{offset: d.pos, msg: "unexpected end of JSON input"}
	}
	return &decodeError{offset: d.pos, msg: "invalid character " + where}
}

func (d *decoder) numberError(start int) error {
	return &decodeError{offset: start, bigNumber: true, msg: "number longer than " + strconv.Itoa(d.maxNumberLength) +
		" characters or with an exponent beyond " + strconv.Itoa(d.maxExponent)}
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value() (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.syntaxError("")
	}
	if d.perDepth != nil {
		d.perDepth[d.depth]++
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		start := d.pos
		s, err := d.str()
		if d.strBytes != nil {
			d.strBytes[d.depth] += d.pos - start
		}
		return s, err
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.syntaxError("looking for the beginning of a value")
}

func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return nil
	}
	// Point at the first byte that differs.
	for i := 0; i < len(lit) && d.pos < len(d.data) && d.data[d.pos] == lit[i]; i++ {
		d.pos++
	}
	return d.syntaxError("in literal")
}

func (d *decoder) enter() error {
	d.depth++
	if d.depth > d.maxDepth {
		return &decodeError{offset: d.pos, tooDeep: true, msg: "nesting deeper than " + strconv.Itoa(d.maxDepth) + " levels"}
	}
	return nil
}

func (d *decoder) object() (any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++ // '{'
	obj := make(map[string]any)
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return obj, nil
	}
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.syntaxError("looking for the beginning of an object key")
		}
		keyStart := d.pos
		key, err := d.str()
		if err != nil {
			if de, ok := err.(*decodeError); ok && de.badText {
				de.inKey = true
			}
			return nil, err
		}
		if d.uniqueKeys {
			if _, dup := obj[key]; dup {
				return nil, &decodeError{offset: keyStart, duplicate: true, msg: "an object key appears twice"}
			}
		}
		if d.perDepth != nil {
			d.perDepth[d.depth]++
		}
		if d.strBytes != nil {
			d.strBytes[d.depth] += d.pos - keyStart
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.syntaxError("after an object key")
		}
		d.pos++
		d.skipSpace()
		v, err := d.value()
		if err != nil {
			return nil, within(err, key)
		}
		obj[key] = v
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.syntaxError("")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case '}':
			d.pos++
			d.depth--
			return obj, nil
		default:
			return nil, d.syntaxError("after an object value")
		}
	}
}

func (d *decoder) array() (any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.pos++ // '['
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return []any{}, nil
	}
	// Elements gather on a stack shared by all arrays of the document and
	// are copied once into a slice of the exact length.
	base := len(d.elems)
	for {
		index := len(d.elems) - base // before the element's own arrays push theirs
		v, err := d.value()
		if err != nil {
			return nil, within(err, strconv.Itoa(index))
		}
		d.elems = append(d.elems, v)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.syntaxError("")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case ']':
			d.pos++
			d.depth--
			arr := make([]any, len(d.elems)-base)
			copy(arr, d.elems[base:])
			clear(d.elems[base:])
			d.elems = d.elems[:base]
			return arr, nil
		default:
			return nil, d.syntaxError("after an array element")
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (d *decoder) number() (any, error) {
	start := d.pos
	data := d.data
	if data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(data) && data[d.pos] == '0':
		d.pos++
	case d.pos < len(data) && data[d.pos] >= '1' && data[d.pos] <= '9':
		for d.pos < len(data) && isDigit(data[d.pos]) {
			d.pos++
		}
	default:
		return nil, d.syntaxError("in numeric literal")
	}
	if d.pos < len(data) && data[d.pos] == '.' {
		d.pos++
		if d.pos >= len(data) || !isDigit(data[d.pos]) {
			return nil, d.syntaxError("after decimal point in numeric literal")
		}
		for d.pos < len(data) && isDigit(data[d.pos]) {
			d.pos++
		}
	}
	if d.pos < len(data) && (data[d.pos] == 'e' || data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(data) && (data[d.pos] == '+' || data[d.pos] == '-') {
			d.pos++
		}
		if d.pos >= len(data) || !isDigit(data[d.pos]) {
			return nil, d.syntaxError("in exponent of numeric literal")
		}
		exp := 0
		for d.pos < len(data) && isDigit(data[d.pos]) {
			if exp <= d.maxExponent {
				exp = exp*10 + int(data[d.pos]-'0')
			}
			d.pos++
		}
		if exp > d.maxExponent {
			return nil, d.numberError(start)
		}
	}
	if d.pos-start > d.maxNumberLength {
		return nil, d.numberError(start)
	}
	return json.Number(d.src[start:d.pos]), nil
}

// str decodes a string starting at the opening quote.
func (d *decoder) str() (string, error) {
	d.pos++ // '"'
	start := d.pos
	data := d.data
	// Fast path: plain ASCII without escapes.
	for d.pos < len(data) {
		c := data[d.pos]
		if c == '"' {
			s := d.src[start:d.pos]
			d.pos++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		d.pos++
	}
	buf := append(d.buf[:0], data[start:d.pos]...)
	for d.pos < len(data) {
		c := data[d.pos]
		switch {
		case c == '"':
			d.pos++
			d.buf = buf
			return string(buf), nil
		case c < 0x20:
			return "", d.syntaxError("in string literal")
		case c == '\\':
			d.pos++
			if d.pos >= len(data) {
				return "", d.syntaxError("")
			}
			switch e := data[d.pos]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
				d.pos++
			case 'b':
				buf = append(buf, '\b')
				d.pos++
			case 'f':
				buf = append(buf, '\f')
				d.pos++
			case 'n':
				buf = append(buf, '\n')
				d.pos++
			case 'r':
				buf = append(buf, '\r')
				d.pos++
			case 't':
				buf = append(buf, '\t')
				d.pos++
			case 'u':
				d.pos++
				r, ok := d.hex4()
				if !ok {
					return "", d.syntaxError("in \\u hexadecimal character escape")
				}
				if utf16.IsSurrogate(r) {
					// A valid pair becomes one rune; anything else is U+FFFD
					// and the next escape is read on its own, as encoding/json does.
					if d.pos+1 < len(data) && data[d.pos] == '\\' && data[d.pos+1] == 'u' {
						save := d.pos
						d.pos += 2
						r2, ok2 := d.hex4()
						if ok2 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								buf = utf8.AppendRune(buf, dec)
								continue
							}
						}
						d.pos = save
					}
					if d.validText {
						return "", d.textError(d.pos-6, "a \\u escape of a lone surrogate")
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", d.syntaxError("in string escape code")
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				if d.validText {
					return "", d.textError(d.pos, "bytes that are not UTF-8")
				}
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, data[d.pos:d.pos+size]...)
			}
			d.pos += size
		}
	}
	return "", d.syntaxError("")
}

func (d *decoder) textError(offset int, what string) error {
	return &decodeError{offset: offset, badText: true, msg: what}
}

func (d *decoder) hex4() (rune, bool) {
	if len(d.data)-d.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	d.pos += 4
	return r, true
}
