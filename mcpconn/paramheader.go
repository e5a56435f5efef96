package mcpconn

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/agtsdk/agt/internal/httptoken"
	"github.com/agtsdk/agt/toolschema"
)

// The request metadata headers of streamable HTTP in the modern era (MCP
// 2026-07-28, transports: Request Metadata). The go-sdk sets the protocol
// version, Mcp-Method and Mcp-Name; agt encodes Mcp-Name and sets the
// Mcp-Param-* headers itself (modernHeaders).
const (
	protocolVersionHeader = "Mcp-Protocol-Version"
	methodHeader          = "Mcp-Method"
	nameHeader            = "Mcp-Name"
	paramHeaderPrefix     = "Mcp-Param-"
	xMCPHeader            = "x-mcp-header"
	base64Prefix          = "=?base64?"
	base64Suffix          = "?="
)

// maxParamHeaderBytes bounds the Mcp-Param-* headers of one tools/call
// request, names and encoded values together: HTTP servers commonly refuse
// requests whose headers pass 8 to 16 KiB in all (Node's default is 16
// KiB), and the registration's headers and a token need room too. A call
// whose mirrored arguments would pass it is refused before it is sent: the
// server would refuse one without them (HeaderMismatch), and a cut value
// would not match its body.
const maxParamHeaderBytes = 8 << 10

// maxSafeInteger is the largest integer an x-mcp-header parameter may
// carry (2^53-1, JavaScript's safe range: MCP 2026-07-28, transports:
// Schema Extension).
const maxSafeInteger = 1<<53 - 1

// paramBinding is one x-mcp-header annotation of a tool's inputSchema: the
// chain of properties keys from the root to the annotated property, and
// the name part of its header.
type paramBinding struct {
	path []string
	name string
}

// headerAnnotationError leaves out a tool whose x-mcp-header annotations
// break the constraints of MCP 2026-07-28 (transports: Schema Extension):
// a client "MUST exclude the invalid tool". Its text is the server's
// names (bounded, quoted) and the rule broken, never an argument value.
type headerAnnotationError struct{ reason string }

func (e *headerAnnotationError) Error() string {
	return "the tool's x-mcp-header annotations are invalid (MCP 2026-07-28): " + e.reason
}

func badAnnotation(format string, args ...any) error {
	return &headerAnnotationError{reason: fmt.Sprintf(format, args...)}
}

// paramBindings reads and checks the x-mcp-header annotations of a tool's
// inputSchema, as the spec constrains them: each is a non-empty HTTP token
// (RFC 9110 tchar: no space, colon, control or non-ASCII character),
// unique in the schema without regard to case, on a property of type
// "string", "integer" or "boolean" (not "number", not a list of types)
// that is reached from the root by properties keys alone (not through
// items, composition or conditional keywords, $defs or $ref). The go-sdk's
// client drops such a tool from its listing silently in every era
// (filterValidTools); agt checks the same rules and more, so that the tool
// is left out with the reason, in every era and transport alike (a tool's
// definition does not depend on how it is reached). The schema is decoded
// once: the walk costs its size, whatever its depth.
func paramBindings(schema json.RawMessage) ([]paramBinding, error) {
	// Most schemas have no annotation: the key, or an escape that could
	// spell it, must appear in the bytes.
	if !bytes.Contains(schema, []byte(xMCPHeader)) && !bytes.Contains(schema, []byte(`\u`)) {
		return nil, nil
	}
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return nil, nil // not JSON: the compilation says so
	}
	w := &annotationWalk{seen: map[string]bool{}}
	if err := w.schema(root, nil, true); err != nil {
		return nil, err
	}
	return w.out, nil
}

type annotationWalk struct {
	seen map[string]bool // lower-cased names
	out  []paramBinding
}

// The keywords whose value is a subschema, a list of them, or an object of
// them (JSON Schema 2020-12 and the drafts before it). An annotation under
// any of them is not statically reachable; properties alone keeps it so.
var (
	subschemaKeywords = []string{"additionalProperties", "items", "additionalItems", "contains", "not", "if", "then", "else",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	subschemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	subschemaMapKeywords  = []string{"patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

// schema walks one (sub)schema; path is the chain of properties keys that
// reached it, reachable whether only such keys did.
func (w *annotationWalk) schema(v any, path []string, reachable bool) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil // a boolean schema, or not a schema: nothing annotated
	}
	if a, ok := obj[xMCPHeader]; ok {
		if err := w.annotation(a, obj["type"], path, reachable); err != nil {
			return err
		}
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		for name, sub := range props {
			if err := w.schema(sub, append(path[:len(path):len(path)], name), reachable); err != nil {
				return err
			}
		}
	}
	for _, k := range subschemaKeywords {
		if err := w.schema(obj[k], nil, false); err != nil {
			return err
		}
	}
	for _, k := range subschemaListKeywords {
		list, _ := obj[k].([]any)
		for _, sub := range list {
			if err := w.schema(sub, nil, false); err != nil {
				return err
			}
		}
	}
	for _, k := range subschemaMapKeywords {
		m, _ := obj[k].(map[string]any)
		for _, sub := range m {
			if err := w.schema(sub, nil, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// annotation checks one x-mcp-header value a on a schema of type typ.
func (w *annotationWalk) annotation(a, typ any, path []string, reachable bool) error {
	if !reachable || len(path) == 0 {
		return badAnnotation("an x-mcp-header is outside the chain of properties keys from the schema's root " +
			"(at the root, or under items, a composition or conditional keyword, $defs or $ref)")
	}
	where := "property " + quoteName(strings.Join(path, "."))
	name, ok := a.(string)
	if !ok {
		return badAnnotation("%s: x-mcp-header is not a string", where)
	}
	if name == "" {
		return badAnnotation("%s: x-mcp-header is empty", where)
	}
	if !httptoken.Valid(name) {
		return badAnnotation("%s: x-mcp-header %s is not an HTTP token (a space, colon, control or non-ASCII character)", where, quoteName(name))
	}
	switch typ {
	case "string", "integer", "boolean":
	case "number":
		return badAnnotation("%s: x-mcp-header %s is on a property of type number, which the spec does not permit", where, quoteName(name))
	default:
		return badAnnotation("%s: x-mcp-header %s is on a property whose type is not one of string, integer or boolean", where, quoteName(name))
	}
	lower := strings.ToLower(name)
	if w.seen[lower] {
		return badAnnotation("%s: x-mcp-header %s is used twice (names are compared without regard to case)", where, quoteName(name))
	}
	w.seen[lower] = true
	w.out = append(w.out, paramBinding{path: path, name: name})
	return nil
}

// registeredParamHeader reports the first binding whose header the
// registration sets itself (headers, whose names it compares without
// regard to case), or "" when none: an argument never replaces a header of
// the registration, and a call that sent the registration's value would
// not match its body.
func registeredParamHeader(bs []paramBinding, registered map[string]string) string {
	for _, b := range bs {
		if registersHeader(registered, paramHeaderPrefix+b.name) {
			return b.name
		}
	}
	return ""
}

// checkParamHeaders is LoadTools's check of a tool's x-mcp-header
// annotations against the spec and against the registration's headers.
func checkParamHeaders(schema json.RawMessage, registered map[string]string) error {
	bs, err := paramBindings(schema)
	if err != nil {
		return err
	}
	if name := registeredParamHeader(bs, registered); name != "" {
		return badAnnotation("x-mcp-header %s names the header %s, which the registration's headers set", quoteName(name), quoteName(paramHeaderPrefix+name))
	}
	return nil
}

// paramHeaderTable holds the x-mcp-header bindings of the tools of a
// session's latest listing, by tool name, for its calls: a call is sent
// with the headers of the definition its session listed last, whichever
// lease or Run listed it (a Run lists on every connect, restart and
// change notice before it calls).
type paramHeaderTable struct {
	mu sync.Mutex
	m  map[string][]paramBinding
}

// record replaces the table with the bindings of a complete listing; a
// tool whose annotations are invalid, or listed twice, keeps the first
// definition's (LoadTools leaves the invalid ones out).
func (t *paramHeaderTable) record(tools []Tool) {
	m := map[string][]paramBinding{}
	for _, tool := range tools {
		if _, ok := m[tool.Name]; ok || tool.unreadable != nil {
			continue
		}
		bs, err := paramBindings(tool.InputSchema)
		if err != nil {
			bs = nil
		}
		m[tool.Name] = bs
	}
	t.mu.Lock()
	t.m = m
	t.mu.Unlock()
}

func (t *paramHeaderTable) get(name string) []paramBinding {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[name]
}

// paramHeaders builds the Mcp-Param-* headers of a call from its
// arguments (a JSON object): for each binding the value at its path,
// omitted when absent or null, as the spec converts it (a string as is,
// an integer in decimal, a boolean as true or false) and encodes it
// (Base64 in the =?base64?...?= sentinel when it is not plain visible
// ASCII, has leading or trailing white space, or looks like the
// sentinel): a value never carries CR, LF or any other control character.
// A value that is none of the three (the arguments did not match the
// schema), an integer outside the safe range, or headers past
// maxParamHeaderBytes refuse the call: the error names the property and
// the rule, never the value.
func paramHeaders(bs []paramBinding, args json.RawMessage) (http.Header, []toolschema.Violation) {
	if len(bs) == 0 {
		return nil, nil
	}
	// Decoded once, numbers as their text: each lookup is a walk of maps.
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var root map[string]any
	if d.Decode(&root) != nil {
		return nil, nil // not an object: the server refuses the call itself
	}
	h := http.Header{}
	var bad []toolschema.Violation
	total := 0
	for _, b := range bs {
		v, ok := lookupPath(root, b.path)
		if !ok || v == nil {
			continue
		}
		pointer := jsonPointer(b.path)
		s, msg := headerText(v)
		if msg != "" {
			bad = append(bad, toolschema.Violation{Path: pointer, Message: msg})
			continue
		}
		enc := encodeHeaderValue(s)
		total += len(paramHeaderPrefix) + len(b.name) + len(enc)
		if total > maxParamHeaderBytes {
			bad = append(bad, toolschema.Violation{Path: pointer, Message: fmt.Sprintf(
				"the tool mirrors this argument into the HTTP header %s (x-mcp-header), and the call's mirrored headers would pass %d bytes: send a shorter value",
				quoteName(paramHeaderPrefix+b.name), maxParamHeaderBytes)})
			continue
		}
		h[http.CanonicalHeaderKey(paramHeaderPrefix+b.name)] = []string{enc}
	}
	if bad != nil {
		return nil, bad
	}
	return h, nil
}

// lookupPath is the value at path in an arguments object.
func lookupPath(root map[string]any, path []string) (any, bool) {
	var cur any = root
	for _, k := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// jsonPointer is the JSON pointer of a property path (RFC 6901).
func jsonPointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// headerText converts an argument value for a header, or says why it
// cannot be (never with the value).
func headerText(v any) (string, string) {
	switch v := v.(type) {
	case string:
		return v, ""
	case bool:
		return strconv.FormatBool(v), ""
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n <= maxSafeInteger && n >= -maxSafeInteger {
			return strconv.FormatInt(n, 10), ""
		}
		// 1.0 and 1e2 are integers too (JSON Schema 2020-12).
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= maxSafeInteger {
			return strconv.FormatInt(int64(f), 10), ""
		}
		return "", fmt.Sprintf("the tool mirrors this argument into an HTTP header (x-mcp-header), which carries only integers within ±%d", int64(maxSafeInteger))
	}
	return "", "the tool mirrors this argument into an HTTP header (x-mcp-header): it must be a string, an integer or a boolean"
}

// encodeHeaderValue is a value as a header carries it (MCP 2026-07-28,
// transports: Value Encoding): as is when it is visible ASCII or inner
// spaces and tabs, else Base64 of its UTF-8 in the sentinel.
func encodeHeaderValue(s string) string {
	if needsBase64(s) {
		return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
	}
	return s
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if first, last := s[0], s[len(s)-1]; first == ' ' || first == '\t' || last == ' ' || last == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix)
}

// paramHeadersKey carries a call's Mcp-Param-* headers to modernHeaders.
type paramHeadersKey struct{}

func withParamHeaders(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, paramHeadersKey{}, h)
}

// modernHeaders sets the request metadata headers of the modern era that
// the go-sdk does not set as the spec wants, on each request at a modern
// protocol version, under the registration's headers (which it never
// replaces: they are set before it runs, and it touches only the names
// below):
//   - Mcp-Name is Base64-sentinel encoded when the name is not plain ASCII
//     (the go-sdk sends it as is, and net/http refuses a control
//     character);
//   - the Mcp-Param-* headers are the call's own, from its arguments and
//     the bindings of its session's latest listing (paramHeaders), never
//     the go-sdk's, which it derives only when the same go-sdk session
//     listed the tool;
//   - no Mcp-Session-Id nor Last-Event-ID is sent, and a session id a
//     server answers with is dropped before the go-sdk can adopt it: the
//     modern era has neither sessions nor resumable streams.
//
// A request of the legacy era passes unchanged.
type modernHeaders struct {
	base http.RoundTripper
	// registered are the registration's headers, whose names it never
	// touches.
	registered map[string]string
}

func (m *modernHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	if !modernVersion(req.Header.Get(protocolVersionHeader)) {
		return m.base.RoundTrip(req)
	}
	// The request is already a clone of the go-sdk's (headerRoundTripper).
	req.Header.Del(sessionIDHeader)
	req.Header.Del(lastEventIDHeader)
	if v := req.Header.Get(nameHeader); v != "" && needsBase64(v) {
		req.Header.Set(nameHeader, encodeHeaderValue(v))
	}
	for k := range req.Header {
		if len(k) > len(paramHeaderPrefix) && strings.EqualFold(k[:len(paramHeaderPrefix)], paramHeaderPrefix) && !m.registers(k) {
			delete(req.Header, k)
		}
	}
	if h, _ := req.Context().Value(paramHeadersKey{}).(http.Header); h != nil && req.Header.Get(methodHeader) == methodCallTool {
		for k, v := range h {
			if !m.registers(k) {
				req.Header[k] = v
			}
		}
	}
	resp, err := m.base.RoundTrip(req)
	if resp != nil {
		resp.Header.Del(sessionIDHeader)
	}
	return resp, err
}

func (m *modernHeaders) registers(name string) bool { return registersHeader(m.registered, name) }

// registersHeader reports whether the registration's headers set name
// (header names compare without regard to case).
func registersHeader(registered map[string]string, name string) bool {
	for k := range registered {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}
