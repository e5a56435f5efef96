package toolschema

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
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

// nestingDepth returns the deepest nesting of arrays and objects in data,
// stopping as soon as it passes limit. It does not check that data is JSON;
// the decoder does that afterwards, on input now known to be shallow.
func nestingDepth(data []byte, limit int) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// checkJSON reports arguments nested deeper than limit as a root violation.
func checkJSON(data []byte, limit int) *ArgumentError {
	if nestingDepth(data, limit) > limit {
		return rootViolation("", "arguments nest deeper than "+strconv.Itoa(limit)+" levels")
	}
	return nil
}

// decodeJSON decodes one JSON document keeping numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
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
	if aerr := checkJSON(data, l.depth); aerr != nil {
		return nil, aerr
	}
	out, err := decodeJSON(data)
	if err != nil {
		return nil, rootViolation("", "arguments are not valid JSON")
	}
	return out, nil
}

// isJSONValue reports whether v holds only types the validator understands,
// and whether it nests deeper than depth.
func isJSONValue(v any, depth int) (ok, tooDeep bool) {
	switch v := v.(type) {
	case nil, bool, string, json.Number,
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
