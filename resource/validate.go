package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/internal/glob"
	"github.com/agtsdk/agt/internal/httptoken"
	"github.com/agtsdk/agt/internal/mcpdoc"
	"github.com/agtsdk/agt/internal/suggest"
	"github.com/agtsdk/agt/internal/text"
)

// ErrInvalid is the sentinel of every *DocumentError: the request or the
// document breaks a write rule. Test with errors.Is.
var ErrInvalid = errors.New("resource: invalid request")

// Finding is one problem found in a document or request, with what to do
// about it. Severity is "error" (the document cannot be started or written
// as is) or "warning" (it works, but something deserves attention). Code is
// a stable, machine-readable name of the rule, one of the table in
// docs/findings.md. Field is a JSON pointer ("/mcpServers/files/cwd");
// messages never repeat the values they judge, only their place.
type Finding struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
}

func (f Finding) String() string {
	s := f.Message
	if f.Field != "" {
		s = f.Field + ": " + s
	}
	if f.Fix != "" {
		s += " (fix: " + f.Fix + ")"
	}
	return s
}

// DocumentError is a refused write: the first rule broken, with the field,
// why, and how to fix it; Code is one of docs/findings.md. More holds any
// further problems of the same document. errors.Is(err, ErrInvalid) is
// true.
type DocumentError struct {
	Field   string    `json:"field,omitempty"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
	Fix     string    `json:"fix,omitempty"`
	More    []Finding `json:"more,omitempty"`
}

func (e *DocumentError) Error() string {
	s := "resource: invalid " + e.Field
	if e.Field == "" {
		s = "resource: invalid request"
	}
	s += ": " + e.Message
	if e.Fix != "" {
		s += " (fix: " + e.Fix + ")"
	}
	if len(e.More) > 0 {
		s += fmt.Sprintf(" (and %d more problems)", len(e.More))
	}
	return s
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *DocumentError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, code, msg, fix string) *DocumentError {
	return &DocumentError{Field: field, Code: code, Message: msg, Fix: fix}
}

// errorOf turns the error findings into a *DocumentError, prefixing every
// field with prefix; nil when there is none.
func errorOf(prefix string, fs []Finding) *DocumentError {
	var errs []Finding
	for _, f := range fs {
		if f.Severity == findcode.Error {
			f.Field = prefix + f.Field
			errs = append(errs, f)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	first := errs[0]
	return &DocumentError{Field: first.Field, Code: first.Code, Message: first.Message, Fix: first.Fix, More: errs[1:]}
}

// pointer builds a JSON pointer from segments. Segments come from hostile
// keys: each is bounded to 64 bytes (text.Bound) and every character
// text.Unsafe refuses (controls, line separators, invisible formatting)
// becomes '?', so a pointer in an error message stays short and printable.
func pointer(segs ...string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		for _, r := range text.Bound(s, maxPointerSegment) {
			switch {
			case r == '~':
				b.WriteString("~0")
			case r == '/':
				b.WriteString("~1")
			case text.Unsafe(r):
				b.WriteByte('?')
			default:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

const maxPointerSegment = 64

// Document limits (bytes or items), checked on every write.
const (
	// defaultMaxDocumentBytes bounds the data of one write.
	defaultMaxDocumentBytes = 1 << 20
	maxStringBytes          = 16 << 10
	maxItems                = 1024
	maxTimeoutMS            = 24 * 60 * 60 * 1000
	maxServerNameLen        = 64
	// maxListFields bounds how many list fields one write's add and
	// remove name together.
	maxListFields = 16
)

var (
	mcpTopFields    = []string{"mcpServers"}
	stdioFields     = []string{"type", "command", "args", "env", "cwd", "startup_timeout_ms", "tool_timeout_ms", "protocol_version", "description", "enabled_tools", "disabled_tools", "shared"}
	remoteFields    = []string{"type", "url", "headers", "oauth", "startup_timeout_ms", "tool_timeout_ms", "protocol_version", "description", "enabled_tools", "disabled_tools", "shared"}
	stdioOnlyFields = map[string]bool{"command": true, "args": true, "env": true, "cwd": true}
	remoteOnly      = map[string]bool{"url": true, "headers": true, "oauth": true}
)

const allowMCPMessage = "allow_mcp was removed: there is no MCP master switch; the servers mounted on an agent decide what it uses"
const allowMCPFix = `drop allow_mcp and mount the server on the agent instead: add its reference to the agent's "mcps" list (a write with add={"mcps":["REF"]})`

func allowMCPFinding(field string) Finding {
	return Finding{Severity: findcode.Error, Code: findcode.AllowMCP, Field: field, Message: allowMCPMessage, Fix: allowMCPFix}
}

func errf(field, code, msg, fix string) Finding {
	return Finding{Severity: findcode.Error, Code: code, Field: field, Message: msg, Fix: fix}
}

// decodeObject decodes data as a JSON object; ok is false for anything else
// (including null).
func decodeObject(data []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// ValidateMCP checks an MCP resource's data against the write rules
// and returns its single server. It reads nothing from the
// file system; Service.Test adds those checks. The error is a
// *DocumentError holding every problem found.
func ValidateMCP(data json.RawMessage) (name string, srv MCPServer, err error) {
	if len(data) > defaultMaxDocumentBytes {
		return "", MCPServer{}, invalid("", findcode.Limit, fmt.Sprintf("document is %d bytes; the limit is %d", len(data), defaultMaxDocumentBytes), "shorten it")
	}
	name, srv, fs := checkMCP(data)
	if e := errorOf("", fs); e != nil {
		return "", MCPServer{}, e
	}
	return name, srv, nil
}

// checkMCP returns every rule the document breaks, and the server as far as
// it could be decoded.
func checkMCP(data []byte) (string, MCPServer, []Finding) {
	top, ok := decodeObject(data)
	if !ok {
		return "", MCPServer{}, []Finding{errf("", findcode.NotObject,
			"an MCP document must be a JSON object",
			`write {"mcpServers": {"NAME": {"command": "...", "cwd": "/abs/dir"}}}`)}
	}
	var fs []Finding
	for _, k := range slices.Sorted(maps.Keys(top)) {
		switch k {
		case "mcpServers":
		case "allow_mcp":
			fs = append(fs, allowMCPFinding(pointer(k)))
		default:
			fs = append(fs, unknownField(pointer(k), mcpTopFields))
		}
	}
	rawServers, ok := top["mcpServers"]
	if !ok {
		return "", MCPServer{}, append(fs, errf("/mcpServers", findcode.ServerCount, "mcpServers is missing",
			`write {"mcpServers": {"NAME": {...}}} with exactly one server`))
	}
	servers, ok := decodeObject(rawServers)
	if !ok {
		return "", MCPServer{}, append(fs, errf("/mcpServers", findcode.WrongType, "mcpServers must be a JSON object of one NAME: server entry", `write {"mcpServers": {"NAME": {...}}}`))
	}
	if len(servers) != 1 {
		return "", MCPServer{}, append(fs, errf("/mcpServers", findcode.ServerCount,
			fmt.Sprintf("mcpServers holds %d entries; an MCP resource registers exactly one server", len(servers)),
			"register each server as its own resource, with one mcpServers entry each"))
	}
	var name string
	var rawEntry json.RawMessage
	for n, e := range servers {
		name, rawEntry = n, e
	}
	base := "/mcpServers"
	if msg := checkServerName(name); msg != "" {
		fs = append(fs, errf(base, findcode.ServerName, msg, "name the server with 1 to 64 of letters, digits, '.', '_' and '-'"))
	} else {
		base = pointer("mcpServers", name)
	}
	srv, sfs := checkServer(base, rawEntry)
	return name, srv, append(fs, sfs...)
}

func checkServerName(name string) string {
	if name == "" || len(name) > maxServerNameLen {
		return "the server name must be 1 to 64 characters"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "the server name may only hold letters, digits, '.', '_' and '-'"
		}
	}
	return ""
}

func unknownField(field string, allowed []string) Finding {
	return errf(field, findcode.UnknownField, "unknown field; allowed fields are "+strings.Join(allowed, ", "), "remove it or correct its spelling")
}

func checkServer(base string, raw json.RawMessage) (MCPServer, []Finding) {
	entry, ok := decodeObject(raw)
	if !ok {
		return MCPServer{}, []Finding{errf(base, findcode.NotObject, "the server entry must be a JSON object", `write {"command": "...", "cwd": "/abs/dir"} or {"url": "https://..."}`)}
	}
	var fs []Finding
	var srv MCPServer
	field := func(k string) string { return base + pointer(k) }
	if _, ok := entry["allow_mcp"]; ok {
		fs = append(fs, allowMCPFinding(field("allow_mcp")))
	}
	for _, f := range serverFields(&srv) {
		if raw, ok := entry[f.key]; ok && f.key != "oauth" {
			if err := json.Unmarshal(raw, f.into); err != nil {
				fs = append(fs, errf(field(f.key), findcode.WrongType, f.key+" must be "+f.want, "write it as "+f.want))
			}
		}
	}

	transport := srv.Transport()
	switch srv.Type {
	case "", TransportStdio, TransportHTTP, TransportSSE:
	case "streamable-http", "streamableHttp", "streamable_http", "streamable":
		fs = append(fs, errf(field("type"), findcode.Transport, "unknown transport type", `write "http" for streamable HTTP`))
	default:
		fs = append(fs, errf(field("type"), findcode.Transport, "unknown transport type", `write "stdio", "http" (streamable HTTP) or "sse"`))
	}
	if srv.Type == "" && srv.Command != "" && srv.URL != "" {
		fs = append(fs, errf(base, findcode.Transport, "both command and url are set", `keep command (with "type": "stdio") or url (with "type": "http")`))
	}
	if srv.Type == "" && srv.Command == "" && srv.URL == "" {
		fs = append(fs, errf(base, findcode.Transport, "neither command nor url is set", "set command and cwd for a local server, or url for a remote one"))
	}

	allowed := stdioFields
	if transport != TransportStdio {
		allowed = remoteFields
	}
	for _, k := range slices.Sorted(maps.Keys(entry)) {
		switch {
		case k == "allow_mcp":
		case transport == TransportStdio && remoteOnly[k]:
			fs = append(fs, errf(field(k), findcode.UnknownField, k+" belongs to remote servers, not stdio ones; allowed fields are "+strings.Join(allowed, ", "), "remove it, or set type to http or sse"))
		case transport != TransportStdio && stdioOnlyFields[k]:
			fs = append(fs, errf(field(k), findcode.UnknownField, k+" belongs to stdio servers, not remote ones; allowed fields are "+strings.Join(allowed, ", "), "remove it, or set type to stdio"))
		case !contains(stdioFields, k) && !contains(remoteFields, k):
			fs = append(fs, unknownField(field(k), allowed))
		}
	}

	if transport == TransportStdio {
		fs = append(fs, checkCommand(field("command"), srv.Command)...)
		fs = append(fs, checkCwd(field("cwd"), srv.Cwd)...)
		if len(srv.Args) > maxItems {
			fs = append(fs, errf(field("args"), findcode.Limit, fmt.Sprintf("args holds %d items; the limit is %d", len(srv.Args), maxItems), "pass fewer arguments"))
		}
		for i, a := range srv.Args {
			fs = append(fs, checkText(field("args")+pointer(fmt.Sprint(i)), a, true)...)
		}
		if len(srv.Env) > maxItems {
			fs = append(fs, errf(field("env"), findcode.Limit, fmt.Sprintf("env holds %d entries; the limit is %d", len(srv.Env), maxItems), "set fewer variables"))
		}
		for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
			if k == "" || strings.ContainsAny(k, "=\x00") || len(k) > 256 {
				fs = append(fs, errf(field("env"), findcode.WrongType, "an environment variable name is empty, too long, or holds '=' or NUL", "use names like API_TOKEN"))
				continue
			}
			fs = append(fs, checkText(field("env")+pointer(k), srv.Env[k], true)...)
		}
	} else {
		fs = append(fs, checkURL(field("url"), srv.URL)...)
		if len(srv.Headers) > maxItems {
			fs = append(fs, errf(field("headers"), findcode.Limit, fmt.Sprintf("headers holds %d entries; the limit is %d", len(srv.Headers), maxItems), "send fewer headers"))
		}
		for _, k := range slices.Sorted(maps.Keys(srv.Headers)) {
			if !validHeaderName(k) {
				fs = append(fs, errf(field("headers"), findcode.WrongType, "a header name is empty or not an HTTP token", "use names like Authorization or X-Api-Key"))
				continue
			}
			if f, ok := transportHeader(k); ok {
				fs = append(fs, errf(field("headers")+pointer(k), findcode.WrongType, f.msg, f.fix))
				continue
			}
			v := srv.Headers[k]
			switch {
			case strings.ContainsAny(v, "\r\n\x00") || len(v) > maxStringBytes:
				fs = append(fs, errf(field("headers")+pointer(k), findcode.WrongType, "a header value holds a line break or NUL, or is too long", "write the value on one line"))
			default:
				fs = append(fs, checkRefs(field("headers")+pointer(k), v, false)...)
			}
		}
		if raw, ok := entry["oauth"]; ok {
			var ofs []Finding
			srv.OAuth, ofs = checkOAuth(field("oauth"), raw)
			fs = append(fs, ofs...)
		}
	}
	for _, t := range []struct {
		k string
		v int64
	}{{"startup_timeout_ms", srv.StartupTimeoutMS}, {"tool_timeout_ms", srv.ToolTimeoutMS}} {
		if t.v < 0 || t.v > maxTimeoutMS {
			fs = append(fs, errf(field(t.k), findcode.Limit, fmt.Sprintf("%s must be between 0 (the default) and %d", t.k, maxTimeoutMS), "write a number of milliseconds in that range"))
		}
	}
	if v := srv.ProtocolVersion; v != "" && v != mcpdoc.EraModern && v != mcpdoc.EraLegacy && !slices.Contains(mcpdoc.ProtocolVersions(), v) {
		fs = append(fs, errf(field("protocol_version"), findcode.WrongType, "protocol_version is not an MCP protocol version this client speaks",
			`write "modern", "legacy" or one of `+strings.Join(mcpdoc.ProtocolVersions(), ", ")+`, or leave it out to negotiate`))
	}
	if len(srv.Description) > maxStringBytes {
		fs = append(fs, errf(field("description"), findcode.Limit, fmt.Sprintf("description is longer than %d bytes", maxStringBytes), "shorten it"))
	}
	fs = append(fs, checkToolList(field("disabled_tools"), entry["disabled_tools"], srv.DisabledTools)...)
	fs = append(fs, checkToolList(field("enabled_tools"), entry["enabled_tools"], srv.EnabledTools)...)
	return srv, fs
}

// checkToolList checks enabled_tools or disabled_tools (raw as written,
// items as decoded): an array, not null (absent is how to say "all"), of
// at most maxItems valid, distinct patterns.
func checkToolList(field string, raw json.RawMessage, items []string) []Finding {
	if raw == nil {
		return nil
	}
	if items == nil {
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return []Finding{errf(field, findcode.WrongType, "must be "+toolListWant+", not null",
				"leave the field out to offer every tool; [] in enabled_tools offers none")}
		}
		return nil // the wrong type is already reported
	}
	if len(items) > maxItems {
		return []Finding{errf(field, findcode.Limit, fmt.Sprintf("holds %d items; the limit is %d", len(items), maxItems), "use globs (*, ?) to cover many tools")}
	}
	var fs []Finding
	seen := make(map[string]bool, len(items))
	for i, p := range items {
		at := field + pointer(fmt.Sprint(i))
		if msg := glob.Check(p); msg != "" {
			fs = append(fs, errf(at, findcode.ToolPattern, msg, "write a tool name, or a glob where * matches any run of characters and ? one character"))
			continue
		}
		if seen[p] {
			fs = append(fs, errf(at, findcode.Request, "item repeats an earlier one", "list each name or glob once"))
		}
		seen[p] = true
	}
	return fs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func validHeaderName(k string) bool { return len(k) <= 256 && httptoken.Valid(k) }

// transportHeaders are the header names a registration may not set, by
// their lower-case form: the client sets them itself on each request, and
// a registration's value would replace its own (the headers are set over
// the MCP client's) or be dropped by the HTTP client without a word.
// Mcp-Param-* names are not here: a tool that annotates one a
// registration sets is left out instead (mcpconn).
var transportHeaders = func() map[string]headerRule {
	const removeIt = "remove it: the client sets it on each request"
	m := map[string]headerRule{}
	for _, h := range []struct{ names, msg, fix string }{
		{"MCP-Protocol-Version Mcp-Method Mcp-Name",
			"is an MCP request header: the client sets it on each request from the protocol version it negotiated and the request it sends", removeIt},
		{"Mcp-Session-Id Last-Event-ID",
			"is an MCP session or stream header: the client manages sessions and streams itself", "remove it: the client sends it where the protocol needs it"},
		{"Accept Content-Type Content-Length Content-Encoding Transfer-Encoding",
			"describes the HTTP body the MCP transport writes and reads", removeIt},
		{"Connection Keep-Alive Proxy-Connection TE Trailer Upgrade",
			"is a hop-by-hop HTTP header, owned by the HTTP client", removeIt},
		{"Host", "is taken from the url", "remove it, and put the host in url"},
	} {
		for _, name := range strings.Fields(h.names) {
			m[strings.ToLower(name)] = headerRule{"the header " + name + " " + h.msg, h.fix}
		}
	}
	return m
}()

// headerRule is the message and fix of a header name refused.
type headerRule struct{ msg, fix string }

// transportHeader reports whether name (in any case) is one of the
// transportHeaders, with its message and fix.
func transportHeader(name string) (headerRule, bool) {
	f, ok := transportHeaders[strings.ToLower(name)]
	return f, ok
}

// checkText bounds a string and, when placeholders expand in it, refuses any
// ${...} other than ${cwd}, ${workspace} and the secret references.
func checkText(field, s string, placeholders bool) []Finding {
	if len(s) > maxStringBytes {
		return []Finding{errf(field, findcode.Limit, fmt.Sprintf("value is longer than %d bytes", maxStringBytes), "shorten it")}
	}
	if strings.IndexByte(s, 0) >= 0 {
		return []Finding{errf(field, findcode.WrongType, "value holds a NUL byte", "remove it")}
	}
	if !placeholders {
		if strings.Contains(s, "${") {
			return []Finding{errf(field, findcode.Placeholder, "placeholders and secret references are not expanded here; they expand only in args, env values and (references only) header values", "write the literal value")}
		}
		return nil
	}
	return checkRefs(field, s, true)
}

// checkRefs refuses malformed placeholders and references: ${cwd} and
// ${workspace} (where cwd is true), ${env:NAME}, ${secret:NAME}, and $${
// for a literal ${. The scanner is the one a start uses.
func checkRefs(field, s string, cwd bool) []Finding {
	if _, msg, fix := scanValue(s, cwd); msg != "" {
		return []Finding{errf(field, findcode.Placeholder, msg, fix)}
	}
	return nil
}

// checkCommand applies the command rule: a bare name looked up in PATH, or an
// absolute path.
func checkCommand(field, cmd string) []Finding {
	if cmd == "" {
		return []Finding{errf(field, findcode.Command, "a stdio server needs a command", `set command to a program name found in PATH (like "npx") or an absolute path`)}
	}
	if fs := checkText(field, cmd, false); fs != nil {
		return fs
	}
	switch {
	case strings.HasPrefix(cmd, "~"):
		return []Finding{errf(field, findcode.Command, "command starts with ~, which is not expanded: nothing runs a shell", "write the absolute path, like /home/you/bin/server")}
	case filepath.IsAbs(cmd):
		return nil
	case relativeCommand(cmd):
		return []Finding{errf(field, findcode.Command, relativeCommandMessage, relativeCommandFix)}
	case strings.ContainsAny(cmd, " \t\r\n"):
		return []Finding{errf(field, findcode.Command, "command holds whitespace; it names one program and nothing runs a shell", "put the program in command and each of its arguments in args")}
	}
	return nil
}

// relativeCommand reports a command that names its program by a relative
// path ("bin/server", `.\server`): what it runs would depend on the
// directory of whoever starts the server. A bare name is looked up in
// PATH, an absolute path is used as it is; both checkCommand (a write)
// and ResolveLaunch (every start) refuse the rest with the same words.
func relativeCommand(cmd string) bool {
	return !filepath.IsAbs(cmd) && strings.ContainsAny(cmd, `/\`)
}

const (
	relativeCommandMessage = "command is a relative path: it would depend on the directory of whoever starts the server"
	relativeCommandFix     = "write the absolute path (cwd joined with it), or a bare program name found in PATH"
)

// checkCwd applies the cwd rule: stdio servers run in an absolute cwd. The
// finding's code is "no_absolute_cwd", the one a legacy record may keep.
func checkCwd(field, cwd string) []Finding {
	fix := `set cwd to the absolute directory the server runs in, like "/srv/mcp/files"; relative paths in args resolve against it`
	switch {
	case cwd == "":
		return []Finding{errf(field, findcode.NoAbsoluteCwd, "a stdio server needs cwd, the absolute directory it runs in", fix)}
	case strings.Contains(cwd, "${"):
		return []Finding{errf(field, findcode.NoAbsoluteCwd, "cwd may not hold placeholders; ${cwd} and ${workspace} expand to it", fix)}
	case strings.HasPrefix(cwd, "~"):
		return []Finding{errf(field, findcode.NoAbsoluteCwd, "cwd starts with ~, which is not expanded", fix)}
	case !filepath.IsAbs(cwd):
		return []Finding{errf(field, findcode.NoAbsoluteCwd, "cwd is not an absolute path", fix)}
	}
	return checkText(field, cwd, false)
}

func checkURL(field, raw string) []Finding {
	fix := `write the endpoint as an absolute http or https URL, like "https://mcp.example.com/mcp"`
	if raw == "" {
		return []Finding{errf(field, findcode.URL, "a remote server needs url", fix)}
	}
	if fs := checkText(field, raw, false); fs != nil {
		return fs
	}
	u, err := url.Parse(raw)
	if err != nil {
		return []Finding{errf(field, findcode.URL, "url does not parse", fix)}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return []Finding{errf(field, findcode.URL, "url must use http or https", fix)}
	}
	if u.Host == "" {
		return []Finding{errf(field, findcode.URL, "url has no host", fix)}
	}
	return nil
}

// Agent documents.

var agentFieldTypes = map[string]string{
	"name":         "a string",
	"enabled":      "true or false",
	"manager":      "true or false",
	"capabilities": "an array of strings",
	"mcps":         "an array of references",
}

// agentFields are the agent document fields agt reads, and
// knownCapabilities the capabilities it grants.
var (
	agentFields       = []string{"name", "enabled", "manager", "capabilities", "mcps"}
	knownCapabilities = []string{CapabilityResourceManagement}
)

// maxWarnings bounds the warnings about one document or request; one more
// says how many were left out.
const maxWarnings = 16

func warnf(field, code, msg, fix string) Finding {
	return Finding{Severity: findcode.Warning, Code: code, Field: field, Message: msg, Fix: fix}
}

// unknownAgentField warns about a field agt does not read: unknown fields
// are kept as written (other tools may use them), but a typo of a known
// one, such as "mpcs", would otherwise be stored in silence.
func unknownAgentField(field, name string) Finding {
	fix := "remove it if it is a typo; the fields agt reads are " + strings.Join(agentFields, ", ")
	if near := suggest.NearMiss(name, agentFields); near != "" {
		fix = fmt.Sprintf("did you mean %q? rename it", near)
	}
	return warnf(field, findcode.UnknownField, "agt does not read this agent field; it is stored as written", fix)
}

// capabilityWarnings warns about each capability of items agt does not
// know, at field/INDEX.
func capabilityWarnings(field string, items []string) []Finding {
	var fs []Finding
	for i, c := range items {
		if contains(knownCapabilities, c) {
			continue
		}
		fix := "remove it; the capabilities agt knows are " + strings.Join(knownCapabilities, ", ")
		if near := suggest.NearMiss(c, knownCapabilities); near != "" {
			fix = fmt.Sprintf("did you mean %q? write that instead", near)
		}
		fs = append(fs, warnf(field+pointer(fmt.Sprint(i)), findcode.UnknownCapability, "unknown capability; it is stored but grants nothing", fix))
	}
	return fs
}

// agentWarnings returns the warnings about an agent document (or patch)
// m, each field prefixed with prefix: fields agt does not read, and
// capabilities it does not know. Bounded by maxWarnings.
func agentWarnings(prefix string, m map[string]json.RawMessage) []Finding {
	return boundWarnings(allAgentWarnings(prefix, m))
}

func allAgentWarnings(prefix string, m map[string]json.RawMessage) []Finding {
	var fs []Finding
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if _, known := agentFieldTypes[k]; !known {
			fs = append(fs, unknownAgentField(prefix+pointer(k), k))
		}
	}
	var caps []string
	if raw, ok := m["capabilities"]; ok && json.Unmarshal(raw, &caps) == nil {
		fs = append(fs, capabilityWarnings(prefix+pointer("capabilities"), caps)...)
	}
	return fs
}

// requestWarnings returns the warnings about an agent write request: those
// of its data, and of the list fields and capabilities it adds or removes.
func requestWarnings(patch map[string]json.RawMessage, add, remove map[string][]string) []Finding {
	fs := allAgentWarnings("/data", patch)
	for _, op := range []struct {
		name  string
		lists map[string][]string
	}{{"add", add}, {"remove", remove}} {
		for _, field := range slices.Sorted(maps.Keys(op.lists)) {
			if _, known := agentFieldTypes[field]; !known {
				fs = append(fs, unknownAgentField(pointer(op.name, field), field))
			}
			if field == "capabilities" && op.name == "add" {
				fs = append(fs, capabilityWarnings(pointer(op.name, field), op.lists[field])...)
			}
		}
	}
	return boundWarnings(fs)
}

func boundWarnings(fs []Finding) []Finding {
	if len(fs) <= maxWarnings {
		return fs
	}
	n := len(fs) - maxWarnings
	return append(fs[:maxWarnings:maxWarnings], warnf("", findcode.Limit, fmt.Sprintf("%d more warnings of the same kinds were left out", n), "fix the ones listed and check again"))
}

// checkAgentFields checks the known fields present in an agent document (or
// patch) m; unknown fields are kept as they are and not judged.
func checkAgentFields(m map[string]json.RawMessage) []Finding {
	var fs []Finding
	for _, k := range slices.Sorted(maps.Keys(m)) {
		want, known := agentFieldTypes[k]
		if !known {
			continue
		}
		raw := m[k]
		var err error
		switch k {
		case "name":
			var s string
			if err = json.Unmarshal(raw, &s); err == nil {
				fs = append(fs, checkText(pointer(k), s, false)...)
			}
		case "enabled", "manager":
			var b bool
			err = json.Unmarshal(raw, &b)
		case "capabilities", "mcps":
			var items []string
			if err = json.Unmarshal(raw, &items); err == nil && items == nil {
				err = errors.New("null")
			}
			if err == nil {
				fs = append(fs, checkListItems(k, items)...)
			}
		}
		if err != nil {
			fs = append(fs, errf(pointer(k), findcode.WrongType, k+" must be "+want, "write it as "+want+" ([] clears a list)"))
		}
	}
	return fs
}

// checkListItems bounds a list and checks its items: mcps items must be
// valid references, and no list repeats an item.
func checkListItems(field string, items []string) []Finding {
	if len(items) > maxItems {
		return []Finding{errf(pointer(field), findcode.Limit, fmt.Sprintf("%s holds %d items; the limit is %d", field, len(items), maxItems), "keep fewer items")}
	}
	var fs []Finding
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		at := pointer(field, fmt.Sprint(i))
		if field == "mcps" && !validRef(it) {
			fs = append(fs, errf(at, findcode.Reference, refRule, "write the reference of a registered MCP resource"))
			continue
		}
		if len(it) > maxStringBytes {
			fs = append(fs, errf(at, findcode.Limit, "item is too long", "shorten it"))
			continue
		}
		if seen[it] {
			fs = append(fs, errf(at, findcode.Request, "item repeats an earlier one", "list each item once"))
		}
		seen[it] = true
	}
	return fs
}

const refRule = "not a valid reference: write name or category/name, each part 1 to 64 of lowercase letters, digits, '.', '_' and '-', starting with a letter or digit"

// compactJSON returns data without insignificant whitespace.
func compactJSON(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
