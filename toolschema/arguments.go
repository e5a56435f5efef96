package toolschema

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// firstByte returns the first byte of data that is not JSON whitespace, or 0.
func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// argumentDecodeError turns a decode failure of arguments into a root
// violation; the message gives an offset, never the input.
func argumentDecodeError(err error, depth int) *ArgumentError {
	de, _ := err.(*decodeError)
	switch {
	case de != nil && de.tooDeep:
		return rootViolation("", "arguments nest deeper than "+strconv.Itoa(depth)+" levels")
	case de != nil && de.duplicate:
		return rootViolation("", "arguments name the same object key twice (at offset "+strconv.Itoa(de.offset)+"): send each key once, so that the value checked is the value used")
	case de != nil && de.badText && de.inKey:
		return &ArgumentError{Violations: []Violation{{Path: de.path, Message: "has a property name that is not valid Unicode text: it holds " + de.msg + "; send UTF-8 without lone surrogates, so that the name checked is the name used"}}}
	case de != nil && de.badText:
		return &ArgumentError{Violations: []Violation{{Path: de.path, Message: "is not valid Unicode text: it holds " + de.msg + "; send UTF-8 without lone surrogates, so that the value checked is the value used"}}}
	case de != nil && de.bigNumber:
		return rootViolation("", "arguments contain a "+de.msg)
	case de != nil:
		return rootViolation("", "arguments are not valid JSON ("+de.Error()+")")
	}
	return rootViolation("", "arguments are not valid JSON")
}

// normalizeValue returns v when it is made of JSON types only, and otherwise
// v turned into JSON and decoded again. Depth is bounded either way, which
// also stops cyclic maps.
func normalizeValue(v any, l limits) (any, error) {
	ok, tooDeep := isJSONValue(v, l.depth)
	if tooDeep {
		return nil, rootViolation("", "arguments nest deeper than "+strconv.Itoa(l.depth)+" levels")
	}
	if ok {
		return v, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, rootViolation("", "arguments cannot be encoded as JSON")
	}
	if len(data) > l.argumentBytes {
		return nil, rootViolation("", "arguments exceed "+strconv.Itoa(l.argumentBytes)+" bytes")
	}
	out, err := decodeJSON(data, l.depth)
	if err != nil {
		return nil, argumentDecodeError(err, l.depth)
	}
	return out, nil
}

// isJSONValue reports whether v holds only types the validator understands,
// and whether it nests deeper than depth.
func isJSONValue(v any, depth int) (ok, tooDeep bool) {
	switch v := v.(type) {
	case json.Number:
		// Same literal grammar and bounds as decoded arguments.
		d := decoder{data: []byte(v), maxDepth: 0, maxNumberLength: maxNumberLength, maxExponent: maxExponent}
		n, err := d.document()
		_, isNumber := n.(json.Number)
		return err == nil && isNumber, false
	case nil, bool, string,
		int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64:
		return true, false
	case float64:
		// NaN and infinities are not JSON; encoding/json refuses them.
		return !math.IsNaN(v) && !math.IsInf(v, 0), false
	case float32:
		f := float64(v)
		return !math.IsNaN(f) && !math.IsInf(f, 0), false
	case []any:
		if depth == 0 {
			return false, true
		}
		ok = true
		for _, e := range v {
			eok, deep := isJSONValue(e, depth-1)
			if deep {
				return false, true
			}
			ok = ok && eok
		}
		return ok, false
	case map[string]any:
		if depth == 0 {
			return false, true
		}
		ok = true
		for _, e := range v {
			eok, deep := isJSONValue(e, depth-1)
			if deep {
				return false, true
			}
			ok = ok && eok
		}
		return ok, false
	default:
		// Structs, typed maps and slices, pointers: encoding/json decides.
		// A cyclic pointer graph makes json.Marshal fail, not loop.
		return false, false
	}
}

// textError is the violation of ValidateValue for a string or property
// name of v that is not valid UTF-8 (a Go string can hold any bytes), the
// same as the decoder's for arguments; nil if all are valid. With several,
// the first in sorted key order is reported.
func textError(v any) error {
	if validText(v) {
		return nil
	}
	path, inKey := firstInvalidText(v, "")
	if inKey {
		return &ArgumentError{Violations: []Violation{{Path: path, Message: "has a property name that is not valid Unicode text: it holds bytes that are not UTF-8; send UTF-8 without lone surrogates, so that the name checked is the name used"}}}
	}
	return &ArgumentError{Violations: []Violation{{Path: path, Message: "is not valid Unicode text: it holds bytes that are not UTF-8; send UTF-8 without lone surrogates, so that the value checked is the value used"}}}
}

// validText reports whether every string and property name of v is valid
// UTF-8 (v is a normalized value, its depth bounded).
func validText(v any) bool {
	switch v := v.(type) {
	case string:
		return utf8.ValidString(v)
	case map[string]any:
		for k, e := range v {
			if !utf8.ValidString(k) || !validText(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !validText(e) {
				return false
			}
		}
	}
	return true
}

// firstInvalidText returns the path of the first string of v that is not
// valid UTF-8, or of the object of the first such property name (v holds
// one: validText(v) is false).
func firstInvalidText(v any, path string) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if !utf8.ValidString(k) {
				return path, true
			}
			if !validText(v[k]) {
				return firstInvalidText(v[k], path+"/"+escapeToken(k))
			}
		}
	case []any:
		for i, e := range v {
			if !validText(e) {
				return firstInvalidText(e, path+"/"+strconv.Itoa(i))
			}
		}
	}
	return path, false
}
