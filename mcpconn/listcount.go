package mcpconn

import (
	"bytes"
	"encoding/json"
	"strings"
)

// countListedTools counts the entries of the "tools" array of a tools/list
// result without decoding them, so a page of too many tools is refused
// before the go-sdk builds a value for each. It errs on the side of more:
// every top-level key that decodes to "tools" in any letter case counts.
// Malformed JSON counts what was seen; the decoder refuses it later.
func countListedTools(result []byte) int {
	i := skipSpace(result, 0)
	if i >= len(result) || result[i] != '{' {
		return 0
	}
	i++
	total := 0
	for {
		i = skipSpace(result, i)
		if i >= len(result) || result[i] != '"' {
			return total
		}
		end := skipString(result, i)
		if end < 0 {
			return total
		}
		key := result[i:end]
		i = skipSpace(result, end)
		if i >= len(result) || result[i] != ':' {
			return total
		}
		i = skipSpace(result, i+1)
		if i < len(result) && result[i] == '[' && isToolsKey(key) {
			n, next := countArray(result, i)
			total += n
			i = next
		} else {
			i = skipValue(result, i)
		}
		if i < 0 {
			return total
		}
		i = skipSpace(result, i)
		if i >= len(result) || result[i] != ',' {
			return total
		}
		i++
	}
}

// isToolsKey reports whether a quoted key decodes to "tools", in any case.
func isToolsKey(quoted []byte) bool {
	if !bytes.ContainsRune(quoted, '\\') {
		return strings.EqualFold(string(quoted[1:len(quoted)-1]), "tools")
	}
	var k string
	return json.Unmarshal(quoted, &k) == nil && strings.EqualFold(k, "tools")
}

// countArray counts the values of the array at b[i] == '[' and returns the
// index after it (-1 when it does not end).
func countArray(b []byte, i int) (int, int) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return 0, i + 1
	}
	n := 0
	for i >= 0 && i < len(b) {
		n++
		i = skipValue(b, i)
		if i < 0 {
			return n, -1
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return n, -1
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return n, i + 1
		default:
			return n, -1
		}
	}
	return n, -1
}

// skipValue returns the index just after the value that starts at b[i]
// (-1 when it does not end). Scalars end at the next delimiter.
func skipValue(b []byte, i int) int {
	end, _ := skipNested(b, i)
	return end
}

// skipNested is skipValue that also returns how many levels of arrays and
// objects the value nests (0 for a scalar), as far as it was read.
func skipNested(b []byte, i int) (end, nesting int) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = skipString(b, i)
			if i < 0 || depth == 0 {
				return i, nesting
			}
			continue
		case '{', '[':
			depth++
			nesting = max(nesting, depth)
		case '}', ']':
			if depth == 0 {
				return i, nesting
			}
			depth--
			if depth == 0 {
				return i + 1, nesting
			}
		case ',':
			if depth == 0 {
				return i, nesting
			}
		}
		i++
	}
	return -1, nesting
}

// skipString returns the index just after the string at b[i] == '"'.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		backslashes := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			backslashes++
		}
		i++
		if backslashes%2 == 0 {
			return i
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
