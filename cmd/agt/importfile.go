package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/resource"
)

// Bounds on an import file.
const (
	maxImportFile    = 4 << 20
	maxImportServers = 1000
)

// importEntry is one server of an import file, translated to agt's document,
// with what was changed on the way and why it cannot be imported, if so.
type importEntry struct {
	Key    string             `json:"key"`            // the name in the file
	Name   string             `json:"name,omitempty"` // the name inside mcpServers
	Ref    resource.Ref       `json:"reference,omitempty"`
	Server resource.MCPServer `json:"server"`
	Notes  []string           `json:"notes,omitempty"`
	Err    string             `json:"error,omitempty"`
	// Warn is what the launch rules say of it on this machine: it is
	// registered all the same.
	Warn string `json:"warning,omitempty"`
}

// Fields of other hosts' formats that agt maps; everything else is reported
// as left out.
var importFields = map[string]bool{
	"type": true, "transport": true, "command": true, "args": true, "env": true, "cwd": true,
	"url": true, "serverUrl": true, "httpUrl": true, "headers": true, "description": true,
	"startup_timeout_ms": true, "tool_timeout_ms": true, "enabled_tools": true, "disabled_tools": true,
	"envFile": true,
}

// parseImportFile reads an mcpServers file. path is the file's absolute
// path; it decides the cwd of servers that have none.
func parseImportFile(path string, data []byte, category string) ([]importEntry, error) {
	if len(data) > maxImportFile {
		return nil, fmt.Errorf("%s is %d bytes; an import file may have at most %d", path, len(data), maxImportFile)
	}
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return parseCodexFile(path, data, category)
	}
	// VS Code's mcp.json is JSONC: comments and trailing commas.
	data = stripJSONC(data)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, fmt.Errorf("%s is not a JSON object (%s); want {\"mcpServers\": {NAME: {...}}}", path, jsonErrorText(err))
	}
	raw, where := top["mcpServers"], "mcpServers"
	if raw == nil {
		raw, where = top["servers"], "servers"
	}
	if raw == nil {
		if m, ok := top["mcp"]; ok {
			var inner map[string]json.RawMessage
			if json.Unmarshal(m, &inner) == nil {
				raw, where = inner["servers"], "mcp.servers"
			}
		}
	}
	if raw == nil {
		return nil, fmt.Errorf("%s has no \"mcpServers\" (Claude, Cursor, .mcp.json) or \"servers\" (VS Code) object", path)
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil {
		return nil, fmt.Errorf("%s: %q must be an object of servers (%s)", path, where, jsonErrorText(err))
	}
	return translateAll(path, servers, nil, category)
}

// translateAll translates the servers of an import file, in key order;
// notes holds what the file's own reader noted for each key.
func translateAll(path string, servers map[string]json.RawMessage, notes map[string][]string, category string) ([]importEntry, error) {
	if len(servers) > maxImportServers {
		return nil, fmt.Errorf("%s lists %d servers; the limit is %d", path, len(servers), maxImportServers)
	}
	keys := make([]string, 0, len(servers))
	for k := range servers {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	workspace := projectDir(path)
	entries := make([]importEntry, 0, len(keys))
	seen := map[resource.Ref]string{}
	for _, k := range keys {
		e := translateServer(k, servers[k], path, workspace, category)
		e.Notes = append(notes[k], e.Notes...)
		if e.Err == "" {
			if other, dup := seen[e.Ref]; dup {
				e.Err = fmt.Sprintf("its reference %s is also the one of %q in the same file: rename one of them", e.Ref, other)
			}
			seen[e.Ref] = k
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// projectDir is the directory a file's servers belong to: the file's own
// directory, or its parent for the per-project .vscode/ and .cursor/ files.
func projectDir(path string) string {
	dir := filepath.Dir(path)
	switch filepath.Base(dir) {
	case ".vscode", ".cursor", ".codex":
		return filepath.Dir(dir)
	}
	return dir
}

func translateServer(key string, raw json.RawMessage, path, workspace, category string) importEntry {
	e := importEntry{Key: key}
	ref, renamed, err := refForKey(key, category)
	if err != nil {
		e.Err = err.Error()
		return e
	}
	e.Ref = ref
	if renamed {
		e.Notes = append(e.Notes, renameNote(key, ref))
	}

	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		e.Err = fmt.Sprintf("its entry is not a JSON object (%s)", jsonErrorText(err))
		return e
	}
	var ignored []string
	for f := range fields {
		if !importFields[f] {
			ignored = append(ignored, f)
		}
	}
	sort.Strings(ignored)
	if len(ignored) > 0 {
		e.Notes = append(e.Notes, "left out fields agt does not use: "+strings.Join(ignored, ", "))
	}

	var in struct {
		Type             string            `json:"type"`
		Transport        string            `json:"transport"`
		Command          string            `json:"command"`
		Args             []string          `json:"args"`
		Env              map[string]string `json:"env"`
		Cwd              string            `json:"cwd"`
		URL              string            `json:"url"`
		ServerURL        string            `json:"serverUrl"`
		HTTPURL          string            `json:"httpUrl"`
		Headers          map[string]string `json:"headers"`
		Description      string            `json:"description"`
		StartupTimeoutMS int64             `json:"startup_timeout_ms"`
		ToolTimeoutMS    int64             `json:"tool_timeout_ms"`
		EnabledTools     []string          `json:"enabled_tools"`
		DisabledTools    []string          `json:"disabled_tools"`
		EnvFile          string            `json:"envFile"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&in); err != nil {
		e.Err = fmt.Sprintf("its entry has a field of the wrong type (%s)", jsonErrorText(err))
		return e
	}
	srv := resource.MCPServer{
		Command: in.Command, Args: in.Args, Env: in.Env, Cwd: in.Cwd,
		URL: firstNonEmpty(in.URL, in.ServerURL, in.HTTPURL), Headers: in.Headers,
		Description: in.Description, StartupTimeoutMS: in.StartupTimeoutMS, ToolTimeoutMS: in.ToolTimeoutMS,
		EnabledTools: in.EnabledTools, DisabledTools: in.DisabledTools,
	}
	switch t := strings.ToLower(firstNonEmpty(in.Type, in.Transport)); t {
	case "":
	case "stdio", "http", "sse":
		srv.Type = t
	case "streamable-http", "streamablehttp", "streamable_http":
		srv.Type = resource.TransportHTTP
	default:
		e.Err = fmt.Sprintf("its type %q is not one agt knows: write stdio, http or sse", clip(t))
		return e
	}
	if in.HTTPURL != "" && srv.Type == "" {
		srv.Type = resource.TransportHTTP
	}

	notes, err := hostReferences(&srv)
	if err != nil {
		e.Err = err.Error()
		return e
	}
	e.Notes = append(e.Notes, notes...)
	if in.EnvFile != "" {
		e.Notes = append(e.Notes, envFileNote(in.EnvFile, workspace))
	}
	if srv.Transport() == resource.TransportStdio {
		if msg := placeCwd(&srv, path, workspace); msg != "" {
			e.Notes = append(e.Notes, msg)
		}
		if err := checkImportCommand(srv); err != nil {
			e.Err = err.Error()
			return e
		}
	}
	if n := literalSecretNote(srv); n != "" {
		e.Notes = append(e.Notes, n)
	}
	e.Name = key
	if !validServerName(key) {
		e.Name = ref.Name()
		e.Notes = append(e.Notes, fmt.Sprintf("its name inside mcpServers is %s (server names are letters, digits, '.', '_' and '-')", e.Name))
	}
	// The write rules, checked here too, so that --dry-run promises only
	// what the import does.
	doc, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{e.Name: srv}})
	if err == nil {
		_, _, err = resource.ValidateMCP(doc)
	}
	if err != nil {
		e.Err = strings.TrimPrefix(err.Error(), "resource: ")
		return e
	}
	e.Warn = launchWarning(srv)
	e.Server = srv
	return e
}

// hostReferences rewrites the placeholders other hosts expand when they
// start a server as agt's references, in args, env values and header
// values: ${VAR} and ${VAR:-DEFAULT} (Claude, Cursor) as ${env:VAR} and
// ${env:VAR:-DEFAULT}, VS Code's ${input:ID} as ${secret:ID}. It returns
// the notes that say so, naming each variable and input once.
//
// A placeholder ends at the } that closes it, counting the ${ nested in
// its default. agt's default is literal text (resource reads no reference
// inside it), so a default that is not, ${A:-${B}} or ${A:-$B}, refuses
// the entry with what to write instead: dropping the default or cutting
// the text would start the server with a value the file did not mean.
func hostReferences(srv *resource.MCPServer) ([]string, error) {
	var env, inputs []string
	var refused error
	add := func(list *[]string, name string) {
		if !slices.Contains(*list, name) {
			*list = append(*list, name)
		}
	}
	rewrite := func(field, s string) string {
		var b strings.Builder
		for {
			i := strings.Index(s, "${")
			if i < 0 {
				b.WriteString(s)
				return b.String()
			}
			j := referenceEnd(s[i:])
			if j < 0 || i > 0 && s[i-1] == '$' {
				b.WriteString(s[:i+2])
				s = s[i+2:]
				continue
			}
			body, ref := s[i+2:i+j], ""
			name, def, hasDef := strings.Cut(body, ":-")
			switch {
			case shellVarName(name) && !hasDef:
				ref = "${env:" + name + "}"
				add(&env, name)
			case shellVarName(name) && !resourcefn.LiteralEnvDefault(def):
				if refused == nil {
					refused = fmt.Errorf("${%[2]s:-...} in its %[1]s has a default that is not literal text: agt's ${env:%[2]s:-DEFAULT} takes literal text only, with no $ and no nested reference; write ${%[2]s:-TEXT} with the text itself, or ${%[2]s} and set %[2]s, then import again", field, name)
				}
			case shellVarName(name):
				ref = "${env:" + name + ":-" + def + "}"
				add(&env, name)
			case strings.HasPrefix(body, "env:"):
				// VS Code's own ${env:NAME}, agt's form already.
				name, _, _ := strings.Cut(strings.TrimPrefix(body, "env:"), ":-")
				add(&env, name)
			case strings.HasPrefix(body, "input:"):
				id := strings.TrimPrefix(body, "input:")
				ref = "${secret:" + id + "}"
				add(&inputs, id)
			}
			if ref == "" {
				b.WriteString(s[:i+j+1])
			} else {
				b.WriteString(s[:i] + ref)
			}
			s = s[i+j+1:]
		}
	}
	for i, a := range srv.Args {
		srv.Args[i] = rewrite("args", a)
	}
	for _, f := range []struct {
		what string
		m    map[string]string
	}{{"env", srv.Env}, {"header", srv.Headers}} {
		for _, k := range slices.Sorted(maps.Keys(f.m)) {
			f.m[k] = rewrite(f.what+" "+clip(k), f.m[k])
		}
	}
	if refused != nil {
		return nil, refused
	}
	var notes []string
	if len(env) > 0 {
		slices.Sort(env)
		notes = append(notes, fmt.Sprintf("%s read from agt's environment as ${env:NAME} when the server starts, for names listed in $%s; a ${env:NAME:-DEFAULT} takes its default when NAME is unset or not listed", strings.Join(env, ", "), secretEnvVar))
	}
	if len(inputs) > 0 {
		slices.Sort(inputs)
		notes = append(notes, fmt.Sprintf("VS Code inputs %s written as ${secret:ID}: VS Code asks for them, agt reads them from its secret store: store each once with 'agt secret set ID'", strings.Join(inputs, ", ")))
	}
	return notes, nil
}

// referenceEnd returns the index in s, which starts with ${, of the }
// that closes it, counting the ${ nested in it (a default's
// ${A:-${B}}), or -1 when nothing closes it.
func referenceEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "${"):
			depth++
			i++
		case s[i] == '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// envFileNote says what becomes of VS Code's envFile: agt reads no file
// when it starts a server. It names the file's variables, read from it
// when it can be (never their values), so that they can be given as env.
func envFileNote(envFile, workspace string) string {
	p := strings.ReplaceAll(envFile, "${workspaceFolder}", workspace)
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	what := ""
	if names := envFileNames(p); len(names) > 0 {
		what = " (" + strings.Join(names, ", ") + ")"
	}
	return fmt.Sprintf("envFile %s%s left out: agt reads no file when it starts a server; give each variable with -e NAME='${secret:NAME}' and 'agt secret set NAME', or -e NAME='${env:NAME}' (agt mcp update REF)", clip(envFile), what)
}

// envFileNames lists the variable names of a .env file, at most 64 of
// a file of at most 64 KiB; none when it cannot be read.
func envFileNames(path string) []string {
	data, err := readBounded(path, 64<<10)
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "export ")
		name, _, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if ok && shellVarName(name) && !slices.Contains(names, name) && len(names) < 64 {
			names = append(names, name)
		}
	}
	return names
}

// literalSecretNote is the note on credentials stored as literal text,
// as the library judges them (resourcefn.CredentialValues): a reference
// keeps them out of the store.
func literalSecretNote(srv resource.MCPServer) string {
	var where []string
	for _, f := range []struct {
		what string
		m    map[string]string
	}{{"env", srv.Env}, {"header", srv.Headers}} {
		for _, k := range slices.Sorted(maps.Keys(f.m)) {
			// An env value is judged as a header is: by its name or its text.
			if literalCredential(k, f.m[k]) {
				where = append(where, f.what+" "+clip(k))
			}
		}
	}
	if len(resourcefn.CredentialValues(srv.Args, nil, nil, "")) > 0 {
		where = append(where, "args")
	}
	if len(resourcefn.CredentialValues(nil, nil, nil, srv.URL)) > 0 {
		where = append(where, "url")
	}
	verb := "holds a literal credential"
	switch len(where) {
	case 0:
		return ""
	case 1:
	default:
		verb = "hold literal credentials"
	}
	return strings.Join(where, ", ") + " " + verb + ", stored as written: a reference is safer, ${secret:NAME} (its value kept by 'agt secret set NAME') or ${env:NAME}"
}

// literalCredential reports whether the header (or env) value v of name
// holds a credential as literal text, by the library's rule; the scheme
// word before a reference ("Bearer ${env:TOKEN}") is none.
func literalCredential(name, v string) bool {
	vals := resourcefn.CredentialValues(nil, nil, map[string]string{name: v}, "")
	if !strings.Contains(v, "${") {
		return len(vals) > 0
	}
	for _, lit := range vals {
		if w := strings.TrimSpace(lit); w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return true
		}
	}
	return false
}

// launchWarning is what the launch rules say of a stdio server on this
// machine (resource.ResolveLaunch, the check of 'agt mcp test'): a
// command not found in the PATH it gets, a cwd that does not exist. It
// is a warning: the server is registered all the same.
func launchWarning(srv resource.MCPServer) string {
	if srv.Transport() != resource.TransportStdio {
		return ""
	}
	_, err := resource.ResolveLaunch(srv, nil, nil)
	var le *resource.LaunchError
	if !errors.As(err, &le) {
		return ""
	}
	return strings.TrimPrefix(le.Error(), "resource: ")
}

// shellVarName reports whether s is a variable name as shells write it,
// and not one of agt's own placeholders.
func shellVarName(s string) bool {
	return s != "cwd" && s != "workspace" && s != "workspaceFolder" && resourcefn.EnvRefName(s)
}

// validServerName reports whether name may be a key of mcpServers as
// stored: 1 to 64 letters, digits, '.', '_' and '-'.
func validServerName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// placeCwd gives a stdio server an absolute cwd: the file's project
// directory when it has none, resolved against it when it is relative.
// path "" is a server given on the command line (add-json), whose
// workspace is the directory it runs in.
func placeCwd(srv *resource.MCPServer, path, workspace string) string {
	var note string
	switch {
	case (srv.Cwd == "" || srv.Cwd == "${workspaceFolder}") && path == "":
		srv.Cwd = workspace
		note = fmt.Sprintf("no cwd: it runs in %s", workspace)
	case srv.Cwd == "" || srv.Cwd == "${workspaceFolder}":
		srv.Cwd = workspace
		note = fmt.Sprintf("no cwd in %s: it runs in %s, the directory of that file", filepath.Base(path), workspace)
		if filepath.Dir(path) != workspace {
			note = fmt.Sprintf("no cwd in %s: it runs in %s, the project that file belongs to", filepath.Base(path), workspace)
		}
	case !filepath.IsAbs(srv.Cwd) && !strings.HasPrefix(srv.Cwd, "~") && !strings.Contains(srv.Cwd, "${"):
		srv.Cwd = filepath.Join(workspace, srv.Cwd)
		note = fmt.Sprintf("relative cwd resolved against %s: %s", workspace, srv.Cwd)
	}
	// VS Code's ${workspaceFolder} is agt's ${workspace} when the server runs
	// in the project directory.
	if srv.Cwd == workspace {
		replaced := false
		for i, a := range srv.Args {
			if strings.Contains(a, "${workspaceFolder}") {
				srv.Args[i] = strings.ReplaceAll(a, "${workspaceFolder}", "${workspace}")
				replaced = true
			}
		}
		if replaced {
			note = strings.TrimPrefix(note+"; ${workspaceFolder} in args written as ${workspace}", "; ")
		}
	}
	return note
}

// checkImportCommand refuses commands that depend on the directory agt runs
// in, with the absolute path to write instead.
func checkImportCommand(srv resource.MCPServer) error {
	c := srv.Command
	switch {
	case c == "":
		return errors.New("it has neither command nor url")
	case strings.HasPrefix(c, "~"):
		return fmt.Errorf("its command %s starts with ~, which agt does not expand: write the absolute path", c)
	case !relativeCommand(c):
		return nil
	default:
		fix := c
		if filepath.IsAbs(srv.Cwd) {
			fix = filepath.Join(srv.Cwd, c)
		}
		return fmt.Errorf("its command %s is a relative path; agt runs a bare command name from PATH or an absolute path: write %q (resolved against its cwd), and check that it is the file you mean", c, fix)
	}
}

// refForKey turns a server's key into a reference by the naming rule
// (normalRef), under category when one is given.
func refForKey(key, category string) (resource.Ref, bool, error) {
	full := key
	if category != "" {
		full = category + "/" + strings.ReplaceAll(key, "/", "-")
	} else {
		full = strings.ReplaceAll(key, "/", "-")
	}
	ref, _, err := normalRef(full)
	if err != nil {
		return "", false, fmt.Errorf("no valid reference can be made of its name: %s", strings.TrimPrefix(err.Error(), "resource: "))
	}
	return ref, ref.Name() != key, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// as VS Code writes its settings, into JSON: each comment and trailing
// comma becomes spaces, so that a syntax error's offset is the one in the
// file. Text inside strings is kept. It reads each byte once.
func stripJSONC(data []byte) []byte {
	var out []byte // allocated at the first change
	blank := func(from, to int) {
		if out == nil {
			out = bytes.Clone(data)
		}
		for k := from; k < to; k++ {
			if out[k] != '\n' {
				out[k] = ' '
			}
		}
	}
	comma := -1 // the last comma outside strings, while only space follows it
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			comma = -1
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			end := bytes.IndexByte(data[i:], '\n')
			if end < 0 {
				end = len(data) - i
			}
			blank(i, i+end)
			i += end - 1
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return data // unterminated: the JSON parser reports it
			}
			blank(i, i+2+end+2)
			i += 2 + end + 1
		case c == ',':
			comma = i
		case c == '}' || c == ']':
			if comma >= 0 {
				blank(comma, comma+1)
			}
			comma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			comma = -1
		}
	}
	if out == nil {
		return data
	}
	return out
}

// bareServer reports whether a JSON object is one server's entry (the
// form of claude mcp add-json) rather than a document of mcpServers.
func bareServer(raw json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields["mcpServers"] != nil {
		return false
	}
	for _, f := range []string{"command", "url", "serverUrl", "httpUrl"} {
		if fields[f] != nil {
			return true
		}
	}
	return false
}
