package mcpconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// The one JSON scanner of the wire layer (issue 25 item 8). It reads a
// server's message without decoding it: the members of an object (the
// screen's envelope, a listing page, a call result's blocks), the
// elements of an array, the nesting of a value (maxMessageDepth), and the
// tools of a listing page, counted before the go-sdk decodes them. It
// never reads past the bytes it is given, allocates only for a key with
// escapes, and keeps no stack: nesting is a counter, so a deep value costs
// no more than a long one. Keys match exactly, and the last of a
// duplicate wins, as in the go-sdk's decoder.

// errMalformedObject is walkObject's error for anything that is not an
// object.
var errMalformedObject = errMalformed("malformed JSON object")

// errStopWalk ends a walk early (peekRequest); it never leaves this file.
var errStopWalk = errors.New("stop")

// walkObject walks the members of the JSON object at b[0] == '{': value
// gets each key as written (quoted) and the index of its value, and
// returns the index just after the value (-1 when it does not end). It
// returns the index just after the object.
func walkObject(b []byte, value func(quoted []byte, i int) (int, error)) (int, error) {
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1, errMalformedObject
		}
		end := skipString(b, i)
		if end < 0 {
			return -1, errMalformedObject
		}
		key := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return -1, errMalformedObject
		}
		i = skipSpace(b, i+1)
		vend, err := value(key, i)
		if err != nil {
			return -1, err
		}
		if vend <= i {
			return -1, errMalformedObject
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return -1, errMalformedObject
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return -1, errMalformedObject
		}
	}
}

// eachMessage calls fn with the message b holds, or with each element of
// the batch it holds (a batch that is not well formed is not read past
// its last whole element).
func eachMessage(b []byte, fn func(msg []byte)) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' {
		fn(b)
		return
	}
	_ = arrayElements(b, func(_ int, msg []byte) error {
		fn(msg)
		return nil
	})
}

// decodeKey is a quoted key's text (exact, as the go-sdk matches keys).
func decodeKey(quoted []byte) ([]byte, bool) {
	key := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(key, '\\') < 0 {
		return key, true
	}
	var k string
	if json.Unmarshal(quoted, &k) != nil {
		return nil, false
	}
	return []byte(k), true
}

// objectMembers calls fn with each member of the JSON object at b[0] ==
// '{': the key decoded (exact, as the go-sdk matches keys) and the value's
// exact bytes. Later duplicates come later, so the last one wins, as in
// every JSON decoder this package sits beside. It never reads past b and
// fails on anything that is not an object.
func objectMembers(b []byte, fn func(key, val []byte) error) error {
	_, err := objectNesting(b, fn)
	return err
}

// objectNesting is objectMembers that also returns how many levels of
// arrays and objects the object nests, itself included, in the same pass.
func objectNesting(b []byte, fn func(key, val []byte) error) (nesting int, err error) {
	nesting = 1
	end, err := walkObject(b, func(quoted []byte, i int) (int, error) {
		key, ok := decodeKey(quoted)
		if !ok {
			return -1, errMalformedObject
		}
		vend, n := skipNested(b, i)
		nesting = max(nesting, n+1)
		if vend <= i {
			return vend, nil
		}
		return vend, fn(key, b[i:vend])
	})
	if err != nil {
		return nesting, err
	}
	return nesting, trailing(b, end)
}

// arrayElements calls fn with the index and exact bytes of each element of
// the JSON array at b[0] == '['.
func arrayElements(b []byte, fn func(i int, elem []byte) error) error {
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		return trailing(b, i+1)
	}
	for n := 0; ; n++ {
		end := skipValue(b, i)
		if end <= i {
			return errMalformed("malformed JSON array")
		}
		if err := fn(n, b[i:end:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return errMalformed("malformed JSON array")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return trailing(b, i+1)
		default:
			return errMalformed("malformed JSON array")
		}
	}
}

// trailing fails when anything but space follows a value.
func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return errMalformed("malformed JSON: data after the value")
	}
	return nil
}

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
	b, total := result[i:], 0
	_, _ = walkObject(b, func(key []byte, i int) (int, error) {
		if i < len(b) && b[i] == '[' && isToolsKey(key) {
			n, next := countArray(b, i)
			total += n
			return next, nil
		}
		return skipValue(b, i), nil
	})
	return total
}

// isToolsKey reports whether a quoted key decodes to "tools", in any case.
func isToolsKey(quoted []byte) bool {
	k, ok := decodeKey(quoted)
	return ok && bytes.EqualFold(k, []byte("tools"))
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

// maxPeekBytes is what is read first of a request body to find its id
// and method: the go-sdk writes "id" and "method" before "params", so the
// arguments, however large, are not read. A body that writes them later
// is read whole (it is agt's own request).
const maxPeekBytes = 4 << 10

// peekRequestID returns the id (idKey form) of the request in a request
// body, and whether it is a tools/call; ok is false for a body that is
// not one request (a notification, a response, a batch).
func peekRequestID(body io.Reader) (id string, call, ok bool) {
	raw, method, found := peekRequest(body)
	if !found {
		return "", false, false
	}
	id, ok = rawIDKey(raw)
	return id, ok && method == methodCallTool, ok
}

// peekRequest returns the id (exact JSON, a string or an integer) and the
// method of the request in a request body, read with the wire layer's
// JSON scanner up to its "id" and "method" members.
func peekRequest(body io.Reader) (id json.RawMessage, method string, ok bool) {
	head, err := io.ReadAll(io.LimitReader(body, maxPeekBytes))
	if err != nil {
		return nil, "", false
	}
	if id, method, ok, whole := requestIDMethod(head); whole || ok || len(head) < maxPeekBytes {
		return id, method, ok
	}
	rest, err := io.ReadAll(body)
	if err != nil {
		return nil, "", false
	}
	id, method, ok, _ = requestIDMethod(append(head, rest...))
	return id, method, ok
}

// requestIDMethod reads the id and method of the request b as far as they
// go; whole: b is read to its end without them, or is no object (a body
// cut short fails as malformed, and is read again whole).
func requestIDMethod(b []byte) (id json.RawMessage, method string, ok, whole bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, "", false, true
	}
	b = b[i:]
	haveMethod := false
	_, err := walkObject(b, func(quoted []byte, i int) (int, error) {
		end := skipValue(b, i)
		if end <= i {
			return end, nil
		}
		switch key, _ := decodeKey(quoted); string(key) {
		case "id":
			if _, valid := rawIDKey(b[i:end]); !valid {
				return -1, errMalformedObject
			}
			id = bytes.TrimSpace(b[i:end])
		case "method":
			m, err := jsonString(bytes.TrimSpace(b[i:end]), "method")
			if err != nil {
				return -1, err
			}
			method, haveMethod = m, true
		}
		if id != nil && haveMethod {
			return -1, errStopWalk
		}
		return end, nil
	})
	if errors.Is(err, errStopWalk) {
		return id, method, true, false
	}
	return nil, "", false, err == nil
}
